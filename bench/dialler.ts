import pg from 'pg';
import { cleanUpEverything, makeTempRoot, ROOT, startSwitchboard, type Instance } from '../test/e2e/process-helpers.ts';
import { client } from '../test/helpers/http.ts';
import { ADMIN_TOKEN } from '../test/helpers/service.ts';
import { advanceToNext, makeReadyCustomer } from '../test/helpers/calls.ts';
import { startEmbeddedDatabase } from '../runtime/embedded-db.ts';
import { createLogger } from '../runtime/logger.ts';
import { cpuMeter, postmasterOf } from './lib.ts';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Issue 25 §4: at least this many admissions per second with four processes, and no double dial. */
export const TARGET_PER_SECOND = 1_000;
const PROCESSES = 4;
/** How long the processes' CPU is measured with nothing to dial, ms. */
const IDLE_MS = 3_000;
/** How long a simulated call rings unless released: well past any measured window (the keeper asks the carrier about a call ringing 2 minutes). */
const RING_MS = 100_000;
/** How long the calls' ends may take after their release before the bench gives up, ms. */
const END_WAIT_MS = 180_000;

/**
 * The dialler across 4 processes on one PostgreSQL: queued requests claimed and started per
 * second (simulated calls, the full gate path: admission facts, the pure decision, the money
 * start, the compliance record, the call actor's dial), and a check that no request was dialled
 * twice. The numbers end in 2 (simulated: no answer). An admission, as issue 25 names it, is the
 * request taken through every gate, its hold, its compliance record and its dial: a real call then
 * rings and talks for tens of seconds to minutes, so the ends of a burst of admissions come long
 * after it. The simulated carrier therefore holds every call ringing (SWITCHBOARD_SIMULATED_RING_MS)
 * through the measured window; after it, each process's carrier ends the ring of its calls
 * (`POST /admin/v1/simulated_carrier/release_ringing`), the calls' ends run (three status reports,
 * the settlement, the outcome, the retry request, the event) and the bench checks that every call
 * ended, was settled once and none was dialled twice. The whole-call figure (admission and end,
 * what this bench measured before) is printed beside it. Rounds are driven by
 * `POST /admin/v1/dialler/run` on every process at once until no request of the run is due.
 *
 * Besides the rate (which moves with the load on a shared machine), the CPU per admission of the
 * four processes and of this run's PostgreSQL (its postmaster and backends only), and PostgreSQL
 * transactions per admission (pg_stat_database: each statement outside a transaction is one).
 *
 * BENCH_DIALLER_REQUESTS sets how many requests are queued (default 5,000, the most: each has a
 * number of its own; 1,000 were admitted in about a second once admissions were batched, too
 * short a window to measure). BENCH_CPU_PROF=<dir>: each process writes a V8 CPU profile of
 * the measured run there (bench/cpu-profile-preload.mjs; read with bench/profile-top.mjs).
 */
export async function diallerBench(requests = Number(process.env.BENCH_DIALLER_REQUESTS ?? 5000)) {
  if (requests > 5000) throw new Error('at most 5,000 requests: each has a number of its own');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-dialler-'));
  const db = await startEmbeddedDatabase(dir, createLogger('warn'));
  const profDir = process.env.BENCH_CPU_PROF;
  // makeReadyCustomer drives the console with the test helpers' token.
  const token = ADMIN_TOKEN;
  const env = {
    DATABASE_URL: db.url,
    SWITCHBOARD_ADMIN_TOKEN: token,
    SWITCHBOARD_TEST_CLOCK: '1',
    SWITCHBOARD_DIALLER_POLL_MS: '3600000',
    // Every call of the run rings at once (held through the window): an operator running four
    // processes for this load lets each hold all of them (a process may claim most of a burst).
    SWITCHBOARD_MAX_CALLS: String(Math.max(200, requests)),
    // A simulated call rings this long (a real one rings up to the dial's 30 s, then talks for
    // minutes): longer than the measured window, and ended by `release_ringing` after it.
    SWITCHBOARD_SIMULATED_RING_MS: String(RING_MS),
    LOG_LEVEL: 'info',
    SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    ...(profDir ? { NODE_OPTIONS: `--import=${path.join(ROOT, 'bench', 'cpu-profile-preload.mjs')}`, BENCH_CPU_PROF_DIR: path.resolve(profDir) } : {}),
  };
  const processes: Instance[] = [];
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  try {
    for (let i = 0; i < PROCESSES; i++) {
      const dataDir = await makeTempRoot('switchboard-bench-');
      // Their logs go to files, as under pm2, not through pipes into this process.
      processes.push(await startSwitchboard({ dataDir, env, stdoutFile: path.join(dataDir, 'switchboard.log') }));
    }
    const url = processes[0].url;
    const con = client(url, token);
    const account = (await con.post('/admin/v1/accounts', { name: 'Dialler Bench', country: 'US' })).body;
    await con.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 100_000_000, burst: 100_000_000, concurrent_calls: 100_000 });
    const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'bench' })).body;
    const api = client(url, key.secret);
    const customer = await makeReadyCustomer(url, api);
    const clockNow = await advanceToNext({ id: account.id, testKey: key.secret, testKeyId: key.id, api, admin: con }, 2, 15);
    // The shared test clock runs on from there with the wall clock.
    const clockOffset = clockNow.getTime() - Date.now();
    const ids: string[] = [];
    for (let i = 0; i < requests; i += 50) {
      const posted = await Promise.all(
        // Line numbers 0xx2: business landlines in test mode (no consent needed, README), no answer.
        Array.from({ length: Math.min(50, requests - i) }, (_, j) => {
          const k = i + j;
          return api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: `+1202${500 + Math.floor(k / 10)}0${k % 10}02` });
        }),
      );
      for (const r of posted) {
        if (r.status !== 201 && r.status !== 200) throw new Error(`POST /v1/calls answered ${r.status}: ${JSON.stringify(r.body)}`);
        ids.push(r.body.id);
      }
    }
    const queued = Number((await pool.query(`SELECT count(*) FROM calls WHERE id = ANY($1) AND status = 'queued'`, [ids])).rows[0].count);
    // Requests of this run still due: a process stops when its round dialled none and none is left.
    const due = async () =>
      Number((await pool.query(`SELECT count(*) FROM calls WHERE id = ANY($1) AND status = 'queued' AND next_attempt_at <= $2`, [ids, new Date(Date.now() + clockOffset)])).rows[0].count);

    // What the four processes and PostgreSQL burn with nothing to dial (poll loops, the call
    // keepers, the jobs), per second: the run pays it for as long as it lasts.
    const idle = processesCpu(processes.map((p) => p.pid), dir);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idleUsed = idle();
    const idlePerSecond = ((idleUsed.nodeMicros + idleUsed.postgresMicros) * 1000) / IDLE_MS;

    if (profDir) for (const p of processes) p.kill('SIGUSR2');
    const cpu = processesCpu(processes.map((p) => p.pid), dir);
    const xacts0 = await transactions(pool);
    const started = performance.now();
    let rounds = 0;
    await Promise.all(
      processes.map(async (p) => {
        const c = client(p.url, token);
        for (;;) {
          const res = await c.post('/admin/v1/dialler/run');
          rounds++;
          if (res.status !== 200) throw new Error(`POST /admin/v1/dialler/run answered ${res.status}: ${JSON.stringify(res.body)}`);
          if (res.body.dialled === 0 && (await due()) === 0) return;
        }
      }),
    );
    // The window ends once every dialled call rings: its `initiated` and `ringing` reports, sent by
    // the carrier within a moment of the dial, are processed inside it, the last round's too.
    const unrung = async () =>
      Number((await pool.query(`SELECT count(*) FROM calls WHERE id = ANY($1) AND dialed_at IS NOT NULL AND status = 'dialing'`, [ids])).rows[0].count);
    for (let waited = 0; (await unrung()) > 0 && waited < 30_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    const seconds = (performance.now() - started) / 1000;
    const used = cpu();
    const xacts = (await transactions(pool)) - xacts0;
    if (profDir) {
      for (const p of processes) p.kill('SIGUSR2');
      for (const p of processes) for (let i = 0; i < 100 && !p.stderr().includes('profile 1 written'); i++) await new Promise((r) => setTimeout(r, 100));
    }
    // Calls of the run that ended inside the window (none should: they ring until released).
    const endedInWindow = Number((await pool.query(`SELECT count(*) FROM calls WHERE id = ANY($1) AND dialed_at IS NOT NULL AND ended_at IS NOT NULL`, [ids])).rows[0].count);

    // After the window: every process's carrier ends the ring of its calls (no answer), and the
    // calls' ends run (reports, settlement, outcome, retry request, event), measured on their own.
    const endCpu = processesCpu(processes.map((p) => p.pid), dir);
    const endXacts0 = await transactions(pool);
    const endStarted = performance.now();
    let released = 0;
    for (const p of processes) {
      const res = await client(p.url, token).post('/admin/v1/simulated_carrier/release_ringing');
      if (res.status !== 200) throw new Error(`POST /admin/v1/simulated_carrier/release_ringing answered ${res.status}: ${JSON.stringify(res.body)}`);
      released += res.body.released;
    }
    const running = async () =>
      Number((await pool.query(`SELECT count(*) FROM calls WHERE id = ANY($1) AND dialed_at IS NOT NULL AND ended_at IS NULL`, [ids])).rows[0].count);
    for (let waited = 0; (await running()) > 0 && waited < END_WAIT_MS; waited += 100) await new Promise((r) => setTimeout(r, 100));
    const endSeconds = (performance.now() - endStarted) / 1000;
    const endUsed = endCpu();
    const endXacts = (await transactions(pool)) - endXacts0;
    const notEnded = await running();
    // Every dialled call settled once: its one hold (UNIQUE per account and reference) no longer
    // open, and at most one call line in the ledger for it.
    const unsettled = Number(
      (await pool.query(`SELECT count(*) FROM calls c LEFT JOIN holds h ON h.reference = c.id::text WHERE c.id = ANY($1) AND c.dialed_at IS NOT NULL AND (h.id IS NULL OR h.status = 'open')`, [ids])).rows[0].count,
    );
    const settledTwice = Number(
      (await pool.query(`SELECT count(*) FROM (SELECT reference FROM ledger_entries WHERE reference = ANY($1::text[]) AND cause = 'call' GROUP BY reference HAVING count(*) > 1) AS t`, [ids])).rows[0]
        .count,
    );

    const dialled = Number((await pool.query(`SELECT count(*) FROM calls WHERE id = ANY($1) AND dialed_at IS NOT NULL`, [ids])).rows[0].count);
    // Dialled twice: claimed again after a dial (the claim's own count), or placed with the
    // carrier more than once (its status reports name more than one carrier call).
    const twiceClaimed = Number((await pool.query(`SELECT count(*) FROM calls WHERE id = ANY($1) AND attempts > 1 AND dialed_at IS NOT NULL`, [ids])).rows[0].count);
    const twicePlaced = Number(
      (
        await pool.query(
          `SELECT count(*) FROM (SELECT call_id FROM carrier_reports WHERE call_id = ANY($1) AND kind = 'status'
                                  GROUP BY call_id HAVING count(DISTINCT report->>'carrierCallId') > 1) AS t`,
          [ids],
        )
      ).rows[0].count,
    );
    const byProcess = (await pool.query(`SELECT claimed_by, count(*)::int AS n FROM calls WHERE id = ANY($1) AND dialed_at IS NOT NULL GROUP BY claimed_by`, [ids])).rows;
    // Requests of the run not dialled, by what became of them (a wait's reason, or how it ended).
    const notDialled = (
      await pool.query(
        `SELECT status, coalesce(waiting_reason, outcome, '-') AS why, count(*)::int AS n FROM calls WHERE id = ANY($1) AND dialed_at IS NULL GROUP BY 1, 2 ORDER BY 3 DESC`,
        [ids],
      )
    ).rows.map((r) => `${r.n} ${r.status} (${r.why})`);
    const doubleDials = Math.max(twiceClaimed, twicePlaced);
    const perSecond = Math.round(dialled / seconds);
    const per = (micros: number) => Math.round(micros / Math.max(dialled, 1));
    const cpuPerAdmission = { nodeMicros: per(used.nodeMicros), postgresMicros: per(used.postgresMicros) };
    const idlePerAdmission = Math.round((idlePerSecond * seconds) / Math.max(dialled, 1));
    const endPer = (micros: number) => Math.round(micros / Math.max(dialled, 1));
    const endCpuPerCall = { nodeMicros: endPer(endUsed.nodeMicros), postgresMicros: endPer(endUsed.postgresMicros) };
    // The whole call (admission and end), as the bench measured it before calls were held ringing.
    const wholeSeconds = seconds + endSeconds;
    const wholePerSecond = Math.round(dialled / wholeSeconds);
    const wholeCpu = cpuPerAdmission.nodeMicros + cpuPerAdmission.postgresMicros + endCpuPerCall.nodeMicros + endCpuPerCall.postgresMicros;
    const checked = notEnded === 0 && unsettled === 0 && settledTwice === 0 && endedInWindow === 0;
    const met = perSecond >= TARGET_PER_SECOND && doubleDials === 0 && dialled === queued && checked;
    return {
      name: 'dialler: 4 processes, one PostgreSQL',
      queued,
      dialled,
      doubleDials,
      seconds,
      perSecond,
      rounds,
      processes: byProcess.length,
      notDialled,
      cpuPerAdmission,
      idlePerAdmission,
      transactionsPerAdmission: Number((xacts / Math.max(dialled, 1)).toFixed(1)),
      endedInWindow,
      released,
      notEnded,
      unsettled,
      settledTwice,
      end: { seconds: endSeconds, cpuPerCall: endCpuPerCall, transactionsPerCall: Number((endXacts / Math.max(dialled, 1)).toFixed(1)) },
      wholeCalls: { perSecond: wholePerSecond, cpuMicros: wholeCpu },
      target: { perSecond: TARGET_PER_SECOND, doubleDials: 0, met },
      summary:
        `dialler: ${dialled} of ${queued} queued requests admitted and dialled in ${seconds.toFixed(2)} s by ${PROCESSES} processes (${rounds} rounds) = ${perSecond} admissions/s ` +
        `(target ≥ 1,000/s, today about 100–130/s); requests dialled more than once: ${doubleDials} (target 0); processes that dialled: ${byProcess.length}; ` +
        `CPU per admission: ${cpuPerAdmission.nodeMicros} µs in the ${PROCESSES} processes + ${cpuPerAdmission.postgresMicros} µs PostgreSQL = ${cpuPerAdmission.nodeMicros + cpuPerAdmission.postgresMicros} µs ` +
        `(${Math.round(1e6 / Math.max(cpuPerAdmission.nodeMicros + cpuPerAdmission.postgresMicros, 1))} admissions per CPU-second; of it ${idlePerAdmission} µs what the processes and PostgreSQL use idle over as long), ${(xacts / Math.max(dialled, 1)).toFixed(1)} PostgreSQL transactions per admission; ` +
        `after the window: ${released} calls released from ringing, ${endedInWindow} had ended inside the window, ${notEnded} not ended, ${unsettled} not settled, ${settledTwice} settled twice; ` +
        `whole calls (admission and end, as this bench measured before calls rang through the window): ${wholePerSecond} calls/s, ` +
        `the ends ${endCpuPerCall.nodeMicros} + ${endCpuPerCall.postgresMicros} µs and ${(endXacts / Math.max(dialled, 1)).toFixed(1)} transactions a call, ${wholeCpu} µs CPU a whole call; ` +
        `load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores; ${met ? 'met' : 'not met'}` +
        (notDialled.length ? `; not dialled: ${notDialled.join(', ')}` : ''),
    };
  } finally {
    await pool.end().catch(() => {});
    for (const p of processes) await p.stop('SIGTERM').catch(() => {});
    await cleanUpEverything();
    await db.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Transactions committed so far in the whole cluster (every autocommitted statement is one). */
async function transactions(pool: pg.Pool): Promise<number> {
  return Number((await pool.query(`SELECT sum(xact_commit + xact_rollback) AS n FROM pg_stat_database`)).rows[0].n);
}

/**
 * CPU (µs) used from now on by the processes `pids` and by the PostgreSQL server of `dataDir` (its
 * postmaster and its children, bench/lib.ts `cpuMeter`), not by whatever else runs on the machine.
 */
function processesCpu(pids: number[], dataDir: string): () => { nodeMicros: number; postgresMicros: number } {
  const postmaster = postmasterOf(dataDir);
  const meters = pids.map((pid) => cpuMeter({ pid, postmaster }));
  return () => {
    const used = meters.map((m) => m.perOp(1));
    return { nodeMicros: used.reduce((a, u) => a + u.nodeMicros, 0), postgresMicros: used[0].postgresMicros };
  };
}
