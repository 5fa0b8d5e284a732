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
 * transaction of its own that locks the call row, settles through `settleCall` and writes the
 * call's outcome (not through the account actor, which real call ends never pass). Each worker
 * ends its calls on a call row of its own, as every call has its own row; `finish`'s carrier
 * inbox row, do-not-call read and recording wait are left out.
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
    // One call row per worker, locked and given its outcome at each end (see above).
    const callIds: string[] = [];
    for (let w = 0; w < workers; w++) {
      const { row } = await createCallRepository(pool).insertOrFindOpen({
        accountId: ids[0].account,
        mode: 'live',
        customerId: ids[0].customer,
        toE164: `+1202555${String(1000 + w)}`,
        toCountry: 'US',
        phoneInput: `+1202555${String(1000 + w)}`,
        businessName: null,
        externalRef: null,
        dialBefore: new Date(Date.now() + 86_400_000),
        now: new Date(),
      });
      callIds.push(row.id);
    }

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
      const { account, customer } = pick(w, i);
      const reference = `b-${w}-${i}-${Math.random()}`;
      const started = await accounts.ask(account, { type: 'start_call', mode: 'live', customerId: customer, reference });
      if (!started.ok) throw new Error(`refused: ${started.reason}`);
      await withTransaction(pool, async (client) => {
        const now = new Date();
        const calls = createCallRepository(client);
        await calls.lock(callIds[w]);
        await money.settleCall(client, { accountId: account, reference, durationSeconds: 65, now });
        await calls.update(callIds[w], { status: 'completed', outcome: 'not_interested', duration_seconds: 65, ended_at: now, updated_at: now, lease_expires_at: null, summary: 'bench' });
      });
    };
    const bareUpdate = (pick: (w: number, i: number) => { account: string }) => async (w: number, i: number) => {
      await pool.query(`UPDATE account_money SET reserved_cents = reserved_cents + 0 WHERE account_id = $1 AND mode = 'live' RETURNING *`, [pick(w, i).account]);
    };
    const hot = () => ids[0];
    const spread = () => ids[Math.floor(Math.random() * ids.length)];

    const baselineHot = await run(bareUpdate(hot), 1);
    const hotOps = await run(holdAndSettle(hot), 2);
    const baselineSpread = await run(bareUpdate(spread), 1);
    const spreadOps = await run(holdAndSettle(spread), 2);
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
      profile: profile.slice(0, 10),
      summary:
        `call starts+ends (a start AND an end is one; hold through the account actor, end in the call actor's transaction) over 1,000 accounts: ` +
        `${calls(spreadOps)}/s (target ≥ 1,000 call starts+ends per second: ${met ? 'met' : 'not met'}); one hot account: ${calls(hotOps)}/s. ` +
        `As operations (a start or an end each) against bare UPDATE … RETURNING in the same run: 1,000 accounts ${spreadOps.opsPerSecond} ops/s vs ` +
        `${baselineSpread.opsPerSecond} = ${ratio(spreadOps.opsPerSecond, baselineSpread.opsPerSecond)}; hot ${hotOps.opsPerSecond} ops/s vs ` +
        `${baselineHot.opsPerSecond} = ${ratio(hotOps.opsPerSecond, baselineHot.opsPerSecond)}. ` +
        `CPU per call start+end, 1,000 accounts: ${perCall(spreadOps.cpu)} (per bare UPDATE: ${cpu(baselineSpread.cpu)}); ` +
        `hot: ${perCall(hotOps.cpu)} (bare: ${cpu(baselineHot.cpu)}). Time by statement: ${top.join('; ')}`,
    };
  } finally {
    await svc.stop();
    await db.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
