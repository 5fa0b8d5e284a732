import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { RefusalCode } from '../../runtime/refusal.ts';

/**
 * What a caller ID may be, and how many verifications may run (issue 20, §2). Each verification
 * makes the carrier call the number, and one that fails costs nothing, so they are bounded; the
 * numbers are the service's choice (docs/api.md, "Numbers"). Pure.
 */
export const CALLER_ID_VERIFICATION_LIMITS = {
  /** Verifications running at once for one customer. */
  perCustomer: 2,
  /** Verifications running at once across an account's customers (of one mode). */
  perAccount: 5,
  /** Verifications an account (of one mode) may start in one UTC day, whatever came of them. */
  perAccountPerDay: 20,
} as const;

/**
 * The number types a caller ID may be: numbers of a place or a person's mobile. Premium-rate,
 * toll-free, shared-cost, UAN, personal, pager, voicemail-only and VoIP ranges are refused: a
 * call shown from them misleads the callee about who calls and what calling back costs.
 */
const CALLER_ID_TYPES = new Set(['FIXED_LINE', 'MOBILE', 'FIXED_LINE_OR_MOBILE']);

const TYPE_WORDS: Readonly<Record<string, string>> = {
  PREMIUM_RATE: 'a premium-rate number',
  TOLL_FREE: 'a toll-free number',
  SHARED_COST: 'a shared-cost number',
  UAN: 'a non-geographic (UAN) number',
  VOICEMAIL: 'a voicemail access number',
  PERSONAL_NUMBER: 'a personal (follow-me) number',
  PAGER: 'a pager number',
  VOIP: 'a non-geographic VoIP number',
};

type Refused = { ok: false; code: RefusalCode; message: string };

/** `text` as a caller ID of a customer in `country`: its E.164, or why it cannot be one. */
export function callerIdNumber(text: string, country: string): { ok: true; e164: string; country: string } | Refused {
  const parsed = parsePhoneNumberFromString(text, country as CountryCode);
  if (!parsed || !parsed.isValid() || !parsed.country) return { ok: false, code: 'invalid_phone_number', message: 'phone_number is not a valid telephone number.' };
  if (parsed.ext) {
    return { ok: false, code: 'phone_extension_not_allowed', message: 'phone_number has an extension; the carrier cannot call an extension to verify it. Send the number without it.' };
  }
  if (parsed.country !== country) return { ok: false, code: 'phone_country_mismatch', message: `phone_number is a number of ${parsed.country}, not of the customer's country ${country}.` };
  const type = parsed.getType();
  if (!type || !CALLER_ID_TYPES.has(type)) {
    const what = (type && TYPE_WORDS[type]) ?? 'a number whose kind cannot be told';
    return { ok: false, code: 'caller_id_not_geographic', message: `phone_number is ${what}; a caller ID must be a landline or mobile number.` };
  }
  return { ok: true, e164: parsed.number, country: parsed.country };
}

/** How many verifications run now and started today (see `CALLER_ID_VERIFICATION_LIMITS`). */
export interface VerificationCounts {
  customerRunning: number;
  accountRunning: number;
  accountStartedToday: number;
}

/** Why another verification may not start now, or null when it may. */
export function verificationLimitRefusal(counts: VerificationCounts, limits = CALLER_ID_VERIFICATION_LIMITS): Refused | null {
  if (counts.accountStartedToday >= limits.perAccountPerDay) {
    return {
      ok: false,
      code: 'verification_daily_limit',
      message: `This account has started ${limits.perAccountPerDay} caller ID verifications today (UTC), the most a day; try again tomorrow.`,
    };
  }
  if (counts.customerRunning >= limits.perCustomer) {
    return {
      ok: false,
      code: 'verification_limit_reached',
      message: `This customer has ${limits.perCustomer} caller ID verifications running, the most at once; try again when one has ended (each ends within minutes).`,
    };
  }
  if (counts.accountRunning >= limits.perAccount) {
    return {
      ok: false,
      code: 'verification_limit_reached',
      message: `This account has ${limits.perAccount} caller ID verifications running, the most at once; try again when one has ended (each ends within minutes).`,
    };
  }
  return null;
}
