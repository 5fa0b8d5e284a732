/**
 * A call's opening (issue 23 §1): fixed words, synthesized ahead of the answer and played the
 * instant the carrier's stream starts, so what the called person hears first is known, lawful
 * and stored on the call's compliance record. The order (docs/compliance.md, "The opening"):
 *
 * 1. identification with the business's registered name (47 CFR 64.1200(b)(1));
 * 2. the opt-out offer, "press 9 or say stop", starting within two seconds of the
 *    identification's end (64.1200(b)(3)): it follows it directly, each segment being its own audio;
 * 3. the purpose of the call where the called jurisdiction wants it early (US states WA, UT,
 *    TX, CT, NV by the called number's area code; Canada);
 * 4. the recording and automated-assistant notice (recording starts only after it);
 * 5. a number that reaches the business: the caller ID (64.1200(b)(2)); for a UK number, the
 *    business's address instead unless the caller ID is a UK freephone number (PECR reg. 24(1)(b):
 *    the caller's name and its address or a freephone number); without either no UK opening exists;
 * 6. the question the agent continues from.
 *
 * Pure: the words come from opening-words.ts.
 */
import { nanpAreaOf } from '../shared/nanp-area-codes.ts';
import { nationalFormat } from '../shared/phone.ts';

/**
 * The callback number as said in the opening (`nationalFormat`, libphonenumber: about a tenth of a
 * dial's CPU when parsed per call). A customer's caller IDs are few, so each is formatted once; at
 * most this many are kept (a pure function of the number: nothing kept goes stale).
 */
const CALLBACK_FORMATS = 1_000;
const callbackFormats = new Map<string, string>();
function callbackFormat(e164: string): string {
  let said = callbackFormats.get(e164);
  if (said === undefined) {
    said = nationalFormat(e164);
    callbackFormats.set(e164, said);
    if (callbackFormats.size > CALLBACK_FORMATS) callbackFormats.delete(callbackFormats.keys().next().value!);
  }
  return said;
}
import { OPENING_WORDS, openingLanguageOf, type OpeningLanguage } from './opening-words.ts';

export { OPT_OUT_DIGIT, OPENING_LANGUAGES, openingLanguageOf, type OpeningLanguage } from './opening-words.ts';

/** Longest time between the identification's end and the opt-out offer's start (64.1200(b)(3)): two seconds. */
export const OPT_OUT_WITHIN_MS = 2_000;

/** US states whose telephone-solicitation laws want the call's purpose said at its start (docs/compliance.md). */
export const PURPOSE_EARLY_US_STATES = ['WA', 'UT', 'TX', 'CT', 'NV'] as const;

export type OpeningSegmentKind = 'identification' | 'opt_out' | 'purpose' | 'notice' | 'callback' | 'address' | 'question';

/**
 * A UK freephone number (Ofcom's National Telephone Numbering Plan: 080x, 0500 and 0808 are free
 * to call), as E.164: +44 80…, +44 500…. Pure.
 */
export function isUkFreephone(e164: string | null | undefined): boolean {
  return typeof e164 === 'string' && /^\+44(80\d|500)\d{5,7}$/.test(e164);
}

/**
 * How a call to a UK number meets PECR reg. 24(1)(b) (the caller's name and either its address
 * or a telephone number reachable free of charge): a freephone caller ID satisfies it by itself,
 * else the registered address is said; null when neither is there (the call must not be made).
 */
export function pecrReg24Rule(m: { callerId: string | null; registeredAddress: string | null | undefined }): 'gb_pecr_reg24_freephone' | 'gb_pecr_reg24_address' | null {
  if (isUkFreephone(m.callerId)) return 'gb_pecr_reg24_freephone';
  if (m.registeredAddress?.trim()) return 'gb_pecr_reg24_address';
  return null;
}

/** The outcome of a UK request that reached its dial with neither an address nor a freephone caller ID. */
export const REGISTERED_ADDRESS_REQUIRED = 'registered_address_required';

/** composeOpening for a UK number with neither an address nor a freephone caller ID (PECR reg. 24): no lawful opening. */
export class OpeningNotLawful extends Error {
  readonly code = REGISTERED_ADDRESS_REQUIRED;
  constructor() {
    super('PECR reg. 24: a call to a UK number needs the business address (registered_address) or a UK freephone caller ID');
  }
}

export interface OpeningSegment {
  kind: OpeningSegmentKind;
  text: string;
}

/** Where the called number is, as far as the opening's rules need it. */
export interface CalledJurisdiction {
  /** ISO country of the called number (from the area code for +1); null when unknown. */
  country: string | null;
  /** US state or Canadian province of a +1 number; null otherwise. */
  region: string | null;
}

export interface Opening {
  language: OpeningLanguage;
  jurisdiction: CalledJurisdiction;
  segments: OpeningSegment[];
  /** The segments' texts joined by spaces: what the agent is told it has said (AgentSetup.greeting). */
  text: string;
  /** The rules that shaped it (ids, docs/compliance.md "The opening"), kept on the compliance record. */
  rules: string[];
}

/** The called number's country and region: the area code for +1 numbers, else `calledCountry`. */
export function calledJurisdictionOf(to: string, calledCountry: string | null = null): CalledJurisdiction {
  const area = nanpAreaOf(to);
  if (area) return { country: area.country, region: area.region };
  if (to.startsWith('+44')) return { country: 'GB', region: null };
  return { country: calledCountry, region: null };
}

/** Whether the called jurisdiction asks for the purpose of the call at its start. */
export function purposeEarly(j: CalledJurisdiction): boolean {
  if (j.country === 'CA') return true;
  return j.country === 'US' && j.region !== null && (PURPOSE_EARLY_US_STATES as readonly string[]).includes(j.region);
}

/**
 * The opening of one call: said in the calling language, for the business's registered name,
 * with the caller ID as the number that reaches it. Pure.
 */
export function composeOpening(c: {
  /** `registeredNameOf(customer)` (actors/customer/call-settings.ts). */
  registeredName: string;
  /** The caller ID (E.164); null when not known (then no number is said, and the record says so). */
  callbackNumber: string | null;
  /** The called number, E.164. */
  to: string;
  /** The customer's `registered_address`: said to a UK number unless the caller ID is freephone (PECR reg. 24). */
  registeredAddress?: string | null;
  /** The call's `to_country`, for numbers outside the NANP. */
  calledCountry?: string | null;
  /** BCP 47 calling language (`fr-FR`); its first part picks the words, English for any other. */
  language: string;
}): Opening {
  const language = openingLanguageOf(c.language);
  const words = OPENING_WORDS[language];
  const name = c.registeredName.trim();
  const jurisdiction = calledJurisdictionOf(c.to, c.calledCountry ?? null);
  const rules = ['us_47cfr64_1200_b1_identification', 'us_47cfr64_1200_b3_opt_out'];
  const segments: OpeningSegment[] = [
    { kind: 'identification', text: words.identification(name) },
    { kind: 'opt_out', text: words.optOut },
  ];
  if (purposeEarly(jurisdiction)) {
    segments.push({ kind: 'purpose', text: words.purpose(name) });
    rules.push(jurisdiction.country === 'CA' ? 'ca_crtc_purpose_early' : `us_${jurisdiction.region!.toLowerCase()}_purpose_early`);
  }
  segments.push({ kind: 'notice', text: words.notice });
  rules.push('recording_and_ai_notice');
  // PECR reg. 24(1)(b): to a UK number, the address unless the caller ID is free to call; never neither.
  const pecr = jurisdiction.country === 'GB' ? pecrReg24Rule({ callerId: c.callbackNumber, registeredAddress: c.registeredAddress }) : null;
  if (jurisdiction.country === 'GB' && !pecr) throw new OpeningNotLawful();
  if (pecr === 'gb_pecr_reg24_address') {
    segments.push({ kind: 'address', text: words.address(c.registeredAddress!.trim()) });
    rules.push(pecr);
  } else if (c.callbackNumber) {
    segments.push({ kind: 'callback', text: words.callback(name, callbackFormat(c.callbackNumber)) });
    rules.push('us_47cfr64_1200_b2_number');
    if (pecr) rules.push(pecr);
  } else {
    rules.push('callback_number_unknown');
  }
  segments.push({ kind: 'question', text: words.question });
  return { language, jurisdiction, segments, text: segments.map((s) => s.text).join(' '), rules };
}

/**
 * What the callee heard of an opening, from the record's `opening` column (migration 039): the
 * text of the segments whose end mark came back, null when none was. A record written before the
 * segments were kept: its `identification` (`fallback`). Pure.
 */
export function openingAsPlayed(opening: unknown, fallback: string | null): string | null {
  const segments = (opening as { segments?: { text: string; played: boolean }[] } | null | undefined)?.segments;
  if (!Array.isArray(segments)) return fallback;
  return segments.filter((s) => s.played).map((s) => s.text).join(' ') || null;
}
