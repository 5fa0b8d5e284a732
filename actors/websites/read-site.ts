/**
 * Reading a customer's existing website (pure: HTML in, `SiteResearch` out, tested with
 * fixtures): what it says the business is, does, and how to reach it. The fetch that brings the
 * page is research.ts. Forgiving: broken HTML or JSON-LD gives empty fields, never an error.
 */
import { parse, type HTMLElement } from 'node-html-parser';
import { findPhoneNumbersInText, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { namesSupplier } from '../shared/output-filter.ts';
import type { SiteResearch } from './site-facts.ts';
import { bounded, clean } from './text.ts';

const LIMITS = { title: 200, description: 500, services: 12, service: 120, phones: 5, emails: 5, address: 300, hours: 14, hoursLine: 120 } as const;

/** Options of `readSite`. */
export interface ReadSiteOptions {
  /** ISO country for numbers written nationally ("020 7946 0958"); without it only international ones are found in text. */
  country?: string;
}

/** Adds `value` to `list` unless already there (case-insensitive) or the list is full. */
function addUnique(list: string[], value: string, max: number): void {
  if (!value || list.length >= max) return;
  if (!list.some((v) => v.toLowerCase() === value.toLowerCase())) list.push(value);
}

/** Every JSON-LD object of the page, `@graph` arrays and nested arrays flattened. */
function jsonLdObjects(root: HTMLElement): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    out.push(o);
    if (o['@graph']) visit(o['@graph']);
  };
  for (const script of root.querySelectorAll('script')) {
    if (!/ld\+json/i.test(script.getAttribute('type') ?? '')) continue;
    try {
      visit(JSON.parse(script.rawText));
    } catch {
      // A broken block is skipped; the rest of the page is still read.
    }
  }
  return out;
}

const asStrings = (v: unknown): string[] => (Array.isArray(v) ? v : [v]).filter((s): s is string => typeof s === 'string');

/** Countries that write the town before the postcode ("Leeds LS1 6BY", "Austin, TX 78701"). */
const TOWN_FIRST = new Set(['GB', 'UK', 'US', 'CA', 'AU', 'NZ', 'IE', 'IN', 'ZA', 'SG', 'JP']);

/** A schema.org PostalAddress (or plain string) on one line, postcode placed as `country` writes it. */
function addressLine(v: unknown, defaultCountry: string | undefined): string | null {
  if (typeof v === 'string') return clean(v) || null;
  if (!v || typeof v !== 'object') return null;
  const a = v as Record<string, unknown>;
  const country = typeof a.addressCountry === 'object' && a.addressCountry ? (a.addressCountry as Record<string, unknown>).name : a.addressCountry;
  const str = (x: unknown) => (typeof x === 'string' || typeof x === 'number' ? clean(String(x)) : '');
  const code = (str(country) || defaultCountry || '').toUpperCase();
  const town = [str(a.addressLocality), str(a.addressRegion)].filter(Boolean).join(', ');
  const place = (TOWN_FIRST.has(code) ? [town, str(a.postalCode)] : [str(a.postalCode), town]).filter(Boolean).join(' ');
  const parts = [str(a.streetAddress), place, str(country)].filter(Boolean);
  return parts.length ? parts.join(', ') : null;
}

const DAY_CODES = ['Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa', 'Su'] as const;
const DAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** "09:00:00" → "09:00". */
const hhmm = (t: unknown): string | null => {
  const m = typeof t === 'string' ? /^(\d{1,2}):(\d{2})/.exec(t.trim()) : null;
  return m ? `${m[1].padStart(2, '0')}:${m[2]}` : null;
};

/**
 * schema.org `openingHoursSpecification` entries as schema.org `openingHours` lines: days with the
 * same hours grouped, consecutive days as a range ("Mo-Fr 09:00-17:00", "Sa,Su 10:00-14:00").
 */
export function specificationLines(specs: unknown[]): string[] {
  const byHours = new Map<string, Set<number>>();
  for (const spec of specs) {
    if (!spec || typeof spec !== 'object') continue;
    const s = spec as Record<string, unknown>;
    const opens = hhmm(s.opens);
    const closes = hhmm(s.closes);
    if (!opens || !closes) continue;
    const days = asStrings(s.dayOfWeek)
      .map((d) => DAY_NAMES.indexOf(d.replace(/^https?:\/\/schema\.org\//i, '').toLowerCase()))
      .filter((i) => i >= 0);
    if (!days.length) continue;
    const key = `${opens}-${closes}`;
    const set = byHours.get(key) ?? new Set<number>();
    days.forEach((d) => set.add(d));
    byHours.set(key, set);
  }
  const lines = [...byHours.entries()].map(([hours, set]) => ({ first: Math.min(...set), text: `${dayList([...set].sort())} ${hours}` }));
  return lines.sort((a, b) => a.first - b.first).map((l) => l.text);
}

/** Sorted day indexes as schema.org codes: runs of three or more as ranges. */
function dayList(days: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < days.length; ) {
    let j = i;
    while (j + 1 < days.length && days[j + 1] === days[j] + 1) j++;
    if (j - i >= 2) parts.push(`${DAY_CODES[days[i]]}-${DAY_CODES[days[j]]}`);
    else for (let k = i; k <= j; k++) parts.push(DAY_CODES[days[k]]);
    i = j + 1;
  }
  return parts.join(',');
}

/** Headings (and labelled blocks) that introduce a services list, in the five page languages. */
const SERVICES_WORDS = /\b(?:services?|what we do|our work|we offer|treatments|leistungen|angebot|unsere arbeit|prestations|nos services|servicios|qué hacemos|diensten|wat wij doen)\b/iu;
/** Headings that introduce opening hours. */
const HOURS_WORDS = /(?:opening (?:hours|times)|business hours|hours|öffnungszeiten|sprechzeiten|horaires|heures d'ouverture|horarios?|openingstijden|openingsuren)/iu;
/** A line that states hours: a time, or a word for "closed". */
const TIME_LIKE = /\b\d{1,2}(?:[:.h]\d{2})\b|\b\d{1,2}\s*(?:am|pm|uhr)\b|\b(?:closed|geschlossen|fermé|cerrado|gesloten|24\/7)\b/iu;
const HEADING = /^H[1-6]$/;

const headingLevel = (el: HTMLElement) => (HEADING.test(el.tagName) ? Number(el.tagName[1]) : 7);

/** The elements after heading `h` up to the next heading of its level or higher (at most `max`). */
function followingBlock(h: HTMLElement, max = 12): HTMLElement[] {
  const level = headingLevel(h);
  const out: HTMLElement[] = [];
  let el = h.nextElementSibling;
  while (el && out.length < max) {
    if (headingLevel(el) <= level) break;
    out.push(el);
    el = el.nextElementSibling;
  }
  // A heading alone in its wrapper (<div><h2>Services</h2></div><ul>…</ul>): look after the wrapper.
  if (!out.length && h.parentNode && (h.parentNode as HTMLElement).childNodes.filter((n) => n.nodeType === 1).length === 1) {
    let next = (h.parentNode as HTMLElement).nextElementSibling;
    for (let i = 0; next && i < 3; i++, next = next.nextElementSibling) {
      if (next.querySelector('h1,h2') || headingLevel(next) <= level) break;
      out.push(next);
    }
  }
  return out;
}

/** Service names in a block: its list items and sub-headings, or the block itself when it is one. */
function serviceItems(blocks: HTMLElement[]): string[] {
  const out: string[] = [];
  for (const b of blocks) {
    const items = /^(LI|H[3-6]|DT)$/.test(b.tagName) ? [b] : b.querySelectorAll('li, h3, h4, h5, dt');
    for (const item of items) {
      // A list item with its own heading: the heading is the name, the rest is its description.
      const name = clean((item.querySelector('h3,h4,h5,strong,b') ?? item).text);
      if (name.length >= 2 && name.length <= LIMITS.service && !/^[\d\W]+$/u.test(name)) out.push(name);
    }
  }
  return out;
}

/** The lines of `el` that look like opening hours (table rows as one line each). */
function hoursLines(el: HTMLElement): string[] {
  const rows = el.tagName === 'TR' ? [el] : el.querySelectorAll('tr');
  const lines = rows.length
    ? rows.map((r) => r.querySelectorAll('th,td').map((c) => clean(c.text)).filter(Boolean).join(' '))
    : el.structuredText.split('\n').map(clean);
  return lines.filter((l) => l.length <= LIMITS.hoursLine && TIME_LIKE.test(l));
}

/** Characters of a page's visible text searched for phone numbers and e-mail addresses. */
const MAX_TEXT_SCANNED = 100_000;
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const NOT_EMAIL = /\.(?:png|jpe?g|gif|webp|svg|avif)$/i;

function addEmail(list: string[], raw: string): void {
  const value = raw.trim().toLowerCase();
  if (/^[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}$/.test(value) && !NOT_EMAIL.test(value)) addUnique(list, value, LIMITS.emails);
}

function addPhone(list: string[], raw: string, country: string | undefined): void {
  const parsed = parsePhoneNumberFromString(raw.trim(), country as CountryCode | undefined);
  if (parsed?.isValid()) addUnique(list, parsed.number, LIMITS.phones);
}

/**
 * What an HTML page says about its business. Pure and forgiving: broken HTML, broken JSON-LD and
 * missing parts give empty fields, never an error. `baseUrl` is the page's address (for the
 * country of national numbers when none is given, from a country-code top-level domain).
 * Service names and the description that name a supplier (a hosting or website company's
 * "Powered by …") are left out: the page must not name one.
 */
export function readSite(html: string, baseUrl: string, opts: ReadSiteOptions = {}): SiteResearch {
  const root = parse(parseable(html), { comment: false });
  const country = opts.country ?? countryOfHost(baseUrl);
  const ld = jsonLdObjects(root);
  const meta = (selector: string) => clean(root.querySelector(selector)?.getAttribute('content')) || null;

  const title = clean(root.querySelector('title')?.text) || meta('meta[property="og:title"]');
  const rawDescription = meta('meta[name="description"]') ?? meta('meta[property="og:description"]');
  const description = rawDescription && !namesSupplier(rawDescription) ? bounded(rawDescription, LIMITS.description) : null;

  const phones: string[] = [];
  const emails: string[] = [];
  const services: string[] = [];
  const openingHours: string[] = [];
  let address: string | null = null;

  // Links first: what the site offers to click is what it means.
  for (const a of root.querySelectorAll('a[href]')) {
    const href = (a.getAttribute('href') ?? '').trim();
    if (/^tel:/i.test(href)) addPhone(phones, decodeSafe(href.slice(4)), country);
    else if (/^mailto:/i.test(href)) addEmail(emails, decodeSafe(href.slice(7).split('?')[0]));
  }

  for (const o of ld) {
    for (const t of asStrings(o.telephone)) addPhone(phones, t, country);
    for (const e of asStrings(o.email)) addEmail(emails, e.replace(/^mailto:/i, ''));
    address ??= addressLine(o.address, country);
    for (const line of asStrings(o.openingHours).flatMap((s) => s.split(/\s*[;\n]\s*/))) addUnique(openingHours, clean(line), LIMITS.hours);
    if (o.openingHoursSpecification) {
      for (const line of specificationLines(Array.isArray(o.openingHoursSpecification) ? o.openingHoursSpecification : [o.openingHoursSpecification])) {
        addUnique(openingHours, line, LIMITS.hours);
      }
    }
    // Offers: hasOfferCatalog.itemListElement[].itemOffered.name, makesOffer[].itemOffered.name.
    const catalog = o.hasOfferCatalog as Record<string, unknown> | undefined;
    const offers = [...(Array.isArray(catalog?.itemListElement) ? catalog.itemListElement : []), ...(Array.isArray(o.makesOffer) ? o.makesOffer : o.makesOffer ? [o.makesOffer] : [])];
    for (const offer of offers) {
      const item = (offer as Record<string, unknown>)?.itemOffered as Record<string, unknown> | undefined;
      const name = clean(typeof item?.name === 'string' ? item.name : typeof (offer as Record<string, unknown>)?.name === 'string' ? ((offer as Record<string, unknown>).name as string) : '');
      if (name && name.length <= LIMITS.service) services.push(name);
    }
  }

  // From here on the visible text only.
  for (const el of root.querySelectorAll('script, style, noscript, template, svg')) el.remove();

  for (const h of root.querySelectorAll('h1, h2, h3, h4')) {
    const text = clean(h.text);
    if (text.length > 60) continue;
    if (SERVICES_WORDS.test(text)) services.push(...serviceItems(followingBlock(h)));
    else if (!openingHours.length && HOURS_WORDS.test(text)) {
      for (const line of followingBlock(h).flatMap(hoursLines)) addUnique(openingHours, line, LIMITS.hours);
    }
  }
  if (!services.length) {
    // The first few blocks labelled as services only: each is searched in full, and a hostile page
    // can nest thousands of them.
    const labelled = root
      .querySelectorAll('section, div, ul')
      .filter((el) => /\bservices?\b|leistungen|servicios|diensten|prestations/i.test(`${el.getAttribute('id') ?? ''} ${el.getAttribute('class') ?? ''}`))
      .slice(0, 3);
    for (const el of labelled) {
      services.push(...serviceItems([el]));
      if (services.length) break;
    }
  }

  if (!address) {
    const block = root.querySelector('address');
    if (block) {
      const lines = block.structuredText.split('\n').map(clean).filter((l) => l && !/@/.test(l) && !/^(?:tel|phone|fax|telefon)?[\s:.]*\+?[\d\s()./-]{6,}$/i.test(l));
      if (lines.length) address = bounded(lines.join(', '), LIMITS.address);
    }
  }

  // Text search is bounded (a page can be a megabyte of one word) and looks for addresses only in
  // words with an @, so no pattern ever scans the page from every position.
  const text = (root.querySelector('body') ?? root).structuredText.slice(0, MAX_TEXT_SCANNED);
  for (const word of text.split(/[\s<>()"',;]+/)) {
    if (word.length <= 254 && word.includes('@')) for (const m of word.match(EMAIL) ?? []) addEmail(emails, m);
  }
  for (const found of findPhoneNumbersInText(text, country ? { defaultCountry: country as CountryCode } : undefined)) {
    if (found.number.isValid()) addUnique(phones, found.number.number, LIMITS.phones);
  }

  const kept: string[] = [];
  for (const s of services) if (!namesSupplier(s)) addUnique(kept, s, LIMITS.services);

  return {
    title: title ? bounded(title, LIMITS.title) : null,
    description,
    services: kept,
    phones,
    emails,
    address: address ? bounded(address, LIMITS.address) : null,
    openingHours: openingHours.map((l) => bounded(l, LIMITS.hoursLine)),
  };
}

/** Characters of HTML given to the parser (see `parseable`). */
const MAX_PARSED_CHARS = 300_000;

/**
 * The part of a page worth parsing: comments, styles, SVG and scripts other than JSON-LD cut out
 * (often most of a page's bytes, none of them read), then at most MAX_PARSED_CHARS. The parser's
 * time grows faster than the page on deeply nested markup (a hostile megabyte of open `<div>`s
 * takes seconds), so its input is bounded here, not only the download.
 */
function parseable(html: string): string {
  // One pass, by hand: a regular expression with a lazy body would rescan the rest of the page
  // from every unclosed `<style` (quadratic; a megabyte of them took seconds).
  const lower = html.toLowerCase();
  const open = /<!--|<(style|svg|script)\b/g;
  let out = '';
  let i = 0;
  while (i < html.length && out.length < MAX_PARSED_CHARS) {
    open.lastIndex = i;
    const m = open.exec(lower);
    if (!m) {
      out += html.slice(i);
      break;
    }
    out += html.slice(i, m.index);
    // Unclosed: the rest of the page is inside it, and is dropped with it.
    if (m[0] === '<!--') {
      const end = lower.indexOf('-->', m.index + 4);
      if (end < 0) break;
      i = end + 3;
      continue;
    }
    const close = lower.indexOf(`</${m[1]}`, m.index);
    if (close < 0) break;
    const closeEnd = lower.indexOf('>', close);
    const stop = closeEnd < 0 ? html.length : closeEnd + 1;
    if (m[1] === 'script' && /ld\+json/.test(lower.slice(m.index, lower.indexOf('>', m.index)))) out += html.slice(m.index, stop);
    i = stop;
  }
  return out.length > MAX_PARSED_CHARS ? out.slice(0, MAX_PARSED_CHARS) : out;
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The country of a country-code top-level domain ("example.co.uk" → GB), else undefined. */
export function countryOfHost(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
  const tld = host.split('.').pop() ?? '';
  if (tld === 'uk') return 'GB';
  return /^[a-z]{2}$/.test(tld) && !['io', 'co', 'me', 'tv', 'ai', 'fm', 'ly', 'to'].includes(tld) ? tld.toUpperCase() : undefined;
}

