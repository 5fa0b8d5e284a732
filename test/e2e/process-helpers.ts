/**
 * End-to-end helpers: run the real `switchboard` command as a child process, each instance on an
 * embedded PostgreSQL of its own (SWITCHBOARD_DATA_DIR in a temp directory), and make sure
 * nothing it started outlives the test file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const BIN = path.join(ROOT, 'bin', 'switchboard.mjs');
export const TOKEN_LINE = /^Admin token \(shown once; [^)]*\): (sbc_\S+)$/m;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port nobody listens on right now (a server on port 0, closed again). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const tempRoots = new Set<string>();

/** A fresh temp directory, removed by `cleanUpEverything`; `mode` 0o700 makes it private to its owner. */
export async function makeTempRoot(prefix = 'switchboard-e2e-', mode = 0o755): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  await fs.chmod(dir, mode);
  tempRoots.add(dir);
  return dir;
}

/** The environment of a child: ours without any Switchboard setting, plus `extra`. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('SWITCHBOARD_') || ['DATABASE_URL', 'PORT', 'HOST', 'LOG_LEVEL', 'NODE_OPTIONS'].includes(k)) continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

/**
 * Pids and command lines of every live postmaster whose command line mentions `dir`, or which
 * names its data directory by its working directory (`-D /proc/self/cwd`, as root) inside `dir`.
 */
export function postgresProcessesFor(dir: string): { pid: number; args: string }[] {
  const found: { pid: number; args: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string;
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      continue; // gone meanwhile
    }
    if (!args.includes('postgres')) continue;
    let cwd = '';
    try {
      if (args.includes('-D /proc/self/cwd')) cwd = readlinkSync(`/proc/${entry}/cwd`);
    } catch {
      /* gone meanwhile */
    }
    if (args.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`)) found.push({ pid: Number(entry), args });
  }
  return found;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Instance {
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  dataDir: string;
  /** Everything written to stdout / stderr so far. */
  stdout(): string;
  stderr(): string;
  /** stdout lines that parsed as JSON (pino log lines). */
  logs(): Record<string, any>[];
  /** The admin token printed at this start, if one was. */
  adminToken: string | undefined;
  /** spawn → first answered HTTP request, ms. */
  coldStartMs: number;
  exited: Promise<Exit>;
  isRunning(): boolean;
  /** Sends `signal` (to the process group when started through npm); never throws. */
  kill(signal: NodeJS.Signals): void;
  /** Sends `signal` and waits for the exit (rejects after `timeoutMs`). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit & { ms: number }>;
}

const instances = new Set<Instance>();

export interface StartOptions {
  dataDir: string;
  /** The project folder to run in (default: this checkout). */
  project?: string;
  /**
   * Run `npm start` as a person does, in a process group of its own that signals go to (as a
   * terminal's Ctrl-C does), and leave SWITCHBOARD_DATA_DIR unset: `dataDir` must then be
   * `<project>/.switchboard`, the README's default.
   */
  viaNpm?: boolean;
  port?: number;
  env?: Record<string, string | undefined>;
  args?: string[];
  timeoutMs?: number;
  /**
   * Write the child's stdout (its pino log) straight into this file instead of a pipe to us, as
   * pm2 or systemd would. Benchmarks use it so that the process generating load is not also the
   * one reading every log line.
   */
  stdoutFile?: string;
  /**
   * What "ready" means: `healthz` (default) answers GET /healthz; `started` has logged
   * "switchboard started", for a process without the api role (no HTTP server).
   */
  readyWhen?: 'healthz' | 'started';
  /**
   * A command the start runs through, e.g. `['ip', 'netns', 'exec', 'sb-api1']` to run the
   * process in a network namespace (it execs node, so the pid stays node's).
   */
  via?: string[];
  /** The address the test reaches the process at (default 127.0.0.1; HOST stays as `env` sets it). */
  address?: string;
}

/** `node bin/switchboard.mjs start` without waiting for it to be ready. */
export async function spawnSwitchboard(opts: StartOptions): Promise<Instance & { startedAt: number }> {
  const port = opts.port ?? (await freePort());
  const startedAt = performance.now();
  const logFd = opts.stdoutFile === undefined ? undefined : openSync(opts.stdoutFile, 'a');
  const cwd = opts.project ?? ROOT;
  const env = childEnv({ SWITCHBOARD_DATA_DIR: opts.viaNpm ? undefined : opts.dataDir, PORT: String(port), HOST: '127.0.0.1', ...opts.env });
  const stdio = ['ignore', logFd ?? 'pipe', 'pipe'] as const;
  const child = opts.viaNpm
    ? spawn('npm', ['start', ...(opts.args?.length ? ['--', ...opts.args] : [])], { cwd, env, stdio: [...stdio], detached: true })
    : opts.via?.length
      ? spawn(opts.via[0], [...opts.via.slice(1), process.execPath, BIN, 'start', ...(opts.args ?? [])], { cwd, env, stdio: [...stdio] })
      : spawn(process.execPath, [BIN, 'start', ...(opts.args ?? [])], { cwd, env, stdio: [...stdio] });
  // The whole group when started through npm, so the signal reaches node and not only npm.
  const signal = (s: NodeJS.Signals) => (opts.viaNpm ? process.kill(-child.pid!, s) : child.kill(s));
  if (logFd !== undefined) closeSync(logFd);
  let piped = '';
  let err = '';
  const out = () => (opts.stdoutFile === undefined ? piped : readFileSync(opts.stdoutFile, 'utf8'));
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (piped += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<Exit>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', (e) => {
      err += `${e.message}\n`;
      resolve({ code: null, signal: null });
    });
  });
  let exit: Exit | undefined;
  void exited.then((e) => (exit = e));

  const instance: Instance & { startedAt: number } = {
    child,
    pid: child.pid!,
    port,
    url: `http://${opts.address ?? '127.0.0.1'}:${port}`,
    dataDir: opts.dataDir,
    startedAt,
    stdout: out,
    stderr: () => err,
    logs: () =>
      out()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as Record<string, any>];
          } catch {
            return [];
          }
        }),
    adminToken: undefined,
    coldStartMs: NaN,
    exited,
    isRunning: () => exit === undefined,
    kill: (s) => {
      try {
        signal(s);
      } catch {
        /* already gone */
      }
    },
    async stop(sig = 'SIGTERM', ms = 10_000) {
      const s = performance.now();
      if (exit === undefined) instance.kill(sig);
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`switchboard (pid ${child.pid}) did not exit within ${ms} ms of ${sig}`)), ms);
        }),
      ]).finally(() => clearTimeout(timer));
      return { ...result, ms: performance.now() - s };
    },
  };
  instances.add(instance);
  return instance;
}

/** `node bin/switchboard.mjs start`; resolves when it logged "switchboard started" and (by default) answered GET /healthz. */
export async function startSwitchboard(opts: StartOptions): Promise<Instance> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const instance = await spawnSwitchboard(opts);
  const t0 = instance.startedAt;
  const describe = () => `\n--- stdout ---\n${instance.stdout()}\n--- stderr ---\n${instance.stderr()}`;
  const started = () => instance.logs().some((l) => l.msg === 'switchboard started');
  const ready = async () => {
    if (opts.readyWhen === 'started') return started();
    try {
      const res = await fetch(`${instance.url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      await res.text();
      return res.status === 200;
    } catch {
      return false; // not listening yet
    }
  };
  let answered = false;
  while (!answered) {
    if (!instance.isRunning()) {
      const exit = await instance.exited;
      throw new Error(`switchboard exited during start-up (code ${exit.code}, signal ${exit.signal})${describe()}`);
    }
    if (performance.now() - t0 > timeoutMs) {
      instance.kill('SIGKILL');
      throw new Error(`switchboard was not ready (${opts.readyWhen ?? 'healthz'}) within ${timeoutMs} ms${describe()}`);
    }
    answered = await ready();
    if (!answered) await sleep(20);
  }
  instance.coldStartMs = performance.now() - t0;
  // The log line is written right after listen(); give the pipe a moment to deliver it.
  for (let i = 0; i < 100 && !started(); i++) await sleep(20);
  if (!started()) throw new Error(`no "switchboard started" log line${describe()}`);
  instance.adminToken = TOKEN_LINE.exec(instance.stdout())?.[1];
  return instance;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/switchboard.mjs <args>` to completion. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`switchboard ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A request to a running instance; the body parsed as JSON when it is JSON. */
export async function request(
  base: string,
  method: string,
  urlPath: string,
  opts: { token?: string; body?: unknown } = {},
): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + urlPath, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, text, headers: res.headers };
}

/**
 * Kills every instance still running and every postgres left for their data directories, then
 * removes the temp directories. For `test.after.always`, so a failed test leaves the machine clean.
 */
export async function cleanUpEverything(): Promise<void> {
  const dirs = new Set<string>();
  for (const instance of instances) {
    dirs.add(instance.dataDir);
    if (instance.isRunning()) {
      instance.kill('SIGKILL');
      await Promise.race([instance.exited, sleep(5_000)]);
    }
  }
  for (const root of tempRoots) dirs.add(root);
  for (const dir of dirs) {
    for (const { pid } of postgresProcessesFor(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
  instances.clear();
  for (const root of tempRoots) await fs.rm(root, { recursive: true, force: true }).catch(() => {});
  tempRoots.clear();
}
