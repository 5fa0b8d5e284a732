/**
 * The metrics of a pm2 cluster's workers, added up (runtime/metrics-server.ts): two worker
 * processes on the base port and the next, each with its own counts; `/metrics/cluster` on either
 * sums their counters, histograms and gauges, and says how many answered. A worker that is gone is
 * left out and counted as missing.
 */
import test from 'ava';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { scrape, twoFreePorts, valueOf } from '../helpers/metrics.ts';

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'helpers', 'metrics-worker.ts');


function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('ready ')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${out}`)));
  });
}

const stopped = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))));

test('two workers: each serves its own metrics on base + NODE_APP_INSTANCE; /metrics/cluster on either adds them up', async (t) => {
  const base = await twoFreePorts();
  const common = { SWITCHBOARD_METRICS_PORT: String(base), SWITCHBOARD_METRICS_WORKERS: '2', PORT: '0' };
  const workers = await Promise.all([
    startWorker({ ...common, NODE_APP_INSTANCE: '0', LINES: '3', JOB_SECONDS: '0.02' }),
    startWorker({ ...common, NODE_APP_INSTANCE: '1', LINES: '4', JOB_SECONDS: '3' }),
  ]);
  t.teardown(() => Promise.all(workers.map(stopped)));

  const own = [await scrape(`http://127.0.0.1:${base}/metrics`), await scrape(`http://127.0.0.1:${base + 1}/metrics`)];
  t.deepEqual(own.map((s) => valueOf(s, 'switchboard_ledger_lines_total', { cause: 'call', mode: 'test' })), [3, 4], 'each worker its own');

  for (const port of [base, base + 1]) {
    const cluster = await scrape(`http://127.0.0.1:${port}/metrics/cluster`);
    t.is(valueOf(cluster, 'switchboard_ledger_lines_total', { cause: 'call', mode: 'test' }), 7, 'counters summed');
    t.is(valueOf(cluster, 'switchboard_calls_in_progress'), 2, 'streams of both workers');
    t.is(valueOf(cluster, 'switchboard_job_duration_seconds_count', { job: 'release_holds', outcome: 'ok' }), 2, 'histograms summed');
    t.is(valueOf(cluster, 'switchboard_job_duration_seconds_bucket', { job: 'release_holds', outcome: 'ok', le: '0.025' }), 1, 'bucket by bucket');
    t.is(valueOf(cluster, 'switchboard_job_duration_seconds_bucket', { job: 'release_holds', outcome: 'ok', le: '5' }), 2);
    t.is(valueOf(cluster, 'switchboard_metrics_workers', { state: 'answered' }), 2);
    t.is(valueOf(cluster, 'switchboard_metrics_workers', { state: 'missing' }), 0);
  }

  // Worker 1 stops: the cluster view is worker 0's alone, and says one is missing.
  await stopped(workers[1]!);
  const alone = await scrape(`http://127.0.0.1:${base}/metrics/cluster`);
  t.is(valueOf(alone, 'switchboard_ledger_lines_total', { cause: 'call', mode: 'test' }), 3);
  t.is(valueOf(alone, 'switchboard_metrics_workers', { state: 'answered' }), 1);
  t.is(valueOf(alone, 'switchboard_metrics_workers', { state: 'missing' }), 1);
});
