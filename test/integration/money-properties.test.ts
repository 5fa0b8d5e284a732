import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import test from 'ava';
import fc from 'fast-check';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { consoleClient, makeAccount, makeCustomer } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { holdRefusal, type RefusalReason } from '../../actors/account/hold-rules.ts';
import { billableMinutes, callReserveCents, priceMinutes, topUpBonusCents } from '../../actors/account/pricing.ts';
import type { Mode } from '../../runtime/types.ts';

/*
 * Properties of the money as a whole, over random sequences of operations against the real
 * service and PostgreSQL. The test clock is shared by the whole service, so every test here is
 * serial and only this file moves it that far.
 */

let svc: TestService;
let db: pg.Client;
test.before(async () => {
  // The periodic jobs stay out of the way: the sequences run them when they choose.
  svc = await startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: String(24 * 3_600_000) });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await consoleClient(svc.url).post('/console/v1/languages/en-US/certify');
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

const REASONS: RefusalReason[] = [
  'insufficient_balance',
  'spend_cap_daily',
  'spend_cap_monthly',
  'customer_spend_cap_daily',
  'customer_spend_cap_monthly',
  'concurrency_limit',
];

function must<T = any>(reply: { status: number; body: T; text: string }, what: string, status = 200): T {
  if (reply.status !== status) throw new Error(`${what}: ${reply.status} ${reply.text}`);
  return reply.body;
}

/** Every ledger line of the database, id → its whole row as JSON text. */
async function ledgerSnapshot(): Promise<Map<string, string>> {
  const { rows } = await db.query(`SELECT id, to_jsonb(l)::text AS row FROM ledger_entries l`);
  return new Map(rows.map((r) => [r.id as string, r.row as string]));
}

/** Every line of `before` is still there, byte for byte. */
function assertUnchanged(before: Map<string, string>, after: Map<string, string>, what: string) {
  for (const [id, row] of before) {
    const now = after.get(id);
    assert.ok(now !== undefined, `line ${id} disappeared during ${what}`);
    assert.equal(now, row, `line ${id} changed during ${what}`);
  }
}

async function assertInvariants(what: string) {
  const violations = await checkMoneyInvariants(svc.databaseUrl);
  assert.deepEqual(violations, [], `money invariants after ${what}`);
}

/** Takes a live customer through every readiness gate, as the service and the customer would. */
async function takeLive(account: Awaited<ReturnType<typeof makeAccount>>, customerId: string) {
  const con = account.console;
  const live = account.liveApi!;
  must(await con.post(`/console/v1/customers/${customerId}/script/certify`), 'certify script');
  must(await live.post(`/v1/customers/${customerId}/provisioning`, { steps: ['number'] }), 'provisioning', 202);
  const number = `+1202${crypto.randomInt(1_000_000, 9_999_999)}`;
  must(await con.post(`/console/v1/customers/${customerId}/numbers`, { phone_number: number }), 'assign number');
  const link = must(await live.post(`/v1/customers/${customerId}/onboarding_link`), 'onboarding link', 201);
  const accepted = await call(svc.url, 'POST', new URL(link.url).pathname, {
    rawBody: new URLSearchParams({ accepted_by: 'Jane Doe', agree: 'yes' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  if (accepted.status !== 200) throw new Error(`accept terms: ${accepted.status}`);
  const readiness = must(await live.get(`/v1/customers/${customerId}/readiness`), 'readiness');
  if (!readiness.ready_for_live_calls) throw new Error(`customer not ready: ${JSON.stringify(readiness.blockers)}`);
}

// — property 1: random sequences keep the books balanced and the ledger unchanged —

type Op =
  | { kind: 'top_up'; amount: number }
  | { kind: 'start'; customer: number }
  | { kind: 'end'; pick: number; seconds: number }
  | { kind: 'refund'; amount: number; customer: number | null }
  | { kind: 'advance'; seconds: number }
  | { kind: 'next_month'; minutes: number }
  | { kind: 'job'; name: 'release_holds' | 'expire_bonuses' | 'close_month' }
  | { kind: 'auto_top_up'; threshold: number | null; amount: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('top_up' as const), amount: fc.oneof(fc.integer({ min: 2_500, max: 300_000 }), fc.constantFrom(2_500, 49_999, 50_000, 250_000, 300_000)) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('start' as const), customer: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('end' as const), pick: fc.nat(), seconds: fc.oneof(fc.integer({ min: 0, max: 1_500 }), fc.constantFrom(0, 1, 60, 61, 1_199, 1_200, 1_201)) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('refund' as const), amount: fc.integer({ min: 1, max: 50_000 }), customer: fc.option(fc.nat(), { nil: null }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      seconds: fc.oneof(fc.integer({ min: 60, max: 3_600 }), fc.integer({ min: 3_600, max: 86_400 }), fc.integer({ min: 86_400, max: 40 * 86_400 })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('next_month' as const), minutes: fc.integer({ min: 0, max: 120 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('job' as const), name: fc.constantFrom('release_holds' as const, 'expire_bonuses' as const, 'close_month' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('auto_top_up' as const), threshold: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: null, freq: 3 }), amount: fc.integer({ min: 2_500, max: 10_000 }) }) },
);

test.serial('property: random top-ups, calls, refunds, clock moves and jobs keep every money invariant, and no line ever changes', async (t) => {
  const con = consoleClient(svc.url);
  const seen = new Map<string, number>();
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.boolean(), { minLength: 2, maxLength: 3 }), fc.array(opArb, { minLength: 5, maxLength: 40 }), async (liveFlags, ops) => {
      runs++;
      const account = await makeAccount(svc.url, { live: true });
      const accountId = account.id;
      const ask = svc.services.accounts.ask.bind(svc.services.accounts);
      // A first top-up, so customers can pass readiness; some customers are taken live, some not.
      must(await account.console.post(`/console/v1/accounts/${accountId}/top_ups`, { amount_cents: 2_500 }), 'first top-up', 201);
      const customers: string[] = [];
      for (const takenLive of liveFlags) {
        const c = must(await account.liveApi!.post('/v1/customers', { name: 'Bright Dental', country: 'US' }), 'customer', 201);
        if (takenLive) await takeLive(account, c.id);
        customers.push(c.id);
      }
      /** Holds started by this sequence, with what we know of them. */
      const holds: { reference: string; amount: number; ended: boolean; charged: number | null }[] = [];
      let before = await ledgerSnapshot();
      for (const [i, op] of ops.entries()) {
        const what = `op ${i} ${JSON.stringify(op)}`;
        seen.set(op.kind === 'job' ? op.name : op.kind, (seen.get(op.kind === 'job' ? op.name : op.kind) ?? 0) + 1);
        switch (op.kind) {
          case 'top_up': {
            const r = await ask(accountId, { type: 'top_up', amountCents: op.amount, paymentReference: null });
            assert.equal(r.lines[0].amount_cents, op.amount);
            assert.equal(r.lines.length, topUpBonusCents(op.amount) > 0 ? 2 : 1, what);
            break;
          }
          case 'start': {
            const reference = `call_${crypto.randomUUID()}`;
            const r = await ask(accountId, { type: 'start_call', mode: 'live', customerId: customers[op.customer % customers.length], reference });
            if (r.ok) {
              assert.equal(r.hold.reference, reference);
              holds.push({ reference, amount: Number(r.hold.amount_cents), ended: false, charged: null });
            } else {
              assert.ok(REASONS.includes(r.reason), `${what}: reason ${r.reason}`);
            }
            break;
          }
          case 'end': {
            if (holds.length === 0) break;
            const hold = holds[op.pick % holds.length];
            const { rows } = await db.query(`SELECT status, charged_cents FROM holds WHERE account_id = $1 AND reference = $2`, [accountId, hold.reference]);
            const status = rows[0].status as string;
            const r = await ask(accountId, { type: 'end_call', reference: hold.reference, durationSeconds: op.seconds });
            const expected = status === 'open' ? 'settled' : status === 'released' && rows[0].charged_cents === null ? 'late' : 'already_settled';
            assert.equal(r.outcome, expected, `${what}: hold was ${status}`);
            assert.ok(r.charged_cents >= 0 && r.charged_cents <= hold.amount, `${what}: charged ${r.charged_cents} of a ${hold.amount} hold`);
            if (expected === 'already_settled') {
              assert.equal(r.charged_cents, hold.charged ?? r.charged_cents, `${what}: a second end report reports the first charge`);
            } else {
              assert.equal(r.minutes, billableMinutes(op.seconds));
              if (op.seconds === 0) assert.equal(r.charged_cents, 0);
              hold.ended = true;
              hold.charged = r.charged_cents;
            }
            break;
          }
          case 'refund': {
            const customerId = op.customer === null ? null : customers[op.customer % customers.length];
            const r = await ask(accountId, { type: 'refund', amountCents: op.amount, customerId, reference: null, description: null });
            assert.equal(r.line.amount_cents, op.amount);
            break;
          }
          case 'advance':
            must(await con.post('/console/v1/test_clock/advance', { seconds: op.seconds }), 'advance');
            break;
          case 'next_month': {
            const now = svc.services.clock.now();
            const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) + op.minutes * 60_000;
            must(await con.post('/console/v1/test_clock/advance', { seconds: Math.ceil((next - now.getTime()) / 1000) }), 'advance');
            break;
          }
          case 'job':
            must(await con.post(`/console/v1/jobs/${op.name}/run`), op.name);
            break;
          case 'auto_top_up':
            if (op.threshold === null) must(await account.console.delete(`/console/v1/accounts/${accountId}/auto_top_up`), 'auto top-up off');
            else must(await account.console.put(`/console/v1/accounts/${accountId}/auto_top_up`, { threshold_cents: op.threshold, amount_cents: op.amount }), 'auto top-up');
            break;
        }
        const after = await ledgerSnapshot();
        assertUnchanged(before, after, what);
        before = after;
      }
      await assertInvariants(`${ops.length} operations on account ${accountId}`);
    }),
    { numRuns: 25, includeErrorInReport: true },
  );
  t.is(runs >= 25, true);
  // What the runs reached, so a weak sequence generator shows in the log.
  const { rows } = await db.query(`SELECT type, cause, count(*)::int AS n FROM ledger_entries GROUP BY type, cause ORDER BY type, cause`);
  t.log('operations', Object.fromEntries(seen), 'lines', rows.map((r) => `${r.type}/${r.cause}: ${r.n}`).join(', '));
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('the ledger refuses UPDATE and DELETE from any database client, and the lines stay as written', async (t) => {
  const account = await makeAccount(svc.url, { live: true });
  const top = must(await account.console.post(`/console/v1/accounts/${account.id}/top_ups`, { amount_cents: 50_000 }), 'top-up', 201);
  t.is(top.lines.length, 2, 'top-up and bonus lines');
  const [id] = top.lines.map((l: { id: string }) => l.id);
  const before = await ledgerSnapshot();
  const attempts: [string, unknown[]][] = [
    ['UPDATE ledger_entries SET amount_cents = amount_cents + 1, cash_cents = cash_cents + 1 WHERE id = $1', [id]],
    ['UPDATE ledger_entries SET description = description WHERE id = $1', [id]],
    ['UPDATE ledger_entries SET applied = applied, balance_after_cents = balance_after_cents WHERE account_id = $1', [account.id]],
    ['UPDATE ledger_entries SET reference = NULL', []],
    ['DELETE FROM ledger_entries WHERE id = $1', [id]],
    ['DELETE FROM ledger_entries WHERE account_id = $1', [account.id]],
    ['DELETE FROM ledger_entries', []],
  ];
  for (const [sql, params] of attempts) {
    await t.throwsAsync(db.query(sql, params), { message: /immutable/ }, sql);
  }
  // Inside a transaction too (the trigger is not a statement-level afterthought).
  await db.query('BEGIN');
  await t.throwsAsync(db.query('UPDATE ledger_entries SET amount_cents = 0 WHERE id = $1', [id]), { message: /immutable/ });
  await db.query('ROLLBACK');
  const after = await ledgerSnapshot();
  t.deepEqual([...after.entries()].sort(), [...before.entries()].sort());
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

// — property 2: the admission statement and holdRefusal agree —

interface Side {
  reserved: number;
  open: number;
  day: number;
  month: number;
  minutes: number;
}
interface ModelCustomer {
  id: string;
  mode: Mode;
  reserved: number;
  open: number;
  day: number;
  month: number;
  dailyCap: number | null;
  monthlyCap: number | null;
  max: number | null;
}

type Step =
  | { kind: 'top_up'; amount: number }
  | { kind: 'account_limits'; concurrent: number; daily: number | null; monthly: number | null }
  | { kind: 'customer_limits'; customer: number; daily: number | null; monthly: number | null; max: number | null }
  | { kind: 'start'; customer: number }
  | { kind: 'end'; pick: number; seconds: number };

const capArb = (max: number) => fc.option(fc.integer({ min: 0, max }), { nil: null, freq: 2 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('top_up' as const), amount: fc.constantFrom(2_500, 2_500, 3_000, 50_000) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('account_limits' as const), concurrent: fc.integer({ min: 0, max: 6 }), daily: capArb(4_000), monthly: capArb(8_000) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('customer_limits' as const), customer: fc.nat(), daily: capArb(3_000), monthly: capArb(5_000), max: fc.option(fc.integer({ min: 0, max: 8 }), { nil: null }) }),
  },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('start' as const), customer: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('end' as const), pick: fc.nat(), seconds: fc.integer({ min: 0, max: 1_500 }) }) },
);

test.serial('property: start_call succeeds exactly when holdRefusal of the facts set says so, and refuses with its reason', async (t) => {
  // Spend counts by UTC day: start at the beginning of a fresh day so no run straddles midnight.
  const now = svc.services.clock.now();
  const nextDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 1);
  must(await consoleClient(svc.url).post('/console/v1/test_clock/advance', { seconds: Math.ceil((nextDay - now.getTime()) / 1000) }), 'advance');
  const day = svc.services.clock.now().toISOString().slice(0, 10);

  const outcomes = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 30 }), async (steps) => {
      const account = await makeAccount(svc.url, { live: true });
      const accountId = account.id;
      const ask = svc.services.accounts.ask.bind(svc.services.accounts);
      const customers: ModelCustomer[] = [];
      for (const [mode, api] of [['live', account.liveApi!], ['live', account.liveApi!], ['test', account.api]] as const) {
        const c = await makeCustomer(api);
        customers.push({ id: c.id, mode, reserved: 0, open: 0, day: 0, month: 0, dailyCap: null, monthlyCap: null, max: null });
      }
      const apiOf = (c: ModelCustomer) => (c.mode === 'live' ? account.liveApi! : account.api);
      // The facts, as set by this test: account limits as created, no money, nothing running.
      let balance = 0;
      const sides: Record<Mode, Side> = { live: { reserved: 0, open: 0, day: 0, month: 0, minutes: 0 }, test: { reserved: 0, open: 0, day: 0, month: 0, minutes: 0 } };
      const limits = { concurrent: 10, daily: null as number | null, monthly: null as number | null };
      const holds: { reference: string; customer: ModelCustomer; amount: number; open: boolean }[] = [];
      const refusals: string[] = [];

      for (const [i, step] of steps.entries()) {
        const what = `step ${i} ${JSON.stringify(step)}`;
        switch (step.kind) {
          case 'top_up':
            must(await account.console.post(`/console/v1/accounts/${accountId}/top_ups`, { amount_cents: step.amount }), what, 201);
            balance += step.amount + topUpBonusCents(step.amount);
            break;
          case 'account_limits':
            must(
              await account.console.patch(`/console/v1/accounts/${accountId}/limits`, {
                concurrent_calls: step.concurrent,
                daily_spend_cap_cents: step.daily,
                monthly_spend_cap_cents: step.monthly,
              }),
              what,
            );
            Object.assign(limits, { concurrent: step.concurrent, daily: step.daily, monthly: step.monthly });
            break;
          case 'customer_limits': {
            const c = customers[step.customer % customers.length];
            must(await apiOf(c).patch(`/v1/customers/${c.id}/limits`, { daily_spend_cap_cents: step.daily, monthly_spend_cap_cents: step.monthly, max_concurrent_calls: step.max }), what);
            Object.assign(c, { dailyCap: step.daily, monthlyCap: step.monthly, max: step.max });
            break;
          }
          case 'start': {
            const c = customers[step.customer % customers.length];
            const side = sides[c.mode];
            const amount = callReserveCents(side.minutes);
            const expected = holdRefusal({
              mode: c.mode,
              amountCents: amount,
              availableCents: balance - sides.live.reserved,
              account: {
                reservedCents: side.reserved,
                openCalls: side.open,
                concurrentCalls: limits.concurrent,
                daySpendCents: side.day,
                monthSpendCents: side.month,
                dailyCapCents: limits.daily,
                monthlyCapCents: limits.monthly,
              },
              customer: {
                reservedCents: c.reserved,
                openCalls: c.open,
                maxConcurrentCalls: c.max,
                daySpendCents: c.day,
                monthSpendCents: c.month,
                dailyCapCents: c.dailyCap,
                monthlyCapCents: c.monthlyCap,
              },
            });
            const reference = `call_${i}`;
            const r = await ask(accountId, { type: 'start_call', mode: c.mode, customerId: c.id, reference });
            outcomes.set(r.ok ? 'ok' : r.reason, (outcomes.get(r.ok ? 'ok' : r.reason) ?? 0) + 1);
            assert.equal(r.ok ? null : r.reason, expected, `${what}: ${c.mode} customer; started ${JSON.stringify(r)}`);
            if (r.ok) {
              assert.equal(Number(r.hold.amount_cents), amount, `${what}: the hold is the longest call's price`);
              side.reserved += amount;
              side.open++;
              c.reserved += amount;
              c.open++;
              holds.push({ reference, customer: c, amount, open: true });
            } else {
              refusals.push(r.reason);
            }
            break;
          }
          case 'end': {
            if (holds.length === 0) break;
            const hold = holds[step.pick % holds.length];
            const side = sides[hold.customer.mode];
            const minutes = billableMinutes(step.seconds);
            const charge = Math.min(priceMinutes(side.minutes, minutes), hold.amount);
            const r = await ask(accountId, { type: 'end_call', reference: hold.reference, durationSeconds: step.seconds });
            if (!hold.open) {
              assert.equal(r.outcome, 'already_settled', what);
              break;
            }
            assert.equal(r.outcome, 'settled', what);
            assert.equal(r.charged_cents, charge, `${what}: charge`);
            hold.open = false;
            side.reserved -= hold.amount;
            side.open--;
            hold.customer.reserved -= hold.amount;
            hold.customer.open--;
            if (charge > 0) {
              if (hold.customer.mode === 'live') balance -= charge;
              side.day += charge;
              side.month += charge;
              side.minutes += minutes;
              hold.customer.day += charge;
              hold.customer.month += charge;
            }
            break;
          }
        }
      }
      // The facts the test set are the facts the service has.
      const live = must(await account.console.get(`/console/v1/accounts/${accountId}/balance?mode=live`), 'balance');
      assert.equal(live.balance_cents, balance, 'live balance');
      assert.equal(live.reserved_cents, sides.live.reserved, 'live reserved');
      const test = must(await account.console.get(`/console/v1/accounts/${accountId}/balance?mode=test`), 'balance');
      assert.equal(test.reserved_cents, sides.test.reserved, 'test reserved');
      // Every refusal is in the activity log, with its reason, in order.
      const activity = must(await account.console.get(`/console/v1/accounts/${accountId}/activity?limit=200`), 'activity');
      const logged = activity.data.filter((a: { kind: string }) => a.kind === 'call_start_refused').map((a: { reason: string }) => a.reason).reverse();
      assert.deepEqual(logged, refusals, 'activity log of refusals');
      await assertInvariants(`admission steps on account ${accountId}`);
    }),
    { numRuns: 30, includeErrorInReport: true },
  );
  t.is(svc.services.clock.now().toISOString().slice(0, 10), day, 'the runs stayed inside one UTC day');
  t.log('start_call outcomes', Object.fromEntries(outcomes));
  // Every reason was reached at least once by some run, or the property proved little.
  for (const reason of ['ok', ...REASONS]) t.true((outcomes.get(reason) ?? 0) > 0, `no start ended ${reason}`);
});
