/** HTML shared by the pages people see. Every value is escaped; nothing names the service. */

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

/** A whole page in the reseller's brand. `body` is trusted HTML built with escapeHtml. */
export function brandedPage(brand: PageBrand, title: string, body: string): string {
  const primary = SAFE_COLOUR.test(brand.primaryColor) ? brand.primaryColor : '#1f2937';
  const accent = SAFE_COLOUR.test(brand.accentColor) ? brand.accentColor : '#2563eb';
  const logo = brand.logoUrl?.startsWith('https://')
    ? `<img class="logo" src="${escapeHtml(brand.logoUrl)}" alt="${escapeHtml(brand.name)}">`
    : '';
  const support = brand.supportEmail
    ? `<p class="support">Questions? Write to <a href="mailto:${escapeHtml(brand.supportEmail)}">${escapeHtml(brand.supportEmail)}</a>.</p>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · ${escapeHtml(brand.name)}</title>
<style>
  :root { --primary: ${primary}; --accent: ${accent}; }
  body { font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; margin: 0; background: #f5f5f4; color: #1c1917; }
  header { background: var(--primary); color: #fff; padding: 1rem 1.5rem; display: flex; align-items: center; gap: .75rem; }
  header .logo { height: 36px; }
  header h1 { font-size: 1.1rem; margin: 0; }
  main { max-width: 40rem; margin: 2rem auto; background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.1); }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input[type=text] { width: 100%; padding: .6rem; font-size: 1rem; box-sizing: border-box; }
  button { margin-top: 1.25rem; background: var(--accent); color: #fff; border: 0; padding: .75rem 1.25rem; font-size: 1rem; border-radius: 6px; cursor: pointer; }
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
