import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import crypto from 'node:crypto';
import type { Logger } from './logger.ts';
import { EmbeddedDatabaseError, postgresBinaries } from './postgres-binaries.ts';
import { initCluster, postgresUser, startServer, stopServer } from './postgres-server.ts';

export { EmbeddedDatabaseError };

/** A PostgreSQL server started by this process, with the connection string to reach it. */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
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

export interface EmbeddedOptions {
  /** Trade durability for speed (tests only). */
  fast?: boolean;
}

/**
 * Starts (initialising on first use) a PostgreSQL server whose files live in `<dataDir>/pg`,
 * on a free loopback port, reachable only with a password kept in `<dataDir>/pg-password`.
 * As root the server runs as the user `postgres`, from a copy of the binaries that user can
 * reach, inside `<dataDir>/pg` however closed the folders above it are (their permissions are
 * left alone). What cannot work is an `EmbeddedDatabaseError` saying what to do.
 */
export async function startEmbeddedDatabase(
  dataDir: string,
  log: Logger,
  opts: EmbeddedOptions = {},
): Promise<EmbeddedDatabase> {
  const pgDir = path.join(dataDir, 'pg');
  await fs.mkdir(dataDir, { recursive: true });
  const passwordFile = path.join(dataDir, 'pg-password');
  if (!existsSync(passwordFile)) {
    await fs.writeFile(passwordFile, crypto.randomBytes(24).toString('hex'), { mode: 0o600 });
  }
  const password = (await fs.readFile(passwordFile, 'utf8')).trim();
  const user = 'switchboard';
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'];
  if (opts.fast) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');

  const [bin, as] = await Promise.all([postgresBinaries(log), postgresUser()]);
  await stopStaleServer(pgDir, log);
  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
    if (existsSync(pgDir) && (await fs.readdir(pgDir)).length > 0) {
      throw new EmbeddedDatabaseError(`${pgDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION): move it away and start again`);
    }
    log.info({ dataDir: pgDir }, 'initialising embedded PostgreSQL');
    await initCluster(bin, pgDir, user, password, as);
  }

  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    let server;
    try {
      server = await startServer(bin, pgDir, port, flags, as);
    } catch (err) {
      // Most often the port was taken between choosing it and binding it.
      lastError = err;
      log.warn({ port, attempt, reason: (err as Error).message }, 'embedded PostgreSQL failed to start; retrying');
      continue;
    }
    log.info({ port, dataDir: pgDir }, 'embedded PostgreSQL started');
    let stopped: Promise<void> | undefined;
    server.child.on('exit', (code, signal) => {
      if (!stopped) log.error({ code, signal, last: server.log.slice(-5).join(' | ') }, 'embedded PostgreSQL exited');
    });
    return {
      url: `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
      stop: () => (stopped ??= stopServer(server.child)),
    };
  }
  throw lastError instanceof Error ? lastError : new EmbeddedDatabaseError('embedded PostgreSQL did not start');
}
