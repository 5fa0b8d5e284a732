import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import type { Client } from '../helpers/http.ts';
import { loadDncRegistries } from '../helpers/dnc-registries.ts';
import { TestClock } from '../../runtime/clock.ts';

let svc: TestService;
/** Real time, which the tests move to reach a bonus credit's expiry (bonus credit never expires on the test clock). */
const wall = new TestClock();
test.before(async () => {
  svc = await startTestService({}, { realClock: wall });
});
test.after.always(async () => {
  await svc?.stop();
});
// After every test: balances equal their ledgers, holds their reservations, every line its cause.
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

type Live = TestAccount & { liveApi: Client };
async function liveAccount(): Promise<Live> {
  return (await makeAccount(svc.url, { live: true })) as Live;
}
const topUp = (a: TestAccount, amount_cents: number) => a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents });
const hold = (a: TestAccount, customer_id: string, reference: string, mode = 'live') =>
  a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode, customer_id, reference });
const end = (a: TestAccount, reference: string, duration_seconds: number) =>
  a.admin.post(`/admin/v1/accounts/${a.id}/holds/${encodeURIComponent(reference)}/end`, { duration_seconds });
const events = async (a: TestAccount, type: string) => (await a.admin.get(`/admin/v1/accounts/${a.id}/events?type=${type}`)).body.data;

test('a new live account: zero balance, stage zero, the rate card and tiers', async (t) => {
  const a = await liveAccount();
  const b = await a.liveApi.get('/v1/balance');
  t.is(b.status, 200);
  t.like(b.body, {
    object: 'balance',
    currency: 'usd',
    available_cents: 0,
    balance_cents: 0,
    paid_cents: 0,
    bonus_cents: 0,
    bonus_expires_at: null,
    reserved_cents: 0,
    minimum_top_up_cents: 2500,
    low_balance: 'zero',
  });
  t.like(b.body.rates, {
    call_cents_per_minute: 20,
    minutes_used_this_month: 0,
    estimated_call_minutes_remaining: 0,
    number_cents_per_month: 1500,
    caller_id_cents_per_month: 1200,
    chat_message_cents: 2,
    prospect_cents: 4,
  });
  t.deepEqual(b.body.rates.call_tiers, [
    { from_minutes: 0, cents_per_minute: 20 },
    { from_minutes: 5000, cents_per_minute: 18 },
    { from_minutes: 25000, cents_per_minute: 16 },
    { from_minutes: 100000, cents_per_minute: 15 },
  ]);
  t.deepEqual(b.body.spend, { today_cents: 0, month_cents: 0, daily_cap_cents: null, monthly_cap_cents: null });
  t.is((await a.api.get('/v1/balance')).body.mode, 'test', 'a test key sees the test-mode balance');
});

test('top-ups: minimum 2,500; bonus +3/+5/+8 % as its own line, spent first, expiring in twelve months', async (t) => {
  const a = await liveAccount();
  const small = await topUp(a, 2499);
  t.is(small.status, 400);
  t.is(small.body.error.code, 'top_up_too_small');
  const r = await topUp(a, 50_000);
  t.is(r.status, 201);
  t.deepEqual(
    r.body.lines.map((l: any) => [l.type, l.amount_cents, l.balance_after_cents, l.applied]),
    [
      ['top_up', 50_000, 50_000, true],
      ['bonus', 1_500, 51_500, true],
    ],
  );
  t.like(r.body.balance, { balance_cents: 51_500, paid_cents: 50_000, bonus_cents: 1_500, available_cents: 51_500, low_balance: 'ok' });
  // Twelve months after the real date of the top-up (whatever the test clock says).
  const expires = new Date(r.body.balance.bonus_expires_at);
  const granted = wall.now();
  t.is(expires.getUTCFullYear() - granted.getUTCFullYear(), 1);
  t.is(expires.getUTCMonth(), granted.getUTCMonth());
  t.is((await topUp(a, 250_000)).body.lines[1].amount_cents, 12_500);
  t.is((await topUp(a, 1_000_000)).body.lines[1].amount_cents, 80_000);
  t.is((await topUp(a, 49_999)).body.lines.length, 1, 'no bonus under 50,000');

  // A charge spends bonus first.
  const c = await makeCustomer(a.liveApi);
  t.true((await hold(a, c.id, 'bonus-call')).body.ok);
  await end(a, 'bonus-call', 600);
  const usage = await a.liveApi.get('/v1/usage?limit=1');
  t.like(usage.body.data[0], { type: 'usage', cause: 'call', amount_cents: -200, customer_id: c.id, reference: 'bonus-call', applied: true, minutes: 10 });
  const after = await a.liveApi.get('/v1/balance');
  t.is(after.body.bonus_cents, 1_500 + 12_500 + 80_000 - 200);
  t.is(after.body.paid_cents, 50_000 + 250_000 + 1_000_000 + 49_999);
});

test('a call: holds 20 minutes at the tier, charges whole minutes rounded up, releases the rest', async (t) => {
  const a = await liveAccount();
  await topUp(a, 10_000);
  const c = await makeCustomer(a.liveApi, { external_ref: 'cust-a' });
  const h = await hold(a, c.id, 'call-1');
  t.true(h.body.ok);
  t.is(h.body.hold.amount_cents, 400);
  let b = await a.liveApi.get('/v1/balance');
  t.like(b.body, { balance_cents: 10_000, reserved_cents: 400, available_cents: 9_600 });
  t.is(b.body.spend.today_cents, 400, 'a running hold counts as spend');
  const e = await end(a, 'call-1', 121);
  t.like(e.body, { outcome: 'settled', minutes: 3, charged_cents: 60 });
  b = await a.liveApi.get('/v1/balance');
  t.like(b.body, { balance_cents: 9_940, reserved_cents: 0, available_cents: 9_940 });
  t.is(b.body.rates.minutes_used_this_month, 3);
  t.is(b.body.spend.today_cents, 60);
  t.is((await a.liveApi.get('/v1/customers/cust-a/limits')).body.spend.today_cents, 60);
  const again = await end(a, 'call-1', 121);
  t.is(again.body.outcome, 'already_settled');
  t.is((await a.liveApi.get('/v1/usage')).body.data.filter((l: any) => l.reference === 'call-1').length, 1, 'charged once');
  // An unanswered call costs nothing and writes no line.
  await hold(a, c.id, 'call-2');
  t.is((await end(a, 'call-2', 0)).body.charged_cents, 0);
  t.is((await a.liveApi.get('/v1/usage')).body.data.filter((l: any) => l.reference === 'call-2').length, 0);
});

test('usage: attributed lines, newest first, paged, filtered by customer (id or external_ref)', async (t) => {
  const a = await liveAccount();
  await topUp(a, 10_000);
  const c1 = await makeCustomer(a.liveApi, { external_ref: 'u-1' });
  const c2 = await makeCustomer(a.liveApi, { external_ref: 'u-2' });
  for (const [c, ref] of [
    [c1, 'x1'],
    [c2, 'x2'],
    [c1, 'x3'],
  ] as const) {
    await hold(a, c.id, ref);
    await end(a, ref, 60);
  }
  const all = await a.liveApi.get('/v1/usage');
  t.deepEqual(all.body.data.map((l: any) => l.reference), ['x3', 'x2', 'x1', null]);
  t.is(all.body.data[3].type, 'top_up');
  const page = await a.liveApi.get(`/v1/usage?limit=2&starting_after=${all.body.data[1].id}`);
  t.deepEqual(page.body.data.map((l: any) => l.reference), ['x1', null]);
  const one = await a.liveApi.get('/v1/usage?customer_id=u-1');
  t.deepEqual(one.body.data.map((l: any) => l.reference), ['x3', 'x1']);
  t.true(one.body.data.every((l: any) => l.customer_id === c1.id));
  t.is((await a.liveApi.get(`/v1/usage?customer_id=${c2.id}`)).body.data.length, 1);
  t.is((await a.liveApi.get('/v1/usage?customer_id=nobody')).body.error.code, 'customer_not_found');
  t.is((await a.liveApi.get('/v1/usage?starting_after=zzz')).body.error.code, 'invalid_cursor');
  t.deepEqual((await a.api.get('/v1/usage')).body.data, [], 'test mode has its own ledger');
});

test('test mode: calls are priced into the ledger with applied:false and never move a balance', async (t) => {
  const a = await liveAccount();
  await topUp(a, 5_000);
  const c = await makeCustomer(a.api);
  const h = await hold(a, c.id, 'test-call', 'test');
  t.true(h.body.ok, 'no money needed in test mode');
  await end(a, 'test-call', 300);
  const usage = await a.api.get('/v1/usage');
  t.is(usage.body.data.length, 1);
  t.like(usage.body.data[0], { mode: 'test', applied: false, amount_cents: -100, balance_after_cents: 0, cause: 'call' });
  t.like((await a.api.get('/v1/balance')).body, { balance_cents: 0, available_cents: 0, reserved_cents: 0 });
  t.is((await a.api.get('/v1/balance')).body.spend.today_cents, 100, 'test spend is priced for caps');
  t.is((await a.liveApi.get('/v1/balance')).body.balance_cents, 5_000, 'live money untouched');
});

test('200 concurrent call starts against money for exactly 7 holds: exactly 7 succeed, never below zero', async (t) => {
  const a = await liveAccount();
  await topUp(a, 2_800); // 7 × 400
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 500 });
  const customers = [await makeCustomer(a.liveApi), await makeCustomer(a.liveApi)];
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => hold(a, customers[i % 2].id, `race-${i}`)),
  );
  const won = results.filter((r) => r.body.ok);
  t.is(won.length, 7);
  t.true(results.filter((r) => !r.body.ok).every((r) => r.body.reason === 'insufficient_balance'));
  const b = await a.liveApi.get('/v1/balance');
  t.like(b.body, { reserved_cents: 2_800, available_cents: 0, balance_cents: 2_800 });
  await Promise.all(won.map((r, i) => end(a, r.body.hold.reference, 30 + i * 60)));
  const after = await a.liveApi.get('/v1/balance');
  const usage = await a.liveApi.get('/v1/usage');
  const sum = usage.body.data.reduce((s: number, l: any) => s + l.amount_cents, 0);
  t.is(after.body.balance_cents, sum, 'the ledger sums to the balance');
  t.is(after.body.reserved_cents, 0);
  t.is(sum, 2_800 - 20 * (1 + 2 + 3 + 4 + 5 + 6 + 7));
  const activity = await a.admin.get(`/admin/v1/accounts/${a.id}/activity?limit=200`);
  t.is(activity.body.data.filter((x: any) => x.kind === 'call_start_refused' && x.reason === 'insufficient_balance').length, 193);
});

test('concurrency: the account ceiling and the customer ceiling refuse with concurrency_limit', async (t) => {
  const a = await liveAccount();
  await topUp(a, 100_000);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 3 });
  const c1 = await makeCustomer(a.liveApi);
  const c2 = await makeCustomer(a.liveApi);
  await a.liveApi.patch(`/v1/customers/${c1.id}/limits`, { max_concurrent_calls: 1 });
  t.true((await hold(a, c1.id, 'c1-a')).body.ok);
  t.is((await hold(a, c1.id, 'c1-b')).body.reason, 'concurrency_limit');
  t.true((await hold(a, c2.id, 'c2-a')).body.ok);
  t.true((await hold(a, c2.id, 'c2-b')).body.ok);
  t.is((await hold(a, c2.id, 'c2-c')).body.reason, 'concurrency_limit', 'account ceiling');
  await a.liveApi.patch(`/v1/customers/${c2.id}/limits`, { max_concurrent_calls: 50 });
  t.is((await hold(a, c2.id, 'c2-d')).body.reason, 'concurrency_limit', 'a customer ceiling never raises the account ceiling');
  await end(a, 'c1-a', 10);
  t.true((await hold(a, c1.id, 'c1-c')).body.ok, 'a freed slot is usable');
});

test('spend caps: account and customer, daily and monthly, counting running holds; they stop new calls only', async (t) => {
  const a = await liveAccount();
  await topUp(a, 100_000);
  const c = await makeCustomer(a.liveApi);
  await a.liveApi.patch(`/v1/customers/${c.id}/limits`, { daily_spend_cap_cents: 1_000 });
  t.true((await hold(a, c.id, 'd1')).body.ok);
  t.true((await hold(a, c.id, 'd2')).body.ok);
  t.is((await hold(a, c.id, 'd3')).body.reason, 'customer_spend_cap_daily', '400 + 400 held + 400 > 1,000');
  await end(a, 'd1', 600); // 200 charged
  await end(a, 'd2', 60); // 20 charged
  t.true((await hold(a, c.id, 'd4')).body.ok, '220 spent + 400 ≤ 1,000');
  t.is((await hold(a, c.id, 'd5')).body.reason, 'customer_spend_cap_daily');
  await end(a, 'd4', 60);

  await a.liveApi.patch(`/v1/customers/${c.id}/limits`, { daily_spend_cap_cents: null, monthly_spend_cap_cents: 500 });
  t.is((await hold(a, c.id, 'm1')).body.reason, 'customer_spend_cap_monthly', '240 + 400 > 500');
  await a.liveApi.patch(`/v1/customers/${c.id}/limits`, { monthly_spend_cap_cents: null });

  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { daily_spend_cap_cents: 600 });
  t.is((await hold(a, c.id, 'a1')).body.reason, 'spend_cap_daily');
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { daily_spend_cap_cents: null, monthly_spend_cap_cents: 600 });
  t.is((await hold(a, c.id, 'a2')).body.reason, 'spend_cap_monthly');
  const b = await a.liveApi.get('/v1/balance');
  t.like(b.body.spend, { today_cents: 240, month_cents: 240, daily_cap_cents: null, monthly_cap_cents: 600 });
  const reasons = (await a.admin.get(`/admin/v1/accounts/${a.id}/activity`)).body.data.map((x: any) => x.reason);
  for (const r of ['customer_spend_cap_daily', 'customer_spend_cap_monthly', 'spend_cap_daily', 'spend_cap_monthly']) t.true(reasons.includes(r), r);
});

test('low balance: 25 %, 10 % and zero of the last top-up each record balance.low once; a top-up resets', async (t) => {
  const a = await liveAccount();
  await topUp(a, 4_000);
  const c = await makeCustomer(a.liveApi);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 100 });
  const stages: string[] = [];
  // Holds of 400 move the spendable balance: 4000 → 3600 … each crossing recorded once.
  for (let i = 0; i < 10; i++) {
    await hold(a, c.id, `lb-${i}`);
    stages.push((await a.liveApi.get('/v1/balance')).body.low_balance);
  }
  // 3600 … 1200 are at least 25 % of 4000; 800 and 400 are under 25 % (400 is exactly 10 %, not under it); then 0.
  t.deepEqual(stages, ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'below_25_percent', 'below_25_percent', 'zero']);
  const low = await events(a, 'balance.low');
  // From 400 straight to 0 crosses both the 10 % line and zero: one warning per threshold.
  t.deepEqual(low.map((e: any) => e.data.low_balance).sort(), ['below_10_percent', 'below_25_percent', 'zero']);
  t.true(low.every((e: any) => e.mode === 'live' && e.data.object === 'balance'));
  t.is((await hold(a, c.id, 'lb-x')).body.reason, 'insufficient_balance', 'at zero no new call starts');
  await topUp(a, 10_000);
  t.is((await a.liveApi.get('/v1/balance')).body.low_balance, 'ok');
  t.is((await events(a, 'balance.low')).length, 3, 'rising records nothing');
});

test('automatic top-up set by the operator without a saved card charges nothing (the card is charged by the payments room: auto-top-up.test.ts)', async (t) => {
  const a = await liveAccount();
  await topUp(a, 3_000);
  const set = await a.admin.put(`/admin/v1/accounts/${a.id}/auto_top_up`, { threshold_cents: 2_500, amount_cents: 5_000 });
  t.is(set.status, 200, set.text);
  t.deepEqual(set.body.auto_top_up, { threshold_cents: 2_500, amount_cents: 5_000 });
  const c = await makeCustomer(a.liveApi);
  await hold(a, c.id, 'auto-1');
  await end(a, 'auto-1', 1_200); // 400 charged → 2,600 available: above the threshold
  await hold(a, c.id, 'auto-2');
  await end(a, 'auto-2', 600); // 200 → 2,400 < 2,500: no card to charge
  t.is((await a.liveApi.get('/v1/balance')).body.balance_cents, 2_400);
  const topUps = (await a.liveApi.get('/v1/usage')).body.data.filter((l: any) => l.type === 'top_up');
  t.is(topUps.length, 1, 'only the operator\'s top-up: no line without a card payment');
  t.is((await a.admin.delete(`/admin/v1/accounts/${a.id}/auto_top_up`)).body.auto_top_up, null);
});

test('refunds are their own positive line, optionally attributed to a customer', async (t) => {
  const a = await liveAccount();
  await topUp(a, 2_500);
  const c = await makeCustomer(a.liveApi);
  const r = await a.admin.post(`/admin/v1/accounts/${a.id}/refunds`, { amount_cents: 35_000, customer_id: c.id, reference: 'site-123', description: 'Website build never delivered' });
  t.is(r.status, 201, r.text);
  t.like(r.body.line, { type: 'refund', amount_cents: 35_000, customer_id: c.id, reference: 'site-123', balance_after_cents: 37_500 });
  const other = await makeCustomer((await liveAccount()).liveApi);
  t.is((await a.admin.post(`/admin/v1/accounts/${a.id}/refunds`, { amount_cents: 1, customer_id: other.id })).body.error.code, 'customer_not_found');
  t.is((await a.admin.post(`/admin/v1/accounts/${a.id}/refunds`, { amount_cents: 0 })).body.error.code, 'invalid_parameter');
});

test("a call start for another account's customer, or for a customer of the other mode, is customer_not_found: no hold, nothing recorded", async (t) => {
  const a = await liveAccount();
  await topUp(a, 10_000);
  const other = await makeCustomer((await liveAccount()).liveApi);
  const testCustomer = await makeCustomer(a.api);
  const foreign = await hold(a, other.id, 'foreign-call');
  t.is(foreign.status, 404, foreign.text);
  t.is(foreign.body.error.code, 'customer_not_found');
  t.is((await hold(a, testCustomer.id, 'wrong-mode-call')).body.error.code, 'customer_not_found');
  t.is((await hold(a, testCustomer.id, 'test-mode-call', 'test')).status, 200, 'the same customer in its own mode holds');
  t.is((await a.liveApi.get('/v1/balance')).body.reserved_cents, 0);
  const activity = (await a.admin.get(`/admin/v1/accounts/${a.id}/activity`)).body.data;
  t.deepEqual(activity.filter((x: any) => x.kind === 'call_start_refused'), []);
});

test.serial('a hold never reported back is released after 30 minutes; a late end is billed once on its own line', async (t) => {
  const a = await liveAccount();
  await topUp(a, 10_000);
  const c = await makeCustomer(a.liveApi);
  await hold(a, c.id, 'lost-call');
  await a.admin.post('/admin/v1/jobs/release_holds/run');
  t.is((await a.liveApi.get('/v1/balance')).body.reserved_cents, 400, 'not yet');
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 30 * 60 });
  const run = await a.admin.post('/admin/v1/jobs/release_holds/run');
  t.true(run.body.processed >= 1);
  t.like((await a.liveApi.get('/v1/balance')).body, { reserved_cents: 0, balance_cents: 10_000 });
  const act = (await a.admin.get(`/admin/v1/accounts/${a.id}/activity`)).body.data;
  t.true(act.some((x: any) => x.kind === 'hold_released' && x.reference === 'lost-call'));
  const late = await end(a, 'lost-call', 90);
  t.like(late.body, { outcome: 'late', charged_cents: 40 });
  t.is((await end(a, 'lost-call', 90)).body.outcome, 'already_settled');
  const b = await a.liveApi.get('/v1/balance');
  t.like(b.body, { balance_cents: 9_960, reserved_cents: 0 });
  t.is((await a.liveApi.get('/v1/usage')).body.data.filter((l: any) => l.reference === 'lost-call').length, 1);
});

test.serial('an end report racing the release resolves the hold exactly once', async (t) => {
  const a = await liveAccount();
  await topUp(a, 100_000);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 100 });
  const c = await makeCustomer(a.liveApi);
  for (let i = 0; i < 30; i++) await hold(a, c.id, `race-end-${i}`);
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 30 * 60 });
  const [, ...ends] = await Promise.all([
    a.admin.post('/admin/v1/jobs/release_holds/run'),
    ...Array.from({ length: 30 }, (_, i) => end(a, `race-end-${i}`, 60)),
  ]);
  t.true(ends.every((r) => r.body.outcome === 'settled' || r.body.outcome === 'late'));
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  const { rows } = await db.query(`SELECT status, count(*)::int AS n FROM holds WHERE account_id = $1 GROUP BY status`, [a.id]);
  await db.end();
  t.is(rows.reduce((s, r) => s + r.n, 0), 30);
  const b = await a.liveApi.get('/v1/balance');
  t.like(b.body, { reserved_cents: 0, balance_cents: 100_000 + 3_000 - 30 * 20 });
  const callLines = (await a.liveApi.get('/v1/usage')).body.data.filter((l: any) => l.cause === 'call');
  t.is(callLines.length, 30, 'each call billed exactly once, settled or late');
});

/** A live customer made ready the way a reseller and its customer would: certified, numbered, terms accepted. */
async function takenLive(a: Live, externalRef: string, phone: string) {
  await loadDncRegistries(a.admin, 'US');
  await a.admin.post('/admin/v1/languages/en-US/certify');
  const c = await makeCustomer(a.liveApi, { external_ref: externalRef });
  await a.admin.post(`/admin/v1/customers/${c.id}/script/certify`);
  await a.admin.post(`/admin/v1/customers/${c.id}/numbers`, { phone_number: phone });
  const link = await a.liveApi.post(`/v1/customers/${c.id}/onboarding_link`);
  await fetch(link.body.url, { method: 'POST', body: new URLSearchParams({ accepted_by: 'Ann', agree: 'yes' }) });
  return c;
}

test.serial('monthly minimum: once per live customer taken live before the month, even if run twice', async (t) => {
  const a = await liveAccount();
  await topUp(a, 10_000);
  // A ready live customer (taken live) with a little spend, and one never taken live.
  const con = a.admin;
  const ready = await takenLive(a, 'min-ready', '+12025550111');
  const idle = await makeCustomer(a.liveApi, { external_ref: 'min-idle' });
  t.true((await a.liveApi.get('/v1/customers/min-ready/readiness')).body.ready_for_live_calls);

  // Its first month never counts: move into the next month, spend 60, then close that month.
  const now = new Date((await con.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 12);
  await con.post('/admin/v1/test_clock/advance', { seconds: Math.ceil((nextMonth - now.getTime()) / 1000) });
  t.is((await con.post('/admin/v1/jobs/close_month/run')).body.processed, 0, 'the month it went live does not count');
  await hold(a, ready.id, 'min-call');
  await end(a, 'min-call', 180); // 60 cents
  const after = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1, 12));
  await con.post('/admin/v1/test_clock/advance', { seconds: Math.ceil((after.getTime() - nextMonth) / 1000) });
  const [first, second] = await Promise.all([con.post('/admin/v1/jobs/close_month/run'), con.post('/admin/v1/jobs/close_month/run')]);
  t.is(first.body.processed + second.body.processed, 1);
  t.is((await con.post('/admin/v1/jobs/close_month/run')).body.processed, 0);
  const lines = (await a.liveApi.get('/v1/usage?customer_id=min-ready')).body.data.filter((l: any) => l.type === 'minimum');
  t.is(lines.length, 1);
  t.like(lines[0], { amount_cents: -940, cause: 'monthly_minimum', customer_id: ready.id });
  t.is((await a.liveApi.get('/v1/usage?customer_id=min-idle')).body.data.length, 0, 'never taken live: not counted');
  t.truthy(idle);
});

test.serial('monthly minimum: a service that did not run the job for months charges every month it missed, once', async (t) => {
  const a = await liveAccount();
  await topUp(a, 10_000);
  const con = a.admin;
  await takenLive(a, 'min-away', '+12025550112');
  t.true((await a.liveApi.get('/v1/customers/min-away/readiness')).body.ready_for_live_calls);
  // Five month turns pass with no run of the job (the service was down): four months are owed,
  // the fifth (the month it went live) is free.
  const now = new Date((await con.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  const later = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 5, 2, 12);
  await con.post('/admin/v1/test_clock/advance', { seconds: Math.ceil((later - now.getTime()) / 1000) });
  await con.post('/admin/v1/jobs/close_month/run');
  await con.post('/admin/v1/jobs/close_month/run');
  const minimums = async () => (await a.liveApi.get('/v1/usage?customer_id=min-away')).body.data.filter((l: any) => l.type === 'minimum');
  const lines = await minimums();
  const ref = (i: number) => `minimum:${new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + i, 1)).toISOString().slice(0, 7)}`;
  t.deepEqual(lines.map((l: any) => l.reference).sort(), [ref(1), ref(2), ref(3), ref(4)]);
  t.true(lines.every((l: any) => l.amount_cents === -1_000));
  // The next month turn adds exactly that month.
  const oneMore = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 6, 2, 12);
  await con.post('/admin/v1/test_clock/advance', { seconds: Math.ceil((oneMore - later) / 1000) });
  await con.post('/admin/v1/jobs/close_month/run');
  t.deepEqual((await minimums()).map((l: any) => l.reference).sort(), [ref(1), ref(2), ref(3), ref(4), ref(5)]);
});

test.serial('bonus credit left at expiry is written off by the job', async (t) => {
  const a = await liveAccount();
  await topUp(a, 50_000); // +1,500 bonus
  wall.advance(366 * 86_400_000);
  await a.admin.post('/admin/v1/jobs/expire_bonuses/run');
  const b = await a.liveApi.get('/v1/balance');
  t.like(b.body, { bonus_cents: 0, paid_cents: 50_000, balance_cents: 50_000, bonus_expires_at: null });
  const line = (await a.liveApi.get('/v1/usage')).body.data[0];
  t.like(line, { type: 'bonus_expired', amount_cents: -1_500 });
});

test.serial('a live bonus expires twelve months after the real date of its top-up: thirteen months on the test clock expire nothing (issue 20 §4)', async (t) => {
  const twelveMonthsAfter = (d: Date) => {
    const at = new Date(d);
    at.setUTCMonth(at.getUTCMonth() + 12);
    return at;
  };
  const a = await liveAccount();
  // The test clock first catches up with real time (other tests here move real time ahead).
  const scheduleNow = new Date((await a.admin.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  const lag = Math.ceil((wall.now().getTime() - scheduleNow.getTime()) / 1000);
  if (lag > 0) await a.admin.post('/admin/v1/test_clock/advance', { seconds: lag });
  const before = wall.now();
  const r = await topUp(a, 50_000); // +1,500 bonus
  const after = wall.now();
  t.regex(r.body.lines[1].description, new RegExp(`expires ${twelveMonthsAfter(before).toISOString().slice(0, 10)}`));
  // Thirteen months on the test clock (396 days): neither the job nor a charge finds the bonus expired.
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 396 * 86_400 });
  t.is((await a.admin.post('/admin/v1/jobs/expire_bonuses/run')).body.processed, 0);
  const c = await makeCustomer(a.liveApi);
  t.true((await hold(a, c.id, 'bonus-after-test-clock')).body.ok);
  t.is((await end(a, 'bonus-after-test-clock', 600)).status, 200);
  const b = (await a.liveApi.get('/v1/balance')).body;
  t.like(b, { bonus_cents: 1_300, paid_cents: 50_000, balance_cents: 51_300 }, 'the call paid 200 from the bonus');
  const expires = new Date(b.bonus_expires_at).getTime();
  t.true(expires >= twelveMonthsAfter(before).getTime() && expires <= twelveMonthsAfter(after).getTime(), `bonus_expires_at ${b.bonus_expires_at}`);
  const usage = async () => (await a.liveApi.get('/v1/usage?limit=50')).body.data;
  t.false((await usage()).some((l: any) => l.type === 'bonus_expired'));
  // Real time past the twelve months: the job writes the bonus off.
  wall.setTo(new Date(expires + 1_000));
  t.is((await a.admin.post('/admin/v1/jobs/expire_bonuses/run')).body.processed >= 1, true);
  t.like((await a.liveApi.get('/v1/balance')).body, { bonus_cents: 0, bonus_expires_at: null, paid_cents: 50_000, balance_cents: 50_000 });
  t.like((await usage())[0], { type: 'bonus_expired', amount_cents: -1_300 });
});

test.serial('bonus expiry racing call ends: every end and every job run succeeds, each grant written off once', async (t) => {
  // Five accounts, each with two grants and ten running calls; past both grants' expiry every call
  // end finds expired credit to write off, as does every run of the job (which takes several
  // accounts at once): the two must not lock each other out.
  const accounts = await Promise.all(
    Array.from({ length: 5 }, async () => {
      const a = await liveAccount();
      await topUp(a, 50_000); // +1,500 bonus
      await topUp(a, 60_000); // +1,800 bonus, a second grant
      await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 100 });
      const c = await makeCustomer(a.liveApi);
      for (let i = 0; i < 10; i++) t.true((await hold(a, c.id, `race-${i}`)).body.ok);
      return a;
    }),
  );
  wall.advance(366 * 86_400_000);
  const replies = await Promise.all([
    ...accounts.flatMap((a) => Array.from({ length: 10 }, (_, i) => end(a, `race-${i}`, 30))),
    ...Array.from({ length: 6 }, () => accounts[0].admin.post('/admin/v1/jobs/expire_bonuses/run')),
  ]);
  t.deepEqual([...new Set(replies.map((r) => r.status))], [200], JSON.stringify(replies.filter((r) => r.status !== 200).map((r) => r.body)));
  for (const a of accounts) {
    const lines = (await a.liveApi.get('/v1/usage?limit=200')).body.data;
    t.deepEqual(lines.filter((l: any) => l.type === 'bonus_expired').map((l: any) => l.amount_cents).sort((x: number, y: number) => x - y), [-1_800, -1_500]);
    t.is(lines.filter((l: any) => l.cause === 'call').length, 10);
    t.like((await a.liveApi.get('/v1/balance')).body, { bonus_cents: 0, reserved_cents: 0 });
  }
});

test.serial('everything at once: starts, ends, top-ups, refunds, automatic top-ups, every job and time passing, on three accounts', async (t) => {
  // Concurrent bursts of every money operation; bonus credit expires and holds pass 30 minutes
  // while calls end. Nothing may fail, no call is billed twice, and the invariant checker (after
  // each test) must still find every balance equal to its ledger.
  const seed = Date.now() % 2 ** 31;
  t.log(`seed ${seed}`);
  let x = seed;
  const random = () => ((x = (x * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const accounts = await Promise.all(
    Array.from({ length: 3 }, async () => {
      const a = await liveAccount();
      await topUp(a, 60_000);
      await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 100 });
      await a.admin.post(`/admin/v1/accounts/${a.id}/auto_top_up`, { threshold_cents: 20_000, amount_cents: 10_000 });
      return { a, customers: [await makeCustomer(a.liveApi), await makeCustomer(a.liveApi)], started: [] as string[] };
    }),
  );
  const con = accounts[0].a.admin;
  // Just before the bonus credit of the first top-ups expires.
  // Bonus credit expires on real time, holds on the test clock: both move together here.
  const advance = (seconds: number) => {
    wall.advance(seconds * 1000);
    return con.post('/admin/v1/test_clock/advance', { seconds });
  };
  const now = new Date((await con.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  await advance(365 * 86_400 - 600);
  t.log(`clock moved from ${now.toISOString()}`);
  let n = 0;
  const op = async () => {
    const acc = pick(accounts);
    const r = random();
    if (r < 0.35) {
      const reference = `chaos-${n++}`;
      const reply = await hold(acc.a, pick(acc.customers).id, reference);
      if (reply.body.ok) acc.started.push(reference);
      return reply;
    }
    if (r < 0.7 && acc.started.length) return end(acc.a, pick(acc.started), Math.floor(random() * 1_300));
    if (r < 0.78) return topUp(acc.a, 2_500 + Math.floor(random() * 60_000));
    if (r < 0.84) return acc.a.admin.post(`/admin/v1/accounts/${acc.a.id}/refunds`, { amount_cents: 1 + Math.floor(random() * 500), customer_id: pick(acc.customers).id });
    if (r < 0.96) return con.post(`/admin/v1/jobs/${pick(['release_holds', 'expire_bonuses', 'close_month'])}/run`);
    return advance(pick([60, 300, 31 * 60]));
  };
  const failures: unknown[] = [];
  for (let burst = 0; burst < 6; burst++) {
    const replies = await Promise.all(Array.from({ length: 40 }, op));
    failures.push(...replies.filter((reply) => reply.status >= 300).map((reply) => reply.body));
  }
  t.deepEqual(failures, []);
  for (const { a, started } of accounts) {
    const calls = (await a.liveApi.get('/v1/usage?limit=200')).body.data.filter((l: any) => l.cause === 'call');
    const refs = calls.map((l: any) => l.reference);
    t.is(new Set(refs).size, refs.length, 'no call billed twice');
    t.true(refs.every((ref: string) => started.includes(ref)));
  }
});

test('a money change that settles a hold which is not open writes nothing', async (t) => {
  const a = await liveAccount();
  await topUp(a, 10_000);
  const c = await makeCustomer(a.liveApi);
  t.true((await hold(a, c.id, 'guarded')).body.ok);
  t.is((await end(a, 'guarded', 60)).status, 200); // settled: no longer open
  const { withTransaction } = await import('../../db/pool.ts');
  const { balanceWrites } = await import('../../db/money/balances.ts');
  const { ledgerWrites } = await import('../../db/money/ledger.ts');
  const before = (await a.liveApi.get('/v1/balance')).body;
  const db = new pg.Pool({ connectionString: svc.databaseUrl });
  try {
    const settledHold = (await db.query(`SELECT id FROM holds WHERE account_id = $1 AND reference = 'guarded'`, [a.id])).rows[0];
    await t.throwsAsync(
      withTransaction(db, async (client) => {
        const row = (await balanceWrites(client).lock(a.id, 'live'))!;
        await ledgerWrites(client).apply({
          next: { ...row, balance_cents: row.balance_cents - 1, paid_cents: row.paid_cents - 1 },
          customer: { id: c.id, reservedReleasedCents: 0, callsEnded: 0, spendCents: 0 },
          holdCharge: { holdId: settledHold.id, chargedCents: 1 },
          line: null,
          bonusEligibleCents: 0,
          now: new Date(),
          realNow: new Date(),
        });
      }),
      { message: /was not open/ },
    );
  } finally {
    await db.end();
  }
  t.deepEqual((await a.liveApi.get('/v1/balance')).body, before);
});

test('ending a hold that does not exist is 404 hold_not_found, not a 500 (issue 11 §2, found by the text property test)', async (t) => {
  const a = await liveAccount();
  for (const reference of ['never-held', ' ', '\u0001']) {
    const r = await end(a, reference, 60);
    t.is(r.status, 404, `${JSON.stringify(reference)}: ${r.text}`);
    t.is(r.body.error.code, 'hold_not_found');
  }
});

test('a top-up that covers a call makes a waiting live customer ready: customer.ready is recorded', async (t) => {
  const a = await liveAccount();
  const { makeReadyCustomer } = await import('../helpers/calls.ts');
  // Ready in every way but money: readiness says insufficient_balance until the top-up.
  await topUp(a, 2_500);
  const c = await makeReadyCustomer(svc.url, a.liveApi);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 100 });
  for (let i = 0; i < 6; i++) await hold(a, c.id, `drain-${i}`); // 2,500 − 6 × 400 = 100 available
  t.deepEqual((await a.liveApi.get(`/v1/customers/${c.id}/readiness`)).body.blockers.map((b: any) => b.code), ['insufficient_balance']);
  const before = (await events(a, 'customer.ready')).length;
  await topUp(a, 2_500);
  t.true((await a.liveApi.get(`/v1/customers/${c.id}/readiness`)).body.ready_for_live_calls);
  const ready = await events(a, 'customer.ready');
  t.is(ready.length, before + 1, 'going ready again is recorded again');
  t.is(ready.at(-1).data.customer_id, c.id);
});

test('a hold is priced at the month’s position when it is taken: across a tier boundary, past it, and after the month turned', async (t) => {
  const a = await liveAccount();
  await topUp(a, 10_000);
  const c = await makeCustomer(a.liveApi);
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    const position = async (minutes: number, month: string) =>
      db.query(`UPDATE account_money SET minutes_used = $2, minutes_month = $3::date WHERE account_id = $1 AND mode = 'live'`, [a.id, minutes, month]);
    const thisMonth = `${svc.services.clock.now().toISOString().slice(0, 7)}-01`;
    await position(4_990, thisMonth);
    t.is((await hold(a, c.id, 'across')).body.hold.amount_cents, 10 * 20 + 10 * 18, 'ten minutes at 20 cents, ten at 18');
    await position(5_000, thisMonth);
    t.is((await hold(a, c.id, 'past')).body.hold.amount_cents, 20 * 18);
    // 90,000 minutes counted in an earlier month: this month starts again at the first tier.
    await position(90_000, '2000-01-01');
    t.is((await hold(a, c.id, 'new-month')).body.hold.amount_cents, 20 * 20);
    for (const ref of ['across', 'past', 'new-month']) await end(a, ref, 0);
  } finally {
    await db.end();
  }
});

test.serial('settlements racing on a nearly spent bonus take bonus only up to what is left, the rest from cash (issue 10 §1)', async (t) => {
  // Live account, 50,000 top-up with a 1,500 bonus; three 20-minute calls spend 1,200 of it.
  const a = await liveAccount();
  await topUp(a, 50_000);
  const c = await makeCustomer(a.liveApi);
  for (const ref of ['spend-1', 'spend-2', 'spend-3']) {
    t.true((await hold(a, c.id, ref)).body.ok);
    await end(a, ref, 1_200);
  }
  t.is((await a.liveApi.get('/v1/balance')).body.bonus_cents, 300);
  t.true((await hold(a, c.id, 'first')).body.ok);
  t.true((await hold(a, c.id, 'second')).body.ok);

  // The first settlement holds the money row while the second one's statement starts and waits
  // for it: the second must read the bonus left after the first, not the bonus it saw before.
  const { withTransaction } = await import('../../db/pool.ts');
  const { createMoneyWriter } = await import('../../money/writer.ts');
  const { readinessFollowsMoney } = await import('../../actors/customer/readiness-check.ts');
  const { settleCall, endCall } = createMoneyWriter(readinessFollowsMoney);
  const db = new pg.Pool({ connectionString: svc.databaseUrl, max: 4 });
  try {
    const now = svc.services.clock.now();
    let second: Promise<unknown> | undefined;
    await withTransaction(db, async (client) => {
      await settleCall(client, { accountId: a.id, reference: 'first', durationSeconds: 600, now }); // 200 cents, all bonus
      second = endCall(db, { accountId: a.id, reference: 'second', durationSeconds: 1_200, now }); // 400 cents
      // Let the second statement reach the row lock before the first commits.
      for (let i = 0; i < 50; i++) {
        const { rows } = await db.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('tuple', 'transactionid')`);
        if (rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const r = (await second) as { outcome: string; charged_cents: number };
    t.like(r, { outcome: 'settled', charged_cents: 400 });
    const lines = (await db.query(`SELECT reference, amount_cents, bonus_cents, cash_cents FROM ledger_entries WHERE account_id = $1 AND reference IN ('first', 'second') ORDER BY seq`, [a.id])).rows;
    t.deepEqual(lines, [
      { reference: 'first', amount_cents: -200, bonus_cents: -200, cash_cents: 0 },
      { reference: 'second', amount_cents: -400, bonus_cents: -100, cash_cents: -300 },
    ]);
    const b = (await a.liveApi.get('/v1/balance')).body;
    t.like(b, { bonus_cents: 0, reserved_cents: 0, paid_cents: 50_000 - 300 });
  } finally {
    await db.end();
  }
});

test('balance.low zero fires when no call can start: the spendable balance below one call\'s hold (issue 10 §3)', async (t) => {
  const a = await liveAccount();
  await topUp(a, 2_500); // 25 % is 625, 10 % is 250; one call holds 400
  const c = await makeCustomer(a.liveApi);
  for (let i = 0; i < 5; i++) {
    t.true((await hold(a, c.id, `z${i}`)).body.ok);
    await end(a, `z${i}`, 1_200);
  }
  t.like((await a.liveApi.get('/v1/balance')).body, { available_cents: 500, low_balance: 'below_25_percent' });
  t.deepEqual((await events(a, 'balance.low')).map((e: any) => e.data.low_balance), ['below_25_percent']);
  // One more call fits; while it runs, 100 cents are left: no further call can start.
  t.true((await hold(a, c.id, 'z5')).body.ok);
  t.like((await a.liveApi.get('/v1/balance')).body, { available_cents: 100, low_balance: 'zero' });
  const refused = await hold(a, c.id, 'z6');
  t.like(refused.body, { ok: false, reason: 'insufficient_balance' });
  await end(a, 'z5', 1_200);
  const after = (await a.liveApi.get('/v1/balance')).body;
  t.like(after, { available_cents: 100, balance_cents: 100, low_balance: 'zero' });
  const lows = await events(a, 'balance.low');
  t.deepEqual(lows.map((e: any) => e.data.low_balance), ['below_25_percent', 'below_10_percent', 'zero'], 'each stage once, zero included');
  // A top-up lifts it again.
  await topUp(a, 2_500);
  t.is((await a.liveApi.get('/v1/balance')).body.low_balance, 'ok');
});

test('customer.ready and balance.low carry what the matching GET returns at that moment (issue 10 §2)', async (t) => {
  const a = await liveAccount();
  const { makeReadyCustomer } = await import('../helpers/calls.ts');
  await topUp(a, 10_000); // 25 % is 2,500: one step below it crosses only that threshold
  const c = await makeReadyCustomer(svc.url, a.liveApi);
  const ready = (await events(a, 'customer.ready')).filter((e: any) => e.data.customer_id === c.id);
  t.is(ready.length, 1);
  t.deepEqual(ready[0].data, (await a.liveApi.get(`/v1/customers/${c.id}/readiness`)).body, 'customer.ready is GET readiness');
  // Spend down to under a quarter and over a tenth; compare the event with GET right after the
  // step that recorded it (a hold or an end).
  let compared = 0;
  const step = async (what: () => Promise<unknown>) => {
    const before = (await events(a, 'balance.low')).length;
    await what();
    const lows = await events(a, 'balance.low');
    if (lows.length > before) {
      t.is(lows.length, before + 1, 'one threshold per step here');
      t.deepEqual(lows.at(-1).data, (await a.liveApi.get('/v1/balance')).body, 'balance.low is GET /v1/balance');
      compared++;
    }
  };
  for (let i = 0; i < 19; i++) {
    await step(() => hold(a, c.id, `eq-${i}`));
    await step(() => end(a, `eq-${i}`, 1_200));
  }
  t.is(compared, 1);
  const lows = await events(a, 'balance.low');
  t.is(lows.length, 1);
  t.is(lows[0].data.low_balance, 'below_25_percent');
});

test("a call's end claims its hold with the call's lock in one statement (lockCallForEnd) and settles with that claim, once; a second end finds no open hold and charges nothing", async (t) => {
  const a = await liveAccount();
  await topUp(a, 50_000);
  const c = await makeCustomer(a.liveApi);
  const { withTransaction } = await import('../../db/pool.ts');
  const { createMoneyWriter } = await import('../../money/writer.ts');
  const { readinessFollowsMoney } = await import('../../actors/customer/readiness-check.ts');
  const money = createMoneyWriter(readinessFollowsMoney);
  const db = new pg.Pool({ connectionString: svc.databaseUrl, max: 3 });
  try {
    // A dialled call whose hold's reference is its id, as the dialler starts it.
    const { rows } = await db.query(
      `INSERT INTO calls (account_id, mode, customer_id, to_e164, to_country, phone_input, status, dial_before, next_attempt_at, dialed_at, created_at, updated_at)
       VALUES ($1, 'live', $2, '+12025550177', 'US', '+12025550177', 'in_progress', now() + interval '1 day', now(), now(), now(), now()) RETURNING id`,
      [a.id, c.id],
    );
    const callId: string = rows[0].id;
    t.true((await hold(a, c.id, callId)).body.ok);
    const before = (await a.liveApi.get('/v1/balance')).body;
    const now = svc.services.clock.now();
    const nowait = (sql: string) => db.query(sql, [callId, a.id]).then(() => 'free', (err: Error) => (/could not obtain lock/.test(err.message) ? 'locked' : err.message));
    const first = await withTransaction(db as never, async (client) => {
      const locked = await money.lockCallForEnd(client, callId);
      t.is(locked?.call.id, callId);
      t.like(locked?.claim?.hold, { reference: callId, status: 'open', account_id: a.id });
      t.like(locked?.claim?.money, { account_id: a.id, mode: 'live', balance_cents: before.balance_cents, reserved_cents: before.reserved_cents, open_calls: 1 });
      // The call, its hold and the account's money row are all locked by that one statement.
      t.is(await nowait(`SELECT 1 FROM calls WHERE id = $1 AND $2::uuid IS NOT NULL FOR NO KEY UPDATE NOWAIT`), 'locked');
      t.is(await nowait(`SELECT 1 FROM holds WHERE reference = $1::text AND account_id = $2 FOR NO KEY UPDATE NOWAIT`), 'locked');
      t.is(await nowait(`SELECT 1 FROM account_money WHERE $1::uuid IS NOT NULL AND account_id = $2 AND mode = 'live' FOR NO KEY UPDATE NOWAIT`), 'locked');
      return money.settleCall(client, { accountId: a.id, reference: callId, durationSeconds: 65, now }, locked!);
    });
    t.like(first, { outcome: 'settled', minutes: 2, charged_cents: 40 });
    const second = await withTransaction(db as never, async (client) => {
      const locked = await money.lockCallForEnd(client, callId);
      t.is(locked?.claim, null);
      return money.settleCall(client, { accountId: a.id, reference: callId, durationSeconds: 65, now }, locked!);
    });
    t.like(second, { outcome: 'already_settled', charged_cents: 40 });
    const lines = (await db.query(`SELECT amount_cents FROM ledger_entries WHERE account_id = $1 AND reference = $2`, [a.id, callId])).rows;
    t.deepEqual(lines, [{ amount_cents: -40 }]);
    t.like((await a.liveApi.get('/v1/balance')).body, { balance_cents: before.balance_cents - 40, reserved_cents: 0 });
  } finally {
    await db.end();
  }
});
