/**
 * What the adapters share about failures: an HTTP answer or a network error becomes the port's
 * `CalendarAuthError` (the credentials are refused: the connection stops working) or
 * `CalendarUnavailable` (it may pass). Reasons are for the customer and never hold a secret.
 */
import { CalendarAuthError, CalendarUnavailable, type CalendarClient } from './calendar.ts';

/** The reasons given to the customer (the calendar page and the connection's failure message show them). */
export const AUTH_REASONS = {
  password: 'the calendar server refused the user name or password',
  withdrawn: 'access to the calendar was withdrawn',
  missing: 'the calendar was not found (it may have been deleted)',
} as const;

/**
 * The error for an HTTP status from a calendar server: 401 (and 403 unless `forbiddenMayPass`:
 * a rate limit some providers send as 403) refuse the credentials; 408, 429, 5xx and no answer
 * may pass; any other refusal is reported as unavailable with its status (a bug of ours or a
 * server quirk: the connection is not dropped for it at once).
 */
export function failureForStatus(status: number | undefined, authReason: string, opts: { forbiddenMayPass?: boolean; what?: string } = {}): Error {
  if (status === 401 || (status === 403 && !opts.forbiddenMayPass)) return new CalendarAuthError(authReason);
  const what = opts.what ?? 'the calendar';
  if (status === undefined) return new CalendarUnavailable(`${what} could not be reached`);
  return new CalendarUnavailable(`${what} answered ${status}`);
}

/** Whether an error is already one of the port's (passed through unchanged by the adapters). */
export function isCalendarError(err: unknown): err is CalendarAuthError | CalendarUnavailable | Error {
  return err instanceof Error && (err.name === 'CalendarAuthError' || err.name === 'CalendarUnavailable' || err.name === 'CalendarSyncExpired');
}

/**
 * An OAuth token endpoint's `error` (RFC 6749 §5.2): `invalid_grant` means the grant (code or refresh
 * token) was revoked or expired: the customer must connect again. Anything else (`invalid_client`:
 * our client settings) is not the customer's doing and may pass once the operator fixes it.
 */
export function failureForTokenError(status: number | undefined, error: string | undefined): Error {
  if (error === 'invalid_grant') return new CalendarAuthError(AUTH_REASONS.withdrawn);
  return failureForStatus(status, AUTH_REASONS.withdrawn, { what: 'the sign-in service' });
}

/** A calendar whose every call says why it cannot be used (OAuth credentials whose client the operator removed). */
export function unavailableCalendar(reason: string): CalendarClient {
  const fail = async (): Promise<never> => {
    throw new CalendarUnavailable(reason);
  };
  return { freeBusy: fail, createEvent: fail, deleteEvent: fail, changes: fail };
}
