/**
 * The metrics of `switchboard start` under pm2's cluster mode (issue 25 §1): two workers share the
 * API's port through the cluster module (test/fakes/pm2-cluster.mjs plays pm2's daemon), each
 * serves its metrics on SWITCHBOARD_METRICS_PORT + NODE_APP_INSTANCE, and `/metrics/cluster` on
 * either adds both up: every API request counted once, whichever worker answered it.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { childEnv, cleanUpEverything, freePort, makeTempRoot, ROOT } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';
import { TEST_ENCRYPTION_KEY } from '../helpers/service.ts';
import { scrape, twoFreePorts, valueOf } from '../helpers/metrics.ts';

test.after.always(cleanUpEverything);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


test('two pm2 cluster workers: each its own metrics port, /metrics/cluster counts every request once', async (t) => {
  const dir = await makeTempRoot('switchboard-metrics-pm2-');
  const port = await freePort();
  const metricsBase = await twoFreePorts();
  const daemon = spawn(process.execPath, [path.join(ROOT, 'test', 'fakes', 'pm2-cluster.mjs'), path.join(dir, 'out.log'), path.join(dir, 'err.log'), 'start'], {
    cwd: ROOT,
    env: childEnv({
      PM2_FAKE_INSTANCES: '2',
      DATABASE_URL: await freshDatabase(),
      SWITCHBOARD_DATA_DIR: path.join(dir, 'data'),
      SWITCHBOARD_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      SWITCHBOARD_ROLES: 'api',
      SWITCHBOARD_ADMIN_TOKEN: 'sbc_pm2_metrics_test_token_Qm4sX9dLwP2r',
      SWITCHBOARD_METRICS_PORT: String(metricsBase),
      SWITCHBOARD_METRICS_WORKERS: '2',
      PORT: String(port),
      HOST: '127.0.0.1',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let daemonLog = '';
  daemon.stdout.setEncoding('utf8').on('data', (d: string) => (daemonLog += d));
  daemon.stderr.setEncoding('utf8').on('data', (d: string) => (daemonLog += d));
  const exited = new Promise<number | null>((resolve) => daemon.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
  });

  // Both workers up: each one's own metrics port answers.
  const up = async (p: number) => fetch(`http://127.0.0.1:${p}/metrics`).then((r) => r.ok, () => false);
  const deadline = Date.now() + 60_000;
  while (!((await up(metricsBase)) && (await up(metricsBase + 1))) && Date.now() < deadline && daemon.exitCode === null) await sleep(100);
  t.true((await up(metricsBase)) && (await up(metricsBase + 1)), `both workers' metrics ports answer\n${daemonLog}`);

  const requests = 20;
  for (let i = 0; i < requests; i++) t.is((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
  t.is((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'not on the API port');

  const healthz = { method: 'GET', route: '/healthz', status: '200' };
  const own = [await scrape(`http://127.0.0.1:${metricsBase}/metrics`), await scrape(`http://127.0.0.1:${metricsBase + 1}/metrics`)];
  const perWorker = own.map((s) => valueOf(s, 'switchboard_http_request_duration_seconds_count', healthz));
  t.is(perWorker[0]! + perWorker[1]!, requests, `each request answered by one worker (${perWorker.join(' + ')})`);
  t.true(perWorker.every((n) => n > 0), `the cluster shared the requests (${perWorker.join(' + ')})`);
  for (const p of [metricsBase, metricsBase + 1]) {
    const cluster = await scrape(`http://127.0.0.1:${p}/metrics/cluster`);
    t.is(valueOf(cluster, 'switchboard_http_request_duration_seconds_count', healthz), requests, 'the cluster view counts them all');
    t.is(valueOf(cluster, 'switchboard_metrics_workers', { state: 'answered' }), 2);
    t.is(valueOf(cluster, 'switchboard_db_pool_connections', { pool: 'main', state: 'total' }), own.reduce((n, s) => n + valueOf(s, 'switchboard_db_pool_connections', { pool: 'main', state: 'total' }), 0), 'pool gauges summed');
  }

  daemon.kill('SIGTERM');
  t.is(await exited, 0, daemonLog);
});
