import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { EmbeddedDatabaseError, type PostgresBinaries } from './postgres-binaries.ts';

/** The user PostgreSQL runs as when we are root (it refuses to run as root). */
export interface RunAs {
  uid: number;
  gid: number;
}

/**
 * As root, PostgreSQL runs as the user `postgres` and is started inside its data directory, which
 * it then names by its own working directory: the folders above may be closed to that user (a
 * project under /root or any 0700 folder), and they are left as they are.
 */
const OWN_CWD = '/proc/self/cwd';
/** Message text is matched below, so it is asked for in English. */
const ENV = { ...process.env, LC_MESSAGES: 'C' };
const READY = 'database system is ready to accept connections';

function exec(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(file, args, (err, stdout, stderr) => (err ? reject(new Error(stderr.trim() || err.message)) : resolve(stdout))),
  );
}

async function idsOf(name: string): Promise<RunAs | undefined> {
  try {
    const [uid, gid] = await Promise.all([exec('id', ['-u', name]), exec('id', ['-g', name])]);
    return { uid: Number(uid), gid: Number(gid) };
  } catch {
    return undefined;
  }
}

/** As root, the user `postgres` (created when missing); otherwise undefined: we run it ourselves. */
export async function postgresUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const found = await idsOf('postgres');
  if (found) return found;
  let reason = '';
  // A group named postgres may exist without the user.
  for (const args of [['--system', '--user-group', 'postgres'], ['--system', '-g', 'postgres', 'postgres']]) {
    try {
      await exec('useradd', args);
      break;
    } catch (err) {
      reason = (err as Error).message;
    }
  }
  const created = await idsOf('postgres');
  if (created) return created;
  throw new EmbeddedDatabaseError(
    `as root PostgreSQL must run as the user postgres, which does not exist and could not be created (${reason}): create it (useradd --system postgres), or run as a non-root user, or set DATABASE_URL`,
  );
}

function spawnAs(file: string, args: string[], cwd: string, as: RunAs | undefined, detached = false): ChildProcess {
  return spawn(file, args, { cwd, env: ENV, uid: as?.uid, gid: as?.gid, stdio: ['ignore', 'pipe', 'pipe'], detached });
}

function cannotRun(file: string, as: RunAs | undefined, err: NodeJS.ErrnoException): EmbeddedDatabaseError {
  return new EmbeddedDatabaseError(`cannot run ${file}${as ? ' as the user postgres' : ''} (${err.code ?? err.message}): reinstall (npm install) or set DATABASE_URL`);
}

/** The last non-empty lines of a program's output, joined into one. */
const lastLines = (lines: string[], n = 3) => lines.filter((l) => l.trim()).slice(-n).join(' | ');

/**
 * Creates a cluster at `pgDir` (which must not exist, or be empty) whose superuser `user` logs in
 * with `password`. It is made in a sibling folder and renamed into place, so a failed initdb
 * leaves nothing half-made behind.
 */
export async function initCluster(bin: PostgresBinaries, pgDir: string, user: string, password: string, as: RunAs | undefined): Promise<void> {
  const staging = await fs.mkdtemp(path.join(path.dirname(pgDir), '.pg-init-'));
  try {
    const pwfile = path.join(staging, 'pwfile');
    const cluster = path.join(staging, 'pg');
    await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    await fs.mkdir(cluster, { mode: 0o700 });
    if (as) for (const p of [staging, pwfile, cluster]) await fs.chown(p, as.uid, as.gid);
    // initdb runs inside the new cluster; its server processes chdir there and keep using the
    // path, so only a path that names the working directory itself stays valid.
    const args = [`--pgdata=${as ? OWN_CWD : cluster}`, '--pwfile=../pwfile', '--auth=scram-sha-256', `--username=${user}`, '--lc-messages=C', '--no-instructions'];
    const output: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const child = spawnAs(bin.initdb, args, cluster, as);
      for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding('utf8').on('data', (d: string) => output.push(...d.split('\n')));
      child.on('error', (err) => reject(cannotRun(bin.initdb, as, err)));
      child.on('close', (code, signal) =>
        code === 0 ? resolve() : reject(new EmbeddedDatabaseError(`initdb failed (${signal ?? `exit ${code}`}): ${lastLines(output)}`)),
      );
    });
    await fs.rename(cluster, pgDir);
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** A running postmaster; `log` holds its last 50 output lines. */
export interface Server {
  child: ChildProcess;
  log: string[];
}

/**
 * Starts the postmaster of `pgDir` on `port` and resolves once it accepts connections; rejects
 * with its last lines when it exits first. It gets a process group of its own, so a Ctrl-C in
 * the terminal reaches only us and the database is stopped last, after HTTP has drained.
 */
export function startServer(bin: PostgresBinaries, pgDir: string, port: number, flags: string[], as: RunAs | undefined): Promise<Server> {
  const log: string[] = [];
  const child = spawnAs(bin.postgres, ['-D', as ? OWN_CWD : pgDir, '-p', String(port), ...flags], pgDir, as, true);
  return new Promise((resolve, reject) => {
    let partial = '';
    // Read to the end, or a full pipe would block the server's logging.
    child.stdout!.resume();
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      const lines = (partial + d).split('\n');
      partial = lines.pop()!;
      log.push(...lines);
      if (log.length > 50) log.splice(0, log.length - 50);
      if (lines.some((l) => l.includes(READY))) resolve({ child, log });
    });
    child.on('error', (err) => reject(cannotRun(bin.postgres, as, err)));
    child.on('exit', (code, signal) => reject(new EmbeddedDatabaseError(`PostgreSQL exited during start-up (${signal ?? `exit ${code}`}): ${lastLines([...log, partial])}`)));
  });
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Fast shutdown (SIGINT), then immediate shutdown (SIGQUIT) if it takes more than 10 s. */
export async function stopServer(child: ChildProcess): Promise<void> {
  for (const [signal, ms] of [['SIGINT', 10_000], ['SIGQUIT', 5_000]] as const) {
    if (await exited(child, 0)) return;
    child.kill(signal);
    if (await exited(child, ms)) return;
  }
}
