import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

/** A telephone number typed by a person, parsed to E.164, or why it could not be. */
export type ParsedPhone = { ok: true; e164: string; country: string } | { ok: false; reason: 'unparseable' | 'invalid' };

/**
 * Parses free text ("(202) 555-0147", "+44 20 7946 0958", "020 7946 0958") with `defaultCountry`
 * for national formats. Uses the full metadata (`/max`): a number that merely looks right is refused.
 */
export function parsePhone(text: string, defaultCountry: string): ParsedPhone {
  const parsed = parsePhoneNumberFromString(text, defaultCountry as CountryCode);
  if (!parsed) return { ok: false, reason: 'unparseable' };
  if (!parsed.isValid() || !parsed.country) return { ok: false, reason: 'invalid' };
  return { ok: true, e164: parsed.number, country: parsed.country };
}

/** An E.164 number as its country writes it at home ("(202) 555-0147"), for saying aloud; the E.164 itself if unparseable. */
export function nationalFormat(e164: string): string {
  return parsePhoneNumberFromString(e164)?.formatNational() ?? e164;
}
