import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { cleanUpEverything, makeTempRoot, startSwitchboard } from '../test/e2e/process-helpers.ts';
import { client } from '../test/helpers/http.ts';
import { consoleAs } from '../test/helpers/console.ts';
import { ADMIN_TOKEN } from '../test/helpers/service.ts';
import { startEmbeddedDatabase } from '../runtime/embedded-db.ts';
import { createLogger } from '../runtime/logger.ts';
import { realClock } from '../runtime/clock.ts';
import { createConsoleBilling } from '../actors/console/billing.ts';
import { cpuMeter, ratio } from './lib.ts';

const CALLS = 10_000;
const CUSTOMERS = 20;
const RATE = 100;

/**
 * The account's calls, straight into the table (a bench-only seed): CALLS of them over the last
 * 45 days (a third outside the overview's 30), mixed outcomes, one in ten with an appointment,
 * spread over the account's customers; as many again in another account.
 */
async function seedCalls(pool: pg.Pool, accountId: string, customerIds: string[]) {
  await pool.query(
    `INSERT INTO calls (account_id, mode, customer_id, to_e164, to_country, phone_input, status, outcome, dial_before, next_attempt_at,
                        appointment_id, created_at, updated_at)
     SELECT $1, 'test', ($2::uuid[])[1 + i % cardinality($2::uuid[])], '+1202555' || lpad((i % 10000)::text, 4, '0'), 'US', '+12025550000',
            'completed', (ARRAY['appointment_booked','not_interested','voicemail','no_answer','call_back_later','completed'])[1 + i % 6],
            t, t, CASE WHEN i % 10 = 0 THEN gen_random_uuid() END, t, t
       FROM generate_series(1, $3::int) AS i, LATERAL (SELECT now() - i * interval '389 seconds' AS t) AS at`,
    [accountId, customerIds, CALLS],
  );
  await pool.query('VACUUM ANALYZE calls');
}

/**
 * p(99) of `op` started RATE times a second, evenly spaced, for `seconds` (each timed from when it
 * was due, so a slow one delays none of the measurements of the next), after a 2-second warm-up.
 * Route and baseline are paced by this same loop: autocannon's `overallRate` releases each
 * second's requests together at its start, a burst the even baseline never meets. `cpuPid`: whose
 * CPU to count (this process when absent).
 */
async function atRate(op: () => Promise<unknown>, seconds: number, cpuPid?: number) {
  const run = async (s: number) => {
    const latencies: number[] = [];
    const t0 = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < s * RATE; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(op().then(() => void latencies.push(performance.now() - due)));
    }
    await Promise.all(pending);
    return latencies.sort((a, b) => a - b);
  };
  await run(2);
  const meter = cpuMeter(cpuPid === undefined ? {} : { pid: cpuPid });
  const sorted = await run(seconds);
  return { cpu: meter.perOp(sorted.length), p50Ms: Math.round(sorted[Math.floor(sorted.length * 0.5)]! * 10) / 10, p99Ms: Math.round(sorted[Math.floor(sorted.length * 0.99)]! * 10) / 10 };
}

/**
 * GET /console/api/overview (a signed-in owner's session cookie, test mode) at RATE requests a
 * second against the program with CALLS calls in the account, and the same reads called directly
 * on a pool of the same PostgreSQL (createConsoleBilling().overview: the balance, the 30 days of
 * calls and the customers' readiness, without HTTP, session or serialising), at the same rate in
 * the same run. The ratio is the route's p99 over the bare reads' p99.
 */
export async function consoleOverviewBench(seconds: number) {
  const dataDir = await makeTempRoot('switchboard-bench-');
  const log = createLogger('warn');
  const db = await startEmbeddedDatabase(path.join(dataDir, 'db'), log);
  const pool = new pg.Pool({ connectionString: db.url, max: 10 });
  // An idle client whose server stops at the end emits 'error': not a crash of the bench.
  pool.on('error', () => {});
  let sb: Awaited<ReturnType<typeof startSwitchboard>> | undefined;
  try {
    sb = await startSwitchboard({
      dataDir,
      env: { DATABASE_URL: db.url, SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN },
      stdoutFile: path.join(dataDir, 'switchboard.log'),
    });
    const con = client(sb.url, ADMIN_TOKEN);
    const account = (await con.post('/admin/v1/accounts', { name: 'Bench', country: 'US' })).body;
    await con.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 100_000_000, burst: 100_000_000, max_customers: 1000 });
    const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'bench' })).body;
    const api = client(sb.url, key.secret);
    const customers: string[] = [];
    for (let i = 0; i < CUSTOMERS; i++) customers.push((await api.post('/v1/customers', { name: `Bench Customer ${i}` })).body.id);
    await seedCalls(pool, account.id, customers);
    const other = (await con.post('/admin/v1/accounts', { name: 'Other', country: 'US' })).body;
    const otherKey = (await con.post(`/admin/v1/accounts/${other.id}/keys`, { mode: 'test', label: 'bench' })).body;
    await seedCalls(pool, other.id, [(await client(sb.url, otherKey.secret).post('/v1/customers', { name: 'Other Customer' })).body.id]);

    const owner = await consoleAs(sb.url, account.id, 'owner');
    const check = await owner.get('/console/api/overview?mode=test');
    const placed = check.body.calls_by_day?.reduce((n: number, d: { placed: number }) => n + d.placed, 0);
    if (check.status !== 200 || !(placed > 0) || check.body.blocked_customers.length !== CUSTOMERS) throw new Error(`overview not as seeded: ${check.status} ${check.text.slice(0, 300)}`);

    const url = `${sb.url}/console/api/overview?mode=test`;
    let failures = 0;
    const subject = await atRate(
      () =>
        fetch(url, { headers: { cookie: owner.cookie } }).then(async (r) => {
          await r.arrayBuffer();
          if (r.status !== 200) failures++;
        }),
      seconds,
      sb.pid,
    );
    const bare = createConsoleBilling({ pool, clock: realClock, realClock });
    const baseline = await atRate(() => bare.overview(account.id, 'test', true), seconds);
    return {
      name: 'console overview p99 at 100 req/s vs the same reads bare',
      calls: CALLS,
      placedInWindow: placed,
      subject,
      baseline,
      summary:
        `console overview (${CALLS} calls, ${CUSTOMERS} customers) at ${RATE} req/s: route p99 ${subject.p99Ms} ms (p50 ${subject.p50Ms} ms) ` +
        `vs the same reads bare on a pool p99 ${baseline.p99Ms} ms (p50 ${baseline.p50Ms} ms): ` +
        `route p99 = ${ratio(subject.p99Ms, baseline.p99Ms)} of bare; CPU per request: route ${subject.cpu?.nodeMicros} µs server + ${subject.cpu?.postgresMicros} µs PostgreSQL, ` +
        `bare ${baseline.cpu.nodeMicros} µs node + ${baseline.cpu.postgresMicros} µs PostgreSQL (the machine's load average during the run: ${os.loadavg()[0]!.toFixed(1)})` +
        `${failures ? `; ${failures} answers were not 200` : ''}`,
    };
  } finally {
    await sb?.stop('SIGTERM').catch(() => {});
    await pool.end().catch(() => {});
    await db.stop().catch(() => {});
    await cleanUpEverything();
  }
}
