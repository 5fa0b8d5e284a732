import path from 'node:path';
import stringify from 'safe-stable-stringify';
import { cleanUpEverything, makeTempRoot, postgresProcessesFor, ROOT, startSwitchboard } from '../test/e2e/process-helpers.ts';
import { client } from '../test/helpers/http.ts';
import { createLogger } from '../runtime/logger.ts';
import { startEmbeddedDatabase } from '../runtime/embedded-db.ts';
import { inTurns, load, pairedRatios, ratio, startBenchServer, type LoadResult } from './lib.ts';
import { openLoop, type OpenLoopResult } from './open-loop.ts';

/** The rate offered for the latency target, requests per second. */
export const OFFERED_RATE = 2_000;
/** The service's default pool size (SWITCHBOARD_DB_POOL_SIZE), which the baseline's pool copies. */
const POOL_SIZE = process.env.SWITCHBOARD_DB_POOL_SIZE ?? '20';
/** Turns of each throughput pair (readiness and its bare route, /healthz and a hello world). */
const TURNS = 6;

/**
 * Authenticated GET /v1/customers/{id}/readiness against the real program, next to its baseline
 * in the same run: a bare fastify route (bench/readiness-baseline-server.ts) that runs the same
 * statement on a pool like the service's, on the same PostgreSQL, and answers the same JSON.
 * Targets (issue 25 §4): at least 70 % of the baseline's requests per second, p99 under 10 ms at
 * 2,000 requests per second offered; the service's `/healthz` at least 60 % of a bare fastify
 * hello world. Each pair is measured in turns (bench/lib.ts `inTurns`), so that the load of
 * whatever else runs on the machine weighs on both alike.
 *
 * BENCH_CPU_PROF=<dir>: the service runs under V8's sampling profiler (bench/cpu-profile-preload.mjs)
 * and writes its profile of the whole run there before it stops (read it with bench/profile-top.mjs).
 */
export async function readinessBench(seconds: number) {
  const dataDir = await makeTempRoot('switchboard-bench-');
  const db = await startEmbeddedDatabase(path.join(dataDir, 'db'), createLogger('warn'));
  const profDir = process.env.BENCH_CPU_PROF;
  const profile: Record<string, string> = profDir ? { NODE_OPTIONS: `--import=${path.join(ROOT, 'bench', 'cpu-profile-preload.mjs')}`, BENCH_CPU_PROF_DIR: path.resolve(profDir) } : {};
  // PostgreSQL's CPU is this run's server and backends only, not that of other work on the machine.
  const postgresPid = postgresProcessesFor(path.join(dataDir, 'db'))[0]?.pid;
  // Its log (one line per request) goes to a file, as under pm2 or systemd, not through a pipe
  // into this process, which also runs autocannon.
  let sb: Awaited<ReturnType<typeof startSwitchboard>> | undefined;
  const servers: { stop: () => Promise<void> }[] = [];
  try {
    sb = await startSwitchboard({
      dataDir,
      env: {
        DATABASE_URL: db.url,
        SWITCHBOARD_DB_POOL_SIZE: POOL_SIZE,
        SWITCHBOARD_ADMIN_TOKEN: 'sbc_bench_readiness_token_UfUfhL8VxIU4',
        ...profile,
      },
      stdoutFile: path.join(dataDir, 'switchboard.log'),
      // A machine busy with other work can take more than the default 30 s to start it.
      timeoutMs: 120_000,
    });
    const con = client(sb.url, 'sbc_bench_readiness_token_UfUfhL8VxIU4');
    const account = (await con.post('/admin/v1/accounts', { name: 'Bench', country: 'US' })).body;
    // Limits high enough that the benchmark measures the work, not the 429 path.
    await con.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 100_000_000, burst: 100_000_000 });
    const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'bench' })).body;
    const customer = (await client(sb.url, key.secret).post('/v1/customers', { name: 'Bench Customer' })).body;
    const readinessPath = `/v1/customers/${customer.id}/readiness`;
    const headers = { authorization: `Bearer ${key.secret}` };

    const bare = await startBenchServer('readiness-baseline-server.ts', { DATABASE_URL: db.url, POOL_SIZE, ...profile });
    servers.push(bare);
    const bareUrl = new URL(readinessPath, bare.url).href;
    const [same, served] = await Promise.all([fetch(bareUrl).then((r) => r.json()), fetch(`${sb.url}${readinessPath}`, { headers }).then((r) => r.json())]);
    // The same document (the service's response schema orders an action's keys its own way).
    if (stringify(same) !== stringify(served)) throw new Error(`the baseline answers other JSON than the service:\n${JSON.stringify(same)}\n${JSON.stringify(served)}`);
    const hello = await startBenchServer('hello-server.mjs', profile);
    servers.push(hello);

    const subjectUrl = `${sb.url}${readinessPath}`;
    const turn = (url: string, opts: Parameters<typeof load>[1]) => (s: number) => load(url, { ...opts, postgresPid, seconds: s, warmUpSeconds: 0 });
    // Throughput, each against its baseline in turns; then the service's own floor (every hook,
    // no key, no database) against a hello world, in turns; then latency at a fixed offered rate.
    // Six turns each (not three): the targets are judged on the median of the turn-by-turn ratios
    // (pairedRatios), since this virtual machine's speed moves by a fifth or more from minute to
    // minute (a hello world 15 → 21 µs a request between runs on an idle machine).
    const [baseline, subject] = await inTurns([turn(bareUrl, { serverPid: bare.pid }), turn(subjectUrl, { headers, serverPid: sb.pid })], seconds, TURNS);
    const [helloWorld, health] = await inTurns([turn(hello.url, { serverPid: hello.pid }), turn(`${sb.url}/healthz`, { serverPid: sb.pid })], seconds, TURNS);
    const readinessTurns = pairedRatios(subject, baseline);
    const healthTurns = pairedRatios(health, helloWorld);
    // Latency at 2,000 requests per second offered evenly (bench/open-loop.ts: each request due at
    // its own time, its latency counted from then), both routes in turns. autocannon's
    // `overallRate`, which the bench used before, sends each second's share of every connection
    // in a burst at the top of the second; its figure is still printed beside.
    const paced = (url: string, h: Record<string, string> | undefined, runs: OpenLoopResult[]) => async (s: number) => {
      const r = await openLoop(url, { rate: OFFERED_RATE, seconds: s, headers: h });
      runs.push(r);
      return r;
    };
    const bareRuns: OpenLoopResult[] = [];
    const subjectRuns: OpenLoopResult[] = [];
    // The hello world at the same rate: what this machine and the generator alone give a p99.
    const helloRuns: OpenLoopResult[] = [];
    const [baselineAtRate, subjectAtRate, helloAtRate] = await inTurns(
      [paced(bareUrl, undefined, bareRuns), paced(subjectUrl, headers, subjectRuns), paced(hello.url, undefined, helloRuns)],
      seconds,
    );
    // The first of each is inTurns's warm-up.
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const fromSend = (runs: OpenLoopResult[]) => median(runs.slice(1).map((r) => r.p99FromSendMs));
    const sendLag = (runs: OpenLoopResult[]) => median(runs.slice(1).map((r) => r.sendLagP99Ms));
    const [baselineBursts, subjectBursts] = await inTurns([turn(bareUrl, { rate: OFFERED_RATE }), turn(subjectUrl, { headers, rate: OFFERED_RATE })], seconds);

    // With BENCH_CPU_PROF, the profile of one more run of each (after the measured ones), the
    // baselines' too, so that a function's share can be set against the same function's there.
    // The requests each profiled run answered go to stderr: samples × 200 µs / requests is a
    // function's cost per request.
    if (profDir) {
      const profiled = [
        ['readiness', subjectUrl, { headers }, sb.pid],
        ['healthz', `${sb.url}/healthz`, {}, sb.pid],
        ['bare-readiness', bareUrl, {}, bare.pid],
        ['hello-world', hello.url, {}, hello.pid],
      ] as const;
      for (const [name, url, opts, pid] of profiled) {
        const r = await load(url, { ...opts, seconds, warmUpSeconds: 0, serverPid: pid, postgresPid, beforeMeasuring: () => process.kill(pid, 'SIGUSR2') });
        process.kill(pid, 'SIGUSR2');
        process.stderr.write(`profiled ${name} (pid ${pid}): ${Math.round(r.requestsPerSecond * seconds)} requests, ${r.cpu?.nodeMicros} µs server + ${r.cpu?.postgresMicros} µs PostgreSQL per request\n`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }

    const met = (ok: boolean) => (ok ? 'met' : 'not met');
    const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
    const turnsText = (t: { ratios: number[]; median: number }) => `${t.ratios.map(pct).join(', ')}, median ${pct(t.median)}`;
    const cpu = (r: LoadResult) => `${r.cpu?.nodeMicros} µs server${r.cpu?.postgresMicros ? ` + ${r.cpu.postgresMicros} µs PostgreSQL` : ''}`;
    const failures = [subject, health, subjectAtRate, subjectBursts]
      .filter((r) => r.non2xx || r.errors)
      .map((r) => `${r.non2xx} non-2xx, ${r.errors} errors`);
    return {
      name: 'readiness GET vs the same statement in a bare fastify route; /healthz vs hello world',
      baseline,
      subject,
      helloWorld,
      health,
      baselineAtRate: { ...baselineAtRate, p99FromSendMs: fromSend(bareRuns), sendLagP99Ms: sendLag(bareRuns) },
      subjectAtRate: { ...subjectAtRate, p99FromSendMs: fromSend(subjectRuns), sendLagP99Ms: sendLag(subjectRuns) },
      helloAtRate: { ...helloAtRate, sendLagP99Ms: sendLag(helloRuns) },
      baselineBursts,
      subjectBursts,
      summary:
        `readiness ${subject.requestsPerSecond} req/s (p99 ${subject.p99Ms} ms) vs the bare route with the same statement ${baseline.requestsPerSecond} req/s (p99 ${baseline.p99Ms} ms): ` +
        `${ratio(subject.requestsPerSecond, baseline.requestsPerSecond)} of the means; turn by turn ${turnsText(readinessTurns)} (target ≥ 70 %, on the median: ${met(readinessTurns.median >= 0.7)}); ` +
        `at ${OFFERED_RATE} req/s offered evenly (open loop, latency from each request's intended send): p99 ${subjectAtRate.p99Ms} ms (p50 ${subjectAtRate.p50Ms} ms, ${subjectAtRate.requestsPerSecond} req/s answered; target p99 < 10 ms: ${met(subjectAtRate.p99Ms < 10)}) vs the bare route p99 ${baselineAtRate.p99Ms} ms ` +
        `(from the actual send: p99 ${fromSend(subjectRuns)} vs ${fromSend(bareRuns)} ms; the generator's own lag p99 ${sendLag(subjectRuns)} and ${sendLag(bareRuns)} ms; ` +
        `a hello world at the same rate, the floor of this machine and generator: p99 ${helloAtRate.p99Ms} ms); ` +
        `autocannon overallRate (each second's share sent in a burst, the figure printed before): p99 ${subjectBursts.p99Ms} ms vs the bare route ${baselineBursts.p99Ms} ms; ` +
        `/healthz ${health.requestsPerSecond} req/s vs hello world ${helloWorld.requestsPerSecond} req/s: ${ratio(health.requestsPerSecond, helloWorld.requestsPerSecond)} of the means; turn by turn ${turnsText(healthTurns)} (target ≥ 60 %, on the median: ${met(healthTurns.median >= 0.6)}); ` +
        `CPU per request: readiness ${cpu(subject)}, bare route ${cpu(baseline)}, /healthz ${cpu(health)}, hello world ${cpu(helloWorld)}` +
        (failures.length ? `; ${failures.join('; ')}` : ''),
    };
  } finally {
    // Also when start-up failed: nothing the benchmark started may outlive it.
    for (const s of servers) await s.stop().catch(() => {});
    await sb?.stop('SIGTERM').catch(() => {});
    await db.stop().catch(() => {});
    await cleanUpEverything();
  }
}

/** `switchboard start` on an empty data directory until the first answered request. Target < 5 s. */
export async function coldStartBench() {
  const dataDir = await makeTempRoot('switchboard-bench-');
  let ms: number;
  try {
    const sb = await startSwitchboard({ dataDir });
    ms = sb.coldStartMs;
    await sb.stop('SIGTERM').catch(() => {});
  } finally {
    await cleanUpEverything();
  }
  return { name: 'cold start', coldStartMs: ms, summary: `cold start on an empty data directory: ${Math.round(ms)} ms to the first answered request (target < 5000 ms)` };
}
