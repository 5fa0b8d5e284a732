/**
 * A fake of pm2's cluster mode, as far as logging goes, for running `switchboard start` the way
 * pm2 runs an `exec_mode: 'cluster'` app:
 *
 * - the primary plays pm2's daemon: it forks one cluster worker, which inherits the primary's
 *   stdio, so the worker's fd 1 is the daemon's own stdout (pm2's `pm2.log`);
 * - the worker plays pm2's ProcessContainer: it copies the app's settings into its environment
 *   (`exec_mode: 'cluster_mode'`, `pm_id`), replaces `process.stdout.write` and
 *   `process.stderr.write` with a send of `{type: 'log:out' | 'log:err', data}` to the daemon, and
 *   then loads the app;
 * - the daemon appends `log:out` to the app's out file and `log:err` to its error file.
 *
 * So a line reaches the out file only if the app wrote it through `process.stdout.write`; a write
 * to fd 1 lands on the daemon's stdout. SIGTERM to the daemon is passed on to the worker, and the
 * daemon exits with the worker's status.
 *
 * PM2_FAKE_INSTANCES (default 1) forks that many workers, each with pm2's NODE_APP_INSTANCE (0, 1, …)
 * and the one port they share through the cluster module; the daemon exits once all have, with
 * the first non-zero status.
 *
 * Usage: node test/fakes/pm2-cluster.mjs <out file> <error file> [app args…]  (app: bin/switchboard.mjs)
 */
import cluster from 'node:cluster';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'switchboard.mjs');

if (cluster.isPrimary) {
  const [outFile, errFile, ...appArgs] = process.argv.slice(2);
  cluster.setupPrimary({ exec: fileURLToPath(import.meta.url), args: appArgs, execArgv: [] });
  const instances = Number(process.env.PM2_FAKE_INSTANCES || 1);
  let running = instances;
  let status = 0;
  for (let i = 0; i < instances; i++) {
    const worker = cluster.fork({ exec_mode: 'cluster_mode', pm_id: String(i), NODE_APP_INSTANCE: String(i), name: 'switchboard-api' });
    worker.on('message', (msg) => {
      if (msg?.type === 'log:out') fs.appendFileSync(outFile, msg.data);
      if (msg?.type === 'log:err') fs.appendFileSync(errFile, msg.data);
    });
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => worker.process.kill(signal));
    worker.on('exit', (code, signal) => {
      status ||= code ?? (signal ? 1 : 0);
      if (--running === 0) process.exit(status);
    });
  }
} else {
  const forward = (type) => (chunk, encoding, cb) => {
    process.send({ type, data: chunk.toString() });
    if (typeof encoding === 'function') encoding();
    else if (typeof cb === 'function') cb();
    return true;
  };
  process.stdout.write = forward('log:out');
  process.stderr.write = forward('log:err');
  await import(BIN);
}
