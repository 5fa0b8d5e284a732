import path from 'node:path';
import { cleanUpEverything, makeTempRoot, startSwitchboard } from '../test/e2e/process-helpers.ts';
import { client } from '../test/helpers/http.ts';
import { load, ratio, startHelloWorld } from './lib.ts';

/**
 * Authenticated GET /v1/customers/{id}/readiness against the real program (its own embedded
 * PostgreSQL), next to a bare fastify hello world measured in the same run. Target: at least 40 %
 * of the hello-world rate.
 */
export async function readinessBench(seconds: number) {
  const hello = await startHelloWorld();
  const baseline = await load(hello.url, { seconds });
  await hello.stop();

  const dataDir = await makeTempRoot('switchboard-bench-');
  // Its log (one line per request) goes to a file, as under pm2 or systemd, not through a pipe
  // into this process, which also runs autocannon.
  let sb: Awaited<ReturnType<typeof startSwitchboard>> | undefined;
  try {
    sb = await startSwitchboard({ dataDir, env: { SWITCHBOARD_ADMIN_TOKEN: 'sbc_bench_readiness_token_UfUfhL8VxIU4' }, stdoutFile: path.join(dataDir, 'switchboard.log') });
    const con = client(sb.url, 'sbc_bench_readiness_token_UfUfhL8VxIU4');
    const account = (await con.post('/admin/v1/accounts', { name: 'Bench', country: 'US' })).body;
    // Limits high enough that the benchmark measures the work, not the 429 path.
    await con.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 100_000_000, burst: 100_000_000 });
    const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'bench' })).body;
    const customer = (await client(sb.url, key.secret).post('/v1/customers', { name: 'Bench Customer' })).body;
    const subject = await load(`${sb.url}/v1/customers/${customer.id}/readiness`, { seconds, headers: { authorization: `Bearer ${key.secret}` }, serverPid: sb.pid });
    // The service's own floor: every hook, no key, no database.
    const health = await load(`${sb.url}/healthz`, { seconds, serverPid: sb.pid });
    return {
      name: 'readiness GET vs bare fastify',
      baseline,
      subject,
      health,
      summary:
        `readiness ${subject.requestsPerSecond} req/s (p99 ${subject.p99Ms} ms) vs hello world ${baseline.requestsPerSecond} req/s (p99 ${baseline.p99Ms} ms): ` +
        `${ratio(subject.requestsPerSecond, baseline.requestsPerSecond)} of baseline (target ≥ 40 %); the service's /healthz (no key, no database) ` +
        `${health.requestsPerSecond} req/s = ${ratio(health.requestsPerSecond, baseline.requestsPerSecond)}; CPU per request: readiness ` +
        `${subject.cpu?.nodeMicros} µs server + ${subject.cpu?.postgresMicros} µs PostgreSQL, /healthz ${health.cpu?.nodeMicros} µs server` +
        `${subject.non2xx || subject.errors ? `; ${subject.non2xx} non-2xx, ${subject.errors} errors` : ''}`,
    };
  } finally {
    // Also when start-up failed: nothing the benchmark started may outlive it.
    await sb?.stop('SIGTERM').catch(() => {});
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
