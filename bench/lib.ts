import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import inspector from 'node:inspector';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort, ROOT } from '../test/e2e/process-helpers.ts';

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** CPU per request of the server process (`serverPid`) and of PostgreSQL, when asked for. */
  cpu?: CpuPerOp;
  /** From `inTurns`: the requests per second of each measured turn, in order. */
  turnRates?: number[];
}

/**
 * autocannon against `url` for `seconds` after a short warm-up. With `serverPid`, also the CPU
 * that process and PostgreSQL spent per request during the measured run.
 */
export async function load(
  url: string,
  opts: { seconds?: number; connections?: number; headers?: Record<string, string>; serverPid?: number; rate?: number; beforeMeasuring?: () => void; warmUpSeconds?: number; postgresPid?: number } = {},
): Promise<LoadResult> {
  // With `rate`, requests are offered at that many per second in all (latency then counts the
  // time a request waited for its turn: autocannon corrects for coordinated omission).
  const run = (duration: number) =>
    autocannon({ url, duration, connections: opts.connections ?? 32, pipelining: 1, headers: opts.headers, ...(opts.rate ? { overallRate: opts.rate } : {}) });
  if (opts.warmUpSeconds !== 0) await run(opts.warmUpSeconds ?? 2);
  opts.beforeMeasuring?.();
  const meter = opts.serverPid === undefined ? undefined : cpuMeter({ pid: opts.serverPid, postmaster: opts.postgresPid });
  const r = await run(opts.seconds ?? 10);
  return {
    requestsPerSecond: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    ...(meter ? { cpu: meter.perOp(r.requests.total) } : {}),
  };
}

/** The bare fastify baseline as its own process; returns its URL and a stop function. */
export function startHelloWorld(): Promise<{ url: string; stop: () => Promise<void>; pid: number }> {
  return startBenchServer('hello-server.mjs');
}

/**
 * A baseline server of bench/ (`script`, a .mjs or, through tsx, a .ts) as its own process on a
 * free PORT, with `env` added; it prints `ready` once it listens.
 */
export async function startBenchServer(script: string, env: Record<string, string> = {}): Promise<{ url: string; stop: () => Promise<void>; pid: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), path.join(ROOT, 'bench', script)], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => String(d).includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`hello server exited ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/`,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        child.on('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Measures several loads (each a `load` call for the given seconds, without its own warm-up)
 * in turns: `rounds` rounds of each, one after another, so that a burst of load from elsewhere on
 * the machine weighs on all of them instead of on whichever ran at the time. Each is warmed up
 * once first. Per load: the mean rate and CPU per request over its rounds, the median p50 and p99.
 */
export async function inTurns(loads: ((seconds: number, warmUp: boolean) => Promise<LoadResult>)[], seconds: number, rounds = 3): Promise<LoadResult[]> {
  for (const l of loads) await l(1, false);
  const all: LoadResult[][] = loads.map(() => []);
  for (let r = 0; r < rounds; r++) for (const [i, l] of loads.entries()) all[i].push(await l(seconds / rounds, false));
  const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return all.map((rs) => ({
    requestsPerSecond: mean(rs.map((r) => r.requestsPerSecond)),
    p50Ms: median(rs.map((r) => r.p50Ms)),
    p99Ms: median(rs.map((r) => r.p99Ms)),
    non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    ...(rs[0].cpu ? { cpu: { nodeMicros: mean(rs.map((r) => r.cpu!.nodeMicros)), postgresMicros: mean(rs.map((r) => r.cpu!.postgresMicros)) } } : {}),
    turnRates: rs.map((r) => r.requestsPerSecond),
  }));
}

/**
 * `subject`'s rate over `baseline`'s turn by turn (each pair measured back to back, so a slow
 * spell of a shared or virtual machine weighs on both), and the median of those ratios: steadier
 * than the ratio of the means when the machine's speed moves between turns.
 */
export function pairedRatios(subject: LoadResult, baseline: LoadResult): { ratios: number[]; median: number } {
  const a = subject.turnRates ?? [subject.requestsPerSecond];
  const b = baseline.turnRates ?? [baseline.requestsPerSecond];
  const ratios = a.map((x, i) => x / b[i]);
  const sorted = [...ratios].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return { ratios, median: sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2 };
}

export function ratio(a: number, b: number): string {
  return `${((a / b) * 100).toFixed(1)} %`;
}

/** CPU (user + system, µs) a process has used so far, from /proc; 0 once it is gone. */
function processCpuMicros(pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/**
 * CPU (µs) used so far by every PostgreSQL process on this machine (Linux /proc), or, with
 * `postmaster`, by that server alone: the postmaster, its live children, and (through its
 * cutime/cstime) the children that have exited. On a machine shared with other PostgreSQL
 * servers (other benches, other test runs) only the latter measures the bench's own work.
 */
function postgresCpuMicros(postmaster?: number): number {
  let micros = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (postmaster === undefined) {
        if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') micros += processCpuMicros(entry);
        continue;
      }
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(entry) === postmaster) micros += ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1e6) / CLOCK_TICKS;
      else if (Number(fields[1]) === postmaster) micros += ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
    } catch {
      /* the process ended meanwhile */
    }
  }
  return micros;
}

/** The postmaster's pid of the embedded PostgreSQL whose data directory is `<dataDir>/pg` (for `cpuMeter`). */
export function postmasterOf(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}
const CLOCK_TICKS = 100;

export interface CpuPerOp {
  postgresMicros: number;
  nodeMicros: number;
}

/**
 * Starts measuring CPU: PostgreSQL's (all its processes) and this process's, or process `pid`'s.
 * `postmaster` (`postmasterOf`): that PostgreSQL server's CPU only. `perOp(n)` divides what was used since by n operations. Where the work is CPU-bound, these
 * explain a ratio.
 */
export function cpuMeter(opts: { pid?: number; postmaster?: number } = {}): { perOp(ops: number): CpuPerOp } {
  const nodeNow = () => (opts.pid === undefined ? (({ user, system }) => user + system)(process.cpuUsage()) : processCpuMicros(opts.pid));
  const pg0 = postgresCpuMicros(opts.postmaster);
  const node0 = nodeNow();
  return {
    perOp(ops) {
      return {
        postgresMicros: Math.round((postgresCpuMicros(opts.postmaster) - pg0) / Math.max(ops, 1)),
        nodeMicros: Math.round((nodeNow() - node0) / Math.max(ops, 1)),
      };
    },
  };
}

/**
 * Runs `fn` with every statement of every pg client timed (from the call to its reply), grouped
 * by the statement's first words; shares of the summed statement time, largest first.
 */
export async function profiled(fn: () => Promise<unknown>): Promise<{ sql: string; calls: number; ms: number; share: string }[]> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const by = new Map<string, { calls: number; ms: number }>();
  proto.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string })?.text ?? '?');
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 60);
    const started = performance.now();
    const timed = () => {
      const s = by.get(key) ?? { calls: 0, ms: 0 };
      s.calls++;
      s.ms += performance.now() - started;
      by.set(key, s);
    };
    // The pool's own queries (pool.query) pass a callback rather than take the promise.
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (...a: unknown[]) => unknown;
      args[last] = (...a: unknown[]) => {
        timed();
        return callback(...a);
      };
    }
    const result = original.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(timed, () => {});
    return result;
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  const sum = [...by.values()].reduce((a, s) => a + s.ms, 0);
  return [...by.entries()]
    .map(([sql, s]) => ({ sql, calls: s.calls, ms: Math.round(s.ms), share: ratio(s.ms, sum) }))
    .sort((a, b) => b.ms - a.ms);
}

/** Runs `fn` under V8's sampling profiler and writes what it sampled to `<dir>/<name>-<pid>.cpuprofile` (bench/profile-top.mjs reads it). */
export async function cpuProfile(dir: string, name: string, fn: () => Promise<unknown>): Promise<void> {
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  try {
    await fn();
  } finally {
    const { profile } = await post('Profiler.stop');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}
