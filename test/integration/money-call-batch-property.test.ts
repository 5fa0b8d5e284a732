import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import type { Client } from '../helpers/http.ts';
import { createMoneyWriter, type StartCallResult } from '../../money/writer.ts';

/*
 * A property test of a dialler round's money starts (money/writer/call-batch.ts `startCalls`)
 * against the same calls asked one by one through `startCall`, on twin accounts set up alike:
 * random rounds (seeded; the seed is printed on a failure, SWITCHBOARD_BATCH_SEED replays one and
 * SWITCHBOARD_BATCH_RUNS asks for more than 16)
 * over customers with concurrency ceilings and daily and monthly spend caps of their own and of the
 * account, settled spend of the day, live and test mode, a customer of another account or of the
 * other mode in the middle, references repeated in the round or already held, and a balance that
 * runs out mid-round, calls of customers on a test clock (their holds expire on its time).
 * Compared item by item: each call's result, the holds, the money rows of both
 * modes, the customers' counters, the activity log, the ledger, the `balance.low` events and the
 * readiness re-checks asked for.
 */

let svc: TestService;
let pool: pg.Pool;
const crossed = new Map<string, number>();
/** Set by a test: readiness's reaction fails (the database refusing its re-assessment). */
let readinessFails = false;
const money = createMoneyWriter({
  spendableCrossedCallReserve: async (_db, accountId) => {
    if (readinessFails) throw new Error('readiness re-assessment refused');
    crossed.set(accountId, (crossed.get(accountId) ?? 0) + 1);
  },
});
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
type Mode = 'live' | 'test';
/** One call of the round: a customer by index, or one not of the account in this mode; its reference. */
type Call = {
  who: number | 'stranger' | 'other_mode';
  reference: string;
  /** A customer on a test clock: the clock's time, ms after `now`. */ clockAheadMs?: number;
};
interface Round {
  mode: Mode;
  topUpCents: number;
  limits: {
    concurrent_calls: number;
    daily_spend_cap_cents: number | null;
    monthly_spend_cap_cents: number | null;
  };
  customers: {
    max_concurrent_calls: number | null;
    daily_spend_cap_cents: number | null;
    monthly_spend_cap_cents: number | null;
  }[];
  /** Calls started one by one before the round (customer index), and of them those ended (seconds) to give settled spend. */
  running: { who: number; endAfterSeconds: number | null }[];
  calls: Call[];
}

function ok(r: { status: number; text: string }, what: string) {
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
}

function randomRound(rand: (n: number) => number): Round {
  const mode: Mode = rand(4) === 0 ? 'test' : 'live';
  const cap = (step: number, n: number) => (rand(3) === 0 ? null : step * rand(n));
  const customers = Array.from({ length: 1 + rand(3) }, () => ({
    max_concurrent_calls: rand(3) === 0 ? null : rand(5),
    daily_spend_cap_cents: cap(400, 8),
    monthly_spend_cap_cents: cap(400, 12),
  }));
  const running = Array.from({ length: rand(4) }, () => ({
    who: rand(customers.length),
    endAfterSeconds: rand(2) === 0 ? null : 30 + rand(600),
  }));
  const calls: Call[] = [];
  for (let i = 0, n = 2 + rand(14); i < n; i++) {
    const k = rand(20);
    const who: Call['who'] = k === 0 ? 'stranger' : k === 1 ? 'other_mode' : rand(customers.length);
    // Now and then a reference the round already has, or one a running call holds.
    const reference = k === 2 && calls.length > 0 ? calls[rand(calls.length)].reference : k === 3 && running.length > 0 ? `running-${rand(running.length)}` : `call-${i}`;
    calls.push({
      who,
      reference,
      ...(rand(5) === 0 ? { clockAheadMs: rand(40) * 86_400_000 } : {}),
    });
  }
  return {
    mode,
    topUpCents: 2_500 + 400 * rand(10),
    limits: {
      concurrent_calls: rand(12),
      daily_spend_cap_cents: cap(400, 14),
      monthly_spend_cap_cents: cap(400, 18),
    },
    customers,
    running,
    calls,
  };
}

let stranger: string | undefined;

async function twin(r: Round) {
  stranger ??= (await makeCustomer(((await makeAccount(svc.url, { live: true })) as Live).liveApi)).id as string;
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  ok(
    await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, {
      amount_cents: r.topUpCents,
    }),
    'top-up',
  );
  ok(await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, r.limits), 'account limits');
  const api = r.mode === 'live' ? a.liveApi : a.api;
  const customers: string[] = [];
  for (const c of r.customers) {
    const customer = await makeCustomer(api);
    ok(await api.patch(`/v1/customers/${customer.id}/limits`, c), 'customer limits');
    customers.push(customer.id);
  }
  const otherMode = (await makeCustomer(r.mode === 'live' ? a.api : a.liveApi)).id as string;
  const now = new Date();
  for (const [i, c] of r.running.entries()) {
    await money.startCall(pool, {
      accountId: a.id,
      mode: r.mode,
      customerId: customers[c.who],
      reference: `running-${i}`,
      now,
    });
  }
  for (const [i, c] of r.running.entries()) {
    if (c.endAfterSeconds === null) continue;
    await money
      .endCall(pool, {
        accountId: a.id,
        reference: `running-${i}`,
        durationSeconds: c.endAfterSeconds,
        now,
      })
      .catch(() => undefined);
  }
  const customerOf = (who: Call['who']) => (who === 'stranger' ? stranger! : who === 'other_mode' ? otherMode : customers[who]);
  const names = new Map<string, string>([...customers.map((id, i) => [id, `customer ${i}`] as [string, string]), [otherMode, 'other mode'], [stranger!, 'stranger']]);
  crossed.delete(a.id);
  const seqs = await pool.query(
    `SELECT (SELECT coalesce(max(seq), 0) FROM activity_log) AS activity, (SELECT coalesce(max(seq), 0) FROM ledger_entries) AS ledger, (SELECT coalesce(max(seq), 0) FROM events) AS events`,
  );
  return {
    a,
    now,
    customerOf,
    names,
    since: seqs.rows[0] as { activity: number; ledger: number; events: number },
  };
}

const outcome = (r: PromiseSettledResult<StartCallResult>) => {
  if (r.status === 'rejected') return `threw ${(r.reason as { code?: string }).code ?? (r.reason as Error).message}`;
  return r.value.ok ? `ok ${r.value.hold.amount_cents}` : r.value.reason;
};

/** What one account's round left: everything a reseller is billed or told from, customers by name. */
async function state(x: Awaited<ReturnType<typeof twin>>) {
  const name = (id: string | null) => (id === null ? null : (x.names.get(id) ?? id));
  const q = async (sql: string, params: unknown[]) => (await pool.query(sql, params)).rows;
  const id = x.a.id;
  return {
    holds: (await q(`SELECT customer_id, reference, mode, amount_cents, status, expires_at, created_at FROM holds WHERE account_id = $1 ORDER BY reference, mode`, [id])).map(
      (h) => ({ ...h, customer_id: name(h.customer_id) }),
    ),
    money: await q(
      `SELECT mode, balance_cents, reserved_cents, open_calls, low_balance_stage, spend_day_cents, spend_month_cents, paid_cents, bonus_cents
         FROM account_money WHERE account_id = $1 ORDER BY mode`,
      [id],
    ),
    customers: (await q(`SELECT id, mode, reserved_cents, open_calls, spend_day_cents, spend_month_cents FROM customers WHERE account_id = $1`, [id]))
      .map((c) => ({ ...c, id: name(c.id) }))
      .sort((p, n) => String(p.id).localeCompare(String(n.id))),
    activity: (
      await q(`SELECT mode, customer_id, kind, reason, reference, detail, created_at FROM activity_log WHERE account_id = $1 AND seq > $2 ORDER BY seq`, [id, x.since.activity])
    ).map((e) => ({ ...e, customer_id: name(e.customer_id) })),
    ledger: (
      await q(
        `SELECT mode, customer_id, type, cause, amount_cents, cash_cents, bonus_cents, balance_after_cents, reference FROM ledger_entries WHERE account_id = $1 AND seq > $2 ORDER BY seq`,
        [id, x.since.ledger],
      )
    ).map((l) => ({ ...l, customer_id: name(l.customer_id) })),
    events: await q(`SELECT mode, type, data - 'id' - 'account_id' AS data, created_at FROM events WHERE account_id = $1 AND seq > $2 ORDER BY seq`, [id, x.since.events]),
    readinessRechecks: crossed.get(id) ?? 0,
  };
}

const scheduleNow = (c: Call, now: Date) => (c.clockAheadMs === undefined ? {} : { scheduleNow: new Date(now.getTime() + c.clockAheadMs) });

async function compare(t: any, r: Round, seed: number) {
  const alone = await twin(r);
  const batched = await twin(r);
  const one: string[] = [];
  for (const c of r.calls) {
    one.push(
      outcome(
        await money
          .startCall(pool, {
            accountId: alone.a.id,
            mode: r.mode,
            customerId: alone.customerOf(c.who),
            reference: c.reference,
            now: alone.now,
            ...scheduleNow(c, alone.now),
          })
          .then(
            (value) => ({ status: 'fulfilled' as const, value }),
            (reason) => ({ status: 'rejected' as const, reason }),
          ),
      ),
    );
  }
  const batch = (
    await money.startCalls(pool, {
      accountId: batched.a.id,
      mode: r.mode,
      now: batched.now,
      calls: r.calls.map((c) => ({
        customerId: batched.customerOf(c.who),
        reference: c.reference,
        ...scheduleNow(c, batched.now),
      })),
    })
  ).map(outcome);
  const why = `seed ${seed} (replay: SWITCHBOARD_BATCH_SEED=${seed}): ${JSON.stringify(r)}`;
  const ok1 = t.deepEqual(batch, one, why);
  const [sa, sb] = [await state(alone), await state(batched)];
  // Dated each on its own twin's `now`: compared as times after it.
  const rel = (s: typeof sa, now: Date) =>
    JSON.parse(JSON.stringify(s, (_k, v) => (typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? `now+${Date.parse(v) - now.getTime()}ms` : v)));
  for (const [k, v] of Object.entries(rel(sa, alone.now))) {
    if (!t.deepEqual(rel(sb, batched.now)[k], v, `${k}: ${why}`)) return false;
  }
  return ok1;
}

test.serial('random rounds: startCalls does item by item what startCall does asked one by one', async (t) => {
  const seeds = process.env.SWITCHBOARD_BATCH_SEED
    ? [Number(process.env.SWITCHBOARD_BATCH_SEED)]
    : Array.from({ length: Number(process.env.SWITCHBOARD_BATCH_RUNS ?? 16) }, (_, i) => 3401 + i);
  for (const seed of seeds) {
    let s = seed;
    const rand = (n: number) => {
      s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
      return Math.floor((s / 2 ** 31) * n);
    };
    if (!(await compare(t, randomRound(rand), seed))) {
      t.log(`failed on seed ${seed}`);
      return;
    }
  }
});

/** A customer with no ceiling and no caps of its own. */
const none = { max_concurrent_calls: null, daily_spend_cap_cents: null, monthly_spend_cap_cents: null };

/** A live round on an account with `topUpCents` and no caps, its ceiling `ceiling`: the fixed cases below. */
const fixedRound = (topUpCents: number, ceiling: number, r: Pick<Round, 'customers' | 'running' | 'calls'>): Round => ({
  mode: 'live',
  topUpCents,
  limits: { concurrent_calls: ceiling, daily_spend_cap_cents: null, monthly_spend_cap_cents: null },
  ...r,
});

/** `round`'s calls asked as one round on a new account set up as it says: each call's outcome. */
async function askRound(round: Round, on: pg.Pool = pool) {
  const x = await twin(round);
  const results = await money.startCalls(on, {
    accountId: x.a.id,
    mode: round.mode,
    now: x.now,
    calls: round.calls.map((c) => ({ customerId: x.customerOf(c.who), reference: c.reference })),
  });
  return { x, outcomes: results.map(outcome) };
}

test.serial('a round that crosses every low-balance stage tells the reseller what the calls asked one by one would', async (t) => {
  // 4,000 cents and ten holds of 400: below 25 % after the eighth, under one call (zero) after the tenth.
  const calls = Array.from({ length: 11 }, (_, i) => ({ who: i % 2, reference: `call-${i}` }));
  t.true(await compare(t, fixedRound(4_000, 20, { customers: [none, none], running: [], calls }), 0));
});

test.serial('a reference that comes twice in a round: the call refused at its place is refused, never handed the hold of the one granted', async (t) => {
  // Two running and two granted fill the ceiling of four; the repeated references are refused.
  const round = fixedRound(10_000, 4, {
    customers: [none],
    running: [
      { who: 0, endAfterSeconds: null },
      { who: 0, endAfterSeconds: null },
    ],
    calls: ['call-0', 'call-1', 'call-1', 'call-0'].map((reference) => ({ who: 0, reference })),
  });
  t.true(await compare(t, round, 0));
  t.deepEqual((await askRound(round)).outcomes, ['ok 400', 'ok 400', 'concurrency_limit', 'concurrency_limit']);
});

test.serial('the look after the holds failing (readiness re-assessment refused) fails the call whose hold crossed, alone, as startCall does', async (t) => {
  // 2,500 cents: the fifth hold leaves 500 (below 25 %), the sixth 100 (under one call); the rest are refused.
  const round = fixedRound(2_500, 20, { customers: [none, none], running: [], calls: Array.from({ length: 8 }, (_, i) => ({ who: i % 2, reference: `call-${i}` })) });
  readinessFails = true;
  try {
    t.true(await compare(t, round, 0));
    t.deepEqual((await askRound(round)).outcomes, [
      'ok 400',
      'ok 400',
      'ok 400',
      'ok 400',
      'ok 400',
      'threw readiness re-assessment refused',
      'insufficient_balance',
      'insufficient_balance',
    ]);
  } finally {
    readinessFails = false;
  }
});

test.serial('a round taken in two whose second part the database refuses: the first part keeps its holds and is reported granted; only the second fails', async (t) => {
  // The fifth hold crosses 25 %: the round is taken in two, calls 0-4 and 5-7.
  const round = fixedRound(2_500, 20, { customers: [none], running: [], calls: Array.from({ length: 8 }, (_, i) => ({ who: 0, reference: `call-${i}` })) });
  // A pool whose third round statement fails (the first is rolled back for the split, the second takes part one).
  let batches = 0;
  const refusing = {
    connect: async () => {
      const client = await pool.connect();
      const query = client.query.bind(client);
      (client as any).query = (q: any, ...rest: any[]) => {
        if (q && typeof q === 'object' && q.name === 'open_holds_batch' && ++batches === 3) return Promise.reject(new Error('the database went away'));
        return (query as any)(q, ...rest);
      };
      const release = client.release.bind(client);
      (client as any).release = (e?: unknown) => {
        (client as any).query = query;
        return release(e as any);
      };
      return client;
    },
    query: (...args: any[]) => (pool.query as any)(...args),
  } as unknown as pg.Pool;
  const { x, outcomes } = await askRound(round, refusing);
  t.is(batches, 3);
  t.deepEqual(outcomes, [...Array(5).fill('ok 400'), ...Array(3).fill('threw the database went away')]);
  // Every hold taken is a call told it was granted.
  const held = (await pool.query(`SELECT reference FROM holds WHERE account_id = $1 ORDER BY reference`, [x.a.id])).rows.map((r) => r.reference);
  t.deepEqual(held, ['call-0', 'call-1', 'call-2', 'call-3', 'call-4']);
});

test.serial('rounds and single starts of one account at once never pass its ceiling, its caps or its balance, and every hold taken is a call told so', async (t) => {
  const round: Round = {
    mode: 'live',
    // 4,000 cents: ten holds at most, and the ceiling allows seven; crossing every stage on the way.
    topUpCents: 4_000,
    limits: {
      concurrent_calls: 7,
      daily_spend_cap_cents: null,
      monthly_spend_cap_cents: null,
    },
    customers: [none, { ...none, max_concurrent_calls: 3 }],
    running: [],
    calls: [],
  };
  const x = await twin(round);
  const other = new pg.Pool({ connectionString: svc.databaseUrl, max: 4 });
  t.teardown(() => other.end());
  const rounds = Array.from({ length: 4 }, (_, r) =>
    money.startCalls(r % 2 ? pool : other, {
      accountId: x.a.id,
      mode: 'live',
      now: x.now,
      calls: Array.from({ length: 5 }, (_, i) => ({
        customerId: x.customerOf(i % 2),
        reference: `round-${r}-${i}`,
      })),
    }),
  );
  const singles = Array.from({ length: 6 }, (_, i) =>
    money
      .startCall(i % 2 ? pool : other, {
        accountId: x.a.id,
        mode: 'live',
        customerId: x.customerOf(i % 2),
        reference: `single-${i}`,
        now: x.now,
      })
      .then(
        (value) => ({ status: 'fulfilled' as const, value }),
        (reason) => ({ status: 'rejected' as const, reason }),
      ),
  );
  const results = [...(await Promise.all(rounds)).flat(), ...(await Promise.all(singles))];
  const granted = results.filter((r) => r.status === 'fulfilled' && r.value.ok).length;
  t.is(granted, 7, 'the ceiling, all of it and no more');
  t.true(
    results.every((r) => r.status === 'fulfilled'),
    'nothing failed',
  );
  const held = await pool.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE customer_id = $2)::int AS second FROM holds WHERE account_id = $1 AND status = 'open'`, [
    x.a.id,
    x.customerOf(1),
  ]);
  t.is(held.rows[0].n, granted, 'every hold is a call told it was granted');
  t.true(held.rows[0].second <= 3, "the customer's own ceiling");
  const m = (await pool.query(`SELECT reserved_cents, open_calls FROM account_money WHERE account_id = $1 AND mode = 'live'`, [x.a.id])).rows[0];
  t.deepEqual(m, { reserved_cents: 400 * granted, open_calls: granted });
});
