/** HTML shared by the pages people see. Every value is escaped; nothing names the service. */
import { textColourOn } from '../../actors/shared/contrast.ts';
import type { PageLanguage } from '../../actors/websites/copy.ts';

export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export interface PageBrand {
  name: string;
  logoUrl: string | null;
  primaryColor: string;
  accentColor: string;
  supportEmail: string | null;
}

const SAFE_COLOUR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** The support line under every page, in the page's language: `{email}` is the reseller's address. */
const SUPPORT: Record<PageLanguage, string> = {
  en: 'Questions? Write to {email}.',
  de: 'Fragen? Schreiben Sie an {email}.',
  fr: 'Des questions\u00a0? Écrivez à {email}.',
  es: '¿Preguntas? Escriba a {email}.',
  nl: 'Vragen? Schrijf naar {email}.',
};

/**
 * A whole page in the reseller's brand, in `lang` (the customer's calling language where the page
 * is the customer's). `body` is trusted HTML built with escapeHtml. Text on the brand's colours is
 * black or white, whichever reaches WCAG AA on them (actors/shared/contrast.ts).
 */
export function brandedPage(brand: PageBrand, title: string, body: string, lang: PageLanguage = 'en'): string {
  const primary = SAFE_COLOUR.test(brand.primaryColor) ? brand.primaryColor : '#1f2937';
  const accent = SAFE_COLOUR.test(brand.accentColor) ? brand.accentColor : '#2563eb';
  const logo = brand.logoUrl?.startsWith('https://')
    ? `<img class="logo" src="${escapeHtml(brand.logoUrl)}" alt="${escapeHtml(brand.name)}">`
    : '';
  const email = brand.supportEmail ? `<a href="mailto:${escapeHtml(brand.supportEmail)}">${escapeHtml(brand.supportEmail)}</a>` : '';
  const support = email ? `<p class="support">${SUPPORT[lang].replace('{email}', email)}</p>` : '';
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · ${escapeHtml(brand.name)}</title>
<style>
  :root { --primary: ${primary}; --accent: ${accent}; --on-primary: ${textColourOn(primary)}; --on-accent: ${textColourOn(accent)}; }
  body { font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; margin: 0; background: #f5f5f4; color: #1c1917; }
  header { background: var(--primary); color: var(--on-primary); padding: 1rem 1.5rem; display: flex; align-items: center; gap: .75rem; }
  header .logo { height: 36px; }
  header h1 { font-size: 1.1rem; margin: 0; }
  main { max-width: 40rem; margin: 2rem auto; background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.1); }
  /* A narrow screen (a 375 px phone): the card keeps a margin from the screen's edges. */
  @media (max-width: 45rem) { main { margin: 1rem; padding: 1.25rem; } }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input[type=text] { width: 100%; padding: .6rem; font-size: 1rem; box-sizing: border-box; }
  button { margin-top: 1.25rem; background: var(--accent); color: var(--on-accent); border: 0; padding: .75rem 1.25rem; font-size: 1rem; border-radius: 6px; cursor: pointer; }
  .terms { background: #fafaf9; border: 1px solid #e7e5e4; padding: 1rem; border-radius: 6px; }
  .notice { border-left: 4px solid var(--accent); padding-left: 1rem; }
  .support { color: #57534e; font-size: .9rem; margin-top: 2rem; }
</style>
</head>
<body>
<header>${logo}<h1>${escapeHtml(brand.name)}</h1></header>
<main>
${body}
${support}
</main>
</body>
</html>`;
}

/** Headers for every page: no framing, no outside scripts, not cached (links carry secrets). */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; img-src https:; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
} as const;
