/**
 * Appointments follow their calendar events (issue 24), the `sync_calendars` job: every minute per
 * working connection, what changed since the connection's sync token. An event of an appointment
 * moved → its `start_at`/`end_at` change and `appointment.updated` is emitted; deleted or cancelled
 * → the appointment is `cancelled` and `appointment.cancelled` is emitted (data: the appointment).
 * Changes to events that are not the service's meetings are ignored (the free/busy read at
 * booking time sees them). A sync token the calendar no longer accepts: a new one is taken, and
 * each booked appointment still to come is compared with its event (ETag) instead of reading the
 * whole calendar. Meetings booked while the calendar could not be written get their event here.
 *
 * Safe on many processes at once: each change is applied under the appointment's row lock and is
 * a no-op when already applied (same times, already cancelled), so no event is emitted twice.
 */

import { withTransaction } from '../../db/pool.ts';
import { createAppointmentRepository, type AppointmentRow } from '../../db/appointments.ts';
import { createCalendarConnectionRepository, type CalendarConnectionRow } from '../../db/calendar-connections.ts';
import { createCallRepository } from '../../db/calls.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { recordEvent } from '../../db/events.ts';
import { CalendarSyncExpired, CalendarUnavailable, CalendarAuthError, type CalendarChange, type CalendarClient } from '../../calendars/calendar.ts';
import { appointmentView } from './views.ts';
import { eventText, openConnection, type BookingDeps } from './booking.ts';

/** A working connection is read again this long after its last sync. */
export const SYNC_EVERY_MS = 60_000;
/** Connections synced per round, and appointments compared or written per connection. */
const BATCH = 50;

/** What the sync needs: the same as a booking (booking.ts). */
export type CalendarSyncDeps = BookingDeps;

export function createCalendarSync(deps: CalendarSyncDeps) {
  const { pool, log } = deps;

  const open = (row: CalendarConnectionRow) => openConnection(deps, row);

  /** One change of one event, applied in its own transaction with its webhook event. Returns whether an appointment changed. */
  async function apply(row: CalendarConnectionRow, change: CalendarChange, now: Date): Promise<boolean> {
    return withTransaction(pool, async (client) => {
      const appointments = createAppointmentRepository(client);
      const a = await appointments.lockByEvent(row.customer_id, change.id);
      if (!a || a.status !== 'booked') return false;
      let changed: AppointmentRow | null = null;
      let type: 'appointment.updated' | 'appointment.cancelled';
      if (change.kind === 'deleted' || change.cancelled) {
        changed = await appointments.cancel(a.id, now);
        type = 'appointment.cancelled';
      } else if (change.start.getTime() !== a.start_at.getTime() || change.end.getTime() !== a.end_at.getTime()) {
        changed = await appointments.moved(a.id, { start: change.start, end: change.end, etag: change.etag, now });
        type = 'appointment.updated';
      } else {
        if (change.etag !== a.calendar_etag) await appointments.recordEtag(a.id, change.etag);
        return false;
      }
      await recordEvent(client, { accountId: a.account_id, mode: a.mode, type, data: appointmentView(changed), now });
      return true;
    });
  }

  /** Meetings booked while the calendar could not be written: their events, written now (uid = the appointment's id). */
  async function writePending(row: CalendarConnectionRow, calendar: CalendarClient, now: Date): Promise<number> {
    const pending = await createAppointmentRepository(pool).awaitingEvent(row.customer_id, now, BATCH);
    if (pending.length === 0) return 0;
    const customer = await createCustomerRepository(pool).get(row.customer_id);
    if (!customer) return 0;
    let written = 0;
    for (const a of pending) {
      const call = await createCallRepository(pool).get(a.call_id);
      if (!call) continue;
      const ref = await calendar.createEvent({ uid: a.id, start: a.start_at, end: a.end_at, timezone: a.timezone, ...eventText(customer, call, { attendeeName: a.attendee_name, notes: a.notes }) });
      await createAppointmentRepository(pool).recordEvent(a.id, ref, now);
      written++;
    }
    return written;
  }

  /** After an expired token: each booked appointment still to come compared with its event. */
  async function compareBooked(row: CalendarConnectionRow, calendar: CalendarClient, now: Date): Promise<number> {
    const booked = await createAppointmentRepository(pool).upcomingOnCalendar(row.customer_id, now, 500);
    let changed = 0;
    for (let i = 0; i < booked.length; i += BATCH) {
      const slice = booked.slice(i, i + BATCH);
      const states = await calendar.events(slice.map((a) => a.calendar_event_id!));
      const byId = new Map(slice.map((a) => [a.calendar_event_id!, a]));
      for (const state of states) {
        const a = byId.get(state.id);
        // The same version: nothing changed (the ETag comparison spares reading the times).
        if (!a || (state.kind === 'changed' && state.etag !== null && state.etag === a.calendar_etag && !state.cancelled)) continue;
        if (await apply(row, state, now)) changed++;
      }
    }
    return changed;
  }

  /** One connection: pending events written, changes since its token applied, the new token kept. */
  async function syncOne(row: CalendarConnectionRow, now: Date): Promise<number> {
    const calendar = open(row);
    let done = await writePending(row, calendar, now);
    let token: string;
    try {
      const read = await calendar.changes(row.sync_token);
      for (const change of read.changes) if (await apply(row, change, now)) done++;
      token = read.syncToken;
    } catch (err) {
      if (!(err instanceof CalendarSyncExpired)) throw err;
      token = (await calendar.changes(null)).syncToken;
      done += await compareBooked(row, calendar, now);
    }
    await createCalendarConnectionRepository(pool).recordSync(row.customer_id, token, now);
    return done;
  }

  return {
    /** The job: every working connection not synced for a minute. Returns the appointments changed and events written. */
    async syncDue(now: Date): Promise<number> {
      const due = await createCalendarConnectionRepository(pool).syncDue(new Date(now.getTime() - SYNC_EVERY_MS), BATCH);
      let done = 0;
      for (const row of due) {
        try {
          done += await syncOne(row, now);
        } catch (err) {
          // The health check (check_calendars) decides what a refusing calendar means: refused
          // credentials bring it forward to now, so a changed password returns the calendar step to
          // not done at once rather than at the next 6-hourly check. The sync tries again in a
          // minute (not every round: a server refusing a password is not asked again and again).
          if (!(err instanceof CalendarUnavailable || err instanceof CalendarAuthError)) throw err;
          log.warn({ err, customer_id: row.customer_id }, 'calendar sync failed; it runs again in a minute');
          await createCalendarConnectionRepository(pool).recordSyncFailed(row.customer_id, now, err instanceof CalendarAuthError);
        }
      }
      return done;
    },
  };
}

export type CalendarSync = ReturnType<typeof createCalendarSync>;
