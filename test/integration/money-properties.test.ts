import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import test from 'ava';
import fc from 'fast-check';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { adminClient, makeAccount, makeCustomer } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { loadDncRegistries } from '../helpers/dnc-registries.ts';
import { holdRefusal, type RefusalReason } from '../../money/rules/hold-rules.ts';
import { billableMinutes, callReserveCents, priceMinutes, topUpBonusCents } from '../../money/rules/pricing.ts';
import type { Mode } from '../../runtime/types.ts';
import { withTransaction } from '../../db/pool.ts';
import { createMoneyWriter } from '../../money/writer.ts';
import { readinessFollowsMoney } from '../../actors/customer/readiness-check.ts';
import { TestClock } from '../../runtime/clock.ts';

/*
 * Properties of the money as a whole, over random sequences of operations against the real
 * service and PostgreSQL. The test clock is shared by the whole service, so every test here is
 * serial and only this file moves it that far.
 */

let svc: TestService;
let db: pg.Pool;
/** Real time, on which bonus credit expires: the sequences move it with the test clock. */
const wall = new TestClock();
test.before(async () => {
  // The periodic jobs stay out of the way: the sequences run them when they choose.
  svc = await startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: String(24 * 3_600_000) }, { realClock: wall });
  db = new pg.Pool({ connectionString: svc.databaseUrl, max: 4 });
  await adminClient(svc.url).post('/admin/v1/languages/en-US/certify');
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

/** Runs per property; for a longer hunt: MONEY_PROPERTY_RUNS=150 node --import tsx test/run.ts --timeout=15m <this file>. */
const RUNS = Number(process.env.MONEY_PROPERTY_RUNS ?? 25);

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

/** Moves the service's test clock to the start of the next UTC month, plus `minutes`. */
/** Time passing: the test clock (schedules) and real time (bonus credit's expiry) move together. */
async function advanceBoth(seconds: number) {
  wall.advance(seconds * 1000);
  must(await adminClient(svc.url).post('/admin/v1/test_clock/advance', { seconds }), 'advance');
}

async function toNextMonth(minutes: number) {
  const now = svc.services.clock.now();
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) + minutes * 60_000;
  must(await adminClient(svc.url).post('/admin/v1/test_clock/advance', { seconds: Math.ceil((next - now.getTime()) / 1000) }), 'advance');
}

async function assertInvariants(what: string) {
  const violations = await checkMoneyInvariants(svc.databaseUrl);
  assert.deepEqual(violations, [], `money invariants after ${what}`);
}

/** Takes a live customer through every readiness gate, as the service and the customer would. */
async function takeLive(account: Awaited<ReturnType<typeof makeAccount>>, customerId: string) {
  const con = account.admin;
  const live = account.liveApi!;
  // The clock moves in these properties: the US registry is (re)loaded when older than 31 days.
  await loadDncRegistries(con, 'US');
  must(await con.post(`/admin/v1/customers/${customerId}/script/certify`), 'certify script');
  // A number bought by hand (assign-number): the service's own rental would charge its first
  // month, and these properties count every cent.
  const number = `+1202${crypto.randomInt(1_000_000, 9_999_999)}`;
  must(await con.post(`/admin/v1/customers/${customerId}/numbers`, { phone_number: number }), 'assign number');
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

type JobName = 'release_holds' | 'expire_bonuses' | 'close_month';
type Op =
  | { kind: 'top_up'; amount: number }
  | { kind: 'start'; customer: number; test: boolean }
  | { kind: 'end'; pick: number; open: boolean; seconds: number }
  | { kind: 'refund'; amount: number; customer: number | null }
  | { kind: 'advance'; seconds: number }
  | { kind: 'next_month'; minutes: number }
  | { kind: 'job'; name: JobName }
  | { kind: 'auto_top_up'; threshold: number | null; amount: number }
  /**
   * A period of an item's recurring charge, as the numbers and websites rooms ask the writer: a new
   * item's first period, an item's next period, or (`again`) a period already charged, as a second
   * run or process would. `copies` charges of it at once (in a burst).
   */
  | { kind: 'rent'; item: number; fresh: boolean; hosting: boolean; test: boolean; customer: number; again: boolean; copies: number }
  /** A website's build fee (a one-off item charge). */
  | { kind: 'build'; customer: number; test: boolean }
  /** A charged build never delivered: its fee back, once, as the websites room does. */
  | { kind: 'refund_build'; pick: number }
  /** Several starts, ends, hold releases and item charges at once, as concurrent calls, the sweeper and the rooms' jobs would. */
  | { kind: 'burst'; ops: (Extract<Op, { kind: 'start' | 'end' | 'rent' | 'build' | 'refund_build' }> | { kind: 'job'; name: 'release_holds' })[] };

const startArb = fc.record({ kind: fc.constant('start' as const), customer: fc.nat(), test: fc.integer({ min: 0, max: 4 }).map((n) => n === 0) });
const endArb = fc.record({
  kind: fc.constant('end' as const),
  pick: fc.nat(),
  open: fc.boolean(),
  seconds: fc.oneof(fc.integer({ min: 0, max: 1_500 }), fc.constantFrom(0, 1, 60, 61, 1_199, 1_200, 1_201)),
});
const rentArb = fc.record({
  kind: fc.constant('rent' as const),
  item: fc.nat(),
  fresh: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  hosting: fc.boolean(),
  test: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  customer: fc.nat(),
  again: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  copies: fc.integer({ min: 1, max: 3 }),
});
const buildArb = fc.record({ kind: fc.constant('build' as const), customer: fc.nat(), test: fc.integer({ min: 0, max: 4 }).map((n) => n === 0) });
const refundBuildArb = fc.record({ kind: fc.constant('refund_build' as const), pick: fc.nat() });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('top_up' as const), amount: fc.oneof(fc.integer({ min: 2_500, max: 300_000 }), fc.constantFrom(2_500, 49_999, 50_000, 250_000, 300_000)) }) },
  { weight: 6, arbitrary: startArb },
  { weight: 6, arbitrary: endArb },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('refund' as const), amount: fc.integer({ min: 1, max: 50_000 }), customer: fc.option(fc.nat(), { nil: null }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      seconds: fc.oneof(fc.integer({ min: 60, max: 3_600 }), fc.integer({ min: 3_600, max: 86_400 }), fc.integer({ min: 86_400, max: 40 * 86_400 })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('next_month' as const), minutes: fc.integer({ min: 0, max: 120 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('job' as const), name: fc.constantFrom<JobName>('release_holds', 'expire_bonuses', 'close_month') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('auto_top_up' as const), threshold: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: null, freq: 3 }), amount: fc.integer({ min: 2_500, max: 10_000 }) }) },
  { weight: 3, arbitrary: rentArb },
  { weight: 1, arbitrary: buildArb },
  { weight: 1, arbitrary: refundBuildArb },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('burst' as const),
      ops: fc.array(fc.oneof(startArb, endArb, endArb, rentArb, buildArb, refundBuildArb, fc.constant({ kind: 'job' as const, name: 'release_holds' as const })), {
        minLength: 2,
        maxLength: 6,
      }),
    }),
  },
);

/** A month's rent of a number and of a website's hosting, and a website's build fee (the writer charges what it is told). */
const RENT_CENTS = { number: 1_500, website_hosting: 2_000 };
const BUILD_FEE_CENTS = 35_000;

/** Sequences that reach the edges for sure: a renewal and a build fee the balance covers only if running calls' holds are ignored, a period charged three times at once. */
const ITEM_EXAMPLES: [boolean[], Op[]][] = [
  [
    [true, true],
    [
      { kind: 'start', customer: 0, test: false },
      { kind: 'start', customer: 1, test: false },
      { kind: 'start', customer: 0, test: false },
      { kind: 'rent', item: 0, fresh: true, hosting: false, test: false, customer: 0, again: false, copies: 1 },
      { kind: 'build', customer: 1, test: false },
      { kind: 'end', pick: 0, open: true, seconds: 0 },
      { kind: 'end', pick: 0, open: true, seconds: 0 },
      { kind: 'end', pick: 0, open: true, seconds: 0 },
      { kind: 'rent', item: 0, fresh: true, hosting: true, test: false, customer: 0, again: false, copies: 1 },
      { kind: 'rent', item: 0, fresh: false, hosting: true, test: false, customer: 0, again: true, copies: 1 },
      { kind: 'top_up', amount: 50_000 },
      { kind: 'build', customer: 1, test: false },
      // 35,000 on the balance, 400 of it held by a running call: the build fee is refused.
      { kind: 'top_up', amount: 18_000 },
      { kind: 'start', customer: 1, test: false },
      { kind: 'build', customer: 1, test: false },
      { kind: 'burst', ops: [{ kind: 'rent', item: 0, fresh: false, hosting: false, test: false, customer: 0, again: false, copies: 3 }, { kind: 'refund_build', pick: 0 }, { kind: 'start', customer: 1, test: false }] },
      { kind: 'refund_build', pick: 0 },
    ],
  ],
];

const END_OUTCOMES = ['settled', 'late', 'already_settled'];

test.serial('property: random top-ups, calls, refunds, rent, hosting, build fees, clock moves and jobs keep every money invariant, and no line ever changes', async (t) => {
  const con = adminClient(svc.url);
  const ask = svc.services.accounts.ask.bind(svc.services.accounts);
  // The rooms' money path: the numbers and websites rooms ask the writer in transactions of their own, beside the account actor.
  const money = createMoneyWriter(readinessFollowsMoney, wall);
  const conns = new pg.Pool({ connectionString: svc.databaseUrl, max: 8 });
  t.teardown(() => conns.end());
  const itemOutcomes = new Map<string, number>();
  const seen = new Map<string, number>();
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.boolean(), { minLength: 2, maxLength: 3 }), fc.array(opArb, { minLength: 5, maxLength: 80, size: 'max' }), async (liveFlags, ops) => {
      runs++;
      const account = await makeAccount(svc.url, { live: true });
      const accountId = account.id;
      // A first top-up, so customers can pass readiness; some customers are taken live, some not.
      must(await account.admin.post(`/admin/v1/accounts/${accountId}/top_ups`, { amount_cents: 2_500 }), 'first top-up', 201);
      const customers: string[] = [];
      for (const takenLive of liveFlags) {
        const c = await makeCustomer(account.liveApi!);
        if (takenLive) await takeLive(account, c.id);
        customers.push(c.id);
      }
      // Test-mode calls are priced on the same account and must never move its money.
      const testCustomer = (await makeCustomer(account.api)).id;
      /** Calls started by this sequence, with what we know of them. */
      const holds: { reference: string; amount: number; ended: boolean; charged: number | null }[] = [];

      const start = async (op: Extract<Op, { kind: 'start' }>, what: string) => {
        const reference = `call_${crypto.randomUUID()}`;
        const mode: Mode = op.test ? 'test' : 'live';
        const customerId = op.test ? testCustomer : customers[op.customer % customers.length];
        const r = await ask(accountId, { type: 'start_call', mode, customerId, reference });
        if (r.ok) {
          assert.equal(r.hold.reference, reference);
          assert.equal(r.hold.mode, mode);
          holds.push({ reference, amount: Number(r.hold.amount_cents), ended: false, charged: null });
        } else {
          assert.ok(REASONS.includes(r.reason), `${what}: reason ${r.reason}`);
        }
      };
      /** Ends a call; `alone` when nothing else runs, so the outcome is known from the hold beforehand. */
      const end = async (op: Extract<Op, { kind: 'end' }>, what: string, alone: boolean) => {
        // Mostly a running call; otherwise any call, ended or not.
        const candidates = op.open && holds.some((h) => !h.ended) ? holds.filter((h) => !h.ended) : holds;
        if (candidates.length === 0) return null;
        const hold = candidates[op.pick % candidates.length];
        const { rows } = await db.query(
          `SELECT h.status, h.charged_cents, h.mode,
                  (SELECT COALESCE(sum(remaining_cents), 0)::int FROM bonus_grants g
                    WHERE g.account_id = h.account_id AND remaining_cents > 0 AND expires_at > $3) AS spendable_bonus
             FROM holds h WHERE account_id = $1 AND reference = $2`,
          [accountId, hold.reference, wall.now()],
        );
        const r = await ask(accountId, { type: 'end_call', reference: hold.reference, durationSeconds: op.seconds });
        assert.ok(END_OUTCOMES.includes(r.outcome), `${what}: outcome ${r.outcome}`);
        assert.ok(r.charged_cents >= 0 && r.charged_cents <= hold.amount, `${what}: charged ${r.charged_cents} of a ${hold.amount} hold`);
        if (alone) {
          const status = rows[0].status as string;
          const expected = status === 'open' ? 'settled' : status === 'released' && rows[0].charged_cents === null ? 'late' : 'already_settled';
          assert.equal(r.outcome, expected, `${what}: the hold was ${status}`);
          if (r.outcome !== 'already_settled' && r.charged_cents > 0) {
            // Bonus credit is spent before cash (live only; test lines are priced, never paid).
            const line = await db.query(`SELECT amount_cents, bonus_cents, cash_cents FROM ledger_entries WHERE account_id = $1 AND reference = $2 AND cause = 'call'`, [
              accountId,
              hold.reference,
            ]);
            assert.equal(line.rows.length, 1, `${what}: one call line`);
            const fromBonus = rows[0].mode === 'live' ? Math.min(r.charged_cents, rows[0].spendable_bonus) : 0;
            assert.deepEqual(line.rows[0], { amount_cents: 0 - r.charged_cents, bonus_cents: 0 - fromBonus, cash_cents: fromBonus - r.charged_cents }, `${what}: bonus first`);
          }
        }
        if (r.outcome === 'already_settled') {
          if (alone && hold.charged !== null) assert.equal(r.charged_cents, hold.charged, `${what}: a repeated end report answers the first charge`);
        } else {
          assert.equal(r.minutes, billableMinutes(op.seconds));
          if (op.seconds === 0) assert.equal(r.charged_cents, 0);
          hold.ended = true;
          hold.charged = r.charged_cents;
        }
        return { reference: hold.reference, outcome: r.outcome };
      };

      /** Items of this sequence charged by the period, with the periods claimed and the next one due. */
      const items: { id: string; item: 'number' | 'website_hosting'; mode: Mode; customerId: string; claimed: string[]; next: string }[] = [];
      /** Build fees charged, and whether given back. */
      const builds: { reference: string; mode: Mode; customerId: string; refunded: boolean }[] = [];
      const count = (label: string) => itemOutcomes.set(label, (itemOutcomes.get(label) ?? 0) + 1);
      const customerOf = (test: boolean, pick: number) => (test ? testCustomer : customers[pick % customers.length]);
      /** The live money row as it is now: spendable money is the balance less what running calls hold. */
      const moneyRow = async () =>
        (
          await db.query(
            `SELECT balance_cents::int AS balance, reserved_cents::int AS reserved, auto_top_up_threshold_cents::int AS threshold, auto_top_up_amount_cents::int AS auto
               FROM account_money WHERE account_id = $1 AND mode = 'live'`,
            [accountId],
          )
        ).rows[0] as { balance: number; reserved: number; threshold: number | null; auto: number | null };

      /**
       * Charges a period of an item; `alone` when nothing else runs, so the outcome is known from the
       * money beforehand: a live charge only from money no running call holds (an automatic top-up
       * set without a saved card brings none), and each period once.
       */
      const rent = async (op: Extract<Op, { kind: 'rent' }>, what: string, alone: boolean) => {
        const known = items.filter((it) => op.test === (it.mode === 'test'));
        let target = op.fresh || known.length === 0 ? null : known[op.item % known.length];
        if (!target) {
          const item = op.hosting ? ('website_hosting' as const) : ('number' as const);
          target = { id: crypto.randomUUID(), item, mode: op.test ? 'test' : 'live', customerId: customerOf(op.test, op.customer), claimed: [], next: svc.services.clock.now().toISOString().slice(0, 10) };
          items.push(target);
        }
        const it = target;
        const periodStart = op.again && it.claimed.length > 0 ? it.claimed[op.item % it.claimed.length] : it.next;
        const until = new Date(`${periodStart}T00:00:00Z`);
        until.setUTCMonth(until.getUTCMonth() + 1);
        const periodEnd = until.toISOString().slice(0, 10);
        const amountCents = RENT_CENTS[it.item];
        const m = alone ? await moneyRow() : null;
        const copies = alone ? 1 : op.copies;
        const results = await Promise.all(
          Array.from({ length: copies }, () =>
            withTransaction(conns, (client) =>
              money.chargeRecurring(client, { accountId, mode: it.mode, customerId: it.customerId, item: it.item, itemId: it.id, amountCents, periodStart, periodEnd, description: `${it.item} ${periodStart}`, now: svc.services.clock.now() }),
            ),
          ),
        );
        const charged = results.filter((r) => r.outcome === 'charged');
        for (const r of results) count(`${it.item}/${it.mode}: ${r.outcome}`);
        assert.ok(charged.length <= 1, `${what}: one period charged ${charged.length} times`);
        if (m) {
          let available = m.balance - m.reserved;
          // No saved card here: an automatic top-up the operator set charges nothing (auto-top-up.test.ts has the card).
          const short = it.mode === 'live' && available < amountCents;
          const expected = short ? 'insufficient_balance' : it.claimed.includes(periodStart) ? 'already_charged' : 'charged';
          assert.equal(results[0].outcome, expected, `${what}: ${it.item} ${it.mode} period ${periodStart}, ${amountCents} cents against ${m.balance} less ${m.reserved} held`);
        }
        for (const r of charged) {
          if (r.outcome !== 'charged') continue;
          assert.equal(Number(r.line.amount_cents), -amountCents, what);
          // Never paid with money a running call holds: the line leaves the balance at or over the holds.
          if (m && it.mode === 'live') assert.ok(Number(r.line.balance_after_cents) >= m.reserved, `${what}: rent spent money held by running calls`);
          it.claimed.push(periodStart);
          if (periodStart === it.next) it.next = periodEnd;
        }
      };

      /** A website's build fee: live money no running call holds must cover it, or nothing is written. */
      const build = async (op: Extract<Op, { kind: 'build' }>, what: string, alone: boolean) => {
        const mode: Mode = op.test ? 'test' : 'live';
        const customerId = customerOf(op.test, op.customer);
        const reference = `website_build:${crypto.randomUUID()}`;
        const m = alone ? await moneyRow() : null;
        const r = await withTransaction(conns, (client) =>
          money.chargeItem(client, { accountId, mode, customerId, cause: 'website_build', amountCents: BUILD_FEE_CENTS, reference, description: 'Website build', now: svc.services.clock.now() }),
        );
        count(`website_build/${mode}: ${r.outcome}`);
        if (m) assert.equal(r.outcome, mode === 'live' && m.balance - m.reserved < BUILD_FEE_CENTS ? 'insufficient_balance' : 'charged', `${what}: ${m.balance} less ${m.reserved} held`);
        if (r.outcome === 'charged') {
          if (m && mode === 'live') assert.ok(Number(r.line.balance_after_cents) >= m.reserved, `${what}: the build fee spent money held by running calls`);
          builds.push({ reference, mode, customerId, refunded: false });
        }
      };

      /** A build never delivered: its whole fee back once, on its customer, in its mode. */
      const refundBuild = async (op: Extract<Op, { kind: 'refund_build' }>, what: string) => {
        const open = builds.filter((b) => !b.refunded);
        if (open.length === 0) return;
        const b = open[op.pick % open.length];
        b.refunded = true;
        const line = await withTransaction(conns, (client) =>
          money.refundItem(client, { accountId, mode: b.mode, customerId: b.customerId, amountCents: BUILD_FEE_CENTS, reference: b.reference, description: 'Website build fee refunded', now: svc.services.clock.now() }),
        );
        count(`website_build/${b.mode}: refunded`);
        assert.equal(Number(line.amount_cents), BUILD_FEE_CENTS, what);
        assert.equal(line.applied, b.mode === 'live', what);
      };

      let before = await ledgerSnapshot();
      for (const [i, op] of ops.entries()) {
        const what = `op ${i} ${JSON.stringify(op)}`;
        const label = op.kind === 'job' ? op.name : op.kind;
        seen.set(label, (seen.get(label) ?? 0) + 1);
        switch (op.kind) {
          case 'top_up': {
            const r = await ask(accountId, { type: 'top_up', amountCents: op.amount, paymentReference: null });
            assert.equal(r.lines[0].amount_cents, op.amount);
            assert.equal(r.lines.length, topUpBonusCents(op.amount) > 0 ? 2 : 1, what);
            break;
          }
          case 'start':
            await start(op, what);
            break;
          case 'end':
            await end(op, what, true);
            break;
          case 'refund': {
            const customerId = op.customer === null ? null : customers[op.customer % customers.length];
            const r = await ask(accountId, { type: 'refund', amountCents: op.amount, customerId, reference: null, description: null });
            assert.equal(r.line.amount_cents, op.amount);
            break;
          }
          case 'advance':
            await advanceBoth(op.seconds);
            break;
          case 'next_month':
            await toNextMonth(op.minutes);
            break;
          case 'job':
            must(await con.post(`/admin/v1/jobs/${op.name}/run`), op.name);
            break;
          case 'auto_top_up':
            if (op.threshold === null) must(await account.admin.delete(`/admin/v1/accounts/${accountId}/auto_top_up`), 'auto top-up off');
            else must(await account.admin.put(`/admin/v1/accounts/${accountId}/auto_top_up`, { threshold_cents: op.threshold, amount_cents: op.amount }), 'auto top-up');
            break;
          case 'rent':
            await rent(op, what, true);
            break;
          case 'build':
            await build(op, what, true);
            break;
          case 'refund_build':
            await refundBuild(op, what);
            break;
          case 'burst': {
            const results = await Promise.all(
              op.ops.map(async (sub) => {
                if (sub.kind === 'start') await start(sub, what);
                else if (sub.kind === 'end') return end(sub, what, false);
                else if (sub.kind === 'rent') await rent(sub, what, false);
                else if (sub.kind === 'build') await build(sub, what, false);
                else if (sub.kind === 'refund_build') await refundBuild(sub, what);
                else must(await con.post('/admin/v1/jobs/release_holds/run'), 'release_holds');
                return null;
              }),
            );
            // Of concurrent end reports for one call, at most one settles or bills it.
            const winners = new Map<string, number>();
            for (const r of results) if (r && r.outcome !== 'already_settled') winners.set(r.reference, (winners.get(r.reference) ?? 0) + 1);
            for (const [reference, n] of winners) assert.ok(n <= 1, `${what}: ${reference} was settled or billed ${n} times`);
            break;
          }
        }
        const after = await ledgerSnapshot();
        assertUnchanged(before, after, what);
        before = after;
      }
      await assertInvariants(`${ops.length} operations on account ${accountId}`);
    }),
    { numRuns: RUNS, includeErrorInReport: true, examples: ITEM_EXAMPLES },
  );
  t.true(runs >= RUNS);
  t.log('item charges', Object.fromEntries([...itemOutcomes].sort()));
  // The runs reached every kind of item outcome, or the property proved little about them.
  for (const outcome of ['number/live: charged', 'number/live: insufficient_balance', 'website_hosting/live: charged', 'website_build/live: charged', 'website_build/live: insufficient_balance', 'website_build/live: refunded']) {
    t.true((itemOutcomes.get(outcome) ?? 0) > 0, `no item charge ended ${outcome}`);
  }
  t.true([...itemOutcomes.keys()].some((k) => k.endsWith('already_charged')), 'a period was charged again and found paid');
  // What the runs reached, so a weak sequence generator shows in the log.
  const { rows } = await db.query(`SELECT type, cause, mode, count(*)::int AS n FROM ledger_entries GROUP BY type, cause, mode ORDER BY type, cause, mode`);
  t.log('operations', Object.fromEntries(seen), 'lines', rows.map((r) => `${r.type}/${r.cause}/${r.mode}: ${r.n}`).join(', '));
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('the ledger refuses UPDATE and DELETE from any database client, and the lines stay as written', async (t) => {
  const account = await makeAccount(svc.url, { live: true });
  const top = must(await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 50_000 }), 'top-up', 201);
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
  // Inside a transaction too.
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    await t.throwsAsync(client.query('UPDATE ledger_entries SET amount_cents = 0 WHERE id = $1', [id]), { message: /immutable/ });
    await client.query('ROLLBACK');
  } finally {
    client.release();
  }
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

/** Sequences that reach each refusal for sure (the random runs usually do too). */
const REASON_EXAMPLES: Step[][] = [
  [{ kind: 'start', customer: 0 }, { kind: 'start', customer: 2 }],
  [{ kind: 'top_up', amount: 2_500 }, { kind: 'account_limits', concurrent: 10, daily: 799, monthly: null }, { kind: 'start', customer: 0 }, { kind: 'start', customer: 1 }],
  [{ kind: 'top_up', amount: 2_500 }, { kind: 'account_limits', concurrent: 10, daily: null, monthly: 400 }, { kind: 'start', customer: 0 }, { kind: 'start', customer: 0 }],
  [{ kind: 'top_up', amount: 2_500 }, { kind: 'customer_limits', customer: 1, daily: 400, monthly: null, max: null }, { kind: 'start', customer: 1 }, { kind: 'end', pick: 0, seconds: 61 }, { kind: 'start', customer: 1 }],
  [{ kind: 'top_up', amount: 2_500 }, { kind: 'customer_limits', customer: 2, daily: null, monthly: 799, max: null }, { kind: 'start', customer: 2 }, { kind: 'start', customer: 2 }],
  [{ kind: 'top_up', amount: 2_500 }, { kind: 'account_limits', concurrent: 1, daily: null, monthly: null }, { kind: 'customer_limits', customer: 0, daily: null, monthly: null, max: 5 }, { kind: 'start', customer: 0 }, { kind: 'start', customer: 0 }, { kind: 'start', customer: 2 }, { kind: 'start', customer: 2 }],
];

test.serial('property: start_call succeeds exactly when holdRefusal of the facts set says so, and refuses with its reason', async (t) => {
  // Spend counts by UTC day: start at the beginning of a fresh day so no run straddles midnight.
  const now = svc.services.clock.now();
  const nextDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 1);
  must(await adminClient(svc.url).post('/admin/v1/test_clock/advance', { seconds: Math.ceil((nextDay - now.getTime()) / 1000) }), 'advance');
  const day = svc.services.clock.now().toISOString().slice(0, 10);

  const outcomes = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 40, size: 'max' }), async (steps) => {
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
            must(await account.admin.post(`/admin/v1/accounts/${accountId}/top_ups`, { amount_cents: step.amount }), what, 201);
            balance += step.amount + topUpBonusCents(step.amount);
            break;
          case 'account_limits':
            must(
              await account.admin.patch(`/admin/v1/accounts/${accountId}/limits`, {
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
      const live = must(await account.admin.get(`/admin/v1/accounts/${accountId}/balance?mode=live`), 'balance');
      assert.equal(live.balance_cents, balance, 'live balance');
      assert.equal(live.reserved_cents, sides.live.reserved, 'live reserved');
      const test = must(await account.admin.get(`/admin/v1/accounts/${accountId}/balance?mode=test`), 'balance');
      assert.equal(test.reserved_cents, sides.test.reserved, 'test reserved');
      // Every refusal is in the activity log, with its reason, in order.
      const activity = must(await account.admin.get(`/admin/v1/accounts/${accountId}/activity?limit=200`), 'activity');
      const logged = activity.data.filter((a: { kind: string }) => a.kind === 'call_start_refused').map((a: { reason: string }) => a.reason).reverse();
      assert.deepEqual(logged, refusals, 'activity log of refusals');
      await assertInvariants(`admission steps on account ${accountId}`);
    }),
    { numRuns: RUNS + 5, includeErrorInReport: true, examples: REASON_EXAMPLES.map((steps) => [steps] as [Step[]]) },
  );
  t.is(svc.services.clock.now().toISOString().slice(0, 10), day, 'the runs stayed inside one UTC day');
  t.log('start_call outcomes', Object.fromEntries(outcomes));
  // Every reason was reached at least once by some run, or the property proved little.
  for (const reason of ['ok', ...REASONS]) t.true((outcomes.get(reason) ?? 0) > 0, `no start ended ${reason}`);
});

test.serial('start_call takes a hold only for a customer of the call’s own mode (test and live are separate worlds)', async (t) => {
  const account = await makeAccount(svc.url, { live: true });
  must(await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 5_000 }), 'top-up', 201);
  const liveCustomer = (await makeCustomer(account.liveApi!)).id;
  const testCustomer = (await makeCustomer(account.api)).id;
  const ask = svc.services.accounts.ask.bind(svc.services.accounts);
  const pairs: [Mode, string, boolean][] = [
    ['live', liveCustomer, true],
    ['test', testCustomer, true],
    ['live', testCustomer, false],
    ['test', liveCustomer, false],
  ];
  for (const [mode, customerId, allowed] of pairs) {
    const reference = `${mode}-${customerId === liveCustomer ? 'live' : 'test'}-customer`;
    // Refused either as a refusal or as an error; never a hold.
    const r = await ask(account.id, { type: 'start_call', mode, customerId, reference }).catch(() => null);
    t.is(r?.ok === true, allowed, `${mode} call for the ${customerId === liveCustomer ? 'live' : 'test'} customer`);
  }
  const { rows } = await db.query(`SELECT h.mode, c.mode AS customer_mode FROM holds h JOIN customers c ON c.id = h.customer_id WHERE h.account_id = $1`, [account.id]);
  t.deepEqual(rows.filter((r) => r.mode !== r.customer_mode), [], 'no hold across modes');
});

test.serial('a top-up that clears the last readiness gate records customer.ready and makes the customer active', async (t) => {
  // docs/api.md: customer.ready is recorded each time a customer goes from not ready to ready,
  // and the monthly minimum counts customers from that moment ("taken live").
  const account = await makeAccount(svc.url, { live: true });
  const live = account.liveApi!;
  const c = await makeCustomer(live);
  await loadDncRegistries(account.admin, 'US');
  must(await account.admin.post(`/admin/v1/customers/${c.id}/script/certify`), 'certify script');
  must(await live.post(`/v1/customers/${c.id}/provisioning`, { steps: ['number'] }), 'provisioning', 202);
  must(await account.admin.post(`/admin/v1/customers/${c.id}/numbers`, { phone_number: `+1202${crypto.randomInt(1_000_000, 9_999_999)}` }), 'assign number');
  const link = must(await live.post(`/v1/customers/${c.id}/onboarding_link`), 'onboarding link', 201);
  const accepted = await call(svc.url, 'POST', new URL(link.url).pathname, {
    rawBody: new URLSearchParams({ accepted_by: 'Jane Doe', agree: 'yes' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(accepted.status, 200);
  const blockers = must(await live.get(`/v1/customers/${c.id}/readiness`), 'readiness').blockers.map((b: { code: string }) => b.code);
  t.deepEqual(blockers, ['insufficient_balance'], 'money is the only gate left');

  must(await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 2_500 }), 'top-up', 201);
  t.true(must(await live.get(`/v1/customers/${c.id}/readiness`), 'readiness').ready_for_live_calls);
  const events = must(await account.admin.get(`/admin/v1/accounts/${account.id}/events?type=customer.ready`), 'events');
  t.is(events.data.length, 1, 'customer.ready recorded by the top-up');
  t.is(must(await live.get(`/v1/customers/${c.id}`), 'customer').status, 'active');
});

test.serial('a call end that takes the spendable balance back over one call makes the waiting customer ready again', async (t) => {
  // Top-up 3,000: under 25 % is below 750, under 10 % below 300. The end moves the spendable
  // balance from 350 to 730, inside one stage, so only readiness moves (over one call's 400).
  const account = await makeAccount(svc.url, { live: true });
  const accountId = account.id;
  const ask = svc.services.accounts.ask.bind(svc.services.accounts);
  const c = await makeCustomer(account.liveApi!);
  await takeLiveAfterTopUp(account, c.id, 3_000);
  const readyEvents = async () => must(await account.admin.get(`/admin/v1/accounts/${accountId}/events?type=customer.ready`), 'events').data.length;
  const isReady = async () => must(await account.liveApi!.get(`/v1/customers/${c.id}/readiness`), 'readiness').ready_for_live_calls;
  const available = async () => (await db.query(`SELECT balance_cents - reserved_cents AS a FROM account_money WHERE account_id = $1 AND mode = 'live'`, [accountId])).rows[0].a;
  t.true(await isReady());
  t.is(await readyEvents(), 1);

  const start = async (ref: string) => t.true((await ask(accountId, { type: 'start_call', mode: 'live', customerId: c.id, reference: ref })).ok, ref);
  const end = (ref: string, seconds: number) => ask(accountId, { type: 'end_call', reference: ref, durationSeconds: seconds });
  for (let i = 1; i <= 6; i++) await start(`c${i}`);
  // Twenty-minute calls cost their whole hold: the spendable balance stays at 600.
  for (let i = 1; i <= 5; i++) await end(`c${i}`, 1_200);
  t.is(await available(), 600);
  await start('c7');
  t.is(await available(), 200);
  t.false(await isReady(), 'under one call: not ready');
  must(await account.admin.post(`/admin/v1/accounts/${accountId}/refunds`, { amount_cents: 150 }), 'refund', 201);
  t.is(await available(), 350);
  t.false(await isReady());

  const ended = await end('c6', 30);
  t.like(ended, { outcome: 'settled', charged_cents: 20 });
  t.is(await available(), 730);
  t.true(await isReady(), 'over one call again');
  t.is(await readyEvents(), 2, 'customer.ready recorded again by the call end');
  await assertInvariants('readiness through a call end');
});

async function takeLiveAfterTopUp(account: Awaited<ReturnType<typeof makeAccount>>, customerId: string, cents: number) {
  must(await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: cents }), 'top-up', 201);
  await takeLive(account, customerId);
}

// — property: settlements on the call path's own connections, concurrently (issue 10 §1) —

type SettleOp =
  | { kind: 'top_up'; amount: number }
  | { kind: 'start'; n: number }
  /** Ends of running calls at once, each in its own transaction on its own connection, as call actors in several processes do. */
  | { kind: 'settle'; picks: number[]; seconds: number[]; withJobs: boolean }
  | { kind: 'advance'; seconds: number }
  | { kind: 'next_month' }
  | { kind: 'expire_bonuses' };

const settleOpArb: fc.Arbitrary<SettleOp> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('top_up' as const), amount: fc.oneof(fc.integer({ min: 2_500, max: 49_999 }), fc.integer({ min: 50_000, max: 300_000 }), fc.constantFrom(50_000, 250_000)) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('start' as const), n: fc.integer({ min: 2, max: 8 }) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
      seconds: fc.array(fc.oneof(fc.integer({ min: 0, max: 1_300 }), fc.constantFrom(0, 59, 61, 600, 1_200, 1_200, 1_200)), { minLength: 8, maxLength: 8 }),
      withJobs: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      seconds: fc.oneof(fc.integer({ min: 60, max: 86_400 }), fc.integer({ min: 30 * 86_400, max: 200 * 86_400 }), fc.constant(365 * 86_400)),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'next_month' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'expire_bonuses' as const }) },
);

test.serial('property: concurrent settlements on separate connections spend bonus before cash, exactly, whatever else runs', async (t) => {
  const { createMoneyWriter } = await import('../../money/writer.ts');
  const { readinessFollowsMoney } = await import('../../actors/customer/readiness-check.ts');
  const { expireBonuses, releaseExpiredHolds } = await import('../../money/jobs.ts');
  const money = createMoneyWriter(readinessFollowsMoney, wall);
  const con = adminClient(svc.url);
  const ask = svc.services.accounts.ask.bind(svc.services.accounts);
  // The call path's own pool shape: one connection per concurrent settlement.
  const conns = new pg.Pool({ connectionString: svc.databaseUrl, max: 10 });
  let settlements = 0;
  let mixed = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(settleOpArb, { minLength: 8, maxLength: 30 }), async (ops) => {
        const account = await makeAccount(svc.url, { live: true });
        must(await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 50_000 }), 'first top-up', 201);
        must(await account.admin.patch(`/admin/v1/accounts/${account.id}/limits`, { concurrent_calls: 40 }), 'limits');
        const customer = (await makeCustomer(account.liveApi!)).id;
        const open: string[] = [];
        for (const [i, op] of ops.entries()) {
          const what = `op ${i} ${JSON.stringify(op)}`;
          switch (op.kind) {
            case 'top_up':
              must(await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: op.amount }), 'top-up', 201);
              break;
            case 'start':
              for (let k = 0; k < op.n; k++) {
                const reference = `call_${crypto.randomUUID()}`;
                const r = await ask(account.id, { type: 'start_call', mode: 'live', customerId: customer, reference });
                if (r.ok) open.push(reference);
              }
              break;
            case 'settle': {
              const chosen = [...new Set(op.picks.map((p) => p % Math.max(1, open.length)))].filter((p) => p < open.length).map((p) => open[p]);
              if (chosen.length === 0) break;
              const now = svc.services.clock.now();
              const results = await Promise.all([
                ...chosen.map((reference, k) => money.endCall(conns, { accountId: account.id, reference, durationSeconds: op.seconds[k], now })),
                ...(op.withJobs ? [expireBonuses(conns, money, wall.now()), releaseExpiredHolds(conns, money, now)] : []),
              ]);
              for (const reference of chosen) open.splice(open.indexOf(reference), 1);
              settlements += chosen.length;
              // Bonus before cash: a settlement that paid any cash left no unexpired bonus behind.
              const lines = (
                await db.query(`SELECT bonus_cents, cash_cents FROM ledger_entries WHERE account_id = $1 AND cause = 'call' AND reference = ANY($2)`, [account.id, chosen])
              ).rows;
              const cashPaid = lines.some((l) => Number(l.cash_cents) < 0);
              if (cashPaid && lines.some((l) => Number(l.bonus_cents) < 0)) mixed++;
              if (cashPaid) {
                const { rows } = await db.query(`SELECT COALESCE(sum(remaining_cents), 0)::int AS left FROM bonus_grants WHERE account_id = $1 AND expires_at > $2`, [account.id, wall.now()]);
                assert.equal(rows[0].left, 0, `${what}: cash paid while unexpired bonus was left`);
              }
              assert.equal(results.length, chosen.length + (op.withJobs ? 2 : 0));
              break;
            }
            case 'advance':
              await advanceBoth(op.seconds);
              break;
            case 'next_month':
              await toNextMonth(0);
              break;
            case 'expire_bonuses':
              must(await con.post('/admin/v1/jobs/expire_bonuses/run'), 'expire_bonuses');
              break;
          }
          await assertInvariants(what);
        }
      }),
      { numRuns: Math.max(8, Math.round(RUNS / 2)), includeErrorInReport: true },
    );
  } finally {
    await conns.end();
  }
  t.log(`settlements: ${settlements}; bursts that split bonus and cash: ${mixed}`);
  t.true(settlements > 0);
});

test.serial('a top-up wakes the requests waiting on money at once, not at their next retry (issue 10 §3)', async (t) => {
  const account = await makeAccount(svc.url, { live: true });
  const live = account.liveApi!;
  const c = await makeCustomer(live);
  await takeLiveAfterTopUp(account, c.id, 2_500);
  const ask = svc.services.accounts.ask.bind(svc.services.accounts);
  // Six running calls hold 2,400 of the 2,500: no further call can start.
  for (let i = 0; i < 6; i++) t.true((await ask(account.id, { type: 'start_call', mode: 'live', customerId: c.id, reference: `busy-${i}` })).ok);
  const r = must(await live.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550150' }), 'queue', 201);
  await svc.services.dialNow();
  const now = svc.services.clock.now().getTime();
  let waiting = must(await live.get(`/v1/calls/${r.id}`), 'get');
  t.like(waiting, { status: 'queued', waiting_reason: 'insufficient_balance' });
  t.true(new Date(waiting.next_attempt_at).getTime() > now + 5 * 60_000, 'the money retry is minutes away');
  must(await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 2_500 }), 'top-up', 201);
  waiting = must(await live.get(`/v1/calls/${r.id}`), 'get');
  t.true(waiting.status !== 'queued' || new Date(waiting.next_attempt_at).getTime() < now + 60_000, 'woken by the top-up');
  for (let i = 0; i < 6; i++) await ask(account.id, { type: 'end_call', reference: `busy-${i}`, durationSeconds: 0 });
});
