import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { consoleAs } from '../helpers/console.ts';
import type { Client } from '../helpers/http.ts';

/*
 * Issue 21, "Overview": balance and low-balance stage, spend today and this month against caps,
 * the calls of the last 30 days (placed, connected, appointments) and the customers blocked from
 * calling and why; "a developer cannot see billing".
 */

let svc: TestService;
let db: pg.Pool;
test.before(async () => {
  svc = await startTestService();
  db = new pg.Pool({ connectionString: svc.databaseUrl, max: 2 });
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

type Live = TestAccount & { liveApi: Client };
const DAY = 86_400_000;
const dayOf = (d: Date) => d.toISOString().slice(0, 10);

/** A finished call of `customerId` requested at `at` (straight into the table: the overview only counts). */
async function insertCall(a: { id: string }, customerId: string, mode: string, at: Date, outcome: string, appointment = false) {
  await db.query(
    `INSERT INTO calls (account_id, mode, customer_id, to_e164, to_country, phone_input, status, outcome, dial_before, next_attempt_at,
                        appointment_id, created_at, updated_at)
     VALUES ($1, $2, $3, '+12025550123', 'US', '+12025550123', 'completed', $4, $5, $5, $6, $5, $5)`,
    [a.id, mode, customerId, outcome, at, appointment ? crypto.randomUUID() : null],
  );
}

test('the overview: balance, stage, spend against caps, 30 days of calls oldest first with zeros, and the blocked customers with why', async (t) => {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 10_000 });
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { daily_spend_cap_cents: 5_000, monthly_spend_cap_cents: 50_000 });
  const blocked = await makeCustomer(a.liveApi, { name: 'Blocked Bakery' });
  const ready = await makeReadyCustomer(svc.url, a.liveApi, { name: 'Ready Roofing' });
  // One 10-minute call: 200 cents spent today.
  t.true((await a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: blocked.id, reference: 'ov-1' })).body.ok);
  await a.admin.post(`/admin/v1/accounts/${a.id}/holds/ov-1/end`, { duration_seconds: 600 });

  const now = svc.services.clock.now();
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 0, 30));
  await insertCall(a, ready.id, 'live', today, 'appointment_booked', true);
  await insertCall(a, ready.id, 'live', today, 'not_interested');
  await insertCall(a, ready.id, 'live', today, 'voicemail');
  await insertCall(a, ready.id, 'live', new Date(today.getTime() - 5 * DAY), 'no_answer');
  await insertCall(a, ready.id, 'live', new Date(today.getTime() - 29 * DAY), 'call_back_later');
  await insertCall(a, ready.id, 'live', new Date(today.getTime() - 30 * DAY), 'completed'); // 31 days ago counting today: outside
  const other = await makeAccount(svc.url);
  await insertCall(other, (await makeCustomer(other.api)).id, 'test', today, 'completed'); // another account

  const owner = await consoleAs(svc.url, a.id, 'owner');
  const r = await owner.get('/console/api/overview?mode=live');
  t.is(r.status, 200, r.text);
  t.is(r.body.object, 'console_overview');
  t.like(r.body.balance, { object: 'balance', mode: 'live', balance_cents: 9_800, available_cents: 9_800, reserved_cents: 0 });
  t.is(r.body.low_balance_stage, 'ok');
  t.deepEqual(r.body.spend, { today_cents: 200, month_cents: 200, daily_cap_cents: 5_000, monthly_cap_cents: 50_000 });

  const days = r.body.calls_by_day;
  t.is(days.length, 30);
  t.is(days[0].date, dayOf(new Date(today.getTime() - 29 * DAY)), 'oldest first: 29 days before today');
  t.is(days[29].date, dayOf(today));
  t.deepEqual(days[29], { date: dayOf(today), placed: 3, connected: 2, appointments: 1 });
  t.deepEqual(days[24], { date: dayOf(new Date(today.getTime() - 5 * DAY)), placed: 1, connected: 0, appointments: 0 });
  t.deepEqual(days[0], { date: dayOf(new Date(today.getTime() - 29 * DAY)), placed: 1, connected: 1, appointments: 0 });
  t.deepEqual(days[1], { date: dayOf(new Date(today.getTime() - 28 * DAY)), placed: 0, connected: 0, appointments: 0 }, 'a day without calls is zeros');
  t.is(days.reduce((n: number, d: { placed: number }) => n + d.placed, 0), 5);

  t.is(r.body.blocked_customer_count, 1);
  t.is(r.body.blocked_customers.length, 1, 'the ready customer is not listed');
  const [b] = r.body.blocked_customers;
  t.is(b.id, blocked.id);
  t.is(b.name, 'Blocked Bakery');
  t.deepEqual(
    b.blockers.find((x: { code: string }) => x.code === 'customer_not_attested'),
    { code: 'customer_not_attested', message: 'The customer has not accepted the calling terms; send them their onboarding link.', waiting_on: 'reseller' },
  );
  t.true(b.blockers.some((x: { code: string }) => x.code === 'no_number_in_country'));

  // Test mode: nothing of the live data; 30 days of zeros.
  const test30 = await owner.get('/console/api/overview');
  t.is(test30.body.mode, 'test');
  t.is(test30.body.balance.mode, 'test');
  t.is(test30.body.calls_by_day.length, 30);
  t.true(test30.body.calls_by_day.every((d: { placed: number; connected: number; appointments: number }) => d.placed === 0 && d.connected === 0 && d.appointments === 0));
  t.deepEqual(test30.body.blocked_customers, []);
});

test('a developer reads the overview without its money block; billing and viewer read it with money', async (t) => {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 2_500 });
  const developer = await consoleAs(svc.url, a.id, 'developer');
  const dev = await developer.get('/console/api/overview?mode=live');
  t.is(dev.status, 200, dev.text);
  t.is(dev.body.balance, null);
  t.is(dev.body.low_balance_stage, null);
  t.is(dev.body.spend, null);
  t.is(dev.body.calls_by_day.length, 30, 'the calls are still there');
  t.false(dev.text.includes('2500'), 'no money figure anywhere in the answer');
  for (const role of ['billing', 'viewer', 'admin']) {
    const r = await (await consoleAs(svc.url, a.id, role)).get('/console/api/overview?mode=live');
    t.is(r.body.balance.balance_cents, 2_500, role);
    t.is(r.body.spend.today_cents, 0, role);
  }
});

test('the overview is of the session account only, and refuses a mode it does not know', async (t) => {
  const a = await makeAccount(svc.url);
  await makeCustomer(a.api, { name: 'Only In A' });
  const b = await makeAccount(svc.url);
  const ownerB = await consoleAs(svc.url, b.id, 'owner');
  const r = await ownerB.get(`/console/api/overview?mode=test&account_id=${a.id}`);
  t.is(r.status, 400, 'no account parameter exists');
  const own = await ownerB.get('/console/api/overview?mode=test');
  t.deepEqual(own.body.blocked_customers, []);
  t.is((await ownerB.get('/console/api/overview?mode=sandbox')).body.error.code, 'invalid_parameter');
});
