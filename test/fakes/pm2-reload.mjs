/**
 * A fake of pm2 running ecosystem.config.cjs's api and dialler apps and doing what
 * `pm2 reload ecosystem.config.cjs` does with `wait_ready: true` (pm2 is not a dependency):
 *
 * - the api (`exec_mode: 'cluster'`): node's cluster module, as pm2 uses it, so every worker
 *   listens on the one PORT and the primary hands out connections; reload, one instance at a
 *   time: fork the new worker, wait for its `process.send('ready')` (listen_timeout), then SIGINT
 *   the old one and wait for it to exit (SIGKILL after kill_timeout);
 * - the diallers (`exec_mode: 'fork'`): child processes with an IPC channel; reload restarts them
 *   one at a time: SIGINT, wait for the exit (SIGKILL after kill_timeout), start the new one and
 *   wait for its `ready` before the next.
 *
 * Every process inherits this one's stdout (their JSON log lines, each with its pid); this one
 * writes its own events as JSON lines with a `pm2` field. On stdin, `reload` reloads everything
 * (api first, as the file lists it) and `stop` stops everything and exits.
 *
 * A process not ready within listen_timeout is taken as started, as pm2 does (event `listen_timeout`).
 *
 * Usage: node test/fakes/pm2-reload.mjs <api instances> <dialler instances> <dialler kill_timeout ms>
 * (settings through the environment, as the ecosystem file passes them; PORT for the api).
 */
import cluster from 'node:cluster';
import { fork } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'switchboard.mjs');
// ecosystem.config.cjs's listen_timeout; a test on a busy machine may give it longer (PM2_LISTEN_TIMEOUT).
// As pm2 does, a process not ready by then is taken as started and the reload goes on.
const LISTEN_TIMEOUT_MS = Number(process.env.PM2_LISTEN_TIMEOUT || 60_000);
const API_KILL_TIMEOUT_MS = 15_000;

const [apiInstances, diallerInstances, diallerKillTimeoutMs] = process.argv.slice(2).map(Number);
const event = (name, fields = {}) => process.stdout.write(`${JSON.stringify({ pm2: name, at: Date.now(), ...fields })}\n`);

/** A process with `send`/`on('message')`/`kill`/`exitCode`: a cluster worker's or a forked child's. */
function handle(proc, app, startedAt) {
  const ready = new Promise((resolve) => {
    const timer = setTimeout(() => {
      event('listen_timeout', { app, pid: proc.pid });
      resolve();
    }, LISTEN_TIMEOUT_MS);
    proc.on('message', (m) => {
      if (m === 'ready') {
        clearTimeout(timer);
        event('ready', { app, pid: proc.pid, start_ms: Date.now() - startedAt });
        resolve();
      }
    });
  });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  return { app, pid: proc.pid, ready, exited, kill: (s) => proc.kill(s) };
}

function startApi() {
  const worker = cluster.fork({ SWITCHBOARD_ROLES: 'api' });
  return handle(worker.process, 'api', Date.now());
}

function startDialler() {
  const child = fork(BIN, ['start'], { env: { ...process.env, SWITCHBOARD_ROLES: 'dialler' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return handle(child, 'dialler', Date.now());
}

async function stopOne(p, killTimeoutMs) {
  const t0 = Date.now();
  p.kill('SIGINT');
  let timer;
  const killed = new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), killTimeoutMs)));
  if ((await Promise.race([p.exited, killed])) === 'timeout') {
    p.kill('SIGKILL');
    event('killed', { app: p.app, pid: p.pid });
  }
  clearTimeout(timer);
  const exit = await p.exited;
  event('exited', { app: p.app, pid: p.pid, ...exit, stop_ms: Date.now() - t0 });
}

cluster.setupPrimary({ exec: BIN, args: ['start'], execArgv: [], silent: false });
let apis = Array.from({ length: apiInstances }, startApi);
let diallers = Array.from({ length: diallerInstances }, startDialler);
await Promise.all([...apis, ...diallers].map((p) => p.ready));
event('online');

async function reload() {
  event('reloading');
  // Cluster mode: the new worker first, the old one stopped once the new one is ready.
  const nextApis = [];
  for (const old of apis) {
    const fresh = startApi();
    await fresh.ready;
    await stopOne(old, API_KILL_TIMEOUT_MS);
    nextApis.push(fresh);
  }
  apis = nextApis;
  // Fork mode: each instance restarted in turn, the next only once this one is ready.
  const nextDiallers = [];
  for (const old of diallers) {
    await stopOne(old, diallerKillTimeoutMs);
    const fresh = startDialler();
    await fresh.ready;
    nextDiallers.push(fresh);
  }
  diallers = nextDiallers;
  event('reloaded');
}

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', async (line) => {
  try {
    if (line.trim() === 'reload') await reload();
    if (line.trim() === 'stop') {
      await Promise.all([...apis.map((p) => stopOne(p, API_KILL_TIMEOUT_MS)), ...diallers.map((p) => stopOne(p, diallerKillTimeoutMs))]);
      event('stopped');
      process.exit(0);
    }
  } catch (err) {
    event('error', { message: String(err?.stack ?? err) });
    process.exit(1);
  }
});
