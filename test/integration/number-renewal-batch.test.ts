/**
 * The renewal job's set-based batch (issue 25 §4) against the path before it, each number of a
 * batch renewed in turn (`renewDue(…, { oneByOne: true })`): twin accounts, set up alike, renewed
 * one by each path, must end alike — the same ledger lines (amounts, the cash and bonus split,
 * balances after, references, descriptions, dates, in the same order), the same money rows,
 * customer spend, bonus grants, claimed periods, number states and events. And the batch takes
 * its money rows in one order before it charges anything, so two jobs' batches wait for each
 * other instead of deadlocking.
 */
import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import type { Client as Api } from '../helpers/http.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createPool, type Pool } from '../../db/pool.ts';
import { createMoneyWriter, type RecurringCharge } from '../../money/writer.ts';
import { readinessFollowsMoney } from '../../actors/customer/readiness-check.ts';
import { createNumbers } from '../../actors/numbers/numbers.ts';
import type { NumberCarrier } from '../../telephony/carrier.ts';

let svc: TestService;
let pool: Pool;
let db: pg.Client;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: '3600000' });
  pool = createPool(svc.databaseUrl, 4);
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
});
test.after.always(async () => {
  await db?.end();
  await pool?.end();
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

/** The numbers room on its own pool, as the bench builds it; `charged` counts the one-by-one writer's charges per account. */
function room(charged: Map<string, number>) {
  return roomOn(pool, charged);
}

function roomOn(on: Pool, charged = new Map<string, number>()) {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: svc.databaseUrl, SWITCHBOARD_ADMIN_TOKEN: 'sbc_test_renewal_batch_Qm4c2WkfP0aZL7xvR1' });
  const unused = new Proxy({} as NumberCarrier, { get: (_, name) => () => Promise.reject(new Error(`the renewal job called the carrier (${String(name)})`)) });
  const money = createMoneyWriter(readinessFollowsMoney);
  const spied = {
    ...money,
    chargeRecurring: (client: pg.ClientBase, c: RecurringCharge) => {
      charged.set(c.accountId, (charged.get(c.accountId) ?? 0) + 1);
      return money.chargeRecurring(client as never, c);
    },
  };
  return createNumbers({
    pool: on,
    clock: { now: () => new Date() },
    realClock: { now: () => new Date() },
    log: createLogger('warn'),
    config,
    carriers: { test: unused, live: unused },
    money: spied as typeof money,
    secrets: { seal: () => Buffer.alloc(0), open: () => '' },
  });
}

type Twin = { account: TestAccount; numbers: string[]; customers: string[]; mode: 'live' | 'test' };
let phone = 1_000;

/**
 * An account as a scenario makes it: live or test, topped up with `topUpCents` (its bonus
 * credit with it), two customers, and numbers due on `day` (kind per entry, alternating customers).
 */
async function twin(s: { live: boolean; topUpCents: number; kinds: ('rented' | 'caller_id')[]; day: string }): Promise<Twin> {
  const account = await makeAccount(svc.url, { live: s.live });
  const api: Api = s.live ? (account as any).liveApi : account.api;
  if (s.topUpCents) {
    const r = await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: s.topUpCents });
    if (r.status !== 201) throw new Error(`top-up: ${r.status} ${r.text}`);
  }
  const made: Twin = { account, numbers: [], customers: [(await makeCustomer(api)).id, (await makeCustomer(api)).id], mode: s.live ? 'live' : 'test' };
  await addNumbers(made, s.kinds, s.day);
  return made;
}

/** Numbers of `t` due on `day`, one per kind given, alternating between its customers. */
async function addNumbers(t: Twin, kinds: ('rented' | 'caller_id')[], day: string) {
  for (const kind of kinds) {
    const { rows } = await db.query(
      `INSERT INTO phone_numbers (account_id, mode, customer_id, e164, country, kind, status, monthly_cents, anchor_day, renews_on, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'US', $5, 'active', $6, $7, $8, now(), now()) RETURNING id`,
      [t.account.id, t.mode, t.customers[t.numbers.length % 2], `+1202555${String(phone++).padStart(4, '0')}`, kind, kind === 'rented' ? 1500 : 1200, Number(day.slice(8, 10)), day],
    );
    t.numbers.push(rows[0].id);
  }
}

/** Everything a renewal can have written for `t`, with its own ids replaced by their places. */
async function stateOf(t: Twin) {
  const name = (v: unknown) => {
    let text = String(v);
    for (const [i, id] of t.numbers.entries()) text = text.replaceAll(id, `number${i}`);
    for (const [i, id] of t.customers.entries()) text = text.replaceAll(id, `customer${i}`);
    return text.replaceAll(t.account.id, 'account').replace(/\(202\) 555-\d{4}/g, '(202) 555-xxxx');
  };
  const q = async (sql: string, params: unknown[] = [t.account.id]) => (await db.query(sql, params)).rows.map((r) => JSON.parse(name(JSON.stringify(r))));
  return {
    lines: await q(`SELECT mode, customer_id, type, cause, amount_cents, cash_cents, bonus_cents, balance_after_cents, applied, minutes, reference,
                           payment_reference, description, created_at FROM ledger_entries WHERE account_id = $1 AND type <> 'top_up' AND type <> 'bonus' ORDER BY seq`),
    money: await q(`SELECT mode, balance_cents, paid_cents, bonus_cents, reserved_cents, open_calls, spend_day, spend_day_cents, spend_month, spend_month_cents,
                           minutes_month, minutes_used, low_balance_stage FROM account_money WHERE account_id = $1 ORDER BY mode`),
    customers: await q(`SELECT id, spend_day, spend_day_cents, spend_month, spend_month_cents, reserved_cents FROM customers WHERE account_id = $1 AND id = ANY($2::uuid[]) ORDER BY array_position($2::uuid[], id)`, [t.account.id, t.customers]),
    grants: await q(`SELECT granted_cents, remaining_cents FROM bonus_grants WHERE account_id = $1 ORDER BY expires_at, id`),
    periods: await q(`SELECT item_id, period_start, item, customer_id, period_end, amount_cents FROM recurring_charges WHERE account_id = $1 AND item_id = ANY($2::uuid[]) ORDER BY array_position($2::uuid[], item_id)`, [t.account.id, t.numbers]),
    numbers: await q(`SELECT id, status, renews_on, release_due_on, notice_sent_for FROM phone_numbers WHERE account_id = $1 AND id = ANY($2::uuid[]) ORDER BY array_position($2::uuid[], id)`, [t.account.id, t.numbers]),
    events: await q(`SELECT type, count(*)::int AS n FROM events WHERE account_id = $1 GROUP BY type ORDER BY type`),
  };
}

test.serial('the set-based batch writes what renewing each number in turn writes: bonus before cash, test mode priced, a short account counted down', async (t) => {
  const now = new Date('2031-03-10T12:00:00Z');
  const day = '2031-03-10';
  const scenarios = {
    // 60,000 with 1,800 of bonus credit: the first rent is all bonus, the second 300 bonus and 1,200 cash.
    bonus: { live: true, topUpCents: 60_000, kinds: ['rented', 'caller_id', 'rented', 'caller_id'] as const, day },
    testMode: { live: false, topUpCents: 0, kinds: ['rented', 'caller_id', 'rented'] as const, day },
    // Money for one rent and not the second: one line, then the countdown (the one-by-one path's own).
    short: { live: true, topUpCents: 2_500, kinds: ['rented', 'rented'] as const, day },
  };
  const results: Record<string, { set: Awaited<ReturnType<typeof stateOf>>; oneByOne: Awaited<ReturnType<typeof stateOf>>; setCharges: number; oneByOneCharges: number }> = {};
  const setTwins: Record<string, Twin> = {};
  const oneTwins: Record<string, Twin> = {};
  for (const [name, s] of Object.entries(scenarios)) setTwins[name] = await twin({ ...s, kinds: [...s.kinds] });
  const setCharged = new Map<string, number>();
  const setProcessed = await room(setCharged).renewDue(now);
  for (const [name, s] of Object.entries(scenarios)) oneTwins[name] = await twin({ ...s, kinds: [...s.kinds] });
  const oneCharged = new Map<string, number>();
  const oneProcessed = await room(oneCharged).renewDue(now, null, { oneByOne: true });
  t.is(setProcessed, oneProcessed, 'the same count of numbers acted on');
  for (const name of Object.keys(scenarios)) {
    results[name] = {
      set: await stateOf(setTwins[name]),
      oneByOne: await stateOf(oneTwins[name]),
      setCharges: setCharged.get(setTwins[name].account.id) ?? 0,
      oneByOneCharges: oneCharged.get(oneTwins[name].account.id) ?? 0,
    };
    t.deepEqual(results[name].set, results[name].oneByOne, `${name}: the same writes`);
  }
  // The set path took the bonus and test-mode accounts (no charge one by one); the short account went one by one.
  t.is(results.bonus.setCharges, 0);
  t.is(results.testMode.setCharges, 0);
  t.is(results.short.setCharges, 2);
  t.is(results.bonus.oneByOneCharges, 4);

  const bonus = results.bonus.set.lines;
  t.is(bonus.length, 4, 'one line per number');
  t.like(bonus[0], { amount_cents: -1500, bonus_cents: -1500, cash_cents: 0, balance_after_cents: 61_800 - 1500, applied: true, type: 'usage', cause: 'number' });
  t.like(bonus[1], { amount_cents: -1200, bonus_cents: -300, cash_cents: -900, balance_after_cents: 61_800 - 2700, cause: 'caller_id' });
  t.like(bonus[2], { amount_cents: -1500, bonus_cents: 0, cash_cents: -1500, balance_after_cents: 61_800 - 4200, reference: `number:number2:${day}` });
  t.like(bonus[3], { amount_cents: -1200, bonus_cents: 0, cash_cents: -1200, balance_after_cents: 61_800 - 5400, reference: `caller_id:number3:${day}` });
  t.like(results.bonus.set.money.find((m: any) => m.mode === 'live'), { balance_cents: 61_800 - 5400, bonus_cents: 0, spend_day_cents: 5400 });
  t.true(results.bonus.set.numbers.every((n: any) => n.status === 'active' && n.renews_on === '2031-04-10'));
  t.true(results.testMode.set.lines.every((l: any) => l.applied === false && l.mode === 'test'));
  t.deepEqual(
    results.short.set.numbers.map((n: any) => n.status).sort(),
    ['active', 'payment_due'],
    'the short account: one renewed, one in its countdown',
  );
});

test.serial('a batch locks the money rows of its accounts in one order before it charges any: a job whose first number belongs to a busy account already holds the other account', async (t) => {
  const now = new Date('2031-05-10T12:00:00Z');
  const day = '2031-05-10';
  const a = await twin({ live: true, topUpCents: 20_000, kinds: [], day });
  const b = await twin({ live: true, topUpCents: 20_000, kinds: [], day });
  // The account with the larger id has the first number due (seq order); the other the second.
  const [low, high] = [a, b].sort((x, y) => (x.account.id < y.account.id ? -1 : 1));
  await addNumbers(high, ['rented'], day);
  await addNumbers(low, ['rented'], day);
  // Someone else (a call's settlement, say) holds the larger account's money row.
  const holder = new pg.Client({ connectionString: svc.databaseUrl });
  await holder.connect();
  t.teardown(() => holder.end());
  await holder.query('BEGIN');
  await holder.query(`SELECT 1 FROM account_money WHERE account_id = $1 AND mode = 'live' FOR NO KEY UPDATE`, [high.account.id]);

  const job = room(new Map()).renewDue(now);
  // The job waits on the larger account's row while already holding the smaller one's: taken in
  // one order, so a second job's batch needing both waits behind it instead of deadlocking.
  const lockedByJob = async () => {
    try {
      await db.query(`SELECT 1 FROM account_money WHERE account_id = $1 AND mode = 'live' FOR NO KEY UPDATE NOWAIT`, [low.account.id]);
      return false;
    } catch (err) {
      if ((err as { code?: string }).code === '55P03') return true;
      throw err;
    }
  };
  let held = false;
  for (let i = 0; i < 100 && !held; i++) {
    held = await lockedByJob();
    if (!held) await new Promise((r) => setTimeout(r, 50));
  }
  t.true(held, 'the smaller account is locked by the job while it waits for the larger');
  await holder.query('COMMIT');
  t.true((await job) >= 2, 'both renewed');
  // Run twice more at once: nobody is charged twice.
  await Promise.all([room(new Map()).renewDue(now), room(new Map()).renewDue(now)]);
  for (const x of [low, high]) {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = $1 AND cause = 'number'`, [x.account.id]);
    t.is(rows[0].n, 1, 'one rent line');
  }
});

test.serial('two jobs at once whose batches meet two accounts in opposite orders: no deadlock, every number charged once', async (t) => {
  const now = new Date('2031-07-10T12:00:00Z');
  const day = '2031-07-10';
  const a = await twin({ live: true, topUpCents: 500_000, kinds: [], day });
  const b = await twin({ live: true, topUpCents: 500_000, kinds: [], day });
  // The first batch of 100 meets a then b; the second b then a: a number-by-number lock order
  // would take the two money rows in opposite orders.
  for (let i = 0; i < 200; i++) {
    const first = i < 100 ? a : b;
    const second = i < 100 ? b : a;
    await addNumbers(i % 2 === 0 ? first : second, ['rented'], day);
  }
  const deadlocks = async () => Number((await db.query(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`)).rows[0].deadlocks);
  const backends = async () => Number((await db.query(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()`)).rows[0].count);
  const before = await deadlocks();
  const backendsBefore = await backends();
  // Each job on a pool of its own, ended after, so its connections' statistics are flushed.
  const jobs = [0, 1].map(async () => {
    const own = createPool(svc.databaseUrl, 1);
    try {
      return await roomOn(own).renewDue(now);
    } finally {
      await own.end();
    }
  });
  const done = await Promise.all(jobs);
  t.true(done[0] + done[1] >= 200, 'every number renewed between the two jobs (and the earlier tests\' numbers due again)');
  // A backend writes its statistics out as it exits, before it leaves pg_stat_activity.
  for (let i = 0; i < 100 && (await backends()) > backendsBefore; i++) await new Promise((r) => setTimeout(r, 50));
  t.is(await deadlocks(), before, 'no deadlock');
  for (const x of [a, b]) {
    const { rows } = await db.query(
      `SELECT count(*)::int AS lines, count(DISTINCT reference)::int AS periods FROM ledger_entries WHERE account_id = $1 AND cause = 'number'`,
      [x.account.id],
    );
    t.deepEqual(rows[0], { lines: 100, periods: 100 });
  }
});

test.serial('a batch meeting numbers released, re-bought and in their countdown, and an account whose money runs out among them, writes what renewing each in turn writes', async (t) => {
  const now = new Date('2031-09-10T12:00:00Z');
  const day = '2031-09-10';
  /**
   * An account whose batch holds, in claim order: a rented number, a number released (its rent due
   * the same day, never charged), the same phone bought again (a new number, due), a number in its
   * countdown (payment_due) whose rent is due, and a caller ID; 4,000 cents pays two of the four
   * rents due (1,000 left covers neither the third rent of 1,500 nor the caller ID's 1,200).
   */
  const make = async (topUpCents = 4_000) => {
    const x = await twin({ live: true, topUpCents, kinds: ['rented', 'rented'], day });
    const released = x.numbers[1];
    const { rows } = await db.query(`UPDATE phone_numbers SET status = 'released', updated_at = now() WHERE id = $1 RETURNING e164`, [released]);
    await db.query(
      `INSERT INTO phone_numbers (account_id, mode, customer_id, e164, country, kind, status, monthly_cents, anchor_day, renews_on, created_at, updated_at)
       VALUES ($1, 'live', $2, $3, 'US', 'rented', 'active', 1500, 10, $4, now(), now())`,
      [x.account.id, x.customers[0], rows[0].e164, day],
    );
    x.numbers.push((await db.query(`SELECT id FROM phone_numbers WHERE account_id = $1 AND e164 = $2 AND status = 'active'`, [x.account.id, rows[0].e164])).rows[0].id);
    await addNumbers(x, ['rented'], day);
    await db.query(`UPDATE phone_numbers SET status = 'payment_due', release_due_on = '2031-09-17' WHERE id = $1`, [x.numbers[3]]);
    await addNumbers(x, ['caller_id'], day);
    return x;
  };
  // The same numbers with money enough for all: set-based, beside the first.
  const rich = () => make(20_000);
  const set = [await make(), await rich()];
  const setCharged = new Map<string, number>();
  // (The earlier tests' numbers fall due again on this day too: only these accounts are compared.)
  await room(setCharged).renewDue(now);
  const one = [await make(), await rich()];
  await room(new Map()).renewDue(now, null, { oneByOne: true });
  for (const i of [0, 1]) t.deepEqual(await stateOf(set[i]), await stateOf(one[i]), `account ${i}: the same writes`);
  const numbers = (await stateOf(set[0])).numbers.map((n: any) => n.status);
  t.deepEqual(numbers, ['active', 'released', 'active', 'payment_due', 'payment_due'], 'the released number stays released; the money ran out at the number in its countdown');
  t.is(setCharged.get(set[1].account.id) ?? 0, 0, 'the account with money enough was renewed set-based');
  t.deepEqual(
    (await stateOf(set[1])).numbers.map((n: any) => [n.status, n.renews_on]),
    [['active', '2031-10-10'], ['released', day], ['active', '2031-10-10'], ['active', '2031-10-10'], ['active', '2031-10-10']],
    'the number in its countdown renewed and active again; the released one untouched',
  );
});
