/** Shared vocabulary of the whole service. */
export type Mode = 'test' | 'live';

/** What an email tells (db/email-outbox.ts writes it; email/ has a template for each). */
export type EmailKind =
  | 'console_invitation'
  | 'password_reset'
  | 'balance_low'
  | 'auto_top_up_failed'
  | 'number_payment_due'
  | 'website_hosting_due'
  | 'onboarding_link'
  | 'calendar_link';

/** A person's role in a reseller's console (actors/account/console-roles.ts says what each may do). */
export type ConsoleRole = 'owner' | 'admin' | 'developer' | 'billing' | 'viewer';

/**
 * What kind of line a number is, as far as consent rules care. `landline` is a residential
 * landline; `business_landline` one the carrier's data says a business holds; `unknown` is
 * treated as mobile by every rule.
 */
export type LineType = 'mobile' | 'landline' | 'business_landline' | 'voip' | 'unknown';
export const LINE_TYPES: readonly LineType[] = ['mobile', 'landline', 'business_landline', 'voip', 'unknown'];

/** ISO 8601 in UTC with milliseconds (spec: Conventions), or null. */
export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** `iso` for a value that is never null. */
export const isoNow = (d: Date): string => d.toISOString();

/**
 * A duration as people say it: "1 min 30 s", "2 min", "45 s". `totalSeconds` is whole seconds
 * (rounded when it is not); the real length, never rounded up to billed minutes.
 */
export function minutesAndSeconds(totalSeconds: number): string {
  const total = Math.max(0, Math.round(totalSeconds));
  const m = Math.floor(total / 60);
  const s = total % 60;
  if (!m) return `${s} s`;
  return s ? `${m} min ${s} s` : `${m} min`;
}
