import test from 'ava';
import { HtmlValidate } from 'html-validate';
import { accentFor, composePage, hoursRow, localeFormatsKept, MAX_PAGE_BYTES } from '../../actors/websites/composer.ts';
import { cannotBuildReason, copyProblems, deterministicCopy } from '../../actors/websites/copy.ts';
import { COPY_LIMITS, type SiteCopy, type SiteFacts } from '../../actors/websites/site-facts.ts';
import { bareFacts, HIDDEN_NAMES, RICH_RESEARCH, richFacts } from '../helpers/site-facts.ts';

function copyOf(facts: SiteFacts): SiteCopy {
  const result = deterministicCopy(facts);
  if (!result.ok) throw new Error(`cannot build: ${result.reason}`);
  return result.copy;
}

const page = (facts: SiteFacts, opts = {}) => composePage(facts, copyOf(facts), { year: 2025, ...opts }).html;
const count = (html: string, re: RegExp) => (html.match(re) ?? []).length;

test('deterministic copy of a rich customer: name, the description split into tagline and intro, services, the brief as about', (t) => {
  const copy = copyOf(richFacts());
  t.is(copy.headline, 'Leeds Plumbing & Heating');
  t.is(copy.tagline, 'Family-run plumbers serving Leeds since 1998.');
  t.is(copy.intro, 'Boiler repairs, bathroom fitting and 24-hour emergency call-outs, with fixed prices agreed before we start.');
  t.deepEqual(copy.services.map((s) => s.name), RICH_RESEARCH.services);
  t.is(copy.about, richFacts().brief!);
  t.is(copy.callToAction, 'Call us');
  t.true(copy.metaDescription.startsWith('Leeds Plumbing & Heating: Family-run plumbers'));
  t.true(copy.metaDescription.length <= COPY_LIMITS.metaDescription);
  t.deepEqual(copyProblems(copy, richFacts()), [], 'the deterministic copy passes the check the model must pass');
});

test('deterministic copy of a bare customer comes from the brief', (t) => {
  const copy = copyOf(bareFacts());
  t.is(copy.headline, 'Harbour Dental');
  t.is(copy.tagline, 'A small dental practice by the harbour.');
  t.is(copy.intro, 'Check-ups, hygiene appointments and emergency dental care.');
  t.deepEqual(copy.services, []);
  t.is(copy.about, 'Harbour Dental is here to help. Call us with your questions or to make an appointment.');
});

test('without a number to call the copy does not say "call us", in any language', (t) => {
  for (const locale of ['en-GB', 'de-DE', 'fr-FR', 'es-ES', 'nl-NL']) {
    const copy = copyOf(bareFacts({ phoneE164: null, locale }));
    t.notRegex(`${copy.about} ${copy.tagline}`, /call us|rufen sie|appelez|llámenos|bel ons/i, locale);
  }
  t.is(copyOf(bareFacts({ phoneE164: null })).about, 'Harbour Dental is here to help with your questions and appointments.');
});

test('cannot build: nothing but a name and contact details', (t) => {
  t.regex(cannotBuildReason(bareFacts({ brief: null }))!, /no brief and no existing website/);
  t.regex(cannotBuildReason(bareFacts({ brief: '  Hi there!  ' }))!, /nothing usable/);
  const contactOnly = { ...RICH_RESEARCH, description: null, services: [] };
  t.regex(cannotBuildReason(richFacts({ brief: null, research: contactOnly }))!, /gave no description or services/);
  // A brief that only names a supplier says nothing the page may repeat.
  t.truthy(cannotBuildReason(bareFacts({ brief: 'Their phone line runs on Twilio and the assistant on OpenAI.' })));
  t.truthy(cannotBuildReason(bareFacts({ businessName: '  ', brief: 'A long enough brief about the business.' })));
  const result = deterministicCopy(bareFacts({ brief: null }));
  t.false(result.ok);
  // Usable: a brief, a research description, or one researched service.
  t.is(cannotBuildReason(bareFacts()), null);
  t.is(cannotBuildReason(richFacts({ brief: null, research: { ...contactOnly, services: ['Roofing'] } })), null);
  t.is(cannotBuildReason(richFacts({ brief: null, research: { ...contactOnly, description: 'Roofers for the whole county, since 1982.' } })), null);
});

test('sentences of the brief that name a supplier never reach the copy', (t) => {
  const copy = copyOf(bareFacts({ brief: 'Our calls are answered with OpenAI. A small dental practice by the harbour, open to new patients.' }));
  t.notRegex(JSON.stringify(copy), /openai/i);
  t.is(copy.tagline, 'A small dental practice by the harbour, open to new patients.');
});

test('the page is a complete HTML5 document with landmarks, one h1 and a click-to-call', (t) => {
  const html = page(richFacts());
  t.true(html.startsWith('<!DOCTYPE html>\n<html lang="en-GB">'));
  t.regex(html, /<meta charset="utf-8">/);
  t.regex(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  t.regex(html, /<meta name="description" content="Leeds Plumbing &amp; Heating: Family-run plumbers[^"]*">/);
  // Name and tagline together would pass the 70 characters a title gets: the name alone.
  t.regex(html, /<title>Leeds Plumbing &amp; Heating<\/title>/);
  t.regex(page(bareFacts()), /<title>Harbour Dental – A small dental practice by the harbour\.<\/title>/);
  for (const tag of ['header', 'main', 'footer']) t.is(count(html, new RegExp(`<${tag}[\\s>]`, 'g')), 1, tag);
  t.is(count(html, /<h1[\s>]/g), 1);
  // The click-to-call dials E.164 and shows the number as it is written at home.
  t.regex(html, /<a class="btn" href="tel:\+441134960123">Call us <span class="num">0113\u00a0496\u00a00123<\/span><\/a>/);
  t.regex(html, /href="mailto:hello@leedsplumbing\.example"/);
  t.regex(html, /12 Kirkgate, Leeds LS1 6BY/);
  t.regex(html, /<span>Monday – Friday<\/span><span class="num">8:00 – 18:00<\/span>/);
  t.regex(html, /<span>Sunday: emergencies only<\/span>/);
  for (const s of RICH_RESEARCH.services) t.true(html.includes(`<h3>${s}</h3>`), s);
  t.regex(html, /© 2025 Leeds Plumbing &amp; Heating/);
  t.false(html.includes('noindex'));
  t.false(html.includes('class="test"'));
});

test('the page makes no request of its own: no script, no external URL, no image, a CSP forbidding the rest', (t) => {
  for (const html of [page(richFacts()), page(bareFacts())]) {
    t.notRegex(html, /<script|<img|<iframe|<object|@import|url\(/i);
    t.notRegex(html, /\b(?:src|srcset)=/i);
    t.notRegex(html, /https?:\/\//i);
    t.is(count(html, /<link /g), 1);
    t.regex(html, /<link rel="icon" href="data:,">/);
    t.regex(html, /content="default-src 'none'; style-src 'unsafe-inline'; img-src data:;/);
  }
});

test('test mode shows the banner and is not indexed; a live preview is not indexed either; a live page is', (t) => {
  const testPage = page(richFacts({ mode: 'test' }));
  t.regex(testPage, /<p class="test" role="note">Test site: not public and not indexed<\/p>/);
  t.regex(testPage, /<meta name="robots" content="noindex, nofollow">/);
  const preview = page(richFacts(), { preview: true });
  t.regex(preview, /<meta name="robots" content="noindex, nofollow">/);
  t.false(preview.includes('class="test"'));
  t.false(page(richFacts()).includes('robots'));
});

test('the page names the business only: never the service, a supplier or the reseller', (t) => {
  for (const facts of [richFacts(), bareFacts(), richFacts({ mode: 'test' }), bareFacts({ locale: 'de-DE' })]) {
    t.notRegex(page(facts), HIDDEN_NAMES);
    t.notRegex(page(facts, { preview: true }), HIDDEN_NAMES);
  }
});

test('hostile text is escaped everywhere it appears', (t) => {
  const evil = '<script>alert(1)</script>"><img src=x onerror=alert(1)>\'&';
  const facts = richFacts({
    businessName: evil,
    brandName: null,
    brief: `${evil} is a business with a long enough brief.`,
    research: { ...RICH_RESEARCH, description: `${evil} description text here.`, services: [evil], address: evil, openingHours: [evil], emails: ['x"><script>@evil.example', 'ok@shop.example'] },
  });
  const copy = copyOf(facts);
  const html = composePage(facts, { ...copy, callToAction: evil, metaDescription: evil, headline: evil }, { year: 2025 }).html;
  t.notRegex(html, /<script|<img/i);
  t.false(html.includes(evil));
  t.true(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&#39;&amp;'));
  // An address unfit for a mailto: link is not linked at all.
  t.regex(html, /mailto:ok@shop\.example/);
  t.false(html.includes('evil.example'));
});

test('a page at every limit, full of characters that escape long, stays under 100 KB', (t) => {
  const fill = (n: number) => '&"<>'.repeat(Math.ceil(n / 4)).slice(0, n);
  const copy: SiteCopy = {
    headline: fill(COPY_LIMITS.headline),
    tagline: fill(COPY_LIMITS.tagline),
    intro: fill(COPY_LIMITS.intro),
    services: Array.from({ length: COPY_LIMITS.services }, () => ({ name: fill(COPY_LIMITS.serviceName), description: fill(COPY_LIMITS.serviceDescription) })),
    about: fill(COPY_LIMITS.about),
    callToAction: fill(COPY_LIMITS.callToAction),
    metaDescription: fill(COPY_LIMITS.metaDescription),
  };
  t.deepEqual(copyProblems(copy, richFacts()), []);
  const research = { ...RICH_RESEARCH, address: fill(300), openingHours: Array.from({ length: 14 }, () => fill(120)) };
  const composed = composePage(richFacts({ research, businessName: fill(200), brandName: null, mode: 'test' }), copy);
  t.is(composed.bytes, Buffer.byteLength(composed.html, 'utf8'));
  t.true(composed.bytes < MAX_PAGE_BYTES, `${composed.bytes} bytes`);
});

test('the page speaks its language: German, French, Spanish and Dutch words; English for the rest', (t) => {
  const de = page(richFacts({ locale: 'de-DE', mode: 'test' }));
  t.true(de.startsWith('<!DOCTYPE html>\n<html lang="de-DE">'));
  for (const word of ['Leistungen', 'Öffnungszeiten', 'Kontakt', 'Rufen Sie uns an', 'Testseite', 'Zum Inhalt springen', 'Montag – Freitag']) t.true(de.includes(word), word);
  t.true(page(richFacts({ locale: 'fr-FR' })).includes('Horaires d&#39;ouverture'));
  t.true(page(richFacts({ locale: 'es-ES' })).includes('Llámenos'));
  t.true(page(richFacts({ locale: 'nl-NL' })).includes('Openingstijden'));
  const ja = page(bareFacts({ locale: 'ja-JP' }));
  t.true(ja.includes('<html lang="ja-JP">') && ja.includes('Call us'));
  t.true(page(bareFacts({ locale: 'x"><b' })).includes('<html lang="en">'), 'a malformed locale falls back to a safe lang');
});

test('the bare page leaves out what it does not know', (t) => {
  const html = page(bareFacts({ phoneE164: null }));
  t.false(html.includes('tel:'));
  t.false(html.includes('s-services'));
  t.false(html.includes('s-hours'));
  t.false(html.includes('s-contact'));
  // Without the customer's number the first researched number is the click-to-call.
  t.regex(page(richFacts({ phoneE164: null, research: { ...RICH_RESEARCH, phones: ['+441134960777'] } })), /href="tel:\+441134960777"/);
});

test('opening hours in schema.org notation are written in the page language', (t) => {
  t.deepEqual(hoursRow('Mo-Fr 08:00-18:00', 'en-GB'), ['Monday – Friday', '8:00 – 18:00']);
  t.deepEqual(hoursRow('Mo,We,Sa-Su 9:00-12:30', 'de-DE'), ['Montag, Mittwoch, Samstag – Sonntag', '9:00 – 12:30']);
  t.deepEqual(hoursRow('Monday to Friday 9am–5pm', 'en-GB'), ['Monday to Friday 9am–5pm']);
});

test('copyProblems refuses wrong shapes, suppliers and the reseller (unless the brief names it)', (t) => {
  const good = copyOf(richFacts());
  t.deepEqual(copyProblems({ ...good, intro: 'Powered by OpenAI.' }, richFacts()), ['names a supplier']);
  t.deepEqual(copyProblems({ ...good, about: 'Built by Northwind Calls.' }, richFacts()), ['names the reseller']);
  t.deepEqual(copyProblems({ ...good, about: 'Built by Northwind Calls.' }, richFacts({ brief: 'Say the page is built by Northwind Calls. Plumbers in Leeds.' })), []);
  t.deepEqual(copyProblems(null, richFacts()), ['not a JSON object']);
  t.deepEqual(copyProblems({ ...good, headline: ' ', extra: 1 }, richFacts()), ['headline is empty', 'unknown fields: extra']);
  t.deepEqual(copyProblems({ ...good, services: [{ name: 'x' }] }, richFacts()), ['services[0] is not {name, description}']);
  t.deepEqual(copyProblems({ ...good, tagline: 'x'.repeat(161) }, richFacts()), ['tagline is longer than 160 characters']);
});

test('the accent colour is stable per name', (t) => {
  t.is(accentFor('Leeds Plumbing'), accentFor('Leeds Plumbing'));
  t.regex(accentFor(''), /^#[0-9a-f]{6}$/);
});

test('the pages are valid HTML by html-validate\'s recommended rules: rich and bare, live, test mode and preview, every language', async (t) => {
  // A button's words ("Call us", the ☎) may wrap before the number; the number itself may not
  // (its spaces are non-breaking, which the rule still checks in the contact list).
  const validator = new HtmlValidate({ extends: ['html-validate:recommended'], rules: { 'tel-non-breaking': ['error', { ignoreClasses: ['btn'] }] } });
  const cases: [string, SiteFacts, object][] = [
    ['rich', richFacts(), {}],
    ['bare', bareFacts(), {}],
    ['bare without a phone', bareFacts({ phoneE164: null }), {}],
    ['test mode', richFacts({ mode: 'test' }), {}],
    ['preview', richFacts(), { preview: true }],
    ...(['de-DE', 'fr-FR', 'es-ES', 'nl-NL'] as const).map((locale): [string, SiteFacts, object] => [locale, richFacts({ locale }), {}]),
  ];
  for (const [what, facts, opts] of cases) {
    const report = await validator.validateString(page(facts, opts));
    t.deepEqual(report.results.flatMap((r) => r.messages.map((m) => `${m.ruleId}: ${m.message}`)), [], what);
  }
});

test('a locale spelt in ever more cases keeps at most 1,000 locales of formatters, each answer still right', (t) => {
  // One language spelt 1,500 ways (case and a private-use suffix): more than 1,000 distinct locale strings.
  const spellings: string[] = [];
  for (let i = 0; spellings.length < 1_500; i++) {
    const base = [...'fr-fr'].map((c, j) => ((i >> j) & 1 ? c.toUpperCase() : c)).join('');
    spellings.push(`${base}-u-nu-latn-x-${i}`);
  }
  for (const locale of spellings) t.deepEqual(hoursRow('Mo-Fr 08:00-18:00', locale), ['lundi – vendredi', '8:00 – 18:00']);
  t.true(localeFormatsKept() <= 1_000, `${localeFormatsKept()} kept`);
});
