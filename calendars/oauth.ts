/**
 * The OAuth connections a customer may choose on the calendar page: Google Calendar and
 * Microsoft 365, each offered only when the operator set its client (runtime/config.ts,
 * `calendars`). The page sends the customer to `authorizationUrl` with a `state` of its own and
 * exchanges the code that comes back for the credentials it seals and stores.
 */
import type { Config } from '../runtime/config.ts';
import type { CalendarCredentials } from './calendar.ts';
import { googleOAuth } from './google/google-oauth.ts';
import { microsoftOAuth } from './microsoft/microsoft-oauth.ts';

export interface CalendarOAuth {
  kind: 'google' | 'microsoft';
  /** Where the customer's browser goes to consent; the provider redirects to `redirectUri` with `code` and `state`. */
  authorizationUrl(p: { state: string; redirectUri: string }): string;
  /** The credentials for a code (CalendarAuthError when the provider refuses it, CalendarUnavailable when it cannot be reached). */
  exchange(p: { code: string; redirectUri: string }): Promise<CalendarCredentials>;
}

export function calendarOAuthProviders(config: Pick<Config, 'calendars'>): { google: CalendarOAuth | null; microsoft: CalendarOAuth | null } {
  const { google, microsoft } = config.calendars;
  return { google: google ? googleOAuth(google) : null, microsoft: microsoft ? microsoftOAuth(microsoft) : null };
}
