import test, { type ExecutionContext } from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

/**
 * ecosystem.config.cjs as pm2 loads it: every app logs to its own out and error files under
 * SWITCHBOARD_LOG_DIR (pm2 itself is not needed to check that; test/e2e/pm2-cluster-logs.test.ts
 * checks that the api's lines reach its out file under cluster mode).
 */
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CONFIG = path.join(ROOT, 'ecosystem.config.cjs');
const require = createRequire(import.meta.url);

interface Pm2App {
  name: string;
  exec_mode: string;
  cwd: string;
  out_file?: string;
  error_file?: string;
  merge_logs?: boolean;
}

/** Loads the config afresh with SWITCHBOARD_LOG_DIR set to `logDir` (unset when undefined). */
function loadConfig(logDir: string | undefined): Pm2App[] {
  const before = process.env.SWITCHBOARD_LOG_DIR;
  if (logDir === undefined) delete process.env.SWITCHBOARD_LOG_DIR;
  else process.env.SWITCHBOARD_LOG_DIR = logDir;
  try {
    delete require.cache[CONFIG];
    return require(CONFIG).apps;
  } finally {
    if (before === undefined) delete process.env.SWITCHBOARD_LOG_DIR;
    else process.env.SWITCHBOARD_LOG_DIR = before;
  }
}

/** A temp directory removed after the test. */
function tempDir(t: ExecutionContext): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-ecosystem-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('every app has its own out and error files in the log directory, one pair for all its instances', (t) => {
  const dir = path.join(tempDir(t), 'logs');
  const apps = loadConfig(dir);
  t.deepEqual(apps.map((a) => a.name), ['switchboard-api', 'switchboard-dialler', 'switchboard-sender']);
  const files = apps.flatMap((a) => [a.out_file, a.error_file]);
  t.is(new Set(files).size, apps.length * 2, 'no two apps, and no out and error, share a file');
  for (const app of apps) {
    t.is(app.out_file, path.join(dir, `${app.name}.out.log`));
    t.is(app.error_file, path.join(dir, `${app.name}.err.log`));
    t.true(app.merge_logs, `${app.name}: instances share the app's files`);
    t.is(app.cwd, ROOT);
  }
  t.true(existsSync(dir), 'the log directory is made before pm2 starts the apps');
  t.is(apps.find((a) => a.name === 'switchboard-api')?.exec_mode, 'cluster');
});

test('a relative SWITCHBOARD_LOG_DIR is taken from the project directory, not from where pm2 runs', (t) => {
  const dir = tempDir(t);
  const apps = loadConfig(path.relative(ROOT, dir));
  t.is(apps[0].out_file, path.join(dir, 'switchboard-api.out.log'));
});

test('by default the logs go to ./logs of the project, which git ignores', (t) => {
  t.is(loadConfig(undefined)[0].out_file, path.join(ROOT, 'logs', 'switchboard-api.out.log'));
  const ignored = readFileSync(path.join(ROOT, '.gitignore'), 'utf8').split('\n').map((l) => l.trim());
  t.true(ignored.includes('/logs/'));
});

test('with SWITCHBOARD_METRICS_PORT each app gets its own range of metrics ports from it, and off without it', (t) => {
  const load = (port: string | undefined) => {
    const before = process.env.SWITCHBOARD_METRICS_PORT;
    if (port === undefined) delete process.env.SWITCHBOARD_METRICS_PORT;
    else process.env.SWITCHBOARD_METRICS_PORT = port;
    try {
      return loadConfig(path.join(tempDir(t), 'logs')) as (Pm2App & { instances: number; env: Record<string, string | undefined> })[];
    } finally {
      if (before === undefined) delete process.env.SWITCHBOARD_METRICS_PORT;
      else process.env.SWITCHBOARD_METRICS_PORT = before;
    }
  };
  const apps = load('9464');
  t.deepEqual(
    apps.map((a) => [a.name, a.env.SWITCHBOARD_METRICS_PORT, a.env.SWITCHBOARD_METRICS_WORKERS, a.env.SWITCHBOARD_METRICS_HOST]),
    [
      ['switchboard-api', '9464', String(apps[0]!.instances), '127.0.0.1'],
      ['switchboard-dialler', String(9464 + apps[0]!.instances), String(apps[1]!.instances), '127.0.0.1'],
      ['switchboard-sender', String(9464 + apps[0]!.instances + apps[1]!.instances), String(apps[2]!.instances), '127.0.0.1'],
    ],
  );
  t.true(load(undefined).every((a) => a.env.SWITCHBOARD_METRICS_PORT === undefined));
});

test('pm2 spaces the restarts of a process that exits (exp_backoff_restart_delay), and numbers the diallers for their own media ports', (t) => {
  const before = { port: process.env.SWITCHBOARD_MEDIA_PORT, url: process.env.SWITCHBOARD_MEDIA_URL };
  process.env.SWITCHBOARD_MEDIA_PORT = '8100';
  process.env.SWITCHBOARD_MEDIA_URL = 'wss://media.example.com:{port}/media';
  try {
    const apps = loadConfig(path.join(tempDir(t), 'logs')) as (Pm2App & { exp_backoff_restart_delay?: number; instance_var?: string; env: Record<string, string | undefined> })[];
    for (const app of apps) t.true((app.exp_backoff_restart_delay ?? 0) > 0, `${app.name}: exp_backoff_restart_delay`);
    const dialler = apps.find((a) => a.name === 'switchboard-dialler')!;
    t.is(dialler.instance_var, 'NODE_APP_INSTANCE');
    t.like(dialler.env, { SWITCHBOARD_ROLES: 'dialler', SWITCHBOARD_MEDIA_PORT: '8100', SWITCHBOARD_MEDIA_URL: 'wss://media.example.com:{port}/media' });
  } finally {
    for (const [name, value] of [['SWITCHBOARD_MEDIA_PORT', before.port], ['SWITCHBOARD_MEDIA_URL', before.url]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

test('pm2 hands every app the PgBouncer settings: the direct URL and the pooler', (t) => {
  const before = { direct: process.env.SWITCHBOARD_DIRECT_DATABASE_URL, pooler: process.env.SWITCHBOARD_DATABASE_POOLER };
  process.env.SWITCHBOARD_DIRECT_DATABASE_URL = 'postgres://sb@db.internal:5432/sb';
  process.env.SWITCHBOARD_DATABASE_POOLER = 'transaction';
  try {
    const apps = loadConfig(path.join(tempDir(t), 'logs')) as (Pm2App & { env: Record<string, string | undefined> })[];
    for (const app of apps) t.like(app.env, { SWITCHBOARD_DIRECT_DATABASE_URL: 'postgres://sb@db.internal:5432/sb', SWITCHBOARD_DATABASE_POOLER: 'transaction' }, app.name);
  } finally {
    for (const [k, v] of [['SWITCHBOARD_DIRECT_DATABASE_URL', before.direct], ['SWITCHBOARD_DATABASE_POOLER', before.pooler]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});

test('the diallers run their media server with a 16 MB young generation (telephony/media-node-flags.cjs), which node takes; the other apps with node defaults', async (t) => {
  const apps = loadConfig(path.join(tempDir(t), 'logs')) as (Pm2App & { node_args?: string[] })[];
  t.deepEqual(apps.find((a) => a.name === 'switchboard-dialler')!.node_args, ['--min-semi-space-size=16', '--max-semi-space-size=16']);
  for (const app of apps.filter((a) => a.name !== 'switchboard-dialler')) t.is(app.node_args, undefined, app.name);
  // Node refuses a flag it does not know; with these its new space is 16 MB from the start (1 MB by default).
  const { execFileSync } = await import('node:child_process');
  const newSpace = (flags: string[]) => Number(execFileSync(process.execPath, [...flags, '-p', "require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size"], { encoding: 'utf8' }).trim());
  t.is(newSpace(apps.find((a) => a.name === 'switchboard-dialler')!.node_args!), 16 * 1024 * 1024);
  t.true(newSpace([]) < 16 * 1024 * 1024);
});
