/**
 * Booking a meeting on a call (issue 24): the free slots the agent offers, and the booking itself.
 *
 * Free slots are the customer's business hours less its calendar's busy times and its booked
 * meetings (free-slots.ts). A booking is taken under one lock per customer calendar, in every
 * process: the customer's calendar_connections row (FOR UPDATE) when a calendar is connected,
 * else an advisory lock on the customer. Under it the slot is checked again (business hours, the
 * meetings booked, and a fresh free/busy of that slot), the event is written to the calendar and
 * the appointment inserted with the event's identity; two calls agreeing the same time at once
 * give one appointment, and the other is told `slot_taken` with the next slots.
 *
 * The calendar cannot be written (CalendarUnavailable) at the moment of booking: the booking
 * stands (the callee was promised it), the appointment says `on_calendar: false`, and the
 * `sync_calendars` job writes the event on its next round (docs/api.md, "Appointments").
 * The calendar refuses the credentials, or its connection is failing: no slot is offered and
 * nothing is booked (`calendar_unavailable`); the agent offers a call back instead.
 */

import crypto from 'node:crypto';
import type { Pool } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { createAppointmentRepository, type AppointmentRow } from '../../db/appointments.ts';
import { createCalendarConnectionRepository, type CalendarConnectionRow } from '../../db/calendar-connections.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { createCustomerRepository, type CustomerRow } from '../../db/customers.ts';
import { CalendarAuthError, CalendarUnavailable, type CalendarClient, type CalendarCredentials, type CalendarEventRef } from '../../calendars/calendar.ts';
import type { CalendarOpener } from '../../calendars/open-calendar.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import type { Logger } from '../../runtime/logger.ts';
import { bookingSettingsOf } from '../customer/booking-settings.ts';
import { businessName } from '../customer/views.ts';
import { freeSlots, searchRange, slotProblem, type Interval, type PartOfDay } from './free-slots.ts';
import { calleeZone, sayTime, sayZone } from './callee-zone.ts';
import { searchStartIn, type SearchStart } from './tool-args.ts';

/** Slots the agent is given at a time (it offers two or three). */
export const SLOTS_OFFERED = 3;
/**
 * Longest a calendar call may take while the callee waits (and, when booking, while the lock is
 * held): past it the calendar counts as unavailable.
 */
export const CALENDAR_WAIT_MS = 8_000;
const MINUTE_MS = 60_000;

export interface BookingDeps {
  pool: Pool;
  log: Logger;
  /** The service's public address: the call's link in the event's description. */
  calendars: CalendarOpener;
  secrets: Pick<SecretBox, 'open' | 'seal'>;
  /** CALENDAR_WAIT_MS unless a test shortens it. */
  calendarWaitMs?: number;
}

export interface SlotView {
  start_at: string;
  end_at: string;
  /** The time as the agent says it: in the callee's zone when its clock differs from the business's. */
  says: string;
  /** The IANA zone `says` is in (to say the time in another language on that clock). */
  timezone: string;
}

export type BookingReply =
  | { booked: true; appointment_id: string; starts: string; on_calendar: boolean }
  | { booked: false; reason: 'slot_taken' | 'outside_hours' | 'too_soon' | 'too_far' | 'calendar_unavailable'; next_slots: SlotView[] };

/** The customer's calendar as a booking sees it: none connected, working (opened), or failing. */
type CalendarState = { kind: 'none' } | { kind: 'working'; row: CalendarConnectionRow; client: CalendarClient } | { kind: 'failing'; row: CalendarConnectionRow };

export function createBooking(deps: BookingDeps) {
  const { pool, log } = deps;
  const inTime = <T>(work: Promise<T>) => within(work, deps.calendarWaitMs ?? CALENDAR_WAIT_MS);

  const open = (row: CalendarConnectionRow) => openConnection(deps, row);

  function stateOf(row: CalendarConnectionRow | null): CalendarState {
    if (!row) return { kind: 'none' };
    if (row.status !== 'working') return { kind: 'failing', row };
    return { kind: 'working', row, client: open(row) };
  }

  /** Free slots of the customer from `now`, read fresh (calendar free/busy and booked meetings). */
  async function slotsOf(customer: CustomerRow, calendar: CalendarState, now: Date, q: { after?: Date | null; partOfDay?: PartOfDay; limit: number }): Promise<Interval[]> {
    if (calendar.kind === 'failing') return [];
    const settings = bookingSettingsOf(customer);
    const range = searchRange(now, settings);
    const booked = await createAppointmentRepository(pool).bookedBetween(customer.id, range.start, range.end);
    const busy = calendar.kind === 'working' ? await inTime(calendar.client.freeBusy(range.start, range.end)) : [];
    return freeSlots({ now, settings, timezone: customer.timezone, busy, booked: booked.map(intervalOf), after: q.after, partOfDay: q.partOfDay, limit: q.limit });
  }

  function view(slots: Interval[], customer: CustomerRow, call: CallRow): SlotView[] {
    const zone = calleeZone(call.to_e164);
    return slots.map((s) => ({ start_at: s.start.toISOString(), end_at: s.end.toISOString(), says: sayTime(s.start, customer.timezone, zone), timezone: sayZone(s.start, customer.timezone, zone) }));
  }

  async function customerOf(call: CallRow): Promise<CustomerRow> {
    const customer = await createCustomerRepository(pool).get(call.customer_id);
    if (!customer) throw new Error(`call ${call.id}: customer ${call.customer_id} not found`);
    return customer;
  }

  /** The next free slots, or none while the calendar cannot be read (it is offered nothing it cannot keep). */
  async function nextSlots(customer: CustomerRow, call: CallRow, now: Date, after?: Date | null): Promise<SlotView[]> {
    try {
      const calendar = stateOf(await createCalendarConnectionRepository(pool).get(customer.id));
      return view(await slotsOf(customer, calendar, now, { after, limit: SLOTS_OFFERED }), customer, call);
    } catch (err) {
      if (err instanceof CalendarUnavailable || err instanceof CalendarAuthError) return [];
      throw err;
    }
  }

  return {
    /** The agent's `find_free_slots`: up to three slots, soonest first. */
    async findSlots(call: CallRow, now: Date, q: { after: SearchStart | null; partOfDay: PartOfDay }) {
      const customer = await customerOf(call);
      // A date the agent gave without an offset is on the business's clock (its midnight for a bare date).
      const after = searchStartIn(q.after, customer.timezone);
      const calendar = stateOf(await createCalendarConnectionRepository(pool).get(customer.id));
      if (calendar.kind === 'failing') return { slots: [], reason: 'calendar_unavailable', timezone: customer.timezone };
      try {
        const slots = await slotsOf(customer, calendar, now, { after, partOfDay: q.partOfDay, limit: SLOTS_OFFERED });
        return { slots: view(slots, customer, call), timezone: customer.timezone };
      } catch (err) {
        if (!(err instanceof CalendarUnavailable || err instanceof CalendarAuthError)) throw err;
        log.warn({ err, customer_id: customer.id }, 'free slots: the calendar could not be read');
        return { slots: [], reason: 'calendar_unavailable', timezone: customer.timezone };
      }
    },

    /** The agent's `book_appointment`: the slot taken under the customer calendar's lock, or refused with the next slots. */
    async book(call: CallRow, now: Date, want: { startAt: Date; attendeeName: string | null; notes: string | null }): Promise<BookingReply> {
      const customer = await customerOf(call);
      const settings = bookingSettingsOf(customer);
      const start = want.startAt;
      const end = new Date(start.getTime() + settings.meeting_minutes * MINUTE_MS);
      const id = crypto.randomUUID();
      const outcome = await withTransaction(pool, async (client) => {
        const appointments = createAppointmentRepository(client);
        // The lock: the connection's row when there is one (the calendar's own), else the customer's advisory lock.
        const row = await createCalendarConnectionRepository(client).lock(customer.id);
        if (!row) await appointments.lockCustomerBookings(customer.id);
        const calendar = stateOf(row);
        if (calendar.kind === 'failing') return { refused: 'calendar_unavailable' as const };
        const pad = settings.buffer_minutes * MINUTE_MS;
        const around = { start: new Date(start.getTime() - pad - settings.meeting_minutes * MINUTE_MS), end: new Date(end.getTime() + pad + settings.meeting_minutes * MINUTE_MS) };
        const booked = (await appointments.bookedBetween(customer.id, around.start, around.end)).map(intervalOf);
        let busy: Interval[] = [];
        if (calendar.kind === 'working') {
          try {
            busy = await inTime(calendar.client.freeBusy(around.start, around.end));
          } catch (err) {
            if (!(err instanceof CalendarUnavailable || err instanceof CalendarAuthError)) throw err;
            log.warn({ err, customer_id: customer.id }, 'booking: free/busy could not be read; nothing booked');
            return { refused: 'calendar_unavailable' as const };
          }
        }
        const problem = slotProblem({ now, settings, timezone: customer.timezone, busy, booked, start });
        if (problem) return { refused: problem === 'taken' ? ('slot_taken' as const) : problem };
        let ref: CalendarEventRef | null = null;
        if (calendar.kind === 'working') {
          try {
            ref = await inTime(calendar.client.createEvent({ uid: id, start, end, timezone: customer.timezone, ...eventText(customer, call, want) }));
          } catch (err) {
            if (err instanceof CalendarAuthError) return { refused: 'calendar_unavailable' as const };
            if (!(err instanceof CalendarUnavailable)) throw err;
            // The booking stands; the sync job writes the event later (on_calendar false meanwhile).
            log.warn({ err, customer_id: customer.id, appointment_id: id }, 'booking: the calendar could not be written; the sync writes the event later');
          }
        }
        try {
          const a = await appointments.insert({
            id,
            account_id: call.account_id,
            mode: call.mode,
            customer_id: call.customer_id,
            call_id: call.id,
            start_at: start,
            end_at: end,
            timezone: customer.timezone,
            attendee_name: want.attendeeName,
            notes: want.notes,
            created_at: now,
            calendar_kind: calendar.kind === 'working' ? calendar.row.kind : null,
            calendar_event_id: ref?.id ?? null,
            calendar_etag: ref?.etag ?? null,
          });
          await createCallRepository(client).update(call.id, { appointment_id: a.id, updated_at: now });
          return { appointment: a };
        } catch (err) {
          // Nothing booked: take the event back out of the calendar.
          if (ref && calendar.kind === 'working') await calendar.client.deleteEvent(ref.id).catch((e) => log.warn({ err: e, event_id: ref!.id }, 'booking: an orphan event could not be deleted'));
          throw err;
        }
      });
      if (!outcome.appointment) {
        // The next slots after the one asked for (the soonest ones when it was too soon or too far).
        const reason = outcome.refused!;
        const after = reason === 'slot_taken' ? start : null;
        return { booked: false, reason, next_slots: reason === 'calendar_unavailable' ? [] : await nextSlots(customer, call, now, after) };
      }
      const a = outcome.appointment;
      return { booked: true, appointment_id: a.id, starts: sayTime(a.start_at, customer.timezone, calleeZone(call.to_e164)), on_calendar: a.calendar_event_id !== null };
    },
  };
}

export type Booking = ReturnType<typeof createBooking>;

/** Opens a connection's calendar from its sealed credentials; refreshed OAuth credentials are sealed and stored again. */
export function openConnection(deps: Pick<BookingDeps, 'pool' | 'calendars' | 'secrets'>, row: CalendarConnectionRow): CalendarClient {
  const credentials = JSON.parse(deps.secrets.open(row.credentials)) as CalendarCredentials;
  return deps.calendars.open(credentials, async (fresh) => {
    await createCalendarConnectionRepository(deps.pool).updateCredentials(row.customer_id, deps.secrets.seal(JSON.stringify(fresh)), new Date());
  });
}

/** The calendar's answer, or CalendarUnavailable after `ms`. */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CalendarUnavailable(`the calendar did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

function intervalOf(a: Pick<AppointmentRow, 'start_at' | 'end_at'>): Interval {
  return { start: a.start_at, end: a.end_at };
}

/**
 * Characters that make text read otherwise than it is, removed from what is written into someone's
 * calendar: C0/C1 controls (but the line break a multi-line note keeps), bidirectional embeddings,
 * overrides, isolates and marks (U+202E turns "gpj.exe" around), the zero-width space and BOM.
 * The joiners U+200C/U+200D stay (Persian words and emoji sequences need them).
 */
const HIDDEN = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u061C\u200B\u200E\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/g;

/** Text of the call (the model's arguments, what the callee said) as one line: no line of ours can be faked with it. */
export function oneLine(text: string): string {
  return text.replace(/\r\n?|[\n\u0085\u2028\u2029]/g, ' ').replace(HIDDEN, '').replace(/\s{2,}/g, ' ').trim();
}

/** Notes keep their line breaks, each further line indented under "Notes:" so none passes for a line of ours. */
function noteBlock(text: string): string {
  return text
    .replace(/\r\n?|[\u0085\u2028\u2029]/g, '\n')
    .split('\n')
    .map((l) => l.replace(HIDDEN, '').trim())
    .filter(Boolean)
    .join('\n  ');
}

/**
 * The event's title and description: whom the meeting is with, the callee's name and number, the
 * call's reference (its id, which the reseller finds in its console and API), the notes (last).
 * No link: the calendar is the business's, which has no console, and a link would name the
 * platform's host to the reseller's customer (white label).
 */
export function eventText(customer: CustomerRow, call: CallRow, want: { attendeeName: string | null; notes: string | null }): { title: string; description: string } {
  const attendee = want.attendeeName === null ? '' : oneLine(want.attendeeName);
  const notes = want.notes === null ? '' : noteBlock(want.notes);
  const who = (call.business_name && oneLine(call.business_name)) || attendee || call.to_e164;
  const lines = [
    `Booked by phone for ${oneLine(businessName(customer))}.`,
    call.business_name ? `Business called: ${oneLine(call.business_name)}` : '',
    `With: ${attendee || 'name not given'}, ${call.to_e164}`,
    `Call reference: ${call.id}`,
    notes ? `Notes: ${notes}` : '',
  ];
  return { title: `Meeting with ${who}`, description: lines.filter(Boolean).join('\n') };
}
