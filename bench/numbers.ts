import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startService } from '../app/start.ts';
import { startEmbeddedDatabase } from '../runtime/embedded-db.ts';
import { createPool, type Pool } from '../db/pool.ts';
import { createMoneyWriter } from '../money/writer.ts';
import { readinessFollowsMoney } from '../actors/customer/readiness-check.ts';
import { createNumbers } from '../actors/numbers/numbers.ts';
import { dayOf } from '../money/rules/renewal.ts';
import type { NumberCarrier } from '../telephony/carrier.ts';
import { cpuMeter, cpuProfile, postmasterOf, profiled, ratio, type CpuPerOp } from './lib.ts';

const ACCOUNTS = 100;
const NUMBERS_PER_ACCOUNT = 100;
/** Issue 25 §4: the renewal of 10,000 numbers within 1.2× as long as as many bare inserts. */
const TARGET_TIMES = 1.2;
/** Where the numbers renewed by the one-by-one path are numbered (apart from the others). */
const ONE_BY_ONE_OFFSET = 200;

/**
 * One renewal job run over 10,000 numbers due today (100 live accounts with money, 100 numbers
 * each): the production `renewDue` on a pool of its own, against the same count of bare INSERTs of a ledger-like row (a scratch table
 * shaped like `ledger_entries`, one autocommitted statement each) on the same PostgreSQL in the
 * same run. Reports both times, their ratio, the ledger lines and claimed periods the run wrote
 * (both must be 10,000), and, from a second, smaller run with every statement timed, which
 * statements the time goes to; and the path before the set-based batch (each number of a batch
 * renewed in turn) over 10,000 numbers of its own in the same run.
 */
export async function numbersBench() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-numbers-'));
  const log = createLogger('warn');
  const db = await startEmbeddedDatabase(dir, log);
  // The service only creates the accounts and their money (through the account actor); its own
  // jobs are kept from running so that the job measured is the only renewal.
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    SWITCHBOARD_ADMIN_TOKEN: 'sbc_bench_numbers_Qm4c2WkfP0aZL7xvR1t9',
    SWITCHBOARD_JOB_INTERVAL_MS: '3600000',
    LOG_LEVEL: 'warn',
  });
  let svc: Awaited<ReturnType<typeof startService>> | null = await startService(config, { logger: log });
  const postmaster = postmasterOf(dir);
  const pool = createPool(db.url, 4);
  try {
    const { accounts } = svc.services;
    const customers: { account: string; customer: string }[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const id = crypto.randomUUID();
      await accounts.ask(id, { type: 'create_account', name: `Numbers bench ${i}`, country: 'US' });
      await accounts.ask(id, { type: 'top_up', amountCents: 10_000_000, paymentReference: null });
      const { rows } = await pool.query(
        `INSERT INTO customers (account_id, mode, name, country, timezone, created_at) VALUES ($1, 'live', 'c', 'US', 'America/New_York', now()) RETURNING id`,
        [id],
      );
      customers.push({ account: id, customer: rows[0].id });
    }
    // Stopped before measuring: its connections and loops would only add noise.
    await svc.stop();
    svc = null;
    const now = new Date();
    const today = dayOf(now);
    const numbers = renewalRoom(pool, config);
    const total = ACCOUNTS * NUMBERS_PER_ACCOUNT;

    // The path before the set-based batch (each number of a batch renewed in turn, three
    // statements a number), over 10,000 numbers of their own, printed beside the production path.
    await seedDue(pool, customers, NUMBERS_PER_ACCOUNT, today, now, ONE_BY_ONE_OFFSET);
    const oneByOneMeter = cpuMeter({ postmaster });
    const oneByOneStart = performance.now();
    await numbers.renewDue(now, null, { oneByOne: true });
    const oneByOneMs = performance.now() - oneByOneStart;
    const oneByOneCpu = oneByOneMeter.perOp(total);

    await seedDue(pool, customers, NUMBERS_PER_ACCOUNT, today, now, 0);

    // The baseline: the same count of one-row INSERTs, each its own transaction.
    await pool.query(`CREATE TABLE bench_ledger_like (LIKE ledger_entries INCLUDING ALL)`);
    const baselineMeter = cpuMeter({ postmaster });
    const baselineStart = performance.now();
    for (let i = 0; i < total; i++) {
      const { account, customer } = customers[i % ACCOUNTS];
      await pool.query(
        `INSERT INTO bench_ledger_like (account_id, mode, customer_id, type, cause, amount_cents, cash_cents, bonus_cents, balance_after_cents, applied, reference, description, created_at)
         VALUES ($1, 'live', $2, 'usage', 'number', -1500, -1500, 0, $3, true, $4, $5, $6)`,
        [account, customer, 1_000_000 - i, `number:${i}:${today}`, `Phone number (202) 555-${String(i % 10_000).padStart(4, '0')}, ${today} to …`, now],
      );
    }
    const baselineMs = performance.now() - baselineStart;
    const baselineCpu = baselineMeter.perOp(total);

    // Beside it, for context only (the baseline is the one above, one commit each, as it
    // measured "today 1.7×"): the same INSERTs committed a hundred at a time, the renewal's own
    // batching, so the commits' share of the baseline is seen.
    await pool.query(`TRUNCATE bench_ledger_like`);
    const batchedStart = performance.now();
    for (let from = 0; from < total; from += 100) {
      const db = await pool.connect();
      try {
        await db.query('BEGIN');
        for (let i = from; i < Math.min(total, from + 100); i++) {
          const { account, customer } = customers[i % ACCOUNTS];
          await db.query(
            `INSERT INTO bench_ledger_like (account_id, mode, customer_id, type, cause, amount_cents, cash_cents, bonus_cents, balance_after_cents, applied, reference, description, created_at)
             VALUES ($1, 'live', $2, 'usage', 'number', -1500, -1500, 0, $3, true, $4, $5, $6)`,
            [account, customer, 1_000_000 - i, `number:${i}:${today}`, `Phone number (202) 555-${String(i % 10_000).padStart(4, '0')}, ${today} to …`, now],
          );
        }
        await db.query('COMMIT');
      } finally {
        db.release();
      }
    }
    const batchedMs = performance.now() - batchedStart;

    const linesBefore = await count(pool, `SELECT count(*) FROM ledger_entries WHERE cause = 'number'`);
    const periodsBefore = await count(pool, `SELECT count(*) FROM recurring_charges WHERE period_start = $1`, [today]);
    const subjectMeter = cpuMeter({ postmaster });
    const subjectStart = performance.now();
    const processed = await numbers.renewDue(now);
    const subjectMs = performance.now() - subjectStart;
    const subjectCpu = subjectMeter.perOp(total);
    const lines = (await count(pool, `SELECT count(*) FROM ledger_entries WHERE cause = 'number'`)) - linesBefore;
    const periods = (await count(pool, `SELECT count(*) FROM recurring_charges WHERE period_start = $1`, [today])) - periodsBefore;
    const stillDue = await count(pool, `SELECT count(*) FROM phone_numbers WHERE renews_on <= $1`, [today]);

    // Where the time goes: a second run over 2,000 more numbers with every statement timed.
    await seedDue(pool, customers, 20, today, now, NUMBERS_PER_ACCOUNT);
    const profile = await profiled(() => numbers.renewDue(now));
    // BENCH_CPU_PROF=<dir>: a V8 CPU profile of one more run over 2,000 numbers, written there.
    if (process.env.BENCH_CPU_PROF) {
      await seedDue(pool, customers, 20, today, now, NUMBERS_PER_ACCOUNT + 20);
      await cpuProfile(path.resolve(process.env.BENCH_CPU_PROF), 'numbers', () => numbers.renewDue(now));
    }

    const cpu = (c: CpuPerOp) => `${c.postgresMicros} µs PostgreSQL + ${c.nodeMicros} µs Node`;
    const top = profile.slice(0, 5).map((s) => `${s.share} ${s.calls}× ${s.sql}`);
    const times = subjectMs / baselineMs;
    const met = times <= TARGET_TIMES;
    return {
      name: 'renewal job over 10,000 due numbers vs bare ledger-like INSERTs (target ≤ 1.2×)',
      target: { times: TARGET_TIMES, measured: Number(times.toFixed(2)), met },
      numbers: total,
      processed,
      ledgerLines: lines,
      periodsClaimed: periods,
      stillDue,
      subject: { ms: Math.round(subjectMs), perNumberMicros: Math.round((subjectMs * 1000) / total), cpu: subjectCpu },
      baseline: { ms: Math.round(baselineMs), perInsertMicros: Math.round((baselineMs * 1000) / total), cpu: baselineCpu },
      batchedInserts: { ms: Math.round(batchedMs), times: Number((subjectMs / batchedMs).toFixed(2)) },
      oneByOne: { ms: Math.round(oneByOneMs), times: Number((oneByOneMs / baselineMs).toFixed(2)), cpu: oneByOneCpu },
      profile: profile.slice(0, 8),
      summary:
        `renew_numbers over ${total} due numbers (${ACCOUNTS} live accounts): ${(subjectMs / 1000).toFixed(2)} s, ${lines} ledger lines and ${periods} periods written, ` +
        `${stillDue} left due; ${total} bare ledger-like INSERTs: ${(baselineMs / 1000).toFixed(2)} s; the INSERTs' time is ${ratio(baselineMs, subjectMs)} of the renewal's ` +
        `(${times.toFixed(2)}× as long; target ≤ 1.2×: ${met ? 'met' : 'not met'}). CPU per number: ${cpu(subjectCpu)} vs ${cpu(baselineCpu)} per bare INSERT. ` +
        `For context, the same INSERTs committed 100 at a time: ${(batchedMs / 1000).toFixed(2)} s (the renewal ${(subjectMs / batchedMs).toFixed(2)}× as long). ` +
        `The path before (each number of a batch in turn): ${(oneByOneMs / 1000).toFixed(2)} s, ${(oneByOneMs / baselineMs).toFixed(2)}× the INSERTs, ${cpu(oneByOneCpu)} per number. ` +
        `Time by statement: ${top.join('; ')}`,
    };
  } finally {
    await pool.end();
    await svc?.stop();
    await db.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** The numbers room as the jobs build it, on `pool`, with a carrier renewals never call. */
function renewalRoom(pool: Pool, config: ReturnType<typeof loadConfig>) {
  const unused = new Proxy({} as NumberCarrier, {
    get: (_, name) => () => Promise.reject(new Error(`the renewal job called the carrier (${String(name)})`)),
  });
  return createNumbers({
    pool,
    clock: { now: () => new Date() },
    realClock: { now: () => new Date() },
    log: createLogger('warn'),
    config,
    carriers: { test: unused, live: unused },
    money: createMoneyWriter(readinessFollowsMoney),
    secrets: { seal: () => Buffer.alloc(0), open: () => '' },
  });
}

/** `perCustomer` rented numbers of each customer, active, their rent due on `today`. */
async function seedDue(pool: Pool, customers: { account: string; customer: string }[], perCustomer: number, today: string, now: Date, offset: number) {
  for (const [i, { account, customer }] of customers.entries()) {
    await pool.query(
      `INSERT INTO phone_numbers (account_id, mode, customer_id, e164, country, kind, status, monthly_cents, anchor_day, renews_on, created_at, updated_at)
       SELECT $1, 'live', $2, '+1202' || lpad(($3 * 1000 + n)::text, 7, '0'), 'US', 'rented', 'active', 1500, $4, $5, $6, $6
         FROM generate_series($7::int, $8::int) AS n`,
      [account, customer, i, Number(today.slice(8, 10)), today, now, offset, offset + perCustomer - 1],
    );
  }
  await pool.query('ANALYZE phone_numbers');
}

async function count(pool: Pool, sql: string, params: unknown[] = []): Promise<number> {
  return Number((await pool.query(sql, params)).rows[0].count);
}
