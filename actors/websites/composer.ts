/**
 * The page itself: facts and copy in, one complete HTML document out. A straight string build
 * (no template engine, no DOM) so a build costs well under a millisecond and the bench can count
 * builds per minute. Pure.
 *
 * What every page is, whoever wrote its copy:
 * - self-contained: inline CSS, no script, no font, no image from elsewhere; a Content Security
 *   Policy that forbids any other request, so even a mistake here cannot make one;
 * - valid HTML5 with `<html lang>`, a viewport, a title and a meta description; header, main and
 *   footer landmarks; one h1; responsive down to 375 px; WCAG AA contrast;
 * - the business's name only: never the service, a supplier or the reseller (the copy is checked
 *   before it gets here, and the composer's own words name nobody);
 * - every text escaped; the click-to-call a `tel:` link of an E.164 number, shown nationally;
 * - test mode: a visible banner and `noindex`; previews `noindex` too.
 */
import { nationalFormat } from '../shared/phone.ts';
import { pageLanguage, wordsFor, type PageWords } from './copy.ts';
import { displayName, type SiteCopy, type SiteFacts } from './site-facts.ts';
import { escapeHtml as esc } from './text.ts';
import { textColourOn } from '../shared/contrast.ts';

/** The largest page the composer may produce (issue 15: "under 100 KB"). */
export const MAX_PAGE_BYTES = 100 * 1024;
/** Longest page title (what search results show). */
const MAX_TITLE = 70;

export interface ComposeOptions {
  /** An unlisted preview (`preview_url`): never indexed, whatever the mode. */
  preview?: boolean;
  /** The footer's year; default the current UTC year (fixed in tests). */
  year?: number;
}

export interface ComposedPage {
  html: string;
  /** UTF-8 length of `html`. */
  bytes: number;
}

/**
 * Accent colours, each with at least 4.5:1 contrast against white text (WCAG AA for normal
 * text), chosen by the name so a customer's page keeps its colour across rebuilds.
 */
const ACCENTS = ['#1d4ed8', '#0f766e', '#b91c1c', '#6d28d9', '#c2410c', '#15803d', '#0e7490', '#be185d', '#4338ca', '#334155'];

/** A stable index into ACCENTS for `name` (FNV-1a). */
export function accentFor(name: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return ACCENTS[(h >>> 0) % ACCENTS.length];
}

/** `hex` mixed with white: `amount` 0 is the colour, 1 is white. */
function tint(hex: string, amount: number): string {
  const n = parseInt(hex.slice(1), 16);
  const mix = (c: number) => Math.round(c + (255 - c) * amount).toString(16).padStart(2, '0');
  return `#${mix(n >> 16)}${mix((n >> 8) & 0xff)}${mix(n & 0xff)}`;
}

function css(accent: string): string {
  // Text on the accent is black or white by WCAG contrast (actors/shared/contrast.ts), like every page's.
  return `:root{--accent:${accent};--on-accent:${textColourOn(accent)};--soft:${tint(accent, 0.92)};--line:${tint(accent, 0.8)};--ink:#111827;--muted:#374151}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;font-size:1.0625rem;line-height:1.6;color:var(--ink);background:#fff;overflow-wrap:anywhere}
.wrap{max-width:64rem;margin:0 auto;padding:0 1.25rem}
a{color:var(--accent)}
a:focus-visible,.btn:focus-visible{outline:3px solid var(--ink);outline-offset:3px}
.skip{position:absolute;left:-100vw;top:0;background:#fff;color:var(--ink);padding:.5rem 1rem;z-index:2}
.skip:focus{left:1rem}
.test{margin:0;background:#fef3c7;color:#78350f;text-align:center;font-weight:600;padding:.5rem 1rem;border-bottom:2px solid #d97706}
.bar{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.75rem;padding-top:1rem;padding-bottom:1rem}
.top{border-bottom:1px solid var(--line);background:#fff}
.brand{font-weight:700;font-size:1.25rem;letter-spacing:-.01em}
.btn{display:inline-flex;align-items:center;gap:.5rem;background:var(--accent);color:var(--on-accent);text-decoration:none;font-weight:600;border-radius:.5rem;padding:.75rem 1.25rem;min-height:2.75rem}
.btn:hover{filter:brightness(1.1)}
.btn-small{padding:.5rem .9rem;font-size:.95rem}
.hero{background:var(--soft);padding:3.5rem 0 3rem}
h1{font-size:clamp(2rem,6vw,3rem);line-height:1.15;margin:0 0 .75rem;letter-spacing:-.02em}
.tagline{font-size:1.25rem;color:var(--muted);margin:0 0 1rem;max-width:42rem}
.lead{max-width:42rem;margin:0 0 1.5rem}
.actions{margin:1.5rem 0 0}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}
section.block{padding:3rem 0}
section.block+section.block{border-top:1px solid var(--line)}
h2{font-size:1.625rem;line-height:1.25;margin:0 0 1.25rem}
h3{font-size:1.125rem;margin:0 0 .25rem}
.cards{list-style:none;margin:0;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,15rem),1fr));gap:1rem}
.card{border:1px solid var(--line);border-radius:.75rem;padding:1.25rem;background:#fff}
.card h3::before{content:"";display:inline-block;width:.6rem;height:.6rem;border-radius:50%;background:var(--accent);margin-right:.6rem;vertical-align:middle}
.card p{margin:.25rem 0 0;color:var(--muted)}
.about p{max-width:44rem;margin:0}
.block-visit{padding:2.5rem 0 3rem;border-top:1px solid var(--line)}
.visit{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,18rem),1fr));gap:1.5rem}
.panel{background:var(--soft);border-radius:.75rem;padding:1.5rem}
.panel h2{font-size:1.375rem}
.hours{list-style:none;margin:0;padding:0}
.hours li{display:flex;flex-wrap:wrap;justify-content:space-between;gap:0 1rem;padding:.4rem 0;border-bottom:1px solid var(--line)}
.hours li:last-child{border-bottom:0}
.contact{margin:0}
.contact dt{font-weight:600;margin-top:.75rem}
.contact dt:first-child{margin-top:0}
.contact dd{margin:0}
footer{border-top:1px solid var(--line);padding:2rem 0;color:var(--muted);font-size:.95rem}
footer p{margin:.25rem 0}
@media (max-width:30rem){.hero{padding:2.5rem 0 2rem}section.block{padding:2.25rem 0}.btn{width:100%;justify-content:center}.bar .btn{width:auto}}
@media (prefers-reduced-motion:no-preference){html{scroll-behavior:smooth}}`;
}

// ---------------------------------------------------------------------------------------------
// Opening hours in the page's language

const DAY_CODES = ['Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa', 'Su'];
const SCHEMA_LINE = /^((?:Mo|Tu|We|Th|Fr|Sa|Su)(?:\s*-\s*(?:Mo|Tu|We|Th|Fr|Sa|Su))?(?:\s*,\s*(?:Mo|Tu|We|Th|Fr|Sa|Su)(?:\s*-\s*(?:Mo|Tu|We|Th|Fr|Sa|Su))?)*)\s+(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})$/;

/**
 * The day and time formatters per page locale, kept. The locale is the customer's calling language
 * as a reseller spelt it, in any case ("fr-FR", "FR-fr", …), so at most LOCALE_FORMATS_KEPT are kept,
 * the one built longest ago going first (as actors/shared/zone-formats.ts does for zones).
 */
const formatters = new Map<string, { day: Intl.DateTimeFormat; time: Intl.DateTimeFormat }>();
export const LOCALE_FORMATS_KEPT = 1_000;

/** How many locales' formatters are kept (for tests). */
export const localeFormatsKept = (): number => formatters.size;

function formattersFor(locale: string) {
  let f = formatters.get(locale);
  if (!f) {
    let tag = locale;
    try {
      Intl.DateTimeFormat.supportedLocalesOf(locale);
    } catch {
      tag = 'en';
    }
    f = {
      day: new Intl.DateTimeFormat(tag, { weekday: 'long', timeZone: 'UTC' }),
      time: new Intl.DateTimeFormat(tag, { hour: 'numeric', minute: '2-digit', timeZone: 'UTC' }),
    };
    if (formatters.size >= LOCALE_FORMATS_KEPT) formatters.delete(formatters.keys().next().value!);
    formatters.set(locale, f);
  }
  return f;
}

/** 2024-01-01 was a Monday: day `i` (0 = Monday) of that week, for naming weekdays. */
const dayDate = (i: number) => new Date(Date.UTC(2024, 0, 1 + i));

/**
 * One opening-hours line as [days, hours] in the page's language when it is in schema.org's
 * notation ("Mo-Fr 09:00-17:00" → ["Monday – Friday", "9:00 AM – 5:00 PM"] in en-US), else the
 * line as written in one cell.
 */
export function hoursRow(line: string, locale: string): [string, string] | [string] {
  const m = SCHEMA_LINE.exec(line.trim());
  if (!m) return [line];
  const f = formattersFor(locale);
  const day = (code: string) => f.day.format(dayDate(DAY_CODES.indexOf(code)));
  const days = m[1]
    .split(/\s*,\s*/)
    .map((part) => part.split(/\s*-\s*/).map(day).join(' – '))
    .join(', ');
  const time = (h: string, min: string) => f.time.format(new Date(Date.UTC(2024, 0, 1, Number(h) % 24, Number(min))));
  return [days, `${time(m[2], m[3])} – ${time(m[4], m[5])}`];
}

// ---------------------------------------------------------------------------------------------

/** `tel:` href and display text of an E.164 number. */
function phoneLink(e164: string): { href: string; text: string } {
  // Non-breaking spaces: a number is never split across lines.
  return { href: `tel:${e164.replace(/[^+\d]/g, '')}`, text: nationalFormat(e164).replace(/ /g, '\u00a0') };
}

/** The id a section's heading carries, for its `aria-labelledby`. */
const sectionId = (name: string) => `s-${name}`;

function hoursPanel(lines: string[], locale: string, w: PageWords): string {
  const rows = lines
    .map((line) => {
      const row = hoursRow(line, locale);
      return row.length === 2 ? `<li><span>${esc(row[0])}</span><span class="num">${esc(row[1])}</span></li>` : `<li><span>${esc(row[0])}</span></li>`;
    })
    .join('');
  return `<section class="panel" aria-labelledby="${sectionId('hours')}"><h2 id="${sectionId('hours')}">${esc(w.hours)}</h2><ul class="hours">${rows}</ul></section>`;
}

function contactPanel(phone: { href: string; text: string } | null, email: string | null, address: string | null, w: PageWords): string {
  let items = '';
  if (phone) items += `<dt>${esc(w.phone)}</dt><dd><a href="${esc(phone.href)}" class="num">${esc(phone.text)}</a></dd>`;
  if (email) items += `<dt>${esc(w.email)}</dt><dd><a href="mailto:${esc(email)}">${esc(email)}</a></dd>`;
  if (address) items += `<dt>${esc(w.address)}</dt><dd>${esc(address)}</dd>`;
  return `<section class="panel" aria-labelledby="${sectionId('contact')}"><h2 id="${sectionId('contact')}">${esc(w.contact)}</h2><dl class="contact">${items}</dl></section>`;
}

/** An e-mail address fit for a `mailto:` link (anything else is not shown). */
const SAFE_EMAIL = /^[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}$/i;
const SAFE_E164 = /^\+[1-9]\d{6,14}$/;

/**
 * The page for `facts` with `copy` (from `deterministicCopy` or the model, already checked). The
 * click-to-call is the customer's number (`facts.phoneE164`), else the first number research
 * found; contact details and opening hours come from the facts, never from the copy.
 */
export function composePage(facts: SiteFacts, copy: SiteCopy, opts: ComposeOptions = {}): ComposedPage {
  const w = wordsFor(facts.locale);
  const lang = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/.test(facts.locale) ? facts.locale : pageLanguage(facts.locale);
  const name = displayName(facts);
  const r = facts.research;
  const e164 = [facts.phoneE164, ...(r?.phones ?? [])].find((p): p is string => !!p && SAFE_E164.test(p)) ?? null;
  const phone = e164 ? phoneLink(e164) : null;
  const email = r?.emails.find((e) => SAFE_EMAIL.test(e)) ?? null;
  const address = r?.address ?? null;
  const hours = r?.openingHours ?? [];
  const noindex = facts.mode === 'test' || opts.preview === true;
  const year = opts.year ?? new Date().getUTCFullYear();
  // Search engines show about 70 characters of a title: the name and tagline when they fit, else the name.
  const title = copy.tagline && copy.headline.length + copy.tagline.length + 3 <= MAX_TITLE ? `${copy.headline} – ${copy.tagline}` : copy.headline.slice(0, MAX_TITLE);

  let html = `<!DOCTYPE html>
<html lang="${esc(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<title>${esc(title)}</title>
<meta name="description" content="${esc(copy.metaDescription)}">
${noindex ? '<meta name="robots" content="noindex, nofollow">\n' : ''}<link rel="icon" href="data:,">
<style>${css(accentFor(name))}</style>
</head>
<body>
<a class="skip" href="#main">${esc(w.skip)}</a>
<header class="top">
${facts.mode === 'test' ? `<p class="test" role="note">${esc(w.testBanner)}</p>\n` : ''}<div class="wrap bar"><span class="brand">${esc(name)}</span>${
    phone ? `<a class="btn btn-small" href="${esc(phone.href)}"><span aria-hidden="true">☎</span> <span class="num">${esc(phone.text)}</span></a>` : ''
  }</div>
</header>
<main id="main">
<section class="hero" aria-labelledby="s-top"><div class="wrap">
<h1 id="s-top">${esc(copy.headline)}</h1>
<p class="tagline">${esc(copy.tagline)}</p>
${copy.intro ? `<p class="lead">${esc(copy.intro)}</p>\n` : ''}${
    phone
      ? `<p class="actions"><a class="btn" href="${esc(phone.href)}">${esc(copy.callToAction)} <span class="num">${esc(phone.text)}</span></a></p>\n`
      : email
        ? `<p class="actions"><a class="btn" href="mailto:${esc(email)}">${esc(w.contact)}</a></p>\n`
        : ''
  }</div></section>
`;
  if (copy.services.length) {
    html += `<section class="block" aria-labelledby="${sectionId('services')}"><div class="wrap">
<h2 id="${sectionId('services')}">${esc(w.services)}</h2>
<ul class="cards">${copy.services.map((s) => `<li class="card"><h3>${esc(s.name)}</h3>${s.description ? `<p>${esc(s.description)}</p>` : ''}</li>`).join('')}</ul>
</div></section>
`;
  }
  if (copy.about) {
    html += `<section class="block about" aria-labelledby="${sectionId('about')}"><div class="wrap">
<h2 id="${sectionId('about')}">${esc(w.about)}</h2>
<p>${esc(copy.about)}</p>
</div></section>
`;
  }
  if (hours.length || phone || email || address) {
    html += `<div class="block-visit"><div class="wrap visit">${hours.length ? hoursPanel(hours, lang, w) : ''}${phone || email || address ? contactPanel(phone, email, address, w) : ''}</div></div>
`;
  }
  html += `</main>
<footer><div class="wrap"><p>© ${year} ${esc(name)}</p>${address ? `<p>${esc(address)}</p>` : ''}</div></footer>
</body>
</html>
`;
  return { html, bytes: Buffer.byteLength(html, 'utf8') };
}
