import type { Queryable } from '../db/pool.ts';
import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/logger.ts';
import type { CalendarClient, CalendarCredentials } from './calendar.ts';
import { caldavCalendar } from './caldav/caldav-calendar.ts';
import { googleCalendar } from './google/google-calendar.ts';
import { microsoftCalendar } from './microsoft/microsoft-calendar.ts';
import { simulatedCalendar } from './simulated/simulated-calendar.ts';

export interface CalendarOpenerDeps {
  pool: Queryable;
  log: Logger;
  /** The OAuth clients (`calendars`) Google and Microsoft credentials are refreshed with. */
  config: Pick<Config, 'calendars' | 'allowPrivateWebhooks'>;
}

/** Called with the new credentials when an OAuth access token was refreshed while using the calendar: seal and store them. */
export type CredentialsRefreshed = (credentials: CalendarCredentials) => Promise<void>;

/**
 * Opens the calendar a connection's credentials name. One entry point for the actors, whatever
 * serves the calendar. Google or Microsoft credentials without their client configured (the
 * operator removed it) open a calendar whose every call is CalendarUnavailable.
 */
export function createCalendarOpener(deps: CalendarOpenerDeps) {
  return {
    open(credentials: CalendarCredentials, onRefreshed?: CredentialsRefreshed): CalendarClient {
      switch (credentials.kind) {
        case 'simulated':
          return simulatedCalendar(deps.pool, credentials.calendarId);
        case 'caldav':
          // The address is the customer's: private and loopback ones are refused unless the operator allows them (tests, development).
          return caldavCalendar(credentials, { allowPrivate: deps.config.allowPrivateWebhooks === true });
        case 'google':
          return googleCalendar(deps.config.calendars.google, credentials, { onRefreshed, log: deps.log });
        case 'microsoft':
          return microsoftCalendar(deps.config.calendars.microsoft, credentials, { onRefreshed, log: deps.log });
        default: {
          const never: never = credentials;
          throw new Error(`no adapter for ${(never as { kind: string }).kind} calendars`);
        }
      }
    },
  };
}

export type CalendarOpener = ReturnType<typeof createCalendarOpener>;
