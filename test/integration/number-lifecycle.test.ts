/**
 * A number's life on the test clock (issue 14): rent renewed each month, the early warning when
 * the live balance will not cover it, the countdown when it cannot be taken, a top-up that ends
 * the countdown, the release when it runs out; caller IDs, test mode and numbers the operator
 * assigned by hand. The jobs run only when a test asks (`/console/v1/jobs/<name>/run`), and every
 * test moves the one clock forward, so the tests run one at a time and place each step at noon
 * UTC of a day worked out from the number's own `renews_on`. The money invariants hold after each.
 */
import test, { type ExecutionContext } from 'ava';
import crypto from 'node:crypto';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { consoleClient, makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { clockDays } from '../helpers/clock-days.ts';
import { addDays, nextRenewal, RELEASE_COUNTDOWN_DAYS, RENEWAL_NOTICE_DAYS } from '../../money/rules/renewal.ts';
import type { Client } from '../helpers/http.ts';

let svc: TestService;
let con: Client;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: '3600000' });
  con = consoleClient(svc.url);
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
  const r = await a.console.post(`/console/v1/accounts/${a.id}/top_ups`, { amount_cents: amountCents });
  if (r.status !== 201) throw new Error(`top-up failed: ${r.status} ${r.text}`);
  return r.body;
}

/** Runs a job once now; its count of what it did. */
async function run(job: 'renew_numbers' | 'release_numbers'): Promise<number> {
  const r = await con.post(`/console/v1/jobs/${job}/run`);
  if (r.status !== 200) throw new Error(`${job} failed: ${r.status} ${r.text}`);
  return r.body.processed;
}

const clockNow = () => clockDays(con).clockNow();
const advanceTo = (day: string) => clockDays(con).advanceTo(day);
const startOfTest = () => clockDays(con).startOfTest();

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

const anchorOf = (n: { created_at: string }) => new Date(n.created_at).getUTCDate();

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
  await startOfTest();
  const a = await liveAccount(25_000);
  const c = await makeCustomer(a.liveApi);
  const numbers = [];
  for (let i = 0; i < 5; i++) numbers.push(await rent(a.liveApi, c.id));
  t.is(await balanceOf(a.liveApi), 25_000 - 5 * 1500);
  const renewsOn = numbers[0].renews_on as string;
  t.true(numbers.every((n) => n.renews_on === renewsOn));
  const next = nextRenewal(renewsOn, anchorOf(numbers[0]));

  // The notice window opens; the balance covers the rent, so nobody is warned.
  await advanceTo(addDays(renewsOn, -RENEWAL_NOTICE_DAYS));
  await run('renew_numbers');
  t.is((await a.liveApi.get('/v1/events?type=number.payment_due')).body.data.length, 0);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 5, 'nothing charged before the renewal');

  await advanceTo(renewsOn);
  await Promise.all([run('renew_numbers'), run('renew_numbers')]);
  await run('renew_numbers');

  const renewals = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.description.includes(`${renewsOn} to ${next}`));
  sameLines(t, renewals, 5, 'one renewal line per number');
  for (const line of renewals) t.like(line, { type: 'usage', cause: 'number', amount_cents: -1500, applied: true, customer_id: c.id });
  t.is((await ledgerOf(a.liveApi, c.id)).length, 10);
  for (const n of numbers) {
    t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: next, release_due_on: null });
  }
  t.is(await balanceOf(a.liveApi), 25_000 - 10 * 1500);
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  t.teardown(() => db.end());
  const claimed = await db.query(`SELECT count(*)::int AS n FROM recurring_charges WHERE customer_id = $1 AND period_start = $2`, [c.id, renewsOn]);
  t.is(claimed.rows[0].n, 5, 'each period claimed once');
  t.is((await a.liveApi.get('/v1/events?type=number.payment_due')).body.data.length, 0);
});

test.serial('short of the rent: warned once 3 days ahead; at renewal payment_due with the countdown, still dialling; a top-up in the countdown takes the rent at once and the number is active again', async (t) => {
  await startOfTest();
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const n = await rent(a.liveApi, c.id);
  t.is(await balanceOf(a.liveApi), 1_000, 'less than a month of rent left');
  const renewsOn = n.renews_on as string;
  const next = nextRenewal(renewsOn, anchorOf(n));

  // Four days ahead: no warning yet.
  await advanceTo(addDays(renewsOn, -RENEWAL_NOTICE_DAYS - 1));
  await run('renew_numbers');
  t.is((await eventsAbout(a.liveApi, 'number.payment_due', n.id)).length, 0);

  // Three days ahead: one early warning, without a release date, however often the job runs.
  await advanceTo(addDays(renewsOn, -RENEWAL_NOTICE_DAYS));
  await run('renew_numbers');
  await run('renew_numbers');
  await advanceTo(addDays(renewsOn, -1));
  await run('renew_numbers');
  const notices = await eventsAbout(a.liveApi, 'number.payment_due', n.id);
  t.is(notices.length, 1);
  t.like(notices[0].data, { id: n.id, status: 'active', renews_on: renewsOn, release_due_on: null });
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: renewsOn, release_due_on: null });

  // The renewal: the rent cannot be taken, so the countdown starts.
  await advanceTo(renewsOn);
  await run('renew_numbers');
  await run('renew_numbers');
  const releaseOn = addDays(renewsOn, RELEASE_COUNTDOWN_DAYS);
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'payment_due', renews_on: renewsOn, release_due_on: releaseOn });
  const due = await eventsAbout(a.liveApi, 'number.payment_due', n.id);
  t.is(due.length, 2, 'one warning and one countdown, however often the job runs');
  t.like(due[1].data, { id: n.id, status: 'payment_due', release_due_on: releaseOn });
  t.is((await ledgerOf(a.liveApi, c.id)).length, 1, 'nothing charged');
  t.is(await balanceOf(a.liveApi), 1_000);
  t.true(await numberInCountry(a.liveApi, c.id), 'a number in its countdown still dials');

  // A top-up five days in: the rent is taken in the top-up's transaction.
  await advanceTo(addDays(renewsOn, 5));
  await topUp(a, 2_500);
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: next, release_due_on: null });
  const lines = await ledgerOf(a.liveApi, c.id);
  sameLines(t, lines.filter((l) => l.cause === 'number' && l.description.includes(`${renewsOn} to ${next}`)), 1, 'the renewal line');
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500 - 1_500);
  t.true(await numberInCountry(a.liveApi, c.id));

  // The countdown's end passes without a release, and the job charges nothing more.
  await advanceTo(releaseOn);
  await run('release_numbers');
  await run('renew_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: next });
  t.is((await eventsAbout(a.liveApi, 'number.released', n.id)).length, 0);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 2);
});

test.serial('the countdown runs out: released by release_numbers on its day with number.released; readiness loses the number; a later top-up charges nothing', async (t) => {
  await startOfTest();
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const n = await rent(a.liveApi, c.id);
  const renewsOn = n.renews_on as string;
  await advanceTo(renewsOn);
  await run('renew_numbers');
  const releaseOn = addDays(renewsOn, RELEASE_COUNTDOWN_DAYS);
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'payment_due', release_due_on: releaseOn });

  await advanceTo(addDays(releaseOn, -1));
  await run('release_numbers');
  t.is((await numberOf(a.liveApi, c.id, n.id)).status, 'payment_due', 'the day before: still counting down');
  t.true(await numberInCountry(a.liveApi, c.id));

  await advanceTo(releaseOn);
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
  await startOfTest();
  const rich = await liveAccount(5_000);
  const rc = await makeCustomer(rich.liveApi);
  const rn = await rent(rich.liveApi, rc.id);
  // Covers one renewal and not the second.
  const poor = await liveAccount(3_000);
  const pc = await makeCustomer(poor.liveApi);
  const pn = await rent(poor.liveApi, pc.id);
  t.is(rn.renews_on, pn.renews_on);
  const first = rn.renews_on as string;
  const second = nextRenewal(first, anchorOf(rn));
  const third = nextRenewal(second, anchorOf(rn));

  await advanceTo(addDays(second, 1));
  await run('renew_numbers');
  const lines = (await ledgerOf(rich.liveApi, rc.id)).filter((l) => l.cause === 'number');
  sameLines(t, lines, 3, 'the first month and both renewals');
  t.is(lines.filter((l) => l.description.includes(`${first} to ${second}`)).length, 1);
  t.is(lines.filter((l) => l.description.includes(`${second} to ${third}`)).length, 1);
  t.like(await numberOf(rich.liveApi, rc.id, rn.id), { status: 'active', renews_on: third, release_due_on: null });
  t.is(await balanceOf(rich.liveApi), 5_000 - 3 * 1_500);
  await run('renew_numbers');
  t.is((await ledgerOf(rich.liveApi, rc.id)).length, 3, 'a second run charges nothing');

  const poorLines = await ledgerOf(poor.liveApi, pc.id);
  sameLines(t, poorLines, 2, 'the first month and the renewal it could pay');
  t.is(poorLines.filter((l) => l.description.includes(`${first} to ${second}`)).length, 1);
  // The countdown runs from the day the service found the rent unpaid (a day late), not from
  // the renewal: a service away past a whole countdown would otherwise release with none.
  const releaseDue = addDays(addDays(second, 1), RELEASE_COUNTDOWN_DAYS);
  t.like(await numberOf(poor.liveApi, pc.id, pn.id), { status: 'payment_due', renews_on: second, release_due_on: releaseDue });
  t.is(await balanceOf(poor.liveApi), 0);
  const [due] = await eventsAbout(poor.liveApi, 'number.payment_due', pn.id);
  t.like(due?.data, { release_due_on: releaseDue });
});

test.serial('a service away past a whole countdown still gives the full countdown before releasing', async (t) => {
  await startOfTest();
  const a = await liveAccount();
  const c = await makeCustomer(a.liveApi);
  await topUp(a, 2_500);
  const n = await rent(a.liveApi, c.id);
  await a.console.post(`/console/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: c.id, reference: 'spend-1' });
  const late = addDays(n.renews_on, RELEASE_COUNTDOWN_DAYS + 5);
  await advanceTo(late);
  await run('renew_numbers');
  await run('release_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'payment_due', release_due_on: addDays(late, RELEASE_COUNTDOWN_DAYS) });
  await advanceTo(addDays(late, RELEASE_COUNTDOWN_DAYS));
  await run('release_numbers');
  t.is((await numberOf(a.liveApi, c.id, n.id)).status, 'released');
});

test.serial('the early warning counts every rent due by then: two numbers and money for one, both warned', async (t) => {
  await startOfTest();
  const a = await liveAccount(5_000);
  const c = await makeCustomer(a.liveApi);
  const first = await rent(a.liveApi, c.id);
  const second = await rent(a.liveApi, c.id);
  t.is(await balanceOf(a.liveApi), 2_000, 'covers one renewal of 1,500, not two');
  await advanceTo(addDays(first.renews_on, -RENEWAL_NOTICE_DAYS));
  await run('renew_numbers');
  for (const n of [first, second]) {
    const events = await eventsAbout(a.liveApi, 'number.payment_due', n.id);
    t.is(events.length, 1, n.id);
    t.is(events[0].data.release_due_on, null);
  }
});

test.serial('a verified caller ID renews at 1,200 cents', async (t) => {
  await startOfTest();
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const ordered = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550147' });
  t.is(ordered.status, 201, ordered.text);
  const n = await waitFor('verified', async () => {
    const got = await numberOf(a.liveApi, c.id, ordered.body.id);
    return got.status === 'active' && got;
  });
  t.is(await balanceOf(a.liveApi), 2_500 - 1_200);
  const renewsOn = n.renews_on as string;
  const next = nextRenewal(renewsOn, anchorOf(n));
  await advanceTo(renewsOn);
  await run('renew_numbers');
  const renewals = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.description.includes(`${renewsOn} to ${next}`));
  sameLines(t, renewals, 1, 'the renewal');
  t.like(renewals[0], { cause: 'caller_id', amount_cents: -1_200, applied: true });
  t.regex(renewals[0].description, /^Verified caller ID /);
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: next });
  t.is(await balanceOf(a.liveApi), 2_500 - 2 * 1_200);
});

test.serial('test mode: rent is priced with applied:false each month and the number never goes payment_due', async (t) => {
  await startOfTest();
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const n = await rent(a.api, c.id);
  t.is(await balanceOf(a.api), 0, 'the test balance is empty and stays so');
  let renewsOn = n.renews_on as string;
  for (let month = 0; month < 3; month++) {
    await advanceTo(addDays(renewsOn, -RENEWAL_NOTICE_DAYS));
    await run('renew_numbers');
    await advanceTo(renewsOn);
    await run('renew_numbers');
    const next = nextRenewal(renewsOn, anchorOf(n));
    t.like(await numberOf(a.api, c.id, n.id), { status: 'active', renews_on: next, release_due_on: null });
    renewsOn = next;
  }
  const lines = await ledgerOf(a.api, c.id);
  sameLines(t, lines, 4, 'the first month and three renewals');
  for (const line of lines) t.like(line, { cause: 'number', amount_cents: -1_500, applied: false });
  t.is((await eventsAbout(a.api, 'number.payment_due', n.id)).length, 0);
  t.is(await balanceOf(a.api), 0);
});

test.serial('a number the operator assigned renews from a month after the assignment (its first month settled by hand)', async (t) => {
  await startOfTest();
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const today = (await clockNow()).toISOString().slice(0, 10);
  const phone = `+1202${crypto.randomInt(2_000_000, 9_999_999)}`;
  const assigned = await a.console.post(`/console/v1/customers/${c.id}/numbers`, { phone_number: phone });
  t.is(assigned.status, 200, assigned.text);
  t.true(assigned.body.checks.number_in_country);
  const [n] = (await a.liveApi.get(`/v1/customers/${c.id}/numbers`)).body.data;
  const renewsOn = nextRenewal(today, Number(today.slice(8, 10)));
  t.like(n, { phone_number: phone, status: 'active', monthly_cents: 1_500, renews_on: renewsOn });
  t.is((await ledgerOf(a.liveApi, c.id)).length, 0, 'nothing charged at assignment');

  await advanceTo(addDays(renewsOn, -1));
  await run('renew_numbers');
  t.is((await ledgerOf(a.liveApi, c.id)).length, 0);
  await advanceTo(renewsOn);
  await run('renew_numbers');
  const [line] = await ledgerOf(a.liveApi, c.id);
  t.like(line, { cause: 'number', amount_cents: -1_500, applied: true });
  t.true(line.description.includes(`${renewsOn} to ${nextRenewal(renewsOn, Number(today.slice(8, 10)))}`), line.description);
  t.is(await balanceOf(a.liveApi), 1_000);
});

test.serial('a top-up that covers one of two unpaid numbers pays the older one; the other keeps counting down and is released at its end', async (t) => {
  await startOfTest();
  const a = await liveAccount(3_000);
  const c = await makeCustomer(a.liveApi);
  const older = await rent(a.liveApi, c.id);
  const newer = await rent(a.liveApi, c.id);
  t.is(await balanceOf(a.liveApi), 0);
  const renewsOn = older.renews_on as string;
  await advanceTo(renewsOn);
  await run('renew_numbers');
  for (const n of [older, newer]) t.is((await numberOf(a.liveApi, c.id, n.id)).status, 'payment_due');

  await advanceTo(addDays(renewsOn, 2));
  await topUp(a, 2_500);
  const next = nextRenewal(renewsOn, anchorOf(older));
  t.like(await numberOf(a.liveApi, c.id, older.id), { status: 'active', renews_on: next, release_due_on: null });
  t.like(await numberOf(a.liveApi, c.id, newer.id), { status: 'payment_due', renews_on: renewsOn, release_due_on: addDays(renewsOn, RELEASE_COUNTDOWN_DAYS) });
  t.is(await balanceOf(a.liveApi), 1_000);

  await advanceTo(addDays(renewsOn, RELEASE_COUNTDOWN_DAYS));
  await run('renew_numbers');
  await run('release_numbers');
  t.is((await numberOf(a.liveApi, c.id, newer.id)).status, 'released');
  t.is((await numberOf(a.liveApi, c.id, older.id)).status, 'active');
  t.true(await numberInCountry(a.liveApi, c.id), 'the paid number still dials');
  t.is((await ledgerOf(a.liveApi, c.id)).length, 3, 'two first months and one renewal');
});

test.serial('a caller ID verified when the balance no longer covers its first month starts in its countdown; a top-up takes that month', async (t) => {
  await startOfTest();
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
  const today = (await clockNow()).toISOString().slice(0, 10);
  t.like(n, { status: 'payment_due', renews_on: today, release_due_on: addDays(today, RELEASE_COUNTDOWN_DAYS), verification: null });
  const [due] = await eventsAbout(a.liveApi, 'number.payment_due', n.id);
  t.like(due?.data, { id: n.id, release_due_on: addDays(today, RELEASE_COUNTDOWN_DAYS) });
  t.is((await ledgerOf(a.liveApi, c.id)).filter((l) => l.cause === 'caller_id').length, 0);

  await topUp(a, 2_500);
  const next = nextRenewal(today, Number(today.slice(8, 10)));
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: next, release_due_on: null });
  const [line] = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.cause === 'caller_id');
  t.like(line, { amount_cents: -1_200, applied: true });
  t.true(line.description.includes(`${today} to ${next}`), line.description);
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500 - 1_200);
});

test.serial('an automatic top-up during the countdown (set off by a call charge) takes the rent in the same transaction, once', async (t) => {
  await startOfTest();
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const n = await rent(a.liveApi, c.id);
  const renewsOn = n.renews_on as string;
  await advanceTo(renewsOn);
  await run('renew_numbers');
  t.is((await numberOf(a.liveApi, c.id, n.id)).status, 'payment_due');

  // Below 2,000 after any charge: 2,500 is charged to the card. A one-minute call sets it off.
  const set = await a.console.put(`/console/v1/accounts/${a.id}/auto_top_up`, { threshold_cents: 2_000, amount_cents: 2_500 });
  t.is(set.status, 200, set.text);
  t.true((await a.console.post(`/console/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: c.id, reference: 'lifecycle-call' })).body.ok);
  const ended = await a.console.post(`/console/v1/accounts/${a.id}/holds/lifecycle-call/end`, { duration_seconds: 60 });
  t.like(ended.body, { outcome: 'settled', charged_cents: 20 });

  const next = nextRenewal(renewsOn, anchorOf(n));
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', renews_on: next, release_due_on: null });
  const rent_ = (await ledgerOf(a.liveApi, c.id)).filter((l) => l.cause === 'number' && l.description.includes(`${renewsOn} to ${next}`));
  sameLines(t, rent_, 1, 'the renewal, once');
  // 1,000 − 20 (the call) + 2,500 (automatic) − 1,500 (rent) = 1,980, still below the threshold: a second automatic top-up.
  const topUps = (await a.liveApi.get('/v1/usage?limit=100')).body.data.filter((l: any) => l.type === 'top_up');
  t.is(topUps.length, 3, 'the first top-up and two automatic ones');
  t.is(await balanceOf(a.liveApi), 1_000 - 20 + 2_500 - 1_500 + 2_500);
});

test.serial('automatic top-up pays a renewal the balance cannot cover even when the balance sits above its threshold', async (t) => {
  await startOfTest();
  const a = await liveAccount(2_500);
  const c = await makeCustomer(a.liveApi);
  const n = await rent(a.liveApi, c.id);
  t.is(await balanceOf(a.liveApi), 1_000);
  // Threshold 500: a balance of 1,000 is above it, and still short of the 1,500 rent.
  const set = await a.console.put(`/console/v1/accounts/${a.id}/auto_top_up`, { threshold_cents: 500, amount_cents: 2_500 });
  t.true(set.status < 300, set.text);
  await advanceTo(n.renews_on);
  await run('renew_numbers');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', release_due_on: null });
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500 - 1_500);
  t.is((await eventsAbout(a.liveApi, 'number.payment_due', n.id)).length, 0);
});
