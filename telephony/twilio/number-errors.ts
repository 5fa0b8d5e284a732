/**
 * Twilio's refusals of number operations as `CarrierNumberError`s. Twilio answers an error as
 * JSON `{code, message, more_info, status}`; the SDK throws it as a RestException. No I/O.
 *
 * Sources: https://www.twilio.com/docs/api/errors/21649 (via the changelog
 * https://twilio.com/en-us/changelog/regulated-number-bundle-provisioning-requirement),
 * https://twilio.com/docs/api/errors/21631, https://twilio.com/docs/api/errors/21613,
 * https://www.twilio.com/docs/errors/21422, https://twilio.com/docs/api/errors/21450.
 */
import { CarrierNumberError, type CarrierNumberErrorReason } from '../carrier.ts';

const BY_CODE: Readonly<Record<number, CarrierNumberErrorReason>> = {
  21649: 'regulatory_bundle_required', // a regulated number needs an approved BundleSid
  21631: 'address_required', // "Phone Number Requires an Address" (an AddressSid)
  21613: 'address_required', // "PhoneNumber Requires an Address" (older wording, same cause)
  21422: 'no_stock', // "PhoneNumber is not available"
  20404: 'not_found',
  21450: 'already_verified', // "Phone number already verified for your account"
};

/** The error as a `CarrierNumberError`; `doing` says what was asked ("buy +4930…"). */
export function twilioNumberError(err: unknown, doing: string): CarrierNumberError {
  if (err instanceof CarrierNumberError) return err;
  const e = (err ?? {}) as { code?: unknown; status?: unknown; message?: unknown };
  const code = typeof e.code === 'number' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : String(err);
  const reason = (code !== undefined ? BY_CODE[code] : undefined) ?? byMessage(message) ?? (e.status === 404 ? 'not_found' : 'carrier_error');
  return new CarrierNumberError(reason, `Twilio refused to ${doing}: ${message}${code !== undefined ? ` (${code})` : ''}`, code, { cause: err });
}

/** Codes change between Twilio's products; the wording "requires a Bundle/an Address" does not. */
function byMessage(message: string): CarrierNumberErrorReason | undefined {
  if (/requires? an? (?:regulatory )?bundle/i.test(message)) return 'regulatory_bundle_required';
  if (/requires? an? (?:\w+ )?address/i.test(message)) return 'address_required';
  return undefined;
}
