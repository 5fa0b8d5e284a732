/**
 * A page's words without a model: the deterministic copywriter, the rule for when no page can be
 * built, and the check every copy passes (the model's included) before a page is composed. Pure.
 */
import { namesSupplier } from '../shared/output-filter.ts';
import { bounded } from './text.ts';
import { COPY_LIMITS, displayName, languageOf, type CopyResult, type SiteCopy, type SiteFacts, type SiteService } from './site-facts.ts';

/** The languages with their own words; any other falls back to English. */
export type PageLanguage = 'en' | 'de' | 'fr' | 'es' | 'nl';

/** Fixed words of a page in one language: section titles, labels, and the deterministic copy's phrases. */
export interface PageWords {
  skip: string;
  services: string;
  about: string;
  hours: string;
  contact: string;
  phone: string;
  email: string;
  address: string;
  callUs: string;
  testBanner: string;
  /** The about text when nothing else is known: `{name}` is replaced. */
  aboutFallback: string;
  /** The same without a number to call (the page shows no phone then). */
  aboutFallbackNoPhone: string;
  /** The tagline from services: `{list}` is replaced. */
  servicesTagline: string;
  /** Joins the last two items of a list ("A, B and C"). */
  and: string;
  /** The tagline when the brief and research give none. */
  taglineFallback: string;
  taglineFallbackNoPhone: string;
  /** Meta description suffix when the description is short. */
  metaCall: string;
}

const WORDS: Record<PageLanguage, PageWords> = {
  en: {
    skip: 'Skip to content',
    services: 'Services',
    about: 'About us',
    hours: 'Opening hours',
    contact: 'Contact',
    phone: 'Phone',
    email: 'Email',
    address: 'Address',
    callUs: 'Call us',
    testBanner: 'Test site: not public and not indexed',
    aboutFallback: '{name} is here to help. Call us with your questions or to make an appointment.',
    aboutFallbackNoPhone: '{name} is here to help with your questions and appointments.',
    servicesTagline: '{list}',
    and: 'and',
    taglineFallback: 'Call us: we are happy to help.',
    taglineFallbackNoPhone: 'We are happy to help.',
    metaCall: 'Call us.',
  },
  de: {
    skip: 'Zum Inhalt springen',
    services: 'Leistungen',
    about: 'Über uns',
    hours: 'Öffnungszeiten',
    contact: 'Kontakt',
    phone: 'Telefon',
    email: 'E-Mail',
    address: 'Adresse',
    callUs: 'Rufen Sie uns an',
    testBanner: 'Testseite: nicht öffentlich und nicht indexiert',
    aboutFallback: '{name} ist für Sie da. Rufen Sie uns an, wenn Sie Fragen haben oder einen Termin möchten.',
    aboutFallbackNoPhone: '{name} ist für Sie da, bei Fragen und für Ihren Termin.',
    servicesTagline: '{list}',
    and: 'und',
    taglineFallback: 'Rufen Sie uns an: Wir helfen Ihnen gern.',
    taglineFallbackNoPhone: 'Wir helfen Ihnen gern.',
    metaCall: 'Rufen Sie uns an.',
  },
  fr: {
    skip: 'Aller au contenu',
    services: 'Services',
    about: 'À propos',
    hours: "Horaires d'ouverture",
    contact: 'Contact',
    phone: 'Téléphone',
    email: 'E-mail',
    address: 'Adresse',
    callUs: 'Appelez-nous',
    testBanner: 'Site de test : non public et non indexé',
    aboutFallback: '{name} est à votre service. Appelez-nous pour toute question ou pour prendre rendez-vous.',
    aboutFallbackNoPhone: '{name} est à votre service pour vos questions et vos rendez-vous.',
    servicesTagline: '{list}',
    and: 'et',
    taglineFallback: 'Appelez-nous : nous sommes là pour vous aider.',
    taglineFallbackNoPhone: 'Nous sommes là pour vous aider.',
    metaCall: 'Appelez-nous.',
  },
  es: {
    skip: 'Saltar al contenido',
    services: 'Servicios',
    about: 'Sobre nosotros',
    hours: 'Horario',
    contact: 'Contacto',
    phone: 'Teléfono',
    email: 'Correo electrónico',
    address: 'Dirección',
    callUs: 'Llámenos',
    testBanner: 'Sitio de prueba: no público y no indexado',
    aboutFallback: '{name} está a su servicio. Llámenos si tiene preguntas o para pedir una cita.',
    aboutFallbackNoPhone: '{name} está a su servicio para sus preguntas y sus citas.',
    servicesTagline: '{list}',
    and: 'y',
    taglineFallback: 'Llámenos: estaremos encantados de ayudarle.',
    taglineFallbackNoPhone: 'Estaremos encantados de ayudarle.',
    metaCall: 'Llámenos.',
  },
  nl: {
    skip: 'Naar de inhoud',
    services: 'Diensten',
    about: 'Over ons',
    hours: 'Openingstijden',
    contact: 'Contact',
    phone: 'Telefoon',
    email: 'E-mail',
    address: 'Adres',
    callUs: 'Bel ons',
    testBanner: 'Testsite: niet openbaar en niet geïndexeerd',
    aboutFallback: '{name} staat voor u klaar. Bel ons met uw vragen of om een afspraak te maken.',
    aboutFallbackNoPhone: '{name} staat voor u klaar voor uw vragen en afspraken.',
    servicesTagline: '{list}',
    and: 'en',
    taglineFallback: 'Bel ons: we helpen u graag.',
    taglineFallbackNoPhone: 'We helpen u graag.',
    metaCall: 'Bel ons.',
  },
};

/** The page language for a locale: its own when we have its words, else English. */
export function pageLanguage(locale: string): PageLanguage {
  const lang = languageOf(locale);
  return lang in WORDS ? (lang as PageLanguage) : 'en';
}

export function wordsFor(locale: string): PageWords {
  return WORDS[pageLanguage(locale)];
}

/** Fewest letters a brief or description needs to count as saying something. */
const MIN_LETTERS = 20;
const letters = (text: string | null | undefined) => (text ?? '').replace(/[^\p{L}]/gu, '').length;

/** The brief's sentences that name no supplier, whitespace collapsed. */
function usableBrief(facts: SiteFacts): string {
  const text = (facts.brief ?? '').replace(/\s+/g, ' ').trim();
  return sentences(text).filter((s) => !namesSupplier(s)).join(' ');
}

/** Sentences of `text` (ending in . ! ? or the end). */
function sentences(text: string): string[] {
  return (text.match(/[^.!?]+(?:[.!?]+(?=\s|$)|$)/gu) ?? []).map((s) => s.trim()).filter(Boolean);
}

/** The first sentence of `text` that fits `max`, else `text` cut at `max`. */
function firstSentence(text: string, max: number): string {
  const first = sentences(text)[0] ?? text;
  return bounded(first, max);
}

/**
 * Why no page can be built from `facts`, or null when one can. A page needs something to say
 * about what the business does; its name and contact details alone make a stub, not a page.
 * What counts as usable:
 * - a brief with at least 20 letters in sentences that name no supplier;
 * - research with a description of at least 20 letters, or at least one service.
 * A title, phone numbers, an address or opening hours alone are not enough: they make the
 * contact section, not the page. Cannot build → the build ends `failed` and the fee is refunded.
 */
export function cannotBuildReason(facts: SiteFacts): string | null {
  if (!displayName(facts)) return 'the customer has no name';
  if (letters(usableBrief(facts)) >= MIN_LETTERS) return null;
  const r = facts.research;
  if (r && (letters(r.description) >= MIN_LETTERS || r.services.length > 0)) return null;
  return r
    ? 'nothing usable to write about: no brief, and the existing website gave no description or services'
    : 'nothing usable to write about: no brief and no existing website';
}

/** "A, B and C". */
function listText(items: string[], and: string): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${and} ${items.at(-1)}`;
}

/**
 * The copy written from the facts alone, in the page's language (en, de, fr, es, nl; English
 * otherwise), by fixed rules: the headline is the name; the tagline the research description's
 * first sentence, else the services listed, else the brief's first sentence; the intro the
 * description (or the brief); the about text the brief (its sentences naming no supplier) when
 * the intro did not use it, else a fixed sentence; services by name only. Text from the brief
 * and the old site is used as written: it is the customer's own language more often than ours.
 * The changes asked for in revisions (`facts.changes`) are instructions, which fixed rules cannot
 * follow: they never reach the page (a revision rebuilds it from the brief and current facts).
 */
export function deterministicCopy(facts: SiteFacts): CopyResult {
  const reason = cannotBuildReason(facts);
  if (reason) return { ok: false, reason };
  const w = wordsFor(facts.locale);
  const name = displayName(facts);
  const r = facts.research;
  // "Call us" only where the page shows a number to call.
  const callable = Boolean(facts.phoneE164 || r?.phones.length);
  const brief = usableBrief(facts);
  const description = r?.description && letters(r.description) >= MIN_LETTERS ? r.description : '';
  const serviceNames = (r?.services ?? []).slice(0, COPY_LIMITS.services).map((s) => bounded(s, COPY_LIMITS.serviceName));

  const tagline = description
    ? firstSentence(description, COPY_LIMITS.tagline)
    : serviceNames.length
      ? bounded(w.servicesTagline.replace('{list}', listText(serviceNames.slice(0, 3), w.and)), COPY_LIMITS.tagline)
      : letters(brief) >= MIN_LETTERS
        ? firstSentence(brief, COPY_LIMITS.tagline)
        : callable
          ? w.taglineFallback
          : w.taglineFallbackNoPhone;
  const introSource = description || brief;
  // The tagline is often the source's first sentence: the intro goes on from there.
  const rest = introSource.startsWith(tagline) ? introSource.slice(tagline.length).trim() : introSource;
  const intro = rest ? bounded(rest, COPY_LIMITS.intro) : '';
  const about = brief && introSource !== brief ? bounded(brief, COPY_LIMITS.about) : (callable ? w.aboutFallback : w.aboutFallbackNoPhone).replace('{name}', name);
  const services: SiteService[] = serviceNames.map((s) => ({ name: s, description: '' }));
  const metaBase = description || brief || tagline;
  const metaDescription = bounded(metaBase.toLowerCase().includes(name.toLowerCase()) ? metaBase : `${name}: ${metaBase}`, COPY_LIMITS.metaDescription);
  const callToAction = w.callUs;

  return { ok: true, copy: { headline: bounded(name, COPY_LIMITS.headline), tagline, intro, services, about, callToAction, metaDescription } };
}

/** Problems of a copy from outside (the model), each one line; empty when it may be used. */
export function copyProblems(value: unknown, facts: SiteFacts): string[] {
  const problems: string[] = [];
  if (!value || typeof value !== 'object' || Array.isArray(value)) return ['not a JSON object'];
  const v = value as Record<string, unknown>;
  const text = (field: keyof typeof COPY_LIMITS, max: number, required: boolean) => {
    const s = v[field];
    if (typeof s !== 'string') return void problems.push(`${field} is not a string`);
    if (required && !s.trim()) problems.push(`${field} is empty`);
    if (s.length > max) problems.push(`${field} is longer than ${max} characters`);
  };
  text('headline', COPY_LIMITS.headline, true);
  text('tagline', COPY_LIMITS.tagline, true);
  text('intro', COPY_LIMITS.intro, false);
  text('about', COPY_LIMITS.about, false);
  text('callToAction', COPY_LIMITS.callToAction, true);
  text('metaDescription', COPY_LIMITS.metaDescription, true);
  const extra = Object.keys(v).filter((k) => !['headline', 'tagline', 'intro', 'services', 'about', 'callToAction', 'metaDescription'].includes(k));
  if (extra.length) problems.push(`unknown fields: ${extra.join(', ')}`);
  if (!Array.isArray(v.services)) problems.push('services is not a list');
  else {
    if (v.services.length > COPY_LIMITS.services) problems.push(`more than ${COPY_LIMITS.services} services`);
    v.services.forEach((s, i) => {
      const o = s as Record<string, unknown> | null;
      if (!o || typeof o !== 'object' || typeof o.name !== 'string' || typeof o.description !== 'string') return void problems.push(`services[${i}] is not {name, description}`);
      if (!o.name.trim() || o.name.length > COPY_LIMITS.serviceName) problems.push(`services[${i}].name is empty or too long`);
      if (o.description.length > COPY_LIMITS.serviceDescription) problems.push(`services[${i}].description is too long`);
    });
  }
  if (problems.length) return problems;
  const all = allText(value as SiteCopy);
  if (namesSupplier(all)) problems.push('names a supplier');
  const reseller = facts.resellerName?.trim();
  if (reseller && all.toLowerCase().includes(reseller.toLowerCase()) && ![facts.brief ?? '', ...(facts.changes ?? [])].join('\n').toLowerCase().includes(reseller.toLowerCase())) {
    problems.push('names the reseller');
  }
  // A change asked for is an instruction: copy that quotes one shows instructions as words.
  const squashed = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();
  if ((facts.changes ?? []).some((c) => squashed(c).length >= 20 && squashed(all).includes(squashed(c)))) problems.push('quotes a requested change');
  return problems;
}

/** Every word of a copy, for the name checks. */
export function allText(copy: SiteCopy): string {
  return [copy.headline, copy.tagline, copy.intro, copy.about, copy.callToAction, copy.metaDescription, ...copy.services.flatMap((s) => [s.name, s.description])].join('\n');
}
