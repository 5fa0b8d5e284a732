import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startService } from '../app/start.ts';
import { startEmbeddedDatabase } from '../runtime/embedded-db.ts';
import { withTransaction } from '../db/pool.ts';
import { createCallRepository } from '../db/calls.ts';
import { createMoneyWriter } from '../money/writer.ts';
import { readinessFollowsMoney } from '../actors/customer/readiness-check.ts';
import { cpuMeter, cpuProfile, postmasterOf, profiled, ratio, type CpuPerOp } from './lib.ts';

/** Issue 25 §4: a call's start and end, at least this many per second on this machine. */
const TARGET_CALLS_PER_SECOND = 1000;

/**
 * Calls started and ended per second (one unit is a call's start AND its end: the hold and the
 * settlement, two transactions), on one hot account and spread over 1,000 accounts. Target (issue
 * 25 §4): at least 1,000 call starts+ends per second over 1,000 accounts on this machine. Beside
 * it, as before, the same work as operations (a start or an end each) against bare
 * `UPDATE … RETURNING` statements on the same PostgreSQL in the same run. CPU per call is this
 * bench's own PostgreSQL server's (not the machine's other servers') and this process's.
 * BENCH_CPU_PROF=<dir>: a V8 CPU profile of one more 1,000-account run, written there. Each takes the path production takes: the hold through the account actor's
 * mailbox (the dialler's `start_call`), the end as the call actor's `finish` does it, in one
 * transaction of its own that locks the call row with its hold's claim (`lockCallForEnd`),
 * settles through `settleCall` and writes the call's outcome (not through the account actor,
 * which real call ends never pass). Every call has a row of its own (in progress, its id the
 * hold's reference, made before the runs), as in production; `finish`'s carrier inbox row,
 * do-not-call read, summary, retry plan and event are left out.
 */
export async function moneyBench(seconds: number) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-money-'));
  const log = createLogger('warn');
  const db = await startEmbeddedDatabase(dir, log);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, SWITCHBOARD_ADMIN_TOKEN: 'sbc_bench_money_7H0yOqrswWOBdZD1z87N', LOG_LEVEL: 'warn' });
  const svc = await startService(config, { logger: log });
  const postmaster = postmasterOf(dir);
  const { accounts, pool } = svc.services;
  const workers = 32;
  // The writer the call actor builds (a call end settles through it, in the call's transaction).
  const money = createMoneyWriter(readinessFollowsMoney);
  try {
    // 1,000 live accounts, each with money and a customer.
    const ids: { account: string; customer: string }[] = [];
    for (let i = 0; i < 1000; i++) {
      const id = crypto.randomUUID();
      await accounts.ask(id, { type: 'create_account', name: `Bench ${i}`, country: 'US' });
      await accounts.ask(id, { type: 'update_limits', patch: { concurrent_calls: 10_000 } });
      await accounts.ask(id, { type: 'top_up', amountCents: 100_000_000, paymentReference: null });
      const { rows } = await pool.query(
        `INSERT INTO customers (account_id, mode, name, country, timezone, created_at) VALUES ($1, 'live', 'c', 'US', 'America/New_York', now()) RETURNING id`,
        [id],
      );
      ids.push({ account: id, customer: rows[0].id });
    }
    // Every call has its own row, as in production: dialled (in progress), its id the hold's
    // reference, locked with its hold and given its outcome at its end. Made beforehand in
    // batches (enough for every run, more made on the way if a run outgrows them).
    const unused = new Map<string, string[]>();
    let numbered = 0;
    const makeCalls = async (who: { account: string; customer: string }, n: number) => {
      const { rows } = await pool.query(
        `INSERT INTO calls (account_id, mode, customer_id, to_e164, to_country, phone_input, status, dial_before, next_attempt_at,
                            dialed_at, answered_at, created_at, updated_at, lease_expires_at)
         SELECT $1, 'live', $2, '+1202' || lpad((g + $3)::text, 7, '0'), 'US', '+1202' || lpad((g + $3)::text, 7, '0'), 'in_progress',
                now() + interval '1 day', now(), now(), now(), now(), now(), now() + interval '1 hour'
           FROM generate_series(1, $4::int) g RETURNING id`,
        [who.account, who.customer, numbered, n],
      );
      numbered += n;
      const list = unused.get(who.account) ?? [];
      list.push(...rows.map((r) => r.id as string));
      unused.set(who.account, list);
    };
    const nextCall = async (who: { account: string; customer: string }) => {
      if (!unused.get(who.account)?.length) await makeCalls(who, 50);
      return unused.get(who.account)!.pop()!;
    };
    await makeCalls(ids[0], Math.max(2_000, seconds * 1_500));
    for (const who of ids.slice(1)) await makeCalls(who, Math.max(20, seconds * 6));

    const run = async (op: (worker: number, i: number) => Promise<unknown>, opsPerIteration: number) => {
      let count = 0;
      const meter = cpuMeter({ postmaster });
      const deadline = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: workers }, async (_, w) => {
          for (let i = 0; performance.now() < deadline; i++) {
            await op(w, i);
            count += opsPerIteration;
          }
        }),
      );
      return { opsPerSecond: Math.round(count / seconds), cpu: meter.perOp(count) };
    };
    const holdAndSettle = (pick: (w: number, i: number) => { account: string; customer: string }) => async (w: number, i: number) => {
      const who = pick(w, i);
      const { account, customer } = who;
      // The call's id is its hold's reference, as the dialler's start_call gives it.
      const callId = await nextCall(who);
      const started = await accounts.ask(account, { type: 'start_call', mode: 'live', customerId: customer, reference: callId });
      if (!started.ok) throw new Error(`refused: ${started.reason}`);
      // As finish (actors/call/call-end.ts): the call's lock with its hold's claim, the settlement, the outcome.
      await withTransaction(pool, async (client) => {
        const now = new Date();
        const locked = await money.lockCallForEnd(client, callId);
        if (!locked) throw new Error(`no call ${callId}`);
        await money.settleCall(client, { accountId: account, reference: callId, durationSeconds: 65, now }, locked);
        await createCallRepository(client).update(callId, { status: 'completed', outcome: 'not_interested', duration_seconds: 65, ended_at: now, updated_at: now, lease_expires_at: null, summary: 'bench' });
      });
    };
    const bareUpdate = (pick: (w: number, i: number) => { account: string }) => async (w: number, i: number) => {
      await pool.query(`UPDATE account_money SET reserved_cents = reserved_cents + 0 WHERE account_id = $1 AND mode = 'live' RETURNING *`, [pick(w, i).account]);
    };
    // The end as this bench measured it before round 33, printed beside (docs/decisions.md, "Issue
    // 25 §4, round 33: a call's start and end"): one call row per worker, locked and updated at
    // every end, the hold's reference not the call's id (so the hold is claimed on its own).
    const workerCalls = await Promise.all(Array.from({ length: workers }, async () => nextCall(ids[0])));
    const holdAndSettleOnWorkerRows = (pick: (w: number, i: number) => { account: string; customer: string }) => async (w: number, i: number) => {
      const { account, customer } = pick(w, i);
      const reference = `b-${w}-${i}-${Math.random()}`;
      const started = await accounts.ask(account, { type: 'start_call', mode: 'live', customerId: customer, reference });
      if (!started.ok) throw new Error(`refused: ${started.reason}`);
      await withTransaction(pool, async (client) => {
        const now = new Date();
        const calls = createCallRepository(client);
        await calls.lock(workerCalls[w]);
        await money.settleCall(client, { accountId: account, reference, durationSeconds: 65, now });
        await calls.update(workerCalls[w], { status: 'completed', outcome: 'not_interested', duration_seconds: 65, ended_at: now, updated_at: now, lease_expires_at: null, summary: 'bench' });
      });
    };
    const hot = () => ids[0];
    const spread = () => ids[Math.floor(Math.random() * ids.length)];

    const baselineHot = await run(bareUpdate(hot), 1);
    const hotOps = await run(holdAndSettle(hot), 2);
    const baselineSpread = await run(bareUpdate(spread), 1);
    const spreadOps = await run(holdAndSettle(spread), 2);
    const spreadOnWorkerRows = await run(holdAndSettleOnWorkerRows(spread), 2);
    // Where the time goes: a short run over 1,000 accounts with every statement timed (from its
    // call to its reply, so a lock wait counts), and with BENCH_CPU_PROF a V8 profile of another.
    const profile = await profiled(() => run(holdAndSettle(spread), 2));
    const profDir = process.env.BENCH_CPU_PROF;
    if (profDir) await cpuProfile(path.resolve(profDir), 'money', () => run(holdAndSettle(spread), 2));

    // One call is a start and an end: two operations.
    const calls = (r: { opsPerSecond: number }) => Math.round(r.opsPerSecond / 2);
    const perCall = (c: CpuPerOp) => `${c.postgresMicros * 2} µs PostgreSQL + ${c.nodeMicros * 2} µs Node`;
    const cpu = (c: CpuPerOp) => `${c.postgresMicros} µs PostgreSQL + ${c.nodeMicros} µs Node`;
    const met = calls(spreadOps) >= TARGET_CALLS_PER_SECOND;
    const top = profile.slice(0, 6).map((s) => `${s.share} ${s.calls}× ${s.sql}`);
    return {
      name: 'call starts+ends per second (target ≥ 1,000) vs bare UPDATE … RETURNING',
      callsPerSecond: { spread: calls(spreadOps), hot: calls(hotOps), target: TARGET_CALLS_PER_SECOND, met },
      hot: { subject: hotOps, baseline: baselineHot },
      spread: { subject: spreadOps, baseline: baselineSpread },
      spreadOnWorkerRows: { subject: spreadOnWorkerRows, callsPerSecond: calls(spreadOnWorkerRows) },
      profile: profile.slice(0, 10),
      summary:
        `call starts+ends (a start AND an end is one; hold through the account actor, end in the call actor's transaction) over 1,000 accounts: ` +
        `${calls(spreadOps)}/s (target ≥ 1,000 call starts+ends per second: ${met ? 'met' : 'not met'}); one hot account: ${calls(hotOps)}/s. ` +
        `As operations (a start or an end each) against bare UPDATE … RETURNING in the same run: 1,000 accounts ${spreadOps.opsPerSecond} ops/s vs ` +
        `${baselineSpread.opsPerSecond} = ${ratio(spreadOps.opsPerSecond, baselineSpread.opsPerSecond)}; hot ${hotOps.opsPerSecond} ops/s vs ` +
        `${baselineHot.opsPerSecond} = ${ratio(hotOps.opsPerSecond, baselineHot.opsPerSecond)}. ` +
        `CPU per call start+end, 1,000 accounts: ${perCall(spreadOps.cpu)} (per bare UPDATE: ${cpu(baselineSpread.cpu)}); ` +
        `hot: ${perCall(hotOps.cpu)} (bare: ${cpu(baselineHot.cpu)}). ` +
        `As measured before round 33 (one call row per worker updated at every end, the hold's reference not the call's id), 1,000 accounts: ` +
        `${calls(spreadOnWorkerRows)}/s, ${spreadOnWorkerRows.opsPerSecond} ops/s vs ${baselineSpread.opsPerSecond} = ` +
        `${ratio(spreadOnWorkerRows.opsPerSecond, baselineSpread.opsPerSecond)}, ${perCall(spreadOnWorkerRows.cpu)} a call. Time by statement: ${top.join('; ')}`,
    };
  } finally {
    await svc.stop();
    await db.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
