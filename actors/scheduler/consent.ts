/**
 * Consent: what consent an AI-voice sales call needs, per jurisdiction of the called number, its
 * line type and the day of the call. Pure: no clock, no I/O; the caller passes `at`.
 *
 * Engineering, not legal advice: the table, its sources and its doubts are in
 * docs/compliance.md ("Consent for AI-voice calls"). Every rule carries its citation and the day it was last checked.
 *
 * Readings that hold throughout:
 * - Every call Switchboard places is a sales call (the agent books meetings for the customer's
 *   business), so every call is treated as telemarketing / direct marketing. No parameter says
 *   otherwise: a "non-marketing" flag would be a way around the gate.
 * - An AI voice is an "artificial or prerecorded voice" (FCC 24-17), a "recorded or artificial
 *   voice message" (Maryland), "the playing of a recorded message" (Florida, Oklahoma), an
 *   "automated calling system" / "automatische Anrufmaschine" / "automatisch oproepsysteem" /
 *   "système automatisé" (the ePrivacy Directive art. 13(1) family).
 * - An unknown line type is a mobile; a VoIP number is a mobile too (47 CFR 64.1200(a)(1)(iii)
 *   reaches "any service for which the called party is charged for the call").
 * - A US number whose area code is not listed could be in any state: every state's rule applies.
 * - `business_landline` is a landline the carrier says belongs to a business and the request says
 *   calls a business (`called_party: "business"`, consent-gate.ts `effectiveLineType`). Rules
 *   limited to consumers or natural persons do not reach it; rules for every subscriber do, among
 *   them the state auto-dialler (ADAD) laws of issue 20. A sole trader's business line is the
 *   doubtful case (docs/compliance.md ("Consent for AI-voice calls")).
 * - `requested_call` sits above written consent: Washington and Maine bar automated sales calls
 *   outright except a call the person asked for (actors/shared/requested-call-only.ts).
 */
import { nanpAreaOf } from '../shared/nanp-area-codes.ts';
import { LINE_TYPES, type LineType } from '../../runtime/types.ts';
import { REQUESTED_CALL_ONLY } from '../shared/requested-call-only.ts';

export { consentNotices, type ConsentNotice } from '../shared/requested-call-only.ts';

export { LINE_TYPES, type LineType };

/**
 * What the reseller says it holds for the called party. `requested_call`: the called party itself
 * asked for this call, in a signed written request naming the number (a web form's "call me"
 * with its consent checkbox, an e-mail); it is prior express written consent as well, and the
 * only consent a state that bars automated sales calls outright accepts (Washington, Maine).
 */
export type ConsentType = 'requested_call' | 'prior_express_written' | 'prior_express' | 'existing_business_relationship' | 'none';
export const CONSENT_TYPES: readonly ConsentType[] = ['requested_call', 'prior_express_written', 'prior_express', 'existing_business_relationship', 'none'];

/** What a call needs, strongest first. `requested_call`: only a call the person asked for is lawful. */
export type RequiredConsent = 'requested_call' | 'prior_express_written' | 'prior_express' | 'none';

/** The day the rules of issue 13 were last read against their sources. */
export const CONSENT_RULES_CHECKED = '2026-11-25';
/** The day the state auto-dialler (ADAD) rules of issue 20 were read against their sources. */
export const ADAD_RULES_CHECKED = '2026-11-27';

/** One rule of the table: who it reaches and what it asks for. */
export interface ConsentRule {
  id: string;
  /** Country (ISO 3166-1) and, for a US state rule, the USPS state code. */
  country: string;
  state?: string;
  /** The line types it reaches. */
  lineTypes: readonly LineType[];
  required: RequiredConsent;
  /** An existing business relationship is accepted in place of the consent (Utah 13-25a-103(2)(b)). */
  acceptsExistingBusinessRelationship: boolean;
  /** First day (ISO date, the called party's calendar, read as UTC) the rule applies; null = long in force. */
  from: string | null;
  citation: string;
  checked: string;
}

const CONSUMER_LINES: readonly LineType[] = ['mobile', 'landline', 'voip', 'unknown'];
const MOBILE_LIKE: readonly LineType[] = ['mobile', 'voip', 'unknown'];

const rule = (r: Omit<ConsentRule, 'checked' | 'acceptsExistingBusinessRelationship' | 'from'> & Partial<Pick<ConsentRule, 'acceptsExistingBusinessRelationship' | 'from' | 'checked'>>): ConsentRule => ({
  acceptsExistingBusinessRelationship: false,
  from: null,
  checked: CONSENT_RULES_CHECKED,
  ...r,
});

/** The table. docs/compliance.md ("Consent for AI-voice calls") gives each row's source URL and reading. */
export const CONSENT_RULES: readonly ConsentRule[] = [
  // ---- United States, federal ----
  rule({
    id: 'US-mobile',
    country: 'US',
    lineTypes: MOBILE_LIKE,
    required: 'prior_express_written',
    citation: '47 U.S.C. 227(b)(1)(A)(iii); 47 CFR 64.1200(a)(2); FCC 24-17 (AI voices are artificial voices)',
  }),
  rule({
    id: 'US-residential',
    country: 'US',
    lineTypes: ['landline'],
    required: 'prior_express_written',
    citation: '47 U.S.C. 227(b)(1)(B); 47 CFR 64.1200(a)(3); FCC 24-17',
  }),
  // ---- United States, states that reach business landlines too ----
  rule({
    id: 'US-FL',
    country: 'US',
    state: 'FL',
    lineTypes: LINE_TYPES,
    required: 'prior_express_written',
    citation: 'Fla. Stat. 501.059(8)(a) ("the playing of a recorded message when a connection is completed")',
  }),
  rule({
    id: 'US-OK',
    country: 'US',
    state: 'OK',
    lineTypes: LINE_TYPES,
    required: 'prior_express_written',
    citation: 'Okla. Stat. tit. 15, 775C.2(3) and 775C.3 (Telephone Solicitation Act of 2022: "the playing of a recorded message")',
  }),
  rule({
    id: 'US-MD',
    country: 'US',
    state: 'MD',
    lineTypes: LINE_TYPES,
    required: 'prior_express_written',
    citation: 'Md. Code, Com. Law 14-4502(a)(3); 14-4501(d) ("recorded or artificial voice message")',
  }),
  rule({
    id: 'US-UT',
    country: 'US',
    state: 'UT',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    acceptsExistingBusinessRelationship: true,
    citation: 'Utah Code 13-25a-103(1),(2); 13-25a-102(2) (automated telephone dialing system: "recorded message or artificial voice")',
  }),
  rule({
    id: 'US-RI',
    country: 'US',
    state: 'RI',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    citation: 'R.I. Gen. Laws 5-61-3.4(a) (prerecorded or synthesized voice messages)',
  }),
  rule({
    id: 'US-MA',
    country: 'US',
    state: 'MA',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    citation: '201 CMR 12.02(4) (no unsolicited telephonic sales call by a recorded message device)',
  }),
  // ---- United States, state auto-dialler (ADAD) laws (issue 20 §1); no live operator ever
  // precedes the agent, so consent is the only way in, on every line type ----
  ...REQUESTED_CALL_ONLY.map((r) =>
    rule({ id: `${r.country}-${r.state}`, country: r.country, state: r.state, lineTypes: LINE_TYPES, required: 'requested_call', checked: ADAD_RULES_CHECKED, citation: r.citation }),
  ),
  rule({
    id: 'US-MS',
    country: 'US',
    state: 'MS',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    checked: ADAD_RULES_CHECKED,
    citation: 'Miss. Code Ann. § 77-3-723(2) (automatic dialing-announcing devices with recorded messages only with the consumer\'s prior consent; § 77-3-705(a): a consumer is a person or business)',
  }),
  rule({
    id: 'US-OK-adad',
    country: 'US',
    state: 'OK',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    checked: ADAD_RULES_CHECKED,
    citation: 'Okla. Stat. tit. 15, § 755.1(C)(3) (automatic dial announcing device: recorded message only with the called party\'s consent or after a live operator)',
  }),
  rule({
    id: 'US-MN',
    country: 'US',
    state: 'MN',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    checked: ADAD_RULES_CHECKED,
    citation: 'Minn. Stat. § 325E.27 (automatic dialing-announcing device only if the subscriber knowingly requested, consented to, permitted or authorized the message, or a live operator first obtains consent)',
  }),
  rule({
    id: 'US-CA',
    country: 'US',
    state: 'CA',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    checked: ADAD_RULES_CHECKED,
    citation: 'Cal. Pub. Util. Code § 2874 (automatic dialing-announcing device only after an unrecorded natural voice obtains the called party\'s consent)',
  }),
  rule({
    id: 'US-NV',
    country: 'US',
    state: 'NV',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    acceptsExistingBusinessRelationship: true,
    checked: ADAD_RULES_CHECKED,
    citation: 'NRS 597.814(1),(3) (a prerecorded message only after a natural voice introduces the call, or to a person with a preexisting business relationship)',
  }),
  rule({
    id: 'US-MI',
    country: 'US',
    state: 'MI',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    acceptsExistingBusinessRelationship: true,
    checked: ADAD_RULES_CHECKED,
    citation: 'MCL 445.111a(1) (no telephone solicitation using a recorded message); MCL 445.111(m)(i),(ii) (except with the subscriber\'s express invitation or permission, or to an existing customer)',
  }),
  // ---- Elsewhere ----
  rule({
    id: 'GB',
    country: 'GB',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    citation: 'PECR 2003 (SI 2003/2426) reg. 19 (automated calling systems; individual and corporate subscribers)',
  }),
  rule({
    id: 'DE',
    country: 'DE',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    citation: 'UWG § 7(2) Nr. 2 (automatische Anrufmaschine: vorherige ausdrückliche Einwilligung des Adressaten)',
  }),
  rule({
    id: 'NL',
    country: 'NL',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    citation: 'Telecommunicatiewet art. 11.7 (automatische oproepsystemen zonder menselijke tussenkomst; Directive 2002/58/EC art. 13(1))',
  }),
  rule({
    id: 'CA',
    country: 'CA',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    citation: 'CRTC Unsolicited Telecommunications Rules, ADAD rules (express consent for solicitation); Compliance and Enforcement Regulatory Policy CRTC 2014-155 (no existing-business-relationship exemption)',
  }),
  rule({
    id: 'ES',
    country: 'ES',
    lineTypes: LINE_TYPES,
    required: 'prior_express',
    citation: 'Ley 11/2022 General de Telecomunicaciones art. 66.1(a) (llamadas automáticas sin intervención humana)',
  }),
  rule({
    id: 'IE',
    country: 'IE',
    lineTypes: CONSUMER_LINES,
    required: 'prior_express',
    citation: 'S.I. 336/2011 reg. 13(1) (automated calling machine; subscribers who are natural persons)',
  }),
  rule({
    id: 'FR-automated',
    country: 'FR',
    lineTypes: CONSUMER_LINES,
    required: 'prior_express',
    citation: 'Code des postes et des communications électroniques art. L34-5 (système automatisé; personne physique)',
  }),
  rule({
    id: 'FR-consumer-opt-in',
    country: 'FR',
    lineTypes: CONSUMER_LINES,
    required: 'prior_express',
    from: '2026-08-11',
    citation: 'Code de la consommation art. L223-1 as amended by loi n° 2025-594 art. 13 (in force 2026-08-11)',
  }),
];

/** Countries where no rule requiring consent for an AI-voice call was confirmed (docs/compliance.md ("Consent for AI-voice calls")). */
export const NO_CONSENT_RULE_FOUND: readonly string[] = ['AU'];

/** What a call needs, why, and whether an existing business relationship stands in for it. */
export interface ConsentRequirement {
  required: RequiredConsent;
  acceptsExistingBusinessRelationship: boolean;
  /** The deciding rules' citations; empty when none applies. */
  citations: string[];
  /** The deciding rules' ids. */
  rules: string[];
}

const STRENGTH: Record<RequiredConsent, number> = { none: 0, prior_express: 1, prior_express_written: 2, requested_call: 3 };

/** The USPS state of a US number; null when its area code is not listed (then every state could apply). */
export function usStateOf(e164: string): string | null {
  const entry = nanpAreaOf(e164);
  return entry?.country === 'US' ? entry.region : null;
}

/** The rules that reach a call to `e164` in `country` on a line of `lineType` on day `at`. */
export function applicableRules(e164: string, country: string, lineType: LineType, at: Date): ConsentRule[] {
  const state = country === 'US' ? usStateOf(e164) : null;
  const day = at.toISOString().slice(0, 10);
  return CONSENT_RULES.filter(
    (r) =>
      r.country === country &&
      (r.state === undefined || state === null || r.state === state) &&
      r.lineTypes.includes(lineType) &&
      (r.from === null || r.from <= day),
  );
}

/**
 * The consent an AI-voice call to `e164` (in `country`, on a `lineType` line) needs on `at`: the
 * strongest of every rule that reaches it. An existing business relationship stands in only
 * when every deciding rule accepts it.
 */
export function requiredConsent(e164: string, country: string, lineType: LineType, at: Date): ConsentRequirement {
  const rules = applicableRules(e164, country, lineType, at);
  const strongest = rules.reduce<RequiredConsent>((m, r) => (STRENGTH[r.required] > STRENGTH[m] ? r.required : m), 'none');
  const deciding = rules.filter((r) => r.required === strongest);
  return {
    required: strongest,
    acceptsExistingBusinessRelationship: strongest !== 'none' && deciding.every((r) => r.acceptsExistingBusinessRelationship),
    citations: deciding.map((r) => r.citation),
    rules: deciding.map((r) => r.id),
  };
}

/** Whether consent of type `held` meets `requirement`. */
export function consentMeets(held: ConsentType, requirement: Pick<ConsentRequirement, 'required' | 'acceptsExistingBusinessRelationship'>): boolean {
  switch (requirement.required) {
    case 'none':
      return true;
    case 'prior_express':
      return held === 'prior_express' || held === 'prior_express_written' || held === 'requested_call' || (held === 'existing_business_relationship' && requirement.acceptsExistingBusinessRelationship);
    case 'prior_express_written':
      return held === 'prior_express_written' || held === 'requested_call';
    case 'requested_call':
      return held === 'requested_call';
    default: {
      const unhandled: never = requirement.required;
      throw new Error(`unknown consent requirement ${String(unhandled)}`);
    }
  }
}

const LINE_WORDS: Record<LineType, string> = {
  mobile: 'mobile',
  landline: 'residential',
  business_landline: 'business',
  voip: 'VoIP',
  unknown: 'unverified (treated as mobile)',
};
const CONSENT_WORDS: Record<RequiredConsent, string> = {
  requested_call: 'the called party\'s own written request for this call (consent type requested_call)',
  prior_express_written: 'prior express written consent',
  prior_express: 'prior express consent',
  none: 'no consent',
};

/** The names of the states whose rules take only a call the person asked for. */
const REQUESTED_CALL_STATES: Readonly<Record<string, string>> = Object.fromEntries(REQUESTED_CALL_ONLY.map((r) => [r.state, r.name]));

/** The refusal text: what is required and under which rule, e.g. for `consent_required` / `requested_call_only`. */
export function consentExplanation(lineType: LineType, requirement: ConsentRequirement): string {
  if (requirement.required === 'requested_call') {
    const states = CONSENT_RULES.filter((r) => requirement.rules.includes(r.id) && r.state).map((r) => REQUESTED_CALL_STATES[r.state!] ?? r.state!);
    const where = states.length === 1 ? states[0] : `${states.slice(0, -1).join(', ')} or ${states.at(-1)}`;
    return (
      `An AI-voice sales call to this ${LINE_WORDS[lineType]} number (it may be in ${where}) is lawful only when the called party asked for this call: ` +
      `send consent of type requested_call with the request's evidence; no other consent makes it lawful (${requirement.citations.join('; ')}).`
    );
  }
  const also = requirement.acceptsExistingBusinessRelationship ? ' (or an existing business relationship)' : '';
  return `Calling this ${LINE_WORDS[lineType]} number with an AI voice needs ${CONSENT_WORDS[requirement.required]}${also} (${requirement.citations.join('; ')}).`;
}

/**
 * Whether consent held on a request still counts at `now`: absent `expiresAt` it does not expire
 * (revocation ends it through do-not-call instead).
 */
export function consentExpired(expiresAt: Date | null, now: Date): boolean {
  return expiresAt !== null && expiresAt <= now;
}

// ---- no redial after the person hung up (Nevada) ----

/**
 * The outcomes of an earlier call (actors/call/outcome.ts) read as "a person at the telephone
 * number terminated the original call": answered and ended by nobody's decision but the callee's
 * (`completed`), or after the callee declined (`not_interested`) or asked not to be called
 * (`do_not_call`). The service does not record who hung up first; these are the outcomes in which
 * the callee ended the conversation. docs/compliance.md ("No redial after a hang-up").
 */
export const HUNG_UP_OUTCOMES: readonly string[] = ['completed', 'not_interested', 'do_not_call'];

export interface NoRedialRule {
  id: string;
  country: string;
  state: string;
  citation: string;
  checked: string;
}

export const NO_REDIAL_RULES: readonly NoRedialRule[] = [
  {
    id: 'US-NV-no-redial',
    country: 'US',
    state: 'NV',
    citation: 'NRS 597.814(2)(b) (no call-back or second call to the same number if a person at it terminated the original call)',
    checked: ADAD_RULES_CHECKED,
  },
];

/**
 * The rule that forbids calling `e164` again, given the outcomes of the customer's earlier calls
 * to it, or null when none does. A US number of an unlisted area code could be in Nevada.
 */
export function noRedialRule(e164: string, country: string, earlierOutcomes: readonly (string | null)[]): NoRedialRule | null {
  if (!earlierOutcomes.some((o) => o !== null && HUNG_UP_OUTCOMES.includes(o))) return null;
  const state = country === 'US' ? usStateOf(e164) : null;
  return NO_REDIAL_RULES.find((r) => r.country === country && (state === null || r.state === state)) ?? null;
}
