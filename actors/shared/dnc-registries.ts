/**
 * National do-not-call registries (issue 20 §1): which registry applies to a called country, and
 * how old its last load may be before calls there stop. Pure: the imports' dates and `now` in,
 * the registries that stop calls out. An operator loads each registry (`switchboard admin
 * import-dnc`); a load replaces that registry's list. A registry of the called country that was
 * never loaded, or was loaded longer ago than its law allows, holds every request to that country
 * back (the readiness blocker `dnc_registry_stale`, which the dialler's admission shares).
 *
 * docs/compliance.md ("National do-not-call registries") is this table with its sources.
 */

export interface DncRegistryRule {
  /** Stable id, the operator's import names it (`--registry`). */
  id: string;
  /** The called country it applies to (ISO 3166-1 alpha-2). */
  country: string;
  name: string;
  /** A load older than this many days may not be relied on; calls to the country stop after it. */
  maxAgeDays: number;
  citation: string;
  url: string;
  checked: string;
}

export const DNC_REGISTRIES: readonly DncRegistryRule[] = [
  {
    id: 'US-NDNC',
    country: 'US',
    name: 'US National Do Not Call Registry',
    maxAgeDays: 31,
    citation: '16 CFR 310.4(b)(3)(iv); 47 CFR 64.1200(c)(2)(i)(D)',
    url: 'https://www.ecfr.gov/current/title-16/chapter-I/subchapter-C/part-310/section-310.4',
    checked: '2026-11-27',
  },
  {
    id: 'CA-DNCL',
    country: 'CA',
    name: 'Canada National Do Not Call List',
    maxAgeDays: 31,
    citation: 'CRTC Unsolicited Telecommunications Rules, Part II (National DNCL Rules)',
    url: 'https://crtc.gc.ca/eng/trules-reglest.htm',
    checked: '2026-11-27',
  },
  {
    id: 'GB-TPS',
    country: 'GB',
    name: 'UK Telephone Preference Service (TPS)',
    maxAgeDays: 28,
    citation: 'PECR 2003 reg. 21(1)(b), (4); reg. 26',
    url: 'https://www.legislation.gov.uk/uksi/2003/2426/regulation/21',
    checked: '2026-11-27',
  },
  {
    id: 'GB-CTPS',
    country: 'GB',
    name: 'UK Corporate Telephone Preference Service (CTPS)',
    maxAgeDays: 28,
    citation: 'PECR 2003 reg. 21(1)(b), (4); reg. 26 (corporate subscribers, S.I. 2004/1039)',
    url: 'https://www.legislation.gov.uk/uksi/2003/2426/regulation/26',
    checked: '2026-11-27',
  },
  {
    id: 'AU-DNCR',
    country: 'AU',
    name: 'Australian Do Not Call Register',
    maxAgeDays: 30,
    citation: 'Do Not Call Register Act 2006 (Cth) s 11',
    url: 'https://donotcall.gov.au/consumers/faqs-for-consumers',
    checked: '2026-11-27',
  },
];

/** The registries that apply to calls to `country`. */
export function registriesOf(country: string): DncRegistryRule[] {
  return DNC_REGISTRIES.filter((r) => r.country === country.toUpperCase());
}

/** The registry an import names: `id` when given, else the country's only one; null when none fits. */
export function registryFor(country: string, id: string | undefined): DncRegistryRule | null {
  if (id) return DNC_REGISTRIES.find((r) => r.id === id.toUpperCase() && r.country === country.toUpperCase()) ?? null;
  const of = registriesOf(country);
  return of.length === 1 ? of[0] : null;
}

/** The last load of a registry. */
export interface RegistryImport {
  registry: string;
  importedAt: Date;
}

/** A registry that stops calls: never loaded, or loaded too long ago. */
export interface StaleRegistry {
  id: string;
  name: string;
  country: string;
  maxAgeDays: number;
  /** When it was last loaded; null: never. */
  importedAt: Date | null;
  /** Since when it stops calls (its load's age passed maxAgeDays); null: it was never loaded. */
  staleSince: Date | null;
}

const DAY_MS = 86_400_000;

/** When a load made at `importedAt` stops counting: a list older than `maxAgeDays` days may not be used. */
export function staleAfter(rule: Pick<DncRegistryRule, 'maxAgeDays'>, importedAt: Date): Date {
  return new Date(importedAt.getTime() + rule.maxAgeDays * DAY_MS);
}

/** The registries of `country` that stop calls at `now`. */
export function staleRegistries(country: string, imports: readonly RegistryImport[], now: Date): StaleRegistry[] {
  const stale: StaleRegistry[] = [];
  for (const rule of registriesOf(country)) {
    const last = imports.find((i) => i.registry === rule.id);
    const base = { id: rule.id, name: rule.name, country: rule.country, maxAgeDays: rule.maxAgeDays };
    if (!last) stale.push({ ...base, importedAt: null, staleSince: null });
    else if (now > staleAfter(rule, last.importedAt)) stale.push({ ...base, importedAt: last.importedAt, staleSince: staleAfter(rule, last.importedAt) });
  }
  return stale;
}

/** `staleRegistries` from the registries' last loads as the database keeps them (dnc_registry_imports rows). */
export function staleRegistriesOf(country: string, imports: readonly { registry: string; imported_at: Date }[], now: Date): StaleRegistry[] {
  return staleRegistries(country, imports.map((i) => ({ registry: i.registry, importedAt: i.imported_at })), now);
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** For a person: which registry stops calls and since when. */
export function describeStale(s: StaleRegistry): string {
  return s.importedAt && s.staleSince
    ? `The ${s.name} (${s.id}) was last loaded on ${day(s.importedAt)}; a load older than ${s.maxAgeDays} days may not be relied on, ` +
        `so calls to ${s.country} numbers have waited since ${s.staleSince.toISOString()} until the registry is loaded again.`
    : `The ${s.name} (${s.id}) has never been loaded, so calls to ${s.country} numbers wait until it is.`;
}
