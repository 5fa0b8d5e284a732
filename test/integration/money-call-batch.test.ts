import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import type { Client } from '../helpers/http.ts';
import { createMoneyWriter, type StartCallResult } from '../../money/writer.ts';
import { readinessFollowsMoney } from '../../actors/customer/readiness-check.ts';

/*
 * A dialler round's money starts of one account in one statement (money/writer/call-batch.ts
 * `startCalls`): each call is granted or refused exactly as `startCall` would grant or refuse it
 * asked alone, one after another in the round's order. Checked against twin accounts: the same
 * balance, ceilings, caps and running holds, one asked call by call, the other in one batch.
 */

let svc: TestService;
let pool: pg.Pool;
const money = createMoneyWriter(readinessFollowsMoney);
test.before(async () => {
  svc = await startTestService();
  pool = new pg.Pool({ connectionString: svc.databaseUrl, max: 4 });
});
test.after.always(async () => {
  await pool?.end();
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

type Live = TestAccount & { liveApi: Client };
interface Setup {
  topUpCents: number;
  concurrentCalls: number;
  accountDailyCap: number | null;
  customers: { maxConcurrent: number | null; dailyCap: number | null }[];
  /** Holds taken call by call before the batch: customer indexes. */
  running: number[];
  /** The round's calls in order: customer indexes. */
  calls: number[];
}

async function twin(s: Setup) {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: s.topUpCents });
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: s.concurrentCalls, daily_spend_cap_cents: s.accountDailyCap });
  const customers: string[] = [];
  for (const c of s.customers) {
    const customer = await makeCustomer(a.liveApi);
    await a.liveApi.patch(`/v1/customers/${customer.id}/limits`, { max_concurrent_calls: c.maxConcurrent, daily_spend_cap_cents: c.dailyCap });
    customers.push(customer.id);
  }
  const now = new Date();
  for (const [i, c] of s.running.entries()) await money.startCall(pool, { accountId: a.id, mode: 'live', customerId: customers[c], reference: `running-${i}`, now });
  return { a, customers, now };
}

const outcome = (r: PromiseSettledResult<StartCallResult> | StartCallResult) => {
  const v = 'status' in r ? (r.status === 'fulfilled' ? r.value : { ok: false as const, reason: String(r.reason) }) : r;
  return v.ok ? `ok ${v.hold.amount_cents}` : v.reason;
};

async function compare(t: any, s: Setup) {
  const alone = await twin(s);
  const batched = await twin(s);
  const one: string[] = [];
  for (const [i, c] of s.calls.entries()) {
    one.push(outcome(await money.startCall(pool, { accountId: alone.a.id, mode: 'live', customerId: alone.customers[c], reference: `call-${i}`, now: alone.now })));
  }
  const batch = (
    await money.startCalls(pool, { accountId: batched.a.id, mode: 'live', now: batched.now, calls: s.calls.map((c, i) => ({ customerId: batched.customers[c], reference: `call-${i}` })) })
  ).map(outcome);
  t.deepEqual(batch, one, JSON.stringify(s));
  const balance = async (x: Live) => {
    const b = (await x.liveApi.get('/v1/balance')).body;
    return { reserved: b.reserved_cents, available: b.available_cents, low: b.low_balance };
  };
  t.deepEqual(await balance(batched.a), await balance(alone.a));
  const refusals = async (x: Live) =>
    (await x.admin.get(`/admin/v1/accounts/${x.id}/activity?limit=200`)).body.data.filter((e: any) => e.kind === 'call_start_refused').map((e: any) => `${e.reference} ${e.reason}`).sort();
  t.deepEqual(await refusals(batched.a), await refusals(alone.a));
  return batch;
}

test('the balance runs out mid-batch: the first calls in order get the holds, the rest are refused insufficient_balance and logged', async (t) => {
  const batch = await compare(t, {
    topUpCents: 2_800, // 7 holds of 400
    concurrentCalls: 100,
    accountDailyCap: null,
    customers: [{ maxConcurrent: null, dailyCap: null }, { maxConcurrent: null, dailyCap: null }],
    running: [0, 1],
    calls: [0, 1, 0, 1, 0, 1, 0, 1],
  });
  t.deepEqual(batch, ['ok 400', 'ok 400', 'ok 400', 'ok 400', 'ok 400', 'insufficient_balance', 'insufficient_balance', 'insufficient_balance']);
});

test('the account and customer ceilings: a customer at its ceiling is refused, the account ceiling stops everyone after it', async (t) => {
  const batch = await compare(t, {
    topUpCents: 100_000,
    concurrentCalls: 6,
    accountDailyCap: null,
    customers: [{ maxConcurrent: 2, dailyCap: null }, { maxConcurrent: null, dailyCap: null }],
    running: [1],
    calls: [0, 0, 0, 1, 1, 1, 1, 0],
  });
  // One running and five taken fill the account's six; the customer's ceiling of two refuses its third.
  t.deepEqual(batch, ['ok 400', 'ok 400', 'concurrency_limit', 'ok 400', 'ok 400', 'ok 400', 'concurrency_limit', 'concurrency_limit']);
});

test('spend caps of the account and of a customer count the holds the batch took before each call', async (t) => {
  const batch = await compare(t, {
    topUpCents: 100_000,
    concurrentCalls: 100,
    accountDailyCap: 2_000,
    customers: [{ maxConcurrent: null, dailyCap: 800 }, { maxConcurrent: null, dailyCap: null }],
    running: [],
    calls: [0, 0, 0, 1, 1, 1, 1],
  });
  t.deepEqual(batch, ['ok 400', 'ok 400', 'customer_spend_cap_daily', 'ok 400', 'ok 400', 'ok 400', 'spend_cap_daily']);
});

test('a customer of another account in the batch is refused alone (customer_not_found); the others get their holds', async (t) => {
  const { a, customers, now } = await twin({ topUpCents: 10_000, concurrentCalls: 100, accountDailyCap: null, customers: [{ maxConcurrent: null, dailyCap: null }], running: [], calls: [] });
  const stranger = await makeCustomer(((await makeAccount(svc.url, { live: true })) as Live).liveApi);
  const results = await money.startCalls(pool, {
    accountId: a.id,
    mode: 'live',
    now,
    calls: [
      { customerId: customers[0], reference: 'x-1' },
      { customerId: stranger.id, reference: 'x-2' },
      { customerId: customers[0], reference: 'x-3' },
    ],
  });
  t.deepEqual(results.map((r) => (r.status === 'fulfilled' ? outcome(r.value) : (r.reason as { code?: string }).code)), ['ok 400', 'customer_not_found', 'ok 400']);
});

test('random rounds: the batch grants and refuses as the calls asked one by one would', async (t) => {
  let seed = 25;
  const rand = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % n;
  };
  for (let run = 0; run < 6; run++) {
    const customers = Array.from({ length: 1 + rand(3) }, () => ({ maxConcurrent: rand(3) === 0 ? null : rand(5), dailyCap: rand(3) === 0 ? null : 400 * rand(6) }));
    await compare(t, {
      topUpCents: 2_500 + 400 * rand(12),
      concurrentCalls: rand(10),
      accountDailyCap: rand(2) === 0 ? null : 400 * rand(12),
      customers,
      running: Array.from({ length: rand(3) }, () => rand(customers.length)),
      calls: Array.from({ length: 2 + rand(12) }, () => rand(customers.length)),
    });
  }
});
