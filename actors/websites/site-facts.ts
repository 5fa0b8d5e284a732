/**
 * What a website build knows about the business it builds for, and what its copy is. Plain data,
 * no behaviour: the build job gathers `SiteFacts` (customer row, order, research), a copywriter
 * turns them into `SiteCopy` (copywriter.ts), and the composer turns both into the page
 * (composer.ts). Nothing here reads the database, so every step is testable from a literal.
 */
import type { Mode } from '../../runtime/types.ts';

/** Most characters of the reseller's brief (issue 15: `brief` up to 4,000 characters). */
export const MAX_BRIEF_CHARS = 4_000;

/**
 * What was found on the customer's existing website (read-site.ts `readSite`). Every field is
 * what the site itself says, cleaned (whitespace collapsed, bounded in length) but never
 * invented: an empty list or null means "not found", not "none".
 */
export interface SiteResearch {
  /** The page's `<title>` (or `og:title`), ≤ 200 characters. Often "Name | slogan". */
  title: string | null;
  /** `<meta name=description>` (or `og:description`), ≤ 500 characters. */
  description: string | null;
  /** Names of services or products the site lists, ≤ 12, each ≤ 120 characters, in page order. */
  services: string[];
  /** Phone numbers in E.164, ≤ 5: `tel:` links first, then JSON-LD `telephone`, then numbers in the text. */
  phones: string[];
  /** E-mail addresses, lower-case, ≤ 5: `mailto:` links first, then JSON-LD `email`, then the text. */
  emails: string[];
  /** The postal address on one line ("1 High St, Leeds LS1 4AP, GB"), from JSON-LD or `<address>`; ≤ 300 characters. */
  address: string | null;
  /**
   * Opening hours, one line each, ≤ 14: schema.org's own notation when the site gave it
   * ("Mo-Fr 09:00-17:00", which the composer renders in the page's language), otherwise the
   * site's text as written ("Monday to Friday 9am–5pm").
   */
  openingHours: string[];
}

/** Everything a build starts from. The copywriter and composer read nothing else. */
export interface SiteFacts {
  /** The customer's name as the reseller registered it (`customers.name`); the page's name when `brandName` is null. */
  businessName: string;
  /** The name the public knows the business by, when it differs from `businessName`; shown instead of it. */
  brandName: string | null;
  /** The customer's country, ISO 3166-1 alpha-2 ("GB"): the default country for numbers found in research. */
  country: string;
  /** The customer's calling language, BCP 47 ("en-US", "de-DE"): the page's language (`<html lang>`) and its copy's. */
  locale: string;
  /** The customer's own number in E.164, the page's click-to-call; null when unknown (the first researched phone is used then). */
  phoneE164: string | null;
  /** The reseller's brief (≤ MAX_BRIEF_CHARS): what the business does and what the page should say; null when none was given. */
  brief: string | null;
  /**
   * The changes the reseller asked for in revisions, oldest first: instructions to the copywriter
   * ("put the opening hours higher"), never the page's words. The model follows them; the
   * deterministic copywriter cannot, and leaves them off the page.
   */
  changes?: string[];
  /** What was found on the customer's existing website; null when it has none or it could not be read. */
  research: SiteResearch | null;
  /**
   * The reseller's own brand name. The page never shows it unless the brief does (issue 15: "never
   * the service, the reseller's suppliers or the reseller's own brand unless the brief asks"); a
   * model's copy naming it otherwise is refused.
   */
  resellerName: string | null;
  /** Test mode builds carry a visible "test site" banner and are never indexed. */
  mode: Mode;
}

/** One service the page lists. */
export interface SiteService {
  /** Short name ("Boiler repair"), ≤ 80 characters. */
  name: string;
  /** One or two sentences, ≤ 300 characters; may be empty (the deterministic composer has no more than the name). */
  description: string;
}

/**
 * The words of a page, in the page's language. Section titles, labels and contact details are
 * not copy: the composer takes those from its own tables and the facts, so a model can never put
 * a wrong phone number or address on a page.
 */
export interface SiteCopy {
  /** The h1, ≤ 80 characters: normally the business's name. */
  headline: string;
  /** One line under the h1, ≤ 160 characters. */
  tagline: string;
  /** The opening paragraph, ≤ 600 characters. */
  intro: string;
  /** The services section; may be empty (the section is then left out). At most 8. */
  services: SiteService[];
  /** The "about" paragraph, ≤ 800 characters; may be empty (the section is then left out). */
  about: string;
  /** The click-to-call button's words ("Call us now"), ≤ 40 characters. The number is added by the composer. */
  callToAction: string;
  /** `<meta name=description>`, ≤ 160 characters. */
  metaDescription: string;
}

/** Upper bounds of each copy field, shared by the validator and the model's instructions. */
export const COPY_LIMITS = {
  headline: 80,
  tagline: 160,
  intro: 600,
  services: 8,
  serviceName: 80,
  serviceDescription: 300,
  about: 800,
  callToAction: 40,
  metaDescription: 160,
} as const;

/** A copywriter's answer: the copy, or why no page can be built (the build then ends `failed`). */
export type CopyResult = { ok: true; copy: SiteCopy } | { ok: false; reason: string };

/** The name the page shows: the brand name when there is one, else the business name. */
export function displayName(facts: Pick<SiteFacts, 'businessName' | 'brandName'>): string {
  return (facts.brandName?.trim() || facts.businessName.trim()).replace(/\s+/g, ' ');
}

/** The page's language subtag ("de" of "de-AT"), lower-case; "en" when the locale is empty. */
export function languageOf(locale: string): string {
  return (locale.split(/[-_]/)[0] || 'en').toLowerCase();
}
