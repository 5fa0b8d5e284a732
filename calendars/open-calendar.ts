import type { Queryable } from '../db/pool.ts';
import type { Logger } from '../runtime/logger.ts';
import type { CalendarClient, CalendarCredentials } from './calendar.ts';
import { simulatedCalendar } from './simulated/simulated-calendar.ts';

export interface CalendarOpenerDeps {
  pool: Queryable;
  log: Logger;
}

/** Called with the new credentials when an OAuth access token was refreshed while using the calendar: seal and store them. */
export type CredentialsRefreshed = (credentials: CalendarCredentials) => Promise<void>;

/**
 * Opens the calendar a connection's credentials name. One entry point for the actors, whatever
 * serves the calendar; adapters are added per kind (calendars/caldav, calendars/google,
 * calendars/microsoft).
 */
export function createCalendarOpener(deps: CalendarOpenerDeps) {
  return {
    open(credentials: CalendarCredentials, _onRefreshed?: CredentialsRefreshed): CalendarClient {
      switch (credentials.kind) {
        case 'simulated':
          return simulatedCalendar(deps.pool, credentials.calendarId);
        default:
          throw new Error(`no adapter for ${credentials.kind} calendars`);
      }
    },
  };
}

export type CalendarOpener = ReturnType<typeof createCalendarOpener>;
