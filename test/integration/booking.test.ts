import test from 'ava';
import { startTestService, TEST_ENCRYPTION_KEY, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, makeReadyCustomer } from '../helpers/calls.ts';
import { insertCalendarConnection } from '../helpers/calendar-connection.ts';
import { simulatedCalendar } from '../../calendars/simulated/simulated-calendar.ts';
import { createSimulatedCalendarRepository } from '../../db/simulated-calendars.ts';
import { createAppointmentRepository } from '../../db/appointments.ts';
import { createCallRepository } from '../../db/calls.ts';
import { createBooking } from '../../actors/call/booking.ts';
import { createCalendarOpener } from '../../calendars/open-calendar.ts';
import { CalendarUnavailable, type CalendarClient } from '../../calendars/calendar.ts';
import { createPool } from '../../db/pool.ts';
import { SecretBox } from '../../runtime/secret-box.ts';
import { radicaleMissing, startRadicale } from '../helpers/radicale.ts';
import { caldavCalendar } from '../../calendars/caldav/caldav-calendar.ts';

let svc: TestService;
let account: TestAccount;
/** Booking into the simulated calendar. */
let withCalendar: any;
/** No calendar connected: business hours and booked meetings only. */
let noCalendar: any;
/** Monday 07:00 in New York (12:00 UTC): the service's clock was moved there (it runs on from it). */
let monday: Date;

/** Monday `h`:`m` in New York. */
const hours = (h: number, m = 0) => new Date(monday.getTime() + ((h - 7) * 60 + m) * 60_000);

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000', SWITCHBOARD_JOB_INTERVAL_MS: '3600000' });
  account = await makeAccount(svc.url);
  withCalendar = await makeReadyCustomer(svc.url, account.api, { name: 'Bright Dental', timezone: 'America/New_York' });
  noCalendar = await makeReadyCustomer(svc.url, account.api, { name: 'Quiet Books', timezone: 'America/New_York' });
  const moved = await advanceToNext(account, 1, 12);
  monday = new Date(Math.floor(moved.getTime() / 3_600_000) * 3_600_000);
  await insertCalendarConnection(svc.services.pool, withCalendar);
  // The business keeps 10:00–11:00 busy in its own calendar.
  await simulatedCalendar(svc.services.pool, withCalendar.id).createEvent({ uid: 'own-1', start: hours(10), end: hours(11), timezone: 'America/New_York', title: 'Staff meeting', description: '' });
});
test.after.always(async () => {
  await svc?.stop();
});

let phoneSeq = 0;
/** A queued call of `customer` to a fresh number of area code `area` (New York's 212 unless said). */
async function newCall(customer: { id: string }, area = '212', businessName: string | null = 'Harbor Plumbing') {
  const phone = `+1${area}555${String(200 + ++phoneSeq).padStart(4, '0')}`;
  const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone, ...(businessName ? { business_name: businessName } : {}) });
  if (r.status !== 201 && r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.id as string;
}
const tool = (callId: string, name: string, args: Record<string, unknown> = {}) => svc.services.calls.ask(callId, { type: 'tool_called', name, args }) as Promise<any>;

test.serial('find_free_slots offers three slots around the busy 10:00–11:00, said in the business zone to a New York number', async (t) => {
  const reply = await tool(await newCall(withCalendar), 'find_free_slots');
  // 2 hours of notice from 07:00, 10:00–11:00 busy with a 15-minute buffer either side (09:30 would end in it): 11:30 is first.
  t.deepEqual(
    reply.slots.map((s: any) => s.start_at),
    [hours(11, 30).toISOString(), hours(12).toISOString(), hours(12, 30).toISOString()],
  );
  t.is(reply.slots[0].end_at, hours(12).toISOString(), '30-minute meetings');
  t.regex(reply.slots[0].says, /11:30 \(America\/New_York\)$/);
  t.is(reply.slots[0].timezone, 'America/New_York', 'the zone says is in');
});

test.serial('to a Denver number the slots are said in its own time', async (t) => {
  const reply = await tool(await newCall(withCalendar, '303'), 'find_free_slots', { part_of_day: 'afternoon' });
  t.is(reply.slots[0].start_at, hours(12).toISOString(), '12:00 in New York is the first afternoon slot');
  t.regex(reply.slots[0].says, /10:00 your time \(America\/Denver\)$/);
  t.is(reply.slots[0].timezone, 'America/Denver', 'the callee’s zone, as says is');
});

test.serial('book_appointment writes the event to the calendar and the appointment keeps its identity', async (t) => {
  const callId = await newCall(withCalendar);
  const reply = await tool(callId, 'book_appointment', { start_at: hours(14).toISOString(), attendee_name: 'Pat Example', notes: 'Wants a quote' });
  t.like(reply, { booked: true, on_calendar: true });
  const a = (await account.api.get(`/v1/appointments/${reply.appointment_id}`)).body;
  t.like(a, { start_at: hours(14).toISOString(), end_at: hours(14, 30).toISOString(), status: 'booked', on_calendar: true, cancelled_at: null, updated_at: a.created_at });
  const row = (await createAppointmentRepository(svc.services.pool).get(reply.appointment_id))!;
  t.is(row.calendar_kind, 'simulated');
  const event = (await createSimulatedCalendarRepository(svc.services.pool).get(withCalendar.id, row.calendar_event_id!))!;
  t.is(row.calendar_etag, event.etag);
  t.is(event.uid, row.id);
  t.is(event.summary, 'Meeting with Harbor Plumbing');
  t.regex(event.description, /Business called: Harbor Plumbing/);
  t.regex(event.description, /With: Pat Example, \+1212555\d{4}/);
  t.regex(event.description, /Notes: Wants a quote/);
  t.true(event.description.split('\n').includes(`Call reference: ${callId}`), "the call's reference for the reseller");
  t.false(/switchboard|https?:|\/console\//i.test(event.summary + event.description), 'no platform name, host or console link in the business\'s calendar');
  // The slot is gone from what is offered now, and with the 15-minute buffer so are 13:30 and 14:30.
  const again = await tool(await newCall(withCalendar), 'find_free_slots', { after: hours(13, 30).toISOString() });
  t.deepEqual(again.slots.map((s: any) => s.start_at), [hours(15).toISOString(), hours(15, 30).toISOString(), hours(16).toISOString()]);
});

test.serial('a time outside the business hours, too soon or taken is refused with the next free slots', async (t) => {
  const outside = await tool(await newCall(withCalendar), 'book_appointment', { start_at: hours(17).toISOString() });
  t.like(outside, { booked: false, reason: 'outside_hours' });
  t.is(outside.next_slots.length, 3);
  t.like(await tool(await newCall(withCalendar), 'book_appointment', { start_at: hours(9).toISOString() }), { booked: false, reason: 'too_soon' });
  const busy = await tool(await newCall(withCalendar), 'book_appointment', { start_at: hours(10, 30).toISOString() });
  t.like(busy, { booked: false, reason: 'slot_taken' });
  t.is(busy.next_slots[0].start_at, hours(11, 30).toISOString());
});

test.serial('two calls booking the same slot at once, in two processes: exactly one appointment, the other told slot_taken with the next slots', async (t) => {
  // Two pools stand for two processes: the lock is PostgreSQL's, not a process's.
  const secrets = SecretBox.fromKey(TEST_ENCRYPTION_KEY);
  const pools = [createPool(svc.databaseUrl, 4), createPool(svc.databaseUrl, 4)];
  try {
    const bookings = pools.map((pool) => createBooking({ pool, log: svc.services.log, calendars: createCalendarOpener({ pool, log: svc.services.log, config: svc.services.config }), secrets }));
    for (const [i, start] of [hours(15), hours(16)].entries()) {
      const calls = await Promise.all([newCall(withCalendar), newCall(withCalendar)]);
      const rows = await Promise.all(calls.map(async (id) => (await createCallRepository(svc.services.pool).get(id))!));
      const replies = await Promise.all(bookings.map((b, k) => b.book(rows[k], hours(8), { startAt: start, attendeeName: `Caller ${i}-${k}`, notes: null })));
      t.is(replies.filter((r) => r.booked).length, 1, 'one booked');
      const loser = replies.find((r) => !r.booked) as Extract<(typeof replies)[number], { booked: false }>;
      t.is(loser.reason, 'slot_taken');
      t.true(loser.next_slots.length > 0 && loser.next_slots.every((s) => new Date(s.start_at) > start), 'the next slots come after the one taken');
      const { rows: booked } = await svc.services.pool.query(`SELECT count(*)::int AS n FROM appointments WHERE customer_id = $1 AND start_at = $2 AND status = 'booked'`, [withCalendar.id, start]);
      t.is(booked[0].n, 1);
      const events = await simulatedCalendar(svc.services.pool, withCalendar.id).freeBusy(start, new Date(start.getTime() + 60_000));
      t.is(events.length, 1, 'one event in the calendar');
    }
    // Without a calendar the customer's advisory lock does the same.
    const calls = await Promise.all([newCall(noCalendar), newCall(noCalendar)]);
    const rows = await Promise.all(calls.map(async (id) => (await createCallRepository(svc.services.pool).get(id))!));
    const replies = await Promise.all(bookings.map((b, k) => b.book(rows[k], hours(8), { startAt: hours(11), attendeeName: null, notes: null })));
    t.deepEqual(replies.map((r) => r.booked).sort(), [false, true]);
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
});

test.serial('Radicale: two calls booking the same slot at once, in two processes: one event in the CalDAV calendar, one appointment, the other told slot_taken', async (t) => {
  if (radicaleMissing) return t.pass(radicaleMissing);
  const radicale = await startRadicale();
  const secrets = SecretBox.fromKey(TEST_ENCRYPTION_KEY);
  const pools = [createPool(svc.databaseUrl, 4), createPool(svc.databaseUrl, 4)];
  try {
    await radicale.addUser('clinic', 'app-password-1');
    const credentials = { kind: 'caldav' as const, url: radicale.calendarUrl('clinic'), username: 'clinic', password: 'app-password-1' };
    const calendar = caldavCalendar(credentials, { allowPrivate: true });
    const onCaldav = await makeReadyCustomer(svc.url, account.api, { name: 'Caldav Clinic', timezone: 'America/New_York' });
    await insertCalendarConnection(svc.services.pool, onCaldav, { credentials, label: credentials.url, syncToken: (await calendar.changes(null)).syncToken });
    // The business's own 14:00–15:00 in Radicale: the slot after it is what both calls agree on.
    await radicale.putEvent('clinic', { uid: 'own-1', start: hours(14), end: hours(15), title: 'Supplier visit' });
    const bookings = pools.map((pool) => createBooking({ pool, log: svc.services.log, calendars: createCalendarOpener({ pool, log: svc.services.log, config: svc.services.config }), secrets }));
    const calls = await Promise.all([newCall(onCaldav), newCall(onCaldav)]);
    const rows = await Promise.all(calls.map(async (id) => (await createCallRepository(svc.services.pool).get(id))!));
    // 15:00 is inside the 15-minute buffer after the busy 14:00–15:00: refused by both; 15:30 is free.
    const early = await bookings[0]!.book(rows[0]!, hours(8), { startAt: hours(15), attendeeName: null, notes: null });
    t.like(early, { booked: false, reason: 'slot_taken' });
    const replies = await Promise.all(bookings.map((b, k) => b.book(rows[k]!, hours(8), { startAt: hours(15, 30), attendeeName: `Caller ${k}`, notes: null })));
    t.deepEqual(replies.map((r) => r.booked).sort(), [false, true]);
    t.like(replies.find((r) => !r.booked), { reason: 'slot_taken' });
    const { rows: booked } = await svc.services.pool.query(`SELECT calendar_kind, calendar_event_id FROM appointments WHERE customer_id = $1 AND status = 'booked'`, [onCaldav.id]);
    t.is(booked.length, 1, 'one appointment');
    t.is(booked[0].calendar_kind, 'caldav');
    t.truthy(booked[0].calendar_event_id);
    // What Radicale holds: the business's own event and one meeting, 15:30–16:00.
    t.deepEqual(await calendar.freeBusy(hours(15, 15), hours(17)), [{ start: hours(15, 30), end: hours(16) }], 'one meeting in the CalDAV calendar');
  } finally {
    await Promise.all(pools.map((p) => p.end()));
    await radicale.stop();
  }
});

test.serial('without a calendar the booking keeps to the business hours and says it is not on a calendar', async (t) => {
  const slots = await tool(await newCall(noCalendar), 'find_free_slots');
  t.is(slots.slots[0].start_at, hours(9, 30).toISOString(), 'two hours from 07:00; only 11:00 is booked (above)');
  const reply = await tool(await newCall(noCalendar), 'book_appointment', { start_at: hours(13).toISOString(), attendee_name: 'Sam' });
  t.like(reply, { booked: true, on_calendar: false });
  t.like((await account.api.get(`/v1/appointments/${reply.appointment_id}`)).body, { on_calendar: false, status: 'booked' });
  t.like(await tool(await newCall(noCalendar), 'book_appointment', { start_at: hours(20).toISOString() }), { booked: false, reason: 'outside_hours' });
});

test.serial('the booking settings set through the API decide the slots: 60-minute meetings from 12:00 on Mondays', async (t) => {
  const r = await account.api.patch(`/v1/customers/${noCalendar.id}`, { booking: { meeting_minutes: 60, buffer_minutes: 0, business_hours: { mon: [{ start: '12:00', end: '15:00' }] } } });
  t.is(r.status, 200);
  t.like(r.body.booking, { meeting_minutes: 60, buffer_minutes: 0, min_notice_minutes: 120, max_days_ahead: 30 });
  const slots = await tool(await newCall(noCalendar), 'find_free_slots');
  // 13:00–13:30 is booked above: 12:00 is free (no buffer), 12:30 and 13:00 would overlap it, 13:30 and 14:00 are free.
  t.deepEqual(slots.slots.map((s: any) => [s.start_at, s.end_at]), [
    [hours(12).toISOString(), hours(13).toISOString()],
    [hours(13, 30).toISOString(), hours(14, 30).toISOString()],
    [hours(14).toISOString(), hours(15).toISOString()],
  ]);
  await account.api.patch(`/v1/customers/${noCalendar.id}`, { booking: null });
});

test.serial('a failing calendar offers no slot and books nothing', async (t) => {
  await svc.services.pool.query(`UPDATE calendar_connections SET status = 'failing', failure_message = 'refused' WHERE customer_id = $1`, [withCalendar.id]);
  try {
    t.like(await tool(await newCall(withCalendar), 'find_free_slots'), { slots: [], reason: 'calendar_unavailable' });
    t.deepEqual(await tool(await newCall(withCalendar), 'book_appointment', { start_at: hours(16, 30).toISOString() }), { booked: false, reason: 'calendar_unavailable', next_slots: [] });
  } finally {
    await svc.services.pool.query(`UPDATE calendar_connections SET status = 'working', failure_message = NULL WHERE customer_id = $1`, [withCalendar.id]);
  }
});

test.serial('a calendar that cannot be written at the moment keeps the booking, marked not on the calendar', async (t) => {
  const pool = svc.services.pool;
  const real = simulatedCalendar(pool, withCalendar.id);
  const away: CalendarClient = { ...real, createEvent: async () => Promise.reject(new CalendarUnavailable('timeout')) };
  const booking = createBooking({ pool, log: svc.services.log, calendars: { open: () => away }, secrets: SecretBox.fromKey(TEST_ENCRYPTION_KEY) });
  const call = (await createCallRepository(pool).get(await newCall(withCalendar)))!;
  const tuesday10 = hours(24 + 10);
  const reply = await booking.book(call, hours(8), { startAt: tuesday10, attendeeName: null, notes: null });
  t.like(reply, { booked: true, on_calendar: false });
  const row = (await createAppointmentRepository(pool).get((reply as { appointment_id: string }).appointment_id))!;
  t.like(row, { calendar_kind: 'simulated', calendar_event_id: null });
});

test.serial('a calendar that does not answer in time counts as unavailable: no slot offered, nothing booked, the lock let go', async (t) => {
  const pool = svc.services.pool;
  const real = simulatedCalendar(pool, withCalendar.id);
  const silent: CalendarClient = { ...real, freeBusy: () => new Promise(() => {}) };
  const booking = createBooking({ pool, log: svc.services.log, calendars: { open: () => silent }, secrets: SecretBox.fromKey(TEST_ENCRYPTION_KEY), calendarWaitMs: 50 });
  const call = (await createCallRepository(pool).get(await newCall(withCalendar)))!;
  t.like(await booking.findSlots(call, hours(7), { after: null, partOfDay: 'any' }), { slots: [], reason: 'calendar_unavailable' });
  t.deepEqual(await booking.book(call, hours(7), { startAt: hours(24 + 13), attendeeName: null, notes: null }), { booked: false, reason: 'calendar_unavailable', next_slots: [] });
  // The connection's row is free again: a booking through the real calendar goes through.
  t.like(await tool(call.id, 'book_appointment', { start_at: hours(24 + 13).toISOString() }), { booked: true, on_calendar: true });
});

test.serial('the booking rules through the API: set on create, every customer shows them in force, bad ones refused naming the field', async (t) => {
  const created = await account.api.post('/v1/customers', { name: 'Evening Clinic', country: 'US', booking: { business_hours: { sat: [{ start: '10:00', end: '14:00' }] }, max_days_ahead: 14 } });
  t.is(created.status, 201);
  t.deepEqual(created.body.booking.business_hours.sat, [{ start: '10:00', end: '14:00' }]);
  t.deepEqual(created.body.booking.business_hours.mon, [{ start: '09:00', end: '17:00' }]);
  t.like(created.body.booking, { meeting_minutes: 30, buffer_minutes: 15, min_notice_minutes: 120, max_days_ahead: 14 });
  t.like((await account.api.get(`/v1/customers/${withCalendar.id}`)).body.booking, { meeting_minutes: 30, buffer_minutes: 15, min_notice_minutes: 120, max_days_ahead: 30 });
  const overlap = await account.api.patch(`/v1/customers/${created.body.id}`, { booking: { business_hours: { mon: [{ start: '09:00', end: '13:00' }, { start: '12:00', end: '17:00' }] } } });
  t.is(overlap.status, 400);
  t.like(overlap.body.error, { code: 'invalid_parameter', message: 'booking.business_hours.mon spans must not overlap.' });
  const bad = await account.api.patch(`/v1/customers/${created.body.id}`, { booking: { business_hours: { mon: [{ start: '9am', end: '17:00' }] } } });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_parameter');
  t.is((await account.api.patch(`/v1/customers/${created.body.id}`, { booking: { meeting_minutes: 500 } })).body.error.code, 'invalid_parameter');
  t.is((await account.api.post('/v1/customers', { name: 'X', country: 'US', booking: { lunch: true } })).body.error.code, 'unknown_parameter');
  t.is((await account.api.get(`/v1/customers/${created.body.id}`)).body.booking.max_days_ahead, 14, 'nothing changed');
});
