/**
 * `switchboard start` as pm2 runs an app in cluster mode (ecosystem.config.cjs runs the api so):
 * its log lines must reach the app's own out file, which pm2 fills only from what the worker
 * writes through process.stdout, not land in pm2's daemon log (the worker's fd 1).
 * test/fakes/pm2-cluster.mjs plays pm2's daemon and process container.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { childEnv, cleanUpEverything, freePort, makeTempRoot, ROOT } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';

test.after.always(cleanUpEverything);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

test('under pm2 cluster mode the api logs into its own out file, not the daemon log', async (t) => {
  const dir = await makeTempRoot('switchboard-pm2-');
  const outFile = path.join(dir, 'switchboard-api.out.log');
  const errFile = path.join(dir, 'switchboard-api.err.log');
  const port = await freePort();
  const daemon = spawn(process.execPath, [path.join(ROOT, 'test', 'fakes', 'pm2-cluster.mjs'), outFile, errFile, 'start'], {
    cwd: ROOT,
    env: childEnv({
      DATABASE_URL: await freshDatabase(),
      SWITCHBOARD_DATA_DIR: path.join(dir, 'data'),
      SWITCHBOARD_ROLES: 'api',
      SWITCHBOARD_ADMIN_TOKEN: 'sbc_pm2_cluster_test_token_YhfEQlFDo4F4',
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

  const logged = (msg: string) => read(outFile).split('\n').some((l) => l.startsWith('{') && JSON.parse(l).msg === msg);
  const deadline = Date.now() + 30_000;
  let answered = false;
  while (!(answered && logged('switchboard started')) && Date.now() < deadline && daemon.exitCode === null) {
    answered ||= await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    await sleep(50);
  }
  t.true(answered, `the api answered\n--- daemon log ---\n${daemonLog}`);
  t.true(logged('switchboard started'), `"switchboard started" in the app's out file\n--- out file ---\n${read(outFile)}\n--- daemon log ---\n${daemonLog}`);
  t.false(daemonLog.includes('"service":"switchboard"'), `no app log line in the daemon log:\n${daemonLog}`);

  daemon.kill('SIGTERM');
  t.is(await exited, 0, daemonLog);
  t.false(/\n\s+at /.test(read(errFile)), `no stack trace in the error file:\n${read(errFile)}`);
});
