/**
 * Legal calling windows (spec: only dial inside each country's legal calling window). Pure: an
 * E.164 number, its country and an instant in; answers depend on nothing else (no clock, no I/O).
 * The rules themselves, with their citations, are window-rules.ts.
 *
 * A number may be in several time zones (an Australian mobile, an area code straddling a zone
 * line, an unknown area code): it is open only when every rule that could reach the callee is
 * open in every zone the callee could be in. Callees may be sole traders, whom these laws treat as
 * consumers, so the consumer rule always applies.
 *
 * Emergency closures (La. R.S. 45:844.31: no solicitation while a state of emergency is declared)
 * are not windows: an operator switches a jurisdiction closed, and `emergencyClosure` answers
 * whether a number may be in one that is.
 */
import { localWallToInstant, zoneOffsetMs } from '../shared/zone-time.ts';
import Holidays from 'date-holidays';
import { NANP_AREA_CODES, nanpAreaOf, type AreaCode } from '../shared/nanp-area-codes.ts';
import { ES_REGIONS, esRegionsOf } from './es-regions.ts';
import { WINDOW_RULES, type HolidaySource, type Period, type WindowRule } from './window-rules.ts';

export { WINDOW_RULES, type Period, type WindowRule } from './window-rules.ts';

export type CallingCountry = 'US' | 'CA' | 'AU' | 'GB' | 'IE' | 'DE' | 'FR' | 'ES' | 'NL';
export const CALLING_COUNTRIES: readonly CallingCountry[] = ['US', 'CA', 'AU', 'GB', 'IE', 'DE', 'FR', 'ES', 'NL'];

/** Longest look-ahead of nextOpening, in days; the longest real closure (Christmas to New Year's) is far shorter. */
export const MAX_SEARCH_DAYS = 31;

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** State and province rules stricter than the national window, by NANP country and region code. */
const REGION_RULES: Readonly<Record<'US' | 'CA', Readonly<Record<string, WindowRule>>>> = {
  US: regionRules('US'),
  CA: regionRules('CA'),
};

function regionRules(country: 'US' | 'CA'): Record<string, WindowRule> {
  return Object.fromEntries(
    Object.values(WINDOW_RULES as Record<string, WindowRule>)
      .filter((r) => r.id.startsWith(`${country}-`))
      .map((r) => [r.id.slice(3), r]),
  );
}

const CALLING_CODES: Readonly<Record<CallingCountry, string>> = { US: '1', CA: '1', AU: '61', GB: '44', IE: '353', DE: '49', FR: '33', ES: '34', NL: '31' };

const SINGLE_ZONE: Partial<Record<CallingCountry, string>> = { GB: 'Europe/London', IE: 'Europe/Dublin', DE: 'Europe/Berlin', FR: 'Europe/Paris', NL: 'Europe/Amsterdam' };

const AU_MAINLAND = ['Australia/Perth', 'Australia/Darwin', 'Australia/Adelaide', 'Australia/Brisbane', 'Australia/Sydney', 'Australia/Melbourne', 'Australia/Hobart'];
/**
 * Australian geographic area codes. 02 includes Broken Hill's clock and Lord Howe Island (02 6563);
 * 07 includes Tweed Heads, in NSW, which keeps daylight time; 08 includes Eucla's +08:45.
 */
const AU_AREA_ZONES: Readonly<Record<string, readonly string[]>> = {
  '2': ['Australia/Sydney', 'Australia/Broken_Hill', 'Australia/Lord_Howe'],
  '3': ['Australia/Melbourne', 'Australia/Hobart'],
  '7': ['Australia/Brisbane', 'Australia/Sydney'],
  '8': ['Australia/Adelaide', 'Australia/Perth', 'Australia/Darwin', 'Australia/Broken_Hill', 'Australia/Eucla'],
};
/** Canary Islands geographic prefixes: one hour behind the mainland all year. */
const CANARY_PREFIXES = ['822', '828', '922', '928'];

const NANP_ZONES = {
  US: uniqueZones('US'),
  CA: uniqueZones('CA'),
};

function uniqueZones(country: AreaCode['country']): string[] {
  const zones = new Set<string>();
  for (const code of Object.values(NANP_AREA_CODES)) if (code.country === country) for (const z of code.zones) zones.add(z);
  return [...zones].sort();
}

function nationalNumber(e164: string, country: string): string {
  if (!(CALLING_COUNTRIES as readonly string[]).includes(country)) throw new RangeError(`calling windows: unsupported country ${country}`);
  if (!/^\+\d{7,15}$/.test(e164)) throw new RangeError(`calling windows: ${e164} is not an E.164 number`);
  const code = CALLING_CODES[country as CallingCountry];
  if (!e164.startsWith(`+${code}`)) throw new RangeError(`calling windows: ${e164} is not a ${country} number`);
  return e164.slice(1 + code.length);
}

/** The NANP area code entry of a +1 number, checked against the stated country; null if unlisted. */
function areaCode(e164: string, country: string): AreaCode | null {
  nationalNumber(e164, country); // a +1 number of `country`, or a RangeError
  const entry = nanpAreaOf(e164);
  if (entry && entry.country !== country) throw new RangeError(`calling windows: area code of ${e164} is in ${entry.country}, not ${country}`);
  return entry;
}

/** Every IANA time zone the holder of `e164` may be in. */
export function callingZones(e164: string, country: string): string[] {
  const nsn = nationalNumber(e164, country);
  switch (country) {
    case 'US':
    case 'CA':
      return [...(areaCode(e164, country)?.zones ?? NANP_ZONES[country])];
    case 'AU':
      // Mobiles (04…) and non-geographic numbers can be anywhere on the mainland.
      return [...(AU_AREA_ZONES[nsn[0]] ?? AU_MAINLAND)];
    case 'ES':
      // Mobiles and non-geographic numbers may be in the Canaries too.
      if (CANARY_PREFIXES.some((p) => nsn.startsWith(p))) return ['Atlantic/Canary'];
      return /^[89]/.test(nsn) ? ['Europe/Madrid'] : ['Europe/Madrid', 'Atlantic/Canary'];
    default:
      return [SINGLE_ZONE[country as CallingCountry]!];
  }
}

/**
 * Every rule that could reach the holder of `e164`: the national one, and a state's or
 * province's (every one of them for an unknown area code). A Spanish number's rule carries the
 * regional holidays of every community it may be in.
 */
export function callingRules(e164: string, country: string): WindowRule[] {
  const nsn = nationalNumber(e164, country);
  switch (country) {
    case 'US':
    case 'CA': {
      const regional = REGION_RULES[country];
      const entry = areaCode(e164, country);
      if (!entry) return [WINDOW_RULES[country], ...Object.values(regional)];
      const rule = regional[entry.region];
      return rule ? [WINDOW_RULES[country], rule] : [WINDOW_RULES[country]];
    }
    case 'ES':
      return [spainRule(esRegionsOf(nsn))];
    default:
      return [WINDOW_RULES[country as Exclude<CallingCountry, 'US' | 'CA' | 'ES'>]];
  }
}

const spainRules = new Map<string, WindowRule>();

/** Spain's window with the holidays of `regions` (date-holidays' regional lists include the national days). */
function spainRule(regions: readonly string[]): WindowRule {
  const key = regions.join('/');
  let rule = spainRules.get(key);
  if (!rule) {
    const id = regions.length === ES_REGIONS.length ? 'ES' : `ES-${key}`;
    rule = { ...WINDOW_RULES.ES, id, holidays: regions.map((state): HolidaySource => ({ country: 'ES', state })) };
    spainRules.set(key, rule);
  }
  return rule;
}

// ---- emergency closures -----------------------------------------------------------------------

/**
 * Every jurisdiction an operator may close: each calling country, each US state and DC, each
 * Canadian province and territory (the regions of the area-code table), each Spanish community.
 */
export const EMERGENCY_JURISDICTIONS: ReadonlySet<string> = new Set([
  ...CALLING_COUNTRIES,
  ...Object.values(NANP_AREA_CODES).map((c) => `${c.country}-${c.region}`),
  ...ES_REGIONS.map((r) => `ES-${r}`),
]);

/**
 * The jurisdictions the holder of `e164` may be in: its country, and its state, province or
 * community where the number tells (every one of the country's where it does not).
 */
export function callingJurisdictions(e164: string, country: string): string[] {
  const nsn = nationalNumber(e164, country);
  switch (country) {
    case 'US':
    case 'CA': {
      const entry = areaCode(e164, country);
      if (entry) return [country, `${country}-${entry.region}`];
      const regions = new Set(Object.values(NANP_AREA_CODES).filter((c) => c.country === country).map((c) => `${country}-${c.region}`));
      return [country, ...[...regions].sort()];
    }
    case 'ES':
      return ['ES', ...esRegionsOf(nsn).map((r) => `ES-${r}`)];
    default:
      return [country];
  }
}

/**
 * The first jurisdiction `e164` may be in that an operator has closed (`closed`: jurisdiction
 * codes, e.g. 'US-LA' during a Louisiana state of emergency), or null when none is.
 */
export function emergencyClosure(e164: string, country: string, closed: ReadonlySet<string>): string | null {
  if (closed.size === 0) {
    nationalNumber(e164, country);
    return null;
  }
  return callingJurisdictions(e164, country).find((j) => closed.has(j)) ?? null;
}

// ---- local time -------------------------------------------------------------------------------

/** The local calendar day (days since 1970-01-01) and minute of day (with fraction) at `ms` in `zone`. */
function localClock(zone: string, ms: number): { day: number; minute: number } {
  const wall = ms + zoneOffsetMs(zone, ms);
  const day = Math.floor(wall / DAY_MS);
  return { day, minute: (wall - day * DAY_MS) / MINUTE_MS };
}

const weekdayOf = (day: number): number => (day + 4) % 7; // 1970-01-01 was a Thursday
const isoDate = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** Re-exported: the dialler's callers and tests read it here. */
export { localWallToInstant };

// ---- holidays ---------------------------------------------------------------------------------

const holidayCache = new Map<string, Set<string>>();

/** Whether local date `date` (YYYY-MM-DD) is a public holiday (type 'public' only) of `source`. */
function isPublicHoliday(source: HolidaySource, date: string): boolean {
  const year = Number(date.slice(0, 4));
  const key = `${source.country}/${source.state ?? ''}/${year}`;
  let dates = holidayCache.get(key);
  if (!dates) {
    dates = new Set();
    const hd = source.state ? new Holidays(source.country, source.state) : new Holidays(source.country);
    for (const h of hd.getHolidays(year)) {
      if (h.type !== 'public') continue;
      const first = Math.floor(Date.parse(`${h.date.slice(0, 10)}T00:00:00Z`) / DAY_MS);
      const days = Math.max(1, Math.round((h.end.getTime() - h.start.getTime()) / DAY_MS));
      for (let d = 0; d < days; d++) dates.add(isoDate(first + d));
    }
    holidayCache.set(key, dates);
  }
  return dates.has(date);
}

/** Whether `rule` closes local date `date` (YYYY-MM-DD) as a holiday. */
function isClosedDay(rule: WindowRule, date: string): boolean {
  return rule.alsoClosed.includes(date.slice(5)) || rule.holidays.some((source) => isPublicHoliday(source, date));
}

/** Open periods of `rule` on local day `day`. */
function periodsOn(rule: WindowRule, day: number): readonly Period[] {
  if (isClosedDay(rule, isoDate(day))) return [];
  return rule.week[weekdayOf(day)];
}

/** Whether `rule` is open at `ms` on the clock of `zone` alone. */
function openOnClock(rule: WindowRule, zone: string, ms: number): boolean {
  const { day, minute } = localClock(zone, ms);
  return periodsOn(rule, day).some((p) => minute >= p.openMinute && minute < p.closeMinute);
}

/** The clocks `rule` is read in for a callee in `zone`: the callee's, then any fixed clock the rule names. */
const clocksOf = (rule: WindowRule, zone: string): string[] => [zone, ...rule.alsoReadIn];

function ruleOpen(rule: WindowRule, zone: string, ms: number): boolean {
  return clocksOf(rule, zone).every((clock) => openOnClock(rule, clock, ms));
}

// ---- the answers ------------------------------------------------------------------------------

/** Whether `e164` may be called at `at`: every applicable rule is open in every zone it may be in. */
export function isOpen(e164: string, country: string, at: Date): boolean {
  const rules = callingRules(e164, country);
  return callingZones(e164, country).every((zone) => rules.every((r) => ruleOpen(r, zone, at.getTime())));
}

interface Span {
  start: number;
  end: number;
}

/** Intersection of two sorted lists of disjoint half-open spans. */
function intersect<T extends { start: number; end: number }>(a: readonly T[], b: readonly T[]): Span[] {
  const out: Span[] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const start = Math.max(a[i].start, b[j].start);
    const end = Math.min(a[i].end, b[j].end);
    if (start < end) out.push({ start, end });
    if (a[i].end < b[j].end) i++;
    else j++;
  }
  return out;
}

/** Instants within [fromMs, toMs) at which every rule is open in `zone`, as sorted spans. */
function openSpansInZone(zone: string, rules: readonly WindowRule[], fromMs: number, toMs: number): Span[] {
  const spans: Span[] = [];
  const lastDay = localClock(zone, toMs).day + 1;
  for (let day = localClock(zone, fromMs).day - 1; day <= lastDay; day++) {
    // Periods of one day are intersected in local minutes (the same wall clock for every rule).
    let periods: Span[] = [{ start: 0, end: 24 * 60 }];
    for (const r of rules) periods = intersect(periods, periodsOn(r, day).map((p) => ({ start: p.openMinute, end: p.closeMinute })));
    for (const p of periods) {
      const start = Math.max(fromMs, localWallToInstant(zone, day, p.start));
      const end = Math.min(toMs, localWallToInstant(zone, day, p.end));
      if (start < end) spans.push({ start, end });
    }
  }
  return spans;
}

/** The rules read on each clock for a callee in `zone`: every rule on the callee's, some on fixed clocks too. */
function rulesByClock(rules: readonly WindowRule[], zone: string): Map<string, WindowRule[]> {
  const byClock = new Map<string, WindowRule[]>([[zone, [...rules]]]);
  for (const r of rules) for (const clock of r.alsoReadIn) byClock.set(clock, [...(byClock.get(clock) ?? []), r]);
  return byClock;
}

/**
 * The earliest instant ≥ `from` at which isOpen is true. Walks window boundaries, not minutes:
 * each zone's open spans are built from its local days (so DST days get their real length) and
 * intersected across zones. Throws when nothing opens within MAX_SEARCH_DAYS.
 */
export function nextOpening(e164: string, country: string, from: Date): Date {
  const rules = callingRules(e164, country);
  const zones = callingZones(e164, country);
  const fromMs = from.getTime();
  // Most answers lie within days; widen the horizon only when nothing opened yet.
  for (const horizonDays of [4, 12, MAX_SEARCH_DAYS]) {
    let open: Span[] = [{ start: fromMs, end: fromMs + horizonDays * DAY_MS }];
    for (const zone of zones) {
      for (const [clock, clockRules] of rulesByClock(rules, zone)) {
        open = intersect(open, openSpansInZone(clock, clockRules, fromMs, fromMs + horizonDays * DAY_MS));
        if (open.length === 0) break;
      }
      if (open.length === 0) break;
    }
    if (open.length > 0) return new Date(open[0].start);
  }
  throw new Error(`calling windows: ${e164} (${country}) has no calling window within ${MAX_SEARCH_DAYS} days of ${from.toISOString()}`);
}

const hhmm = (minute: number): string => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(Math.floor(minute % 60)).padStart(2, '0')}`;
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** One human sentence on whether `e164` may be called at `at`, which rule closes it where, and when it opens. */
export function windowExplanation(e164: string, country: string, at: Date): string {
  const rules = callingRules(e164, country);
  const zones = callingZones(e164, country);
  const head = `${e164} (${rules.map((r) => r.id).join(' + ')}; ${zones.join(', ')}) at ${at.toISOString()}`;
  for (const zone of zones) {
    for (const r of rules) {
      for (const clock of clocksOf(r, zone)) {
        if (openOnClock(r, clock, at.getTime())) continue;
        const { day, minute } = localClock(clock, at.getTime());
        const holiday = isClosedDay(r, isoDate(day)) ? ', a public holiday' : '';
        const window = periodsOn(r, day).map((p) => `${hhmm(p.openMinute)}–${hhmm(p.closeMinute)}`).join(' and ');
        const allows = window ? `allows ${window}` : 'allows no calls that day';
        const where = clock === zone ? `in ${zone}` : `on ${clock} (read for ${zone})`;
        return `${head} is closed: it is ${WEEKDAYS[weekdayOf(day)]} ${isoDate(day)} ${hhmm(minute)}${holiday} ${where}, where ${r.id} (${r.citation}, ${r.basis}) ${allows}; next opening ${nextOpening(e164, country, at).toISOString()}.`;
      }
    }
  }
  return `${head} is open.`;
}
