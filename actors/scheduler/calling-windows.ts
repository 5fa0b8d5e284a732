/**
 * Legal calling windows (spec: only dial inside each country's legal calling window). Pure: an
 * E.164 number, its country and an instant in; answers depend on nothing else (no clock, no I/O).
 *
 * A number may be in several time zones (an Australian mobile, an area code straddling a zone
 * line, an unknown area code): it is open only when every rule that could reach the callee is
 * open in every zone the callee could be in. Callees may be sole traders, whom these laws treat as
 * consumers, so the consumer rule always applies.
 */
import Holidays from 'date-holidays';
import { NANP_AREA_CODES, type AreaCode } from './nanp-area-codes.ts';

export type CallingCountry = 'US' | 'CA' | 'AU' | 'GB' | 'IE' | 'DE' | 'FR' | 'ES' | 'NL';
export const CALLING_COUNTRIES: readonly CallingCountry[] = ['US', 'CA', 'AU', 'GB', 'IE', 'DE', 'FR', 'ES', 'NL'];

/** A half-open stretch of local clock time, in minutes after local midnight: [openMinute, closeMinute). */
export interface Period {
  openMinute: number;
  closeMinute: number;
}

/** One legal (or policy) calling window, read in the callee's local time. */
export interface WindowRule {
  id: string;
  /** Open periods by local weekday, index 0 = Sunday … 6 = Saturday; an empty list = closed all day. */
  week: readonly (readonly Period[])[];
  /** Public holidays (date-holidays, type 'public' only) that close the whole local day; null = holidays are ordinary days. */
  closedOnHolidays: { country: string; state?: string } | null;
  /** 'law' when a statute or regulation sets the window, 'policy' for Switchboard's own rule where none does. */
  basis: 'law' | 'policy';
  /** Where the window comes from, for explanations. */
  source: string;
}

/** Longest look-ahead of nextOpening, in days; the longest real closure (Christmas to New Year's) is far shorter. */
export const MAX_SEARCH_DAYS = 31;

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const hm = (hour: number, minute = 0): number => hour * 60 + minute;
const period = (open: number, close: number): Period => ({ openMinute: open, closeMinute: close });

function weekly(days: { weekdays: Period[]; saturday: Period[]; sunday: Period[] }): Period[][] {
  const { weekdays, saturday, sunday } = days;
  return [sunday, weekdays, weekdays, weekdays, weekdays, weekdays, saturday];
}

function rule(id: string, week: Period[][], closedOnHolidays: WindowRule['closedOnHolidays'], basis: WindowRule['basis'], source: string): WindowRule {
  return { id, week, closedOnHolidays, basis, source };
}

const daily = (open: number, close: number) => weekly({ weekdays: [period(open, close)], saturday: [period(open, close)], sunday: [period(open, close)] });
const exceptSunday = (open: number, close: number) => weekly({ weekdays: [period(open, close)], saturday: [period(open, close)], sunday: [] });
const weekdaysOnly = (...periods: Period[]) => weekly({ weekdays: periods, saturday: [], sunday: [] });

/**
 * Every calling window, with its legal source. Citations marked "verify" were written from
 * memory and secondary summaries, not read in the official text.
 */
export const WINDOW_RULES = {
  // TCPA, 47 U.S.C. § 227(c); 47 CFR § 64.1200(c)(1): no telephone solicitation before 8 a.m. or
  // after 9 p.m. local time at the called party's location (the FTC's 16 CFR § 310.4(c) agrees).
  US: rule('US', daily(hm(8), hm(21)), null, 'law', '47 CFR § 64.1200(c)(1)'),
  // Alabama PSC telephone solicitation rules, Ala. Admin. Code r. 770-X-6-.11 (verify): 8 a.m.–8 p.m.,
  // never on Sunday or a state or federal holiday.
  'US-AL': rule('US-AL', exceptSunday(hm(8), hm(20)), { country: 'US', state: 'AL' }, 'law', 'Ala. Admin. Code r. 770-X-6-.11 (verify)'),
  // Louisiana: La. R.S. 45:844.31 and LPSC General Order R-29617 § V(A)(2) (verify): 8 a.m.–8 p.m.
  // Monday–Saturday, never on Sunday or a legal holiday.
  'US-LA': rule('US-LA', exceptSunday(hm(8), hm(20)), { country: 'US', state: 'LA' }, 'law', 'La. R.S. 45:844.31; LPSC Gen. Order R-29617 (verify)'),
  // Mississippi: Miss. Code Ann. § 77-3-725 (verify): 8 a.m.–8 p.m., never on Sunday.
  'US-MS': rule('US-MS', exceptSunday(hm(8), hm(20)), null, 'law', 'Miss. Code Ann. § 77-3-725 (verify)'),
  // Florida Telephone Solicitation Act as amended by SB 1120 (2021), Fla. Stat. § 501.616(6)(a): 8 a.m.–8 p.m.
  'US-FL': rule('US-FL', daily(hm(8), hm(20)), null, 'law', 'Fla. Stat. § 501.616(6)(a)'),
  // Oklahoma Telephone Solicitation Act of 2022, Okla. Stat. tit. 15, § 775C.4 (verify): 8 a.m.–8 p.m.
  'US-OK': rule('US-OK', daily(hm(8), hm(20)), null, 'law', 'Okla. Stat. tit. 15, § 775C.4 (verify)'),
  // Maryland Stop the Spam Calls Act (2023), Md. Code, Com. Law § 14-4503 (verify): 8 a.m.–8 p.m.
  'US-MD': rule('US-MD', daily(hm(8), hm(20)), null, 'law', 'Md. Code, Com. Law § 14-4503 (verify)'),
  // Massachusetts: M.G.L. c. 159C, § 3 and 201 CMR 12.02 (verify): 8 a.m.–8 p.m.
  'US-MA': rule('US-MA', daily(hm(8), hm(20)), null, 'law', 'M.G.L. c. 159C, § 3; 201 CMR 12.02 (verify)'),
  // Michigan Home Solicitation Sales Act, MCL § 445.111b (verify): not before 9 a.m. or after 9 p.m.
  'US-MI': rule('US-MI', daily(hm(9), hm(21)), null, 'law', 'MCL § 445.111b (verify)'),
  // Minnesota: Minn. Stat. § 325E.27 (verify): 9 a.m.–9 p.m.
  'US-MN': rule('US-MN', daily(hm(9), hm(21)), null, 'law', 'Minn. Stat. § 325E.27 (verify)'),
  // New Mexico Unfair Practices Act, N.M. Stat. § 57-12-22 (verify): 9 a.m.–9 p.m.
  'US-NM': rule('US-NM', daily(hm(9), hm(21)), null, 'law', 'N.M. Stat. § 57-12-22 (verify)'),
  // Kentucky: KRS § 367.46955(15) (verify): 10 a.m.–9 p.m.
  'US-KY': rule('US-KY', daily(hm(10), hm(21)), null, 'law', 'KRS § 367.46955(15) (verify)'),
  // Nevada: NRS § 228.590 (verify): 9 a.m.–8 p.m.
  'US-NV': rule('US-NV', daily(hm(9), hm(20)), null, 'law', 'NRS § 228.590 (verify)'),
  // Connecticut, Public Act 23-98 (SB 1058), Conn. Gen. Stat. § 42-288a (verify): 9 a.m.–8 p.m.
  'US-CT': rule('US-CT', daily(hm(9), hm(20)), null, 'law', 'Conn. Gen. Stat. § 42-288a (verify)'),
  // Texas: Tex. Bus. & Com. Code § 301.051 (recodified former § 37.02; the brief cited § 304.151;
  // verify): 9 a.m.–9 p.m. Monday–Saturday, noon–9 p.m. Sunday.
  'US-TX': rule('US-TX', weekly({ weekdays: [period(hm(9), hm(21))], saturday: [period(hm(9), hm(21))], sunday: [period(hm(12), hm(21))] }), null, 'law', 'Tex. Bus. & Com. Code § 301.051 (verify)'),
  // Rhode Island: R.I. Gen. Laws § 5-61-3.5 (verify): unsolicited telephonic sales calls only
  // 9 a.m.–6 p.m. Monday–Friday and 10 a.m.–5 p.m. Saturday; never on Sunday or a legal holiday.
  'US-RI': rule('US-RI', weekly({ weekdays: [period(hm(9), hm(18))], saturday: [period(hm(10), hm(17))], sunday: [] }), { country: 'US', state: 'RI' }, 'law', 'R.I. Gen. Laws § 5-61-3.5 (verify)'),
  // Utah: Utah Code § 13-25a-103 (verify): 8 a.m.–9 p.m., never on a legal holiday.
  'US-UT': rule('US-UT', daily(hm(8), hm(21)), { country: 'US', state: 'UT' }, 'law', 'Utah Code § 13-25a-103 (verify)'),
  // Pennsylvania Telemarketer Registration Act, 73 P.S. § 2245.2 (verify): 8 a.m.–9 p.m.; restricted-
  // date lists name Pennsylvania's legal holidays, so they close the day here too.
  'US-PA': rule('US-PA', daily(hm(8), hm(21)), { country: 'US', state: 'PA' }, 'law', '73 P.S. § 2245.2 (verify)'),
  // Washington: RCW 80.36.390 (verify): 8 a.m.–8 p.m.
  'US-WA': rule('US-WA', daily(hm(8), hm(20)), null, 'law', 'RCW 80.36.390 (verify)'),
  // CRTC Unsolicited Telecommunications Rules, Part III (Telemarketing Rules), s. 7 (verify section):
  // weekdays 9 a.m.–9:30 p.m., weekends 10 a.m.–6 p.m., callee's local time; holidays not mentioned.
  CA: rule('CA', weekly({ weekdays: [period(hm(9), hm(21, 30))], saturday: [period(hm(10), hm(18))], sunday: [period(hm(10), hm(18))] }), null, 'law', 'CRTC Unsolicited Telecommunications Rules, Part III s. 7 (verify section)'),
  // Telecommunications (Telemarketing and Research Calls) Industry Standard 2017 (ACMA), calling-times
  // section (the brief cites s. 7; verify): weekdays 9 a.m.–8 p.m., Saturday 9 a.m.–5 p.m., never on
  // Sunday or a national public holiday.
  AU: rule('AU', weekly({ weekdays: [period(hm(9), hm(20))], saturday: [period(hm(9), hm(17))], sunday: [] }), { country: 'AU' }, 'law', 'Telecommunications (Telemarketing and Research Calls) Industry Standard 2017 (verify section)'),
  // Code de la consommation art. L223-1 and D223-8, from Décret n° 2022-1313 du 13 octobre 2022:
  // Monday–Friday 10:00–13:00 and 14:00–20:00, never on a public holiday.
  FR: rule('FR', weekdaysOnly(period(hm(10), hm(13)), period(hm(14), hm(20))), { country: 'FR' }, 'law', 'Code de la consommation art. L223-1, D223-8 (Décret n° 2022-1313)'),
  // Ley 11/2022 General de Telecomunicaciones art. 66; TRLGDCU (RDL 1/2007) art. 96 as amended by
  // Ley 4/2022 (verify): weekdays 9:00–21:00, never on weekends or holidays.
  ES: rule('ES', weekdaysOnly(period(hm(9), hm(21))), { country: 'ES' }, 'law', 'Ley 11/2022 art. 66; RDL 1/2007 art. 96 (verify)'),
  // GB, IE, DE and NL set no statutory hours for these calls. Switchboard policy (not law):
  // weekdays 9:00–20:00, never on a national public holiday.
  GB: rule('GB', weekdaysOnly(period(hm(9), hm(20))), { country: 'GB' }, 'policy', 'Switchboard policy (no statutory hours in GB)'),
  IE: rule('IE', weekdaysOnly(period(hm(9), hm(20))), { country: 'IE' }, 'policy', 'Switchboard policy (no statutory hours in IE)'),
  DE: rule('DE', weekdaysOnly(period(hm(9), hm(20))), { country: 'DE' }, 'policy', 'Switchboard policy (no statutory hours in DE)'),
  NL: rule('NL', weekdaysOnly(period(hm(9), hm(20))), { country: 'NL' }, 'policy', 'Switchboard policy (no statutory hours in NL)'),
} as const satisfies Record<string, WindowRule>;

/** State rules stricter than the federal window, by USPS state code. */
const US_STATE_RULES: Readonly<Record<string, WindowRule>> = Object.fromEntries(
  Object.values(WINDOW_RULES)
    .filter((r) => r.id.startsWith('US-'))
    .map((r) => [r.id.slice(3), r]),
);

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
  const entry = NANP_AREA_CODES[nationalNumber(e164, country).slice(0, 3)] ?? null;
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

/** Every rule that could reach the holder of `e164`; an unknown US area code gets every state's rule. */
export function callingRules(e164: string, country: string): WindowRule[] {
  nationalNumber(e164, country);
  if (country !== 'US') return [WINDOW_RULES[country as Exclude<CallingCountry, 'US'>]];
  const entry = areaCode(e164, country);
  if (!entry) return [WINDOW_RULES.US, ...Object.values(US_STATE_RULES)];
  const state = US_STATE_RULES[entry.region];
  return state ? [WINDOW_RULES.US, state] : [WINDOW_RULES.US];
}

// ---- local time -------------------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Offset of `zone` from UTC at instant `ms`, in ms (local wall clock = ms + offset). */
function offsetMs(zone: string, ms: number): number {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wholeSecond = Math.floor(ms / 1000) * 1000;
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - wholeSecond;
}

/** The local calendar day (days since 1970-01-01) and minute of day (with fraction) at `ms` in `zone`. */
function localClock(zone: string, ms: number): { day: number; minute: number } {
  const wall = ms + offsetMs(zone, ms);
  const day = Math.floor(wall / DAY_MS);
  return { day, minute: (wall - day * DAY_MS) / MINUTE_MS };
}

const weekdayOf = (day: number): number => (day + 4) % 7; // 1970-01-01 was a Thursday
const isoDate = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * The first instant at which the clock of `zone` reads at least `minute` on local day `day`:
 * the wall time itself when it exists (its first occurrence when a fall-back repeats it), the
 * moment the clock jumps when a spring-forward skips it.
 */
export function localWallToInstant(zone: string, day: number, minute: number): number {
  const wall = day * DAY_MS + minute * MINUTE_MS;
  const offsets = [...new Set([offsetMs(zone, wall - DAY_MS), offsetMs(zone, wall), offsetMs(zone, wall + DAY_MS)])];
  const valid = offsets.map((o) => wall - o).filter((t) => offsetMs(zone, t) === wall - t);
  if (valid.length > 0) return Math.min(...valid);
  // Skipped by a spring-forward: find the jump between the two candidate instants.
  let lo = Math.min(...offsets.map((o) => wall - o));
  let hi = Math.max(...offsets.map((o) => wall - o));
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid + offsetMs(zone, mid) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

// ---- holidays ---------------------------------------------------------------------------------

const holidayCache = new Map<string, Set<string>>();

/** Whether local date `date` (YYYY-MM-DD) is a public holiday (type 'public' only) of `source`. */
function isPublicHoliday(source: NonNullable<WindowRule['closedOnHolidays']>, date: string): boolean {
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

/** Open periods of `rule` on local day `day`. */
function periodsOn(rule: WindowRule, day: number): readonly Period[] {
  if (rule.closedOnHolidays && isPublicHoliday(rule.closedOnHolidays, isoDate(day))) return [];
  return rule.week[weekdayOf(day)];
}

function ruleOpen(rule: WindowRule, zone: string, ms: number): boolean {
  const { day, minute } = localClock(zone, ms);
  return periodsOn(rule, day).some((p) => minute >= p.openMinute && minute < p.closeMinute);
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
      open = intersect(open, openSpansInZone(zone, rules, fromMs, fromMs + horizonDays * DAY_MS));
      if (open.length === 0) break;
    }
    if (open.length > 0) return new Date(open[0].start);
  }
  throw new Error(`calling windows: ${e164} (${country}) has no calling window within ${MAX_SEARCH_DAYS} days of ${from.toISOString()}`);
}

const clock = (minute: number): string => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(Math.floor(minute % 60)).padStart(2, '0')}`;
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** One human sentence on whether `e164` may be called at `at`, which rule closes it where, and when it opens. */
export function windowExplanation(e164: string, country: string, at: Date): string {
  const rules = callingRules(e164, country);
  const zones = callingZones(e164, country);
  const head = `${e164} (${rules.map((r) => r.id).join(' + ')}; ${zones.join(', ')}) at ${at.toISOString()}`;
  for (const zone of zones) {
    for (const r of rules) {
      if (ruleOpen(r, zone, at.getTime())) continue;
      const { day, minute } = localClock(zone, at.getTime());
      const holiday = r.closedOnHolidays && isPublicHoliday(r.closedOnHolidays, isoDate(day)) ? ', a public holiday' : '';
      const window = periodsOn(r, day).map((p) => `${clock(p.openMinute)}–${clock(p.closeMinute)}`).join(' and ');
      const allows = window ? `allows ${window}` : 'allows no calls that day';
      return `${head} is closed: it is ${WEEKDAYS[weekdayOf(day)]} ${isoDate(day)} ${clock(minute)}${holiday} in ${zone}, where ${r.id} (${r.source}, ${r.basis}) ${allows}; next opening ${nextOpening(e164, country, at).toISOString()}.`;
    }
  }
  return `${head} is open.`;
}
