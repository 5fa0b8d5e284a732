/**
 * A business's calendar, whatever serves it (issue 24): CalDAV (calendars/caldav), Google Calendar
 * (calendars/google), Microsoft 365 (calendars/microsoft), or the simulated calendar of test mode
 * (calendars/simulated). The call path reads free/busy, writes and deletes the meetings it books,
 * and follows what changed since a sync token. Nothing here knows customers or calls: the
 * actors open a calendar from a connection's credentials (calendars/open-calendar.ts) and use it.
 *
 * Errors: `CalendarAuthError` when the server refuses the credentials (password changed, token
 * revoked or expired without refresh): the connection stops working until the customer connects
 * again. `CalendarUnavailable` for anything that may pass (network, 5xx, 429, timeout): try later.
 * `CalendarSyncExpired` when a sync token is no longer accepted (410 / invalid token): read again
 * from no token.
 */

/** A time the calendar is taken, half-open [start, end). */
export interface BusyInterval {
  start: Date;
  end: Date;
}

/** A meeting the service writes to the calendar. `uid` is ours (stable, the appointment's id). */
export interface CalendarEventInput {
  uid: string;
  start: Date;
  end: Date;
  /** IANA zone the meeting was agreed in (shown by the calendar). */
  timezone: string;
  title: string;
  /** Plain text: the business called, the callee's name and number, notes, the call's link. */
  description: string;
}

/** The calendar's identity of a written event: what delete and the sync refer to. */
export interface CalendarEventRef {
  /** CalDAV: the event resource's URL; Google/Microsoft: the event id; simulated: its id. */
  id: string;
  /** The version the server gave (ETag / Google etag / Graph changeKey), null when none. */
  etag: string | null;
}

/** What happened to one event since the last sync. */
export type CalendarChange =
  | { id: string; kind: 'changed'; start: Date; end: Date; etag: string | null; cancelled: boolean }
  | { id: string; kind: 'deleted' };

export interface CalendarChanges {
  changes: CalendarChange[];
  /** Pass it to the next `changes` call. */
  syncToken: string;
}

export interface CalendarClient {
  /** Busy intervals overlapping [from, to), sorted by start, merged or not (callers merge). */
  freeBusy(from: Date, to: Date): Promise<BusyInterval[]>;
  /** Writes a meeting; busy (opaque) so it shows in free/busy afterwards. */
  createEvent(event: CalendarEventInput): Promise<CalendarEventRef>;
  /** Deletes an event the service wrote; an event already gone is not an error. */
  deleteEvent(id: string): Promise<void>;
  /**
   * Events changed or deleted since `syncToken`. With `null`: no changes are listed, only the
   * token from which the next call reads (the current state is the starting point).
   */
  changes(syncToken: string | null): Promise<CalendarChanges>;
  /**
   * The current state of these events (by the ids createEvent gave): `changed` with its times and
   * version, or `deleted` when it is gone. After a sync token expired, the sync compares the
   * meetings it booked one by one (ETags) instead of reading the whole calendar. A cancelled
   * event that is still there is `changed` with `cancelled: true`. In the order asked; an event
   * the calendar gave no answer for (or not as a meeting with times) is left out.
   */
  events(ids: string[]): Promise<CalendarChange[]>;
}

export type CalendarKind = 'caldav' | 'google' | 'microsoft' | 'simulated';

/** What opening a calendar needs; sealed at rest (runtime/secret-box.ts), never logged nor returned. */
export type CalendarCredentials =
  | { kind: 'caldav'; url: string; username: string; password: string }
  | { kind: 'google'; accessToken: string; refreshToken: string; expiresAt: string; calendarId: string; email: string | null }
  | { kind: 'microsoft'; accessToken: string; refreshToken: string; expiresAt: string; calendarId: string | null; email: string | null }
  | { kind: 'simulated'; calendarId: string };

/** The server refused the credentials: the customer must connect again. `reason` is for the customer (no secret in it). */
export class CalendarAuthError extends Error {
  readonly code = 'calendar_auth_failed';
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'CalendarAuthError';
  }
}

/** The calendar could not be reached or answered with an error that may pass. */
export class CalendarUnavailable extends Error {
  readonly code = 'calendar_unavailable';
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'CalendarUnavailable';
  }
}

/** The sync token is no longer valid: read again with `changes(null)`. */
export class CalendarSyncExpired extends Error {
  readonly code = 'calendar_sync_expired';
  constructor() {
    super('the sync token is no longer valid');
    this.name = 'CalendarSyncExpired';
  }
}

/** Merges busy intervals into sorted, non-overlapping ones. */
export function mergeBusy(intervals: readonly BusyInterval[]): BusyInterval[] {
  const sorted = [...intervals].sort((a, b) => a.start.getTime() - b.start.getTime());
  const out: BusyInterval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start.getTime() <= last.end.getTime()) {
      if (i.end.getTime() > last.end.getTime()) last.end = i.end;
    } else out.push({ start: i.start, end: i.end });
  }
  return out;
}
