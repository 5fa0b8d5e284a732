/**
 * A number's life on the test clock (issue 14): rent renewed each month, the early warning when
 * the live balance will not cover it, the countdown when it cannot be taken, a top-up that ends
 * the countdown, the release when it runs out; caller IDs, test mode and numbers the operator
 * assigned by hand. The jobs run only when a test asks (`/admin/v1/jobs/<name>/run`), and every
 * test moves the one clock forward, so the tests run one at a time, each from a day of its own
 * later than the last test's, and place each step at noon UTC of a literal day: the spec's
 * rules (a month to the same day, the warning 3 days before, the release 14 days after) are
 * written out as dates here, never computed with the code's own constants or date functions.
 * The money invariants hold after each.
 */
import test, { type ExecutionContext } from 'ava';
import crypto from 'node:crypto';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { adminClient, makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { clockDays } from '../helpers/clock-days.ts';
import { emailsTellEvents, outboxEmails } from '../helpers/outbox.ts';
import type { Client } from '../helpers/http.ts';

let svc: TestService;
let con: Client;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: '3600000' });
  con = adminClient(svc.url);
});
test.after.always(async () => {
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

type Live = TestAccount & { liveApi: Client };
const liveAccount = async (topUpCents = 0): Promise<Live> => {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  if (topUpCents) await topUp(a, topUpCents);
  return a;
};

async function topUp(a: TestAccount, amountCents: number) {
  const r = await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: amountCents });
  if (r.status !== 201) throw new Error(`top-up failed: ${r.status} ${r.text}`);
  return r.body;
}

/** Runs a job once now; its count of what it did. */
async function run(job: 'renew_numbers' | 'release_numbers'): Promise<number> {
  const r = await con.post(`/admin/v1/jobs/${job}/run`);
  if (r.status !== 200) throw new Error(`${job} failed: ${r.status} ${r.text}`);
  return r.body.processed;
}

const advanceTo = (day: string) => clockDays(con).advanceTo(day);

async function rent(api: Client, customerId: string) {
  const r = await api.post(`/v1/customers/${customerId}/numbers`, {});
  if (r.status !== 201) throw new Error(`renting failed: ${r.status} ${r.text}`);
  return r.body;
}

async function numberOf(api: Client, customerId: string, id: string) {
  return (await api.get(`/v1/customers/${customerId}/numbers/${id}`)).body;
}

async function ledgerOf(api: Client, customerId: string) {
  return (await api.get(`/v1/usage?customer_id=${customerId}&limit=100`)).body.data as any[];
}

/** The events of `type` about the number `id`, oldest first. */
async function eventsAbout(api: Client, type: string, id: string) {
  return ((await api.get(`/v1/events?type=${type}&limit=100`)).body.data as any[]).filter((e) => e.data.id === id).reverse();
}

async function balanceOf(api: Client): Promise<number> {
  return (await api.get('/v1/balance')).body.balance_cents;
}

async function numberInCountry(api: Client, customerId: string): Promise<boolean> {
  return (await api.get(`/v1/customers/${customerId}/readiness`)).body.checks.number_in_country;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function sameLines(t: ExecutionContext, lines: any[], expected: number, what: string) {
  t.is(lines.length, expected, `${what}: ${JSON.stringify(lines.map((l) => l.description))}`);
}

test.serial('renewal when the balance covers it: one number line per period with the period in its description, renews_on a month on, even when the job runs twice at once and again', async (t) => {
  await advanceTo('2027-01-15');
  const a = await liveAccount(25_000);
  const c = await makeCustomer(a.liveApi);
  const numbers = [];
  for (let i = 0; i < 5; i++) numbers.push(await rent(a.liveApi, c.id));
  t.is(await balanceOf(a.liveApi), 25_000 - 5 * 1500);
  t.true(numbers.every((n) => n.renews_on === '2027-02-15'), 'a month on, to the day');

  // The notice window opens 3 days ahead; the balance covers the rent, so nobody is warned.
  await advanceTo('2027-02-12');
  await run('renew_numbers');
  t.is((await a.liveApi.get('/v1/events?type=number.payment_due')).body.data.length, 0);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 5, 'nothing charged before the renewal');

  await advanceTo('2027-02-15');
  await Promise.all([run('renew_numbers'), run('renew_numbers')]);
  await run('renew_numbers');

  const renewals = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.description.includes('2027-02-15 to 2027-03-15'));
  sameLines(t, renewals, 5, 'one renewal line per number');
  for (const line of renewals) t.like(line, { type: 'usage', cause: 'number', amount_cents: -1500, applied: true, customer_id: c.id });
  t.is((await ledgerOf(a.liveApi, c.id)).length, 10);
  for (const n of numbers) {
    t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2027-03-15', release_due_on: null });
  }
  t.is(await balanceOf(a.liveApi), 25_000 - 10 * 1500);
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  t.teardown(() => db.end());
  const claimed = await db.query(`SELECT count(*)::int AS n FROM recurring_charges WHERE customer_id = $1 AND period_start = $2`, [c.id, '2027-02-15']);
  t.is(claimed.rows[0].n, 5, 'each period claimed once');
  t.is((await a.liveApi.get('/v1/events?type=number.payment_due')).body.data.length, 0);
});

test.serial('short of the rent: warned once 3 days ahead; at renewal payment_due with the 14-day countdown, still dialling; a top-up in the countdown takes the rent at once and the number is active again', async (t) => {
  await advanceTo('2027-04-10');
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const n = await rent(a.liveApi, c.id);
  t.is(await balanceOf(a.liveApi), 1_000, 'less than a month of rent left');
  t.is(n.renews_on, '2027-05-10');

  // Four days ahead: no warning yet.
  await advanceTo('2027-05-06');
  await run('renew_numbers');
  t.is((await eventsAbout(a.liveApi, 'number.payment_due', n.id)).length, 0);

  // Three days ahead: one early warning, without a release date, however often the job runs.
  await advanceTo('2027-05-07');
  await run('renew_numbers');
  await run('renew_numbers');
  await advanceTo('2027-05-09');
  await run('renew_numbers');
  const notices = await eventsAbout(a.liveApi, 'number.payment_due', n.id);
  t.is(notices.length, 1);
  t.like(notices[0].data, { id: n.id, status: 'active', renews_on: '2027-05-10', release_due_on: null });
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2027-05-10', release_due_on: null });

  // The renewal: the rent cannot be taken, so the countdown starts: released 14 days on.
  await advanceTo('2027-05-10');
  await run('renew_numbers');
  await run('renew_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'payment_due', renews_on: '2027-05-10', release_due_on: '2027-05-24' });
  const due = await eventsAbout(a.liveApi, 'number.payment_due', n.id);
  t.is(due.length, 2, 'one warning and one countdown, however often the job runs');
  t.like(due[1].data, { id: n.id, status: 'payment_due', release_due_on: '2027-05-24' });
  await emailsTellEvents(t, svc.databaseUrl, { accountId: a.id, kind: 'number_payment_due' }, due);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 1, 'nothing charged');
  t.is(await balanceOf(a.liveApi), 1_000);
  t.true(await numberInCountry(a.liveApi, c.id), 'a number in its countdown still dials');

  // A top-up five days in: the rent is taken in the top-up's transaction.
  await advanceTo('2027-05-15');
  await topUp(a, 2_500);
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2027-06-10', release_due_on: null });
  const lines = await ledgerOf(a.liveApi, c.id);
  sameLines(t, lines.filter((l) => l.cause === 'number' && l.description.includes('2027-05-10 to 2027-06-10')), 1, 'the renewal line');
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500 - 1_500);
  t.true(await numberInCountry(a.liveApi, c.id));

  // The countdown's end passes without a release, and the job charges nothing more.
  await advanceTo('2027-05-24');
  await run('release_numbers');
  await run('renew_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2027-06-10' });
  t.is((await eventsAbout(a.liveApi, 'number.released', n.id)).length, 0);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 2);
});

test.serial('the countdown runs out: released by release_numbers on its 14th day with number.released, not on the 13th; readiness loses the number; a later top-up charges nothing', async (t) => {
  await advanceTo('2027-07-05');
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const n = await rent(a.liveApi, c.id);
  t.is(n.renews_on, '2027-08-05');
  await advanceTo('2027-08-05');
  await run('renew_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'payment_due', release_due_on: '2027-08-19' });

  await advanceTo('2027-08-18');
  await run('release_numbers');
  t.is((await numberOf(a.liveApi, c.id, n.id)).status, 'payment_due', 'the day before: still counting down');
  t.true(await numberInCountry(a.liveApi, c.id));

  await advanceTo('2027-08-19');
  await Promise.all([run('release_numbers'), run('release_numbers')]);
  const released = await numberOf(a.liveApi, c.id, n.id);
  t.like(released, { status: 'released', renews_on: null, release_due_on: null });
  t.truthy(released.released_at);
  const events = await eventsAbout(a.liveApi, 'number.released', n.id);
  t.is(events.length, 1);
  t.like(events[0].data, { id: n.id, status: 'released' });
  t.false(await numberInCountry(a.liveApi, c.id));

  await run('renew_numbers');
  await topUp(a, 2_500);
  t.is((await numberOf(a.liveApi, c.id, n.id)).status, 'released');
  t.is((await ledgerOf(a.liveApi, c.id)).length, 1, 'only the first month');
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500);
});

test.serial('a service away for two renewals catches up both periods when the balance covers them, and starts the countdown at the first it cannot', async (t) => {
  await advanceTo('2027-09-20');
  const rich = await liveAccount(5_000);
  const rc = await makeCustomer(rich.liveApi);
  const rn = await rent(rich.liveApi, rc.id);
  // Covers one renewal and not the second.
  const poor = await liveAccount(3_000);
  const pc = await makeCustomer(poor.liveApi);
  const pn = await rent(poor.liveApi, pc.id);
  t.is(rn.renews_on, '2027-10-20');
  t.is(pn.renews_on, '2027-10-20');

  await advanceTo('2027-11-21');
  await run('renew_numbers');
  const lines = (await ledgerOf(rich.liveApi, rc.id)).filter((l) => l.cause === 'number');
  sameLines(t, lines, 3, 'the first month and both renewals');
  t.is(lines.filter((l) => l.description.includes('2027-10-20 to 2027-11-20')).length, 1);
  t.is(lines.filter((l) => l.description.includes('2027-11-20 to 2027-12-20')).length, 1);
  t.like(await numberOf(rich.liveApi, rc.id, rn.id), { status: 'active', renews_on: '2027-12-20', release_due_on: null });
  t.is(await balanceOf(rich.liveApi), 5_000 - 3 * 1_500);
  await run('renew_numbers');
  t.is((await ledgerOf(rich.liveApi, rc.id)).length, 3, 'a second run charges nothing');

  const poorLines = await ledgerOf(poor.liveApi, pc.id);
  sameLines(t, poorLines, 2, 'the first month and the renewal it could pay');
  t.is(poorLines.filter((l) => l.description.includes('2027-10-20 to 2027-11-20')).length, 1);
  // The countdown runs 14 days from the day the service found the rent unpaid (a day late,
  // 21 November), not from the renewal: a service away past a whole countdown would otherwise release with none.
  t.like(await numberOf(poor.liveApi, pc.id, pn.id), { status: 'payment_due', renews_on: '2027-11-20', release_due_on: '2027-12-05' });
  t.is(await balanceOf(poor.liveApi), 0);
  const [due] = await eventsAbout(poor.liveApi, 'number.payment_due', pn.id);
  t.like(due?.data, { release_due_on: '2027-12-05' });
});

test.serial('a service away past a whole countdown still gives the full countdown before releasing', async (t) => {
  await advanceTo('2028-01-10');
  const a = await liveAccount();
  const c = await makeCustomer(a.liveApi);
  await topUp(a, 2_500);
  const n = await rent(a.liveApi, c.id);
  t.is(n.renews_on, '2028-02-10');
  await a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: c.id, reference: 'spend-1' });
  // 19 days late (2028 is a leap year): the countdown runs 14 days from then.
  await advanceTo('2028-02-29');
  await run('renew_numbers');
  await run('release_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'payment_due', release_due_on: '2028-03-14' });
  await advanceTo('2028-03-14');
  await run('release_numbers');
  t.is((await numberOf(a.liveApi, c.id, n.id)).status, 'released');
});

test.serial('the early warning counts every rent due by then: two numbers and money for one, both warned', async (t) => {
  await advanceTo('2028-04-01');
  const a = await liveAccount(5_000);
  const c = await makeCustomer(a.liveApi);
  const first = await rent(a.liveApi, c.id);
  const second = await rent(a.liveApi, c.id);
  t.is(first.renews_on, '2028-05-01');
  t.is(await balanceOf(a.liveApi), 2_000, 'covers one renewal of 1,500, not two');
  await advanceTo('2028-04-28');
  await run('renew_numbers');
  for (const n of [first, second]) {
    const events = await eventsAbout(a.liveApi, 'number.payment_due', n.id);
    t.is(events.length, 1, n.id);
    t.is(events[0].data.release_due_on, null);
  }
});

test.serial('a verified caller ID renews at 1,200 cents', async (t) => {
  await advanceTo('2028-06-12');
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const ordered = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550147' });
  t.is(ordered.status, 201, ordered.text);
  const n = await waitFor('verified', async () => {
    const got = await numberOf(a.liveApi, c.id, ordered.body.id);
    return got.status === 'active' && got;
  });
  t.is(await balanceOf(a.liveApi), 2_500 - 1_200);
  t.is(n.renews_on, '2028-07-12');
  await advanceTo('2028-07-12');
  await run('renew_numbers');
  const renewals = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.description.includes('2028-07-12 to 2028-08-12'));
  sameLines(t, renewals, 1, 'the renewal');
  t.like(renewals[0], { cause: 'caller_id', amount_cents: -1_200, applied: true });
  t.regex(renewals[0].description, /^Verified caller ID /);
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2028-08-12' });
  t.is(await balanceOf(a.liveApi), 2_500 - 2 * 1_200);
  await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${n.id}`);
});

test.serial('test mode: rent is priced with applied:false each month and the number never goes payment_due', async (t) => {
  await advanceTo('2028-09-03');
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const n = await rent(a.api, c.id);
  t.is(await balanceOf(a.api), 0, 'the test balance is empty and stays so');
  t.is(n.renews_on, '2028-10-03');
  const months = [
    ['2028-09-30', '2028-10-03', '2028-11-03'],
    ['2028-10-31', '2028-11-03', '2028-12-03'],
    ['2028-11-30', '2028-12-03', '2029-01-03'],
  ];
  for (const [notice, renewal, next] of months) {
    await advanceTo(notice);
    await run('renew_numbers');
    await advanceTo(renewal);
    await run('renew_numbers');
    t.like(await numberOf(a.api, c.id, n.id), { status: 'active', renews_on: next, release_due_on: null });
  }
  const lines = await ledgerOf(a.api, c.id);
  sameLines(t, lines, 4, 'the first month and three renewals');
  for (const line of lines) t.like(line, { cause: 'number', amount_cents: -1_500, applied: false });
  t.is((await eventsAbout(a.api, 'number.payment_due', n.id)).length, 0);
  t.deepEqual(await outboxEmails(svc.databaseUrl, { accountId: a.id }), [], 'test mode emails nobody about money');
  t.is(await balanceOf(a.api), 0);
});

test.serial('a number the operator assigned on 31 January renews from a month after the assignment (the last day of February, then 31 March)', async (t) => {
  await advanceTo('2029-01-31');
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const phone = `+1202${crypto.randomInt(2_000_000, 9_999_999)}`;
  const assigned = await a.admin.post(`/admin/v1/customers/${c.id}/numbers`, { phone_number: phone });
  t.is(assigned.status, 200, assigned.text);
  t.true(assigned.body.checks.number_in_country);
  const [n] = (await a.liveApi.get(`/v1/customers/${c.id}/numbers`)).body.data;
  t.like(n, { phone_number: phone, status: 'active', monthly_cents: 1_500, renews_on: '2029-02-28' });
  t.is((await ledgerOf(a.liveApi, c.id)).length, 0, 'nothing charged at assignment');

  await advanceTo('2029-02-27');
  await run('renew_numbers');
  t.is((await ledgerOf(a.liveApi, c.id)).length, 0);
  await advanceTo('2029-02-28');
  await run('renew_numbers');
  const [line] = await ledgerOf(a.liveApi, c.id);
  t.like(line, { cause: 'number', amount_cents: -1_500, applied: true });
  t.true(line.description.includes('2029-02-28 to 2029-03-31'), line.description);
  t.is(await balanceOf(a.liveApi), 1_000);
});

test.serial('a top-up that covers one of two unpaid numbers pays the older one; the other keeps counting down and is released at its end', async (t) => {
  await advanceTo('2029-04-08');
  const a = await liveAccount(3_000);
  const c = await makeCustomer(a.liveApi);
  const older = await rent(a.liveApi, c.id);
  const newer = await rent(a.liveApi, c.id);
  t.is(await balanceOf(a.liveApi), 0);
  t.is(older.renews_on, '2029-05-08');
  await advanceTo('2029-05-08');
  await run('renew_numbers');
  for (const n of [older, newer]) t.is((await numberOf(a.liveApi, c.id, n.id)).status, 'payment_due');

  await advanceTo('2029-05-10');
  await topUp(a, 2_500);
  t.like(await numberOf(a.liveApi, c.id, older.id), { status: 'active', renews_on: '2029-06-08', release_due_on: null });
  t.like(await numberOf(a.liveApi, c.id, newer.id), { status: 'payment_due', renews_on: '2029-05-08', release_due_on: '2029-05-22' });
  t.is(await balanceOf(a.liveApi), 1_000);

  await advanceTo('2029-05-22');
  await run('renew_numbers');
  await run('release_numbers');
  t.is((await numberOf(a.liveApi, c.id, newer.id)).status, 'released');
  t.is((await numberOf(a.liveApi, c.id, older.id)).status, 'active');
  t.true(await numberInCountry(a.liveApi, c.id), 'the paid number still dials');
  t.is((await ledgerOf(a.liveApi, c.id)).length, 3, 'two first months and one renewal');
});

test.serial('a caller ID verified when the balance no longer covers its first month starts in its countdown; a top-up takes that month', async (t) => {
  await advanceTo('2029-07-17');
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const ordered = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550148' });
  t.is(ordered.status, 201, ordered.text);
  // The verification takes the simulated carrier two seconds; a rented number spends the money meanwhile.
  await rent(a.liveApi, c.id);
  t.is(await balanceOf(a.liveApi), 1_000);
  const n = await waitFor('verified', async () => {
    const got = await numberOf(a.liveApi, c.id, ordered.body.id);
    return got.status !== 'verifying' && got;
  });
  t.like(n, { status: 'payment_due', renews_on: '2029-07-17', release_due_on: '2029-07-31', verification: null });
  const [due] = await eventsAbout(a.liveApi, 'number.payment_due', n.id);
  t.like(due?.data, { id: n.id, release_due_on: '2029-07-31' });
  t.is((await ledgerOf(a.liveApi, c.id)).filter((l) => l.cause === 'caller_id').length, 0);

  await topUp(a, 2_500);
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2029-08-17', release_due_on: null });
  const [line] = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.cause === 'caller_id');
  t.like(line, { amount_cents: -1_200, applied: true });
  t.true(line.description.includes('2029-07-17 to 2029-08-17'), line.description);
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500 - 1_200);
  await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${n.id}`);
});

test.serial('money held by a running call is not there for rent: 1,500 on the balance with 400 held does not pay a 1,500 renewal (warned, then the countdown)', async (t) => {
  await advanceTo('2030-02-14');
  const a = await liveAccount(3_000);
  const c = await makeCustomer(a.liveApi);
  const n = await rent(a.liveApi, c.id);
  t.is(n.renews_on, '2030-03-14');
  t.is(await balanceOf(a.liveApi), 1_500, 'exactly one month of rent on the balance');
  // A call is running: its start held 400 cents (20 minutes at 20 cents).
  t.true((await a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: c.id, reference: 'running-call' })).body.ok);
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, 1_100);
  await advanceTo('2030-03-11');
  await run('renew_numbers');
  const [warning] = await eventsAbout(a.liveApi, 'number.payment_due', n.id);
  t.like(warning?.data, { status: 'active', release_due_on: null }, 'warned 3 days ahead: 1,100 spendable will not cover 1,500');
  await advanceTo('2030-03-14');
  await run('renew_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'payment_due', renews_on: '2030-03-14', release_due_on: '2030-03-28' });
  t.is((await ledgerOf(a.liveApi, c.id)).length, 1, 'the renewal was not charged');
  t.is(await balanceOf(a.liveApi), 1_500);
});

test.serial('money that came back during the countdown (a running call ended, no top-up) pays the rent at the end of the countdown instead of releasing', async (t) => {
  await advanceTo('2030-04-05');
  const a = await liveAccount(3_000);
  const c = await makeCustomer(a.liveApi);
  const n = await rent(a.liveApi, c.id);
  t.true((await a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: c.id, reference: 'long-call' })).body.ok);
  await advanceTo('2030-05-05');
  await run('renew_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'payment_due', release_due_on: '2030-05-19' });
  // The call ends without a charge: its 400 cents come back, and no top-up pays the rent.
  t.like((await a.admin.post(`/admin/v1/accounts/${a.id}/holds/long-call/end`, { duration_seconds: 0 })).body, { charged_cents: 0 });
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, 1_500);
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'payment_due' }, 'nothing paid it yet');

  await advanceTo('2030-05-19');
  await run('release_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2030-06-05', release_due_on: null });
  t.is((await eventsAbout(a.liveApi, 'number.released', n.id)).length, 0);
  const renewal = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.description.includes('2030-05-05 to 2030-06-05'));
  sameLines(t, renewal, 1, 'the renewal, taken at the end of the countdown');
  t.is(await balanceOf(a.liveApi), 0);
});

test.serial('renewals are batched in one transaction, each number all-or-nothing: a number that breaks mid-batch is not half-renewed, the rest of its batch is renewed, and the next run renews it without charging any number twice', async (t) => {
  await advanceTo('2030-06-10');
  const a = await liveAccount(20_000);
  const c = await makeCustomer(a.liveApi);
  const numbers = [];
  for (let i = 0; i < 5; i++) numbers.push(await rent(a.liveApi, c.id));
  t.is(await balanceOf(a.liveApi), 20_000 - 5 * 1_500);
  const broken = numbers[2];
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  t.teardown(() => db.end());
  // The third number's rent line cannot be written (as a crash or a fault would leave it): its
  // period is claimed first in recurring_charges, so a half-renewal would leave that row behind.
  await db.query(`CREATE FUNCTION break_one_renewal() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.reference LIKE 'number:${broken.id}:%' THEN RAISE EXCEPTION 'renewal broken by the test'; END IF; RETURN NEW; END $$`);
  await db.query(`CREATE TRIGGER break_one_renewal BEFORE INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION break_one_renewal()`);
  t.teardown(async () => {
    await db.query('DROP TRIGGER IF EXISTS break_one_renewal ON ledger_entries').catch(() => {});
    await db.query('DROP FUNCTION IF EXISTS break_one_renewal()').catch(() => {});
  });

  await advanceTo('2030-07-10');
  const failed = await con.post('/admin/v1/jobs/renew_numbers/run');
  t.not(failed.status, 200, 'the broken number fails the run');
  const period = '2030-07-10 to 2030-08-10';
  for (const n of numbers) {
    const lines = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.reference?.startsWith(`number:${n.id}:`) && l.description.includes(period));
    if (n.id === broken.id) {
      sameLines(t, lines, 0, 'the broken number: no line');
      t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2030-07-10' }, 'the broken number is still due');
    } else {
      sameLines(t, lines, 1, 'the rest of its batch: renewed');
      t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2030-08-10' });
    }
  }
  const claims = async () =>
    (await db.query(`SELECT item_id FROM recurring_charges WHERE customer_id = $1 AND period_start = '2030-07-10'`, [c.id])).rows.map((r) => r.item_id).sort();
  t.deepEqual(await claims(), numbers.filter((n) => n.id !== broken.id).map((n) => n.id).sort(), 'no period claimed for the broken number');
  t.is(await balanceOf(a.liveApi), 20_000 - 9 * 1_500);

  // Mended, the job runs again (twice at once, then once more): the broken number is renewed; nobody is charged twice.
  await db.query('DROP TRIGGER break_one_renewal ON ledger_entries');
  await Promise.all([run('renew_numbers'), run('renew_numbers')]);
  await run('renew_numbers');
  for (const n of numbers) {
    const lines = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.reference?.startsWith(`number:${n.id}:`) && l.description.includes(period));
    sameLines(t, lines, 1, 'one renewal line per number');
    t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: '2030-08-10' });
  }
  t.is((await claims()).length, 5);
  t.is(await balanceOf(a.liveApi), 20_000 - 10 * 1_500);
});
