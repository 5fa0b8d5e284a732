import test from 'ava';
import { startTestService, TEST_ENCRYPTION_KEY, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, makeReadyCustomer } from '../helpers/calls.ts';
import { insertCalendarConnection } from '../helpers/calendar-connection.ts';
import { simulatedCalendar } from '../../calendars/simulated/simulated-calendar.ts';
import { createAppointmentRepository } from '../../db/appointments.ts';
import { createCallRepository } from '../../db/calls.ts';
import { createBooking } from '../../actors/call/booking.ts';
import { CalendarUnavailable, type CalendarClient } from '../../calendars/calendar.ts';
import { SecretBox } from '../../runtime/secret-box.ts';
import { caldavCalendar } from '../../calendars/caldav/caldav-calendar.ts';
import { radicaleMissing, startRadicale, type Radicale } from '../helpers/radicale.ts';

let svc: TestService;
let account: TestAccount;
let customer: any;
/** Monday 07:00 in New York, on the service's clock. */
let monday: Date;
let calendar: ReturnType<typeof simulatedCalendar>;
let radicale: Radicale | undefined;

const hours = (h: number, m = 0) => new Date(monday.getTime() + ((h - 7) * 60 + m) * 60_000);

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000', SWITCHBOARD_JOB_INTERVAL_MS: '3600000' });
  account = await makeAccount(svc.url);
  customer = await makeReadyCustomer(svc.url, account.api, { name: 'Bright Dental', timezone: 'America/New_York' });
  const moved = await advanceToNext(account, 1, 12);
  monday = new Date(Math.floor(moved.getTime() / 3_600_000) * 3_600_000);
  calendar = simulatedCalendar(svc.services.pool, customer.id);
  await insertCalendarConnection(svc.services.pool, customer, { syncToken: (await calendar.changes(null)).syncToken, now: moved });
  if (!radicaleMissing) radicale = await startRadicale();
});
test.after.always(async () => {
  await svc?.stop();
  await radicale?.stop();
});

let phoneSeq = 0;
async function book(start: Date, customerId: string = customer.id): Promise<string> {
  const phone = `+1212555${String(300 + ++phoneSeq).padStart(4, '0')}`;
  const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customerId, phone });
  const reply = (await svc.services.calls.ask(r.body.id, { type: 'tool_called', name: 'book_appointment', args: { start_at: start.toISOString(), attendee_name: 'Pat' } })) as any;
  if (!reply.booked) throw new Error(JSON.stringify(reply));
  return reply.appointment_id;
}
const eventIdOf = async (appointmentId: string) => (await createAppointmentRepository(svc.services.pool).get(appointmentId))!.calendar_event_id!;
/** Runs sync_calendars a minute later on the service's clock (a connection is synced once a minute). */
async function sync(): Promise<number> {
  await account.admin.post('/admin/v1/test_clock/advance', { seconds: 61 });
  return (await account.admin.post('/admin/v1/jobs/sync_calendars/run')).body.processed;
}
const eventsOf = async (type: string) => (await account.admin.get(`/admin/v1/accounts/${account.id}/events?type=${type}`)).body.data as { data: any }[];

test.serial('an event moved in the calendar moves its appointment and emits appointment.updated, once', async (t) => {
  const id = await book(hours(10));
  // The business moves the meeting to 14:00 in its calendar app, and adds a busy block of its own.
  await calendar.moveEvent(await eventIdOf(id), hours(14), hours(14, 30));
  await calendar.createEvent({ uid: 'own', start: hours(16), end: hours(17), timezone: 'America/New_York', title: 'Dentist', description: '' });
  t.is(await sync(), 1);
  const a = (await account.api.get(`/v1/appointments/${id}`)).body;
  t.like(a, { start_at: hours(14).toISOString(), end_at: hours(14, 30).toISOString(), status: 'booked', cancelled_at: null });
  t.not(a.updated_at, a.created_at);
  const updated = await eventsOf('appointment.updated');
  t.is(updated.length, 1);
  t.like(updated[0].data, { object: 'appointment', id, start_at: hours(14).toISOString(), on_calendar: true });
  t.is(await sync(), 0, 'nothing new: no second event');
  t.is((await eventsOf('appointment.updated')).length, 1);
});

test.serial('an event deleted in the calendar cancels its appointment and emits appointment.cancelled', async (t) => {
  const id = await book(hours(11, 30));
  await calendar.deleteEvent(await eventIdOf(id));
  t.is(await sync(), 1);
  const a = (await account.api.get(`/v1/appointments/${id}`)).body;
  t.is(a.status, 'cancelled');
  t.truthy(a.cancelled_at);
  const cancelled = (await account.api.get(`/v1/appointments?status=cancelled&customer_id=${customer.id}`)).body.data;
  t.deepEqual(cancelled.map((x: any) => x.id), [id]);
  const events = await eventsOf('appointment.cancelled');
  t.is(events.length, 1);
  t.like(events[0].data, { id, status: 'cancelled' });
});

test.serial('an expired sync token: a new one is taken and each booked meeting is compared with its event', async (t) => {
  const kept = await book(hours(12, 30));
  const moved = await book(hours(15));
  const gone = await book(hours(24 + 11));
  await calendar.moveEvent(await eventIdOf(moved), hours(9, 30), hours(10));
  await calendar.deleteEvent(await eventIdOf(gone));
  await svc.services.pool.query(`UPDATE calendar_connections SET sync_token = 'sim:no-longer-valid' WHERE customer_id = $1`, [customer.id]);
  t.is(await sync(), 2);
  t.like((await account.api.get(`/v1/appointments/${moved}`)).body, { start_at: hours(9, 30).toISOString(), status: 'booked' });
  t.like((await account.api.get(`/v1/appointments/${gone}`)).body, { status: 'cancelled' });
  t.like((await account.api.get(`/v1/appointments/${kept}`)).body, { start_at: hours(12, 30).toISOString(), status: 'booked' });
  const { rows } = await svc.services.pool.query(`SELECT sync_token FROM calendar_connections WHERE customer_id = $1`, [customer.id]);
  t.regex(rows[0].sync_token, /^sim:\d+$/, 'a token the calendar accepts again');
  t.is(await sync(), 0);
});

test.serial('Radicale: a sync token it no longer accepts, after one meeting was moved and another deleted there: both reach their appointments, each event emitted once', async (t) => {
  if (!radicale) return t.pass(radicaleMissing!);
  const pool = svc.services.pool;
  const harbor = await makeReadyCustomer(svc.url, account.api, { name: 'Harbor Dental', timezone: 'America/New_York' });
  await radicale.addUser('harbor', 'app-password-1');
  const credentials = { kind: 'caldav' as const, url: radicale.calendarUrl('harbor'), username: 'harbor', password: 'app-password-1' };
  await insertCalendarConnection(pool, harbor, { credentials, label: credentials.url, syncToken: (await caldavCalendar(credentials, { allowPrivate: true }).changes(null)).syncToken, now: hours(7) });

  const day = 2 * 86_400_000; // Wednesday: clear of the other tests' meetings
  const kept = await book(new Date(hours(10).getTime() + day), harbor.id);
  const moved = await book(new Date(hours(11).getTime() + day), harbor.id);
  const gone = await book(new Date(hours(13).getTime() + day), harbor.id);
  // The business moves one meeting and deletes another from its own calendar app…
  await radicale.moveEvent('harbor', await eventIdOf(moved), new Date(hours(15).getTime() + day), new Date(hours(15, 30).getTime() + day));
  await radicale.deleteEvent('harbor', await eventIdOf(gone));
  // …and the token kept from before is one Radicale no longer accepts (its history was cut).
  await pool.query(`UPDATE calendar_connections SET sync_token = $2 WHERE customer_id = $1`, [harbor.id, 'http://radicale.org/ns/sync/0000000000000000000000000000000000000000000000000000000000000000']);

  t.is(await sync(), 2);
  t.like((await account.api.get(`/v1/appointments/${moved}`)).body, { start_at: new Date(hours(15).getTime() + day).toISOString(), end_at: new Date(hours(15, 30).getTime() + day).toISOString(), status: 'booked' });
  t.like((await account.api.get(`/v1/appointments/${gone}`)).body, { status: 'cancelled' });
  t.like((await account.api.get(`/v1/appointments/${kept}`)).body, { start_at: new Date(hours(10).getTime() + day).toISOString(), status: 'booked', cancelled_at: null });
  const emitted = async () => ({
    updated: (await eventsOf('appointment.updated')).filter((e) => [kept, moved, gone].includes(e.data.id)).map((e) => e.data.id),
    cancelled: (await eventsOf('appointment.cancelled')).filter((e) => [kept, moved, gone].includes(e.data.id)).map((e) => e.data.id),
  });
  t.deepEqual(await emitted(), { updated: [moved], cancelled: [gone] });
  const { rows } = await pool.query(`SELECT sync_token FROM calendar_connections WHERE customer_id = $1`, [harbor.id]);
  t.regex(rows[0].sync_token, /^http:\/\/radicale\.org\/ns\/sync\/[0-9a-f]+$/);
  t.not(rows[0].sync_token, 'http://radicale.org/ns/sync/0000000000000000000000000000000000000000000000000000000000000000', 'a token Radicale accepts again');

  t.is(await sync(), 0, 'nothing new');
  t.deepEqual(await emitted(), { updated: [moved], cancelled: [gone] }, 'no event twice');
});

test.serial('a meeting booked while the calendar could not be written gets its event on the next sync', async (t) => {
  const pool = svc.services.pool;
  const away: CalendarClient = { ...calendar, createEvent: async () => Promise.reject(new CalendarUnavailable('timeout')) };
  const booking = createBooking({ pool, log: svc.services.log, calendars: { open: () => away }, secrets: SecretBox.fromKey(TEST_ENCRYPTION_KEY) });
  const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12125550399' });
  const reply = (await booking.book((await createCallRepository(pool).get(r.body.id))!, hours(7), { startAt: new Date(hours(10).getTime() + 86_400_000), attendeeName: 'Lee', notes: null })) as any;
  t.like(reply, { booked: true, on_calendar: false });
  t.is(await sync(), 1);
  t.like((await account.api.get(`/v1/appointments/${reply.appointment_id}`)).body, { on_calendar: true });
  const busy = await calendar.freeBusy(new Date(hours(10).getTime() + 86_400_000), new Date(hours(10, 30).getTime() + 86_400_000));
  t.is(busy.length, 1, 'the event is in the calendar');
});
