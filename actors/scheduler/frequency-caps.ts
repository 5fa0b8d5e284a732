/**
 * Call-frequency caps (issue 13 §2): how often one customer may dial one number. Pure: the called
 * number, its country, the past attempts and an instant in; no clock, no I/O.
 *
 * What is counted. Every dial attempt of the same customer (the business the calls are made for)
 * to the same number counts, whatever its outcome: answered, unanswered, busy, failed, refused by
 * the carrier, or lost while it was being dialled. The statutes count calls "to a person"
 * "regardless of the number used" or per consumer; one number is the closest the service can see
 * to one person. Caps are per customer: a refusal told to one business does not bind another
 * business of the same reseller (the laws below bind "the same professional" or "the commercial
 * telephone solicitor"); a callee's "do not call me" already goes to the reseller's do-not-call
 * list, which blocks every customer of the reseller for as long as the entry stays.
 *
 * "Same subject matter" (FL, OK, MD) and "same offer" (BC) are read as "the same customer": a
 * customer's calls all sell its own business, and the service cannot tell two campaigns apart.
 *
 * Where. The jurisdiction of the callee follows the called number, as the calling windows do: a
 * US or Canadian number's state or province from its NANP area code (nanp-area-codes.ts; Florida
 * and Oklahoma presume a call to one of their area codes reaches a resident); an unknown area code
 * gets every state or province rule of its country. Elsewhere the country.
 *
 * Windows are rolling (an attempt leaves a window `windowMs` after it was dialled). Where a law
 * counts calendar days in the callee's zone (France), the window is one day longer than the
 * law's, which covers every reading of the calendar and a daylight-saving day of 25 hours.
 */
import { nanpAreaOf } from '../shared/nanp-area-codes.ts';
import type { CallOutcome } from '../call/outcome.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * How a callee refused, read from the call's outcome (actors/call/outcome.ts): `declined` when the
 * prospect was not interested (the agent's `end_call` reason `not_interested`), `do_not_call`
 * when the callee asked not to be called again (the number went to the do-not-call list).
 */
export type RefusalKind = 'declined' | 'do_not_call';

const REFUSALS: Partial<Record<CallOutcome, RefusalKind>> = { not_interested: 'declined', do_not_call: 'do_not_call' };

/** The refusal an outcome records, or null when the outcome is not a refusal. */
export function refusalOf(outcome: string | null): RefusalKind | null {
  return outcome !== null && Object.hasOwn(REFUSALS, outcome) ? REFUSALS[outcome as CallOutcome]! : null;
}

/** One earlier dial attempt of the same customer to the same number. */
export interface PastAttempt {
  /** When it was dialled. */
  at: Date;
  /** How the call ended (`outcome` of the call); null while it runs. */
  outcome: string | null;
  /** When it ended; a refusal is dated then (the callee refused during the call). Null while it runs. */
  endedAt: Date | null;
}

interface RuleSource {
  /** Where the rule applies: `US-FL`, `CA-BC`, `FR`. */
  id: string;
  /** The statute or regulation, as cited. */
  citation: string;
  /** Where the text was read. */
  url: string;
  /** The day the citation was last checked, YYYY-MM-DD. */
  checked: string;
}

/** At most `max` attempts in any rolling window of `windowMs`. */
export interface CountCap extends RuleSource {
  kind: 'count';
  max: number;
  windowMs: number;
}

/** No attempt for `quietMs` after a refusal of one of `refusals`. */
export interface QuietAfterRefusal extends RuleSource {
  kind: 'quiet_after_refusal';
  refusals: readonly RefusalKind[];
  quietMs: number;
}

export type CapRule = CountCap | QuietAfterRefusal;

const CHECKED = '2026-11-25';

/**
 * Every cap, with its source. Read in full in the official text where the URL is a legislature's
 * or Légifrance's; "(section not read)" marks a rule confirmed only by the regulator or the
 * enrolled bill's summary (docs/compliance.md says which).
 */
export const CAP_RULES: readonly CapRule[] = [
  {
    id: 'US-FL',
    kind: 'count',
    max: 3,
    windowMs: DAY_MS,
    // "More than three commercial telephone solicitation phone calls from any number to a person
    // over a 24-hour period on the same subject matter or issue, regardless of the phone number
    // used to make the call" (as amended by ch. 2021-94, SB 1120).
    citation: 'Fla. Stat. § 501.616(6)(b)',
    url: 'https://flsenate.gov/Session/Bill/2021/1120/BillText/er/HTML',
    checked: CHECKED,
  },
  {
    id: 'US-OK',
    kind: 'count',
    max: 3,
    windowMs: DAY_MS,
    // Telephone Solicitation Act of 2022 (HB 3168): no more than three commercial telephone
    // solicitation calls to a person over a 24-hour period on the same subject matter.
    citation: 'Okla. Stat. tit. 15, § 775C.1 et seq. (Telephone Solicitation Act of 2022, HB 3168; section not read)',
    url: 'https://app.legiplex.com/ok/legislature/2022/2022-r/bills/hb3168/drafts-latest',
    checked: CHECKED,
  },
  {
    id: 'US-MD',
    kind: 'count',
    max: 3,
    windowMs: DAY_MS,
    // Stop the Spam Calls Act of 2023 (SB 90), in force 1 January 2024: three calls per 24 hours
    // on the same subject to the same called party.
    citation: 'Md. Code, Com. Law § 14-4502 (Stop the Spam Calls Act of 2023; subsection not read)',
    url: 'https://www.dnc.com/index.php/news/maryland-governor-signs-stop-spam-calls-act-2023-law',
    checked: CHECKED,
  },
  {
    id: 'US-ME',
    kind: 'count',
    max: 1,
    windowMs: 8 * HOUR_MS,
    // Automated telephone calling devices: "may not complete more than one solicitation call to
    // any telephone number during each 8-hour period". Applied to every call (whether a synthesized
    // voice is a "recorded message" is not settled here) and to every attempt, not only completed
    // calls: both stricter.
    citation: '10 M.R.S. § 1498(3)',
    url: 'https://legislature.maine.gov/legis/bills/bills_121st/billtexts/LD039201-1.asp',
    checked: CHECKED,
  },
  {
    id: 'US-WA',
    kind: 'quiet_after_refusal',
    refusals: ['do_not_call'],
    // "Within a period of at least one year": 366 days covers a leap year.
    quietMs: 366 * DAY_MS,
    citation: 'RCW 19.158.110(2)(a)',
    url: 'https://app.leg.wa.gov/RCW/default.aspx?cite=19.158.110',
    checked: CHECKED,
  },
  {
    id: 'CA-BC',
    kind: 'count',
    max: 1,
    windowMs: 30 * DAY_MS,
    // Not more than once in a 30-day period for the same goods or services without the consumer's
    // permission. Consent is not known here (issue 13 §1), so the cap always applies.
    citation: 'Telemarketer Licensing Regulation under the Business Practices and Consumer Protection Act (B.C.) (section not read)',
    url: 'https://consumerprotectionbc.ca/2011/07/everything-you-wanted-to-know-about-telemarketers',
    checked: CHECKED,
  },
  {
    id: 'FR',
    kind: 'count',
    max: 4,
    // "Plus de quatre fois au cours d'une période de trente jours calendaires": calendar days, so
    // 31 rolling days.
    windowMs: 31 * DAY_MS,
    citation: 'Code de la consommation art. D223-9, al. 3 (Décret n° 2022-1313 du 13 octobre 2022)',
    url: 'https://git.tricoteuses.fr/codes/code_de_la_consommation/commit/ee0bddb0d51e095301113c417d19c06464ddb2b2',
    checked: CHECKED,
  },
  {
    id: 'FR',
    kind: 'quiet_after_refusal',
    // "Lorsque le consommateur refuse ce démarchage au cours de la conversation": any refusal.
    refusals: ['declined', 'do_not_call'],
    // "Avant l'expiration d'une période de soixante jours calendaires révolus": 61 rolling days.
    quietMs: 61 * DAY_MS,
    citation: 'Code de la consommation art. D223-9, al. 3 (Décret n° 2022-1313 du 13 octobre 2022)',
    url: 'https://git.tricoteuses.fr/codes/code_de_la_consommation/commit/ee0bddb0d51e095301113c417d19c06464ddb2b2',
    checked: CHECKED,
  },
];

/** How far back the caps look, ms: the longest window or quiet period, plus a day for the length of a call. */
export const CAP_LOOKBACK_MS = Math.max(...CAP_RULES.map((r) => (r.kind === 'count' ? r.windowMs : r.quietMs))) + DAY_MS;

const STATE_RULE_IDS = new Set(CAP_RULES.map((r) => r.id).filter((id) => id.includes('-')));

/**
 * The jurisdictions whose caps reach the holder of `e164` (country `country`): the country, and
 * for a NANP number its state or province, or every state or province with a cap when the area
 * code is unknown. Unknown countries and malformed numbers reach no cap (the calling window
 * refuses them before this gate is asked).
 */
export function capJurisdictions(e164: string, country: string): string[] {
  if (country !== 'US' && country !== 'CA') return [country];
  const entry = nanpAreaOf(e164);
  if (entry && entry.country === country) return [country, `${country}-${entry.region}`];
  return [country, ...[...STATE_RULE_IDS].filter((id) => id.startsWith(`${country}-`))];
}

/** The cap rules that reach the holder of `e164`. */
export function capRules(e164: string, country: string): CapRule[] {
  const places = new Set(capJurisdictions(e164, country));
  return CAP_RULES.filter((r) => places.has(r.id));
}

/** The instant `rule` next allows a dial, given `attempts`, at `now`; `now` itself when it allows one now. */
export function ruleFreesAt(rule: CapRule, attempts: readonly PastAttempt[], now: Date): Date {
  const nowMs = now.getTime();
  if (rule.kind === 'count') {
    // Attempts still in the window, oldest first (one dated after `now`, from a clock that moved
    // back, counts too); the (n - max + 1)-th oldest leaving brings the count under the cap.
    const inWindow = attempts.map((a) => a.at.getTime()).filter((at) => at + rule.windowMs > nowMs).sort((a, b) => a - b);
    if (inWindow.length < rule.max) return now;
    return new Date(inWindow[inWindow.length - rule.max] + rule.windowMs);
  }
  let frees = nowMs;
  for (const a of attempts) {
    const refusal = refusalOf(a.outcome);
    if (!refusal || !rule.refusals.includes(refusal)) continue;
    frees = Math.max(frees, (a.endedAt ?? a.at).getTime() + rule.quietMs);
  }
  return new Date(frees);
}

/** Whether a dial to `e164` is allowed at `now`; if not, the rule that holds it longest and when every cap frees. */
export type CapCheck = { allowed: true } | { allowed: false; until: Date; rule: CapRule };

/**
 * Checks every cap that reaches `e164`. Waiting never adds attempts, so each rule's answer only
 * moves forward with time and the number is free once the latest of them frees it.
 */
export function checkCaps(e164: string, country: string, attempts: readonly PastAttempt[], now: Date): CapCheck {
  let held: { until: Date; rule: CapRule } | null = null;
  for (const rule of capRules(e164, country)) {
    const until = ruleFreesAt(rule, attempts, now);
    if (until > now && (!held || until > held.until)) held = { until, rule };
  }
  return held ? { allowed: false, ...held } : { allowed: true };
}
