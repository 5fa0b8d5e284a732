/**
 * Calls that book into the business's calendar, end to end (issue 24): the dialler places the
 * call, the carrier (simulated: the called number's last digit 1 is a callee who agrees) streams
 * it, the scripted agent asks `find_free_slots`, books the first slot with `book_appointment`, and
 * the meeting lands in the customer's calendar:
 *
 * - test mode: the simulated calendar (the same code path as a real one);
 * - live mode: a real CalDAV server, Debian's Radicale on a loopback port, the connection inserted
 *   straight into its table with the credentials sealed by the service's secret box (the connect
 *   flow is tested on its own). The business then moves and deletes the event from another
 *   client, and `sync_calendars` carries both to the appointment.
 */
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { insertCalendarConnection } from '../helpers/calendar-connection.ts';
import { radicaleMissing, startRadicale, type Radicale } from '../helpers/radicale.ts';
import { simulatedCalendar } from '../../calendars/simulated/simulated-calendar.ts';
import { createSimulatedCalendarRepository } from '../../db/simulated-calendars.ts';
import { createAppointmentRepository } from '../../db/appointments.ts';
import { caldavCalendar } from '../../calendars/caldav/caldav-calendar.ts';
import type { Client } from '../helpers/http.ts';

let svc: TestService;
let account: TestAccount & { liveApi?: Client };
let radicale: Radicale | undefined;
/** Tuesday 10:00 in New York (15:00 UTC), whole hour, on the service's clock. */
let tuesday: Date;
const at = (h: number, m = 0) => new Date(tuesday.getTime() + ((h - 10) * 60 + m) * 60_000);

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000', SWITCHBOARD_JOB_INTERVAL_MS: '3600000' });
  if (!radicaleMissing) radicale = await startRadicale();
  account = await makeAccount(svc.url, { live: true });
  await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 10_000 });
  const now = new Date((await account.admin.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  const target = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 15));
  while (target <= now || target.getUTCDay() !== 2) target.setUTCDate(target.getUTCDate() + 1);
  await account.admin.post('/admin/v1/test_clock/advance', { seconds: Math.ceil((target.getTime() - now.getTime()) / 1000) });
  tuesday = target;
});
test.after.always(async () => {
  await svc?.stop();
  await radicale?.stop();
});

const eventsOf = async (type: string) => (await account.admin.get(`/admin/v1/accounts/${account.id}/events?type=${type}`)).body.data as { data: any }[];
async function sync(): Promise<number> {
  await account.admin.post('/admin/v1/test_clock/advance', { seconds: 61 });
  return (await account.admin.post('/admin/v1/jobs/sync_calendars/run')).body.processed;
}

test.serial('test mode: the scripted agent finds the free slots and books the first into the simulated calendar', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api, { name: 'Bright Dental', timezone: 'America/New_York' });
  await insertCalendarConnection(svc.services.pool, customer);
  // Busy 12:00–13:00: with 2 hours of notice and the 15-minute buffer, 13:30 is the first slot.
  await simulatedCalendar(svc.services.pool, customer.id).createEvent({ uid: 'lunch', start: at(12), end: at(13), timezone: 'America/New_York', title: 'Lunch', description: '' });
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550101', business_name: 'Acme Plumbing' });
  const done = await dialUntilFinished(account, account.api, queued.body.id);
  t.like(done, { status: 'completed', outcome: 'appointment_booked' });
  const appointment = (await account.api.get(`/v1/appointments/${done.appointment_id}`)).body;
  t.like(appointment, { start_at: at(13, 30).toISOString(), end_at: at(14).toISOString(), status: 'booked', on_calendar: true, attendee_name: 'Pat Example' });
  const row = (await createAppointmentRepository(svc.services.pool).get(done.appointment_id))!;
  const event = (await createSimulatedCalendarRepository(svc.services.pool).get(customer.id, row.calendar_event_id!))!;
  t.like(event, { uid: row.id, summary: 'Meeting with Acme Plumbing', etag: row.calendar_etag });
  t.is((await eventsOf('appointment.booked')).filter((e) => e.data.id === done.appointment_id).length, 1);
  // The agent proposed and confirmed the slot it booked, as find_free_slots said it.
  const transcript = (await account.api.get(`/v1/calls/${done.id}/transcript`)).body;
  const agent = transcript.lines.filter((l: any) => l.role === 'agent').map((l: any) => l.text);
  const says = new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at(13, 30));
  t.true(agent.includes(`Could we book a 30-minute call on ${says} (America/New_York)?`), JSON.stringify(agent));
  t.true(agent.includes(`You are booked in for ${says} (America/New_York). Thank you, goodbye.`), JSON.stringify(agent));
});

test.serial('live mode: a call books into Radicale; the event moved and then deleted there moves and cancels the appointment', async (t) => {
  if (!radicale) return t.pass(radicaleMissing!);
  const api = account.liveApi!;
  const customer = await makeReadyCustomer(svc.url, api, { name: 'Harbor Dental', timezone: 'America/New_York' });
  await radicale.addUser('harbor', 'app-password-1');
  const credentials = { kind: 'caldav' as const, url: radicale.calendarUrl('harbor'), username: 'harbor', password: 'app-password-1' };
  const calendar = caldavCalendar(credentials, { allowPrivate: true });
  // The business's own busy time, written by its calendar app.
  await radicale.putEvent('harbor', { uid: 'own-1', start: at(12), end: at(13), title: 'Supplier visit' });
  await insertCalendarConnection(svc.services.pool, customer, { credentials, label: credentials.url, syncToken: (await calendar.changes(null)).syncToken, now: at(10) });

  const queued = await api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550111', business_name: 'Acme Plumbing' });
  t.is(queued.status, 201);
  const done = await dialUntilFinished(account, api, queued.body.id);
  t.like(done, { status: 'completed', outcome: 'appointment_booked', mode: 'live' });
  const appointment = (await api.get(`/v1/appointments/${done.appointment_id}`)).body;
  t.like(appointment, { start_at: at(13, 30).toISOString(), end_at: at(14).toISOString(), on_calendar: true, mode: 'live' });
  const row = (await createAppointmentRepository(svc.services.pool).get(done.appointment_id))!;
  t.is(row.calendar_kind, 'caldav');
  t.true(row.calendar_event_id!.startsWith(credentials.url), 'the event resource in the calendar');
  t.truthy(row.calendar_etag);
  t.deepEqual(await calendar.freeBusy(at(13, 30), at(14)), [{ start: at(13, 30), end: at(14) }], 'the meeting is busy time in Radicale');

  // The business moves the meeting to 15:00 from another client.
  await radicale.moveEvent('harbor', row.calendar_event_id!, at(15), at(15, 30));
  t.is(await sync(), 1);
  t.like((await api.get(`/v1/appointments/${done.appointment_id}`)).body, { start_at: at(15).toISOString(), end_at: at(15, 30).toISOString(), status: 'booked' });
  t.is((await eventsOf('appointment.updated')).filter((e) => e.data.id === done.appointment_id).length, 1);

  // …and then deletes it.
  await radicale.deleteEvent('harbor', row.calendar_event_id!);
  t.is(await sync(), 1);
  const cancelled = (await api.get(`/v1/appointments/${done.appointment_id}`)).body;
  t.like(cancelled, { status: 'cancelled' });
  t.truthy(cancelled.cancelled_at);
  t.is((await eventsOf('appointment.cancelled')).filter((e) => e.data.id === done.appointment_id).length, 1);
});
