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
 * - `business_landline` is a landline the carrier says belongs to a business. Rules limited to
 *   consumers or natural persons do not reach it; rules for every subscriber do. A sole trader's
 *   business line is the doubtful case (docs/compliance.md ("Consent for AI-voice calls")).
 */
import { nanpAreaOf } from './nanp-area-codes.ts';
import { LINE_TYPES, type LineType } from '../../runtime/types.ts';

export { LINE_TYPES, type LineType };

/** What the reseller says it holds for the called party. */
export type ConsentType = 'prior_express_written' | 'prior_express' | 'existing_business_relationship' | 'none';
export const CONSENT_TYPES: readonly ConsentType[] = ['prior_express_written', 'prior_express', 'existing_business_relationship', 'none'];

/** What a call needs, strongest first. */
export type RequiredConsent = 'prior_express_written' | 'prior_express' | 'none';

/** The day every citation below was last read against its source. */
export const CONSENT_RULES_CHECKED = '2026-11-25';

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

const rule = (r: Omit<ConsentRule, 'checked' | 'acceptsExistingBusinessRelationship' | 'from'> & Partial<Pick<ConsentRule, 'acceptsExistingBusinessRelationship' | 'from'>>): ConsentRule => ({
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

const STRENGTH: Record<RequiredConsent, number> = { none: 0, prior_express: 1, prior_express_written: 2 };

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
      return held === 'prior_express' || held === 'prior_express_written' || (held === 'existing_business_relationship' && requirement.acceptsExistingBusinessRelationship);
    case 'prior_express_written':
      return held === 'prior_express_written';
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
  prior_express_written: 'prior express written consent',
  prior_express: 'prior express consent',
  none: 'no consent',
};

/** The refusal text: what is required and under which rule, e.g. for `consent_required`. */
export function consentExplanation(lineType: LineType, requirement: ConsentRequirement): string {
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
