import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT } from '../test/e2e/process-helpers.ts';

const MEDIA_NODE_FLAGS: string[] = createRequire(import.meta.url)('../telephony/media-node-flags.cjs');

/**
 * Concurrent calls in one process through the media relay (issue 25 §4): N simulated carrier
 * streams each send a 20 ms μ-law frame every 20 ms; the server relays it through a bridge
 * connection and back; the round trip is the relay latency. Our media server and a plain `ws`
 * relay, each its own server process, are measured at the same steps in turns (ours, then the
 * baseline, at each step), up to 1,000 calls. Beside each p99:
 * - CPU per call-second: the server process's CPU time (its own process.cpuUsage, asked for on
 *   stdin before and after the measured window) divided by calls × seconds; the figure that the
 *   load of the rest of the machine does not move;
 * - this machine's timer jitter in the same window: how late an idle process's 20 ms setInterval
 *   fires (bench/media-relay-load.ts `jitter`);
 * - the load generator's own CPU: the carriers are spread over BENCH_MEDIA_GENERATORS (default 2)
 *   child processes that speak WebSocket themselves over raw `net` sockets, a call's frame built
 *   once and only its send time and numbers patched per frame (bench/media-relay-load.ts;
 *   BENCH_MEDIA_CLIENT=ws for the `ws` client of earlier rounds, `both` for one of each side by side), and the kernel's share of its
 *   CPU and of the server's;
 * - then, on a line of its own, the largest step again with the server and the generator on cores
 *   of their own (`taskset`, the same for ours and the baseline; BENCH_MEDIA_PINNED=0 leaves it
 *   out): the carrier is on other machines in production, and on two cores the generator otherwise
 *   takes the server's turn.
 * BENCH_MEDIA_COMPARE=<module>: a third server, another version of telephony/media-server.ts (e.g.
 * main's, `git show main:telephony/media-server.ts > telephony/media-server-main.tmp.ts`), measured in the
 * same turns, for a before/after in one run.
 * Our server (and the compared one) runs with the node flags production gives the dialler
 * (telephony/media-node-flags.cjs, ecosystem.config.cjs node_args: a 16 MB young generation); the
 * `ws` baseline with node's defaults. BENCH_MEDIA_COMPARE_FLAGS=<flags> (`-` for none) gives the
 * compared server others; BENCH_MEDIA_SERVER_FLAGS adds flags to ours (e.g. --trace-gc) and
 * BENCH_MEDIA_SERVER_OUT=<file> keeps what it prints, with each window's edges;
 * BENCH_MEDIA_GENERATOR_FLAGS gives node flags to the generator processes. The pinned line runs
 * BENCH_MEDIA_PINNED_GENERATORS (default 1) generator processes on the generator's cores.
 * BENCH_CPU_PROF=<dir>: our server runs under V8's sampling profiler (bench/cpu-profile-preload.mjs)
 * and writes a profile of the measured window of the largest step there.
 */
type Kind = 'switchboard' | 'ws' | 'compare';

/** The epoch ms every process of the bench counts its windows and frame stamps from. */
const BASE = Date.now();

interface Server {
  kind: Kind;
  url: string;
  pid: number;
  /** CPU (µs) the server has used so far: user + system, and system alone. */
  cpuMicros(): Promise<{ total: number; system: number }>;
  profile(): Promise<void>;
  stop(): void;
}

async function startServer(kind: Kind, profDir?: string): Promise<Server> {
  const args = kind === 'compare' ? ['switchboard', process.env.BENCH_MEDIA_COMPARE!] : [kind];
  // BENCH_MEDIA_SERVER_FLAGS: more node flags for our server process (e.g. --trace-gc; the last of
  // a flag given twice wins); lines it prints that are not the bench's own go to the file
  // BENCH_MEDIA_SERVER_OUT names, stamped in ms since BASE, with each measured window's edges.
  // Our server runs with the node flags production gives the dialler (telephony/media-node-flags.cjs,
  // ecosystem.config.cjs's node_args); the `ws` baseline with node's defaults, as before.
  // BENCH_MEDIA_COMPARE_FLAGS: the compared server's node flags in place of production's (e.g. `-`
  // for node's defaults: the same module with and without them, in the same turns).
  const compareFlags = process.env.BENCH_MEDIA_COMPARE_FLAGS;
  const baseFlags = kind === 'compare' && compareFlags !== undefined ? compareFlags.split(' ').filter((f) => f && f !== '-') : MEDIA_NODE_FLAGS;
  const extraFlags = kind === 'ws' ? [] : [...baseFlags, ...(process.env.BENCH_MEDIA_SERVER_FLAGS ?? '').split(' ').filter(Boolean)];
  const outFile = kind === 'ws' || !process.env.BENCH_MEDIA_SERVER_OUT ? undefined : `${process.env.BENCH_MEDIA_SERVER_OUT}${kind === 'compare' ? '.compare' : ''}`;
  const child = spawn(process.execPath, [...extraFlags, '--import', 'tsx', path.join(ROOT, 'bench', 'media-relay-server.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...(profDir ? { NODE_OPTIONS: `--import=${path.join(ROOT, 'bench', 'cpu-profile-preload.mjs')}`, BENCH_CPU_PROF_DIR: path.resolve(profDir) } : {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const waiting: ((line: string) => void)[] = [];
  let buffered = '';
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += String(d);
    process.stderr.write(d);
  });
  child.stdout!.on('data', (d) => {
    buffered += String(d);
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (outFile && !/^(ready|cpu) /.test(line)) fs.appendFileSync(outFile, `${Date.now() - BASE} ${line}\n`);
      for (const w of waiting.splice(0)) w(line);
    }
  });
  const nextLine = (re: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const exited = (c: number | null) => reject(new Error(`relay server exited ${c}`));
      const wait = (line: string) => {
        const m = re.exec(line);
        if (!m) return waiting.push(wait);
        child.off('exit', exited);
        resolve(m);
      };
      waiting.push(wait);
      child.once('exit', exited);
    });
  const port = Number((await nextLine(/^ready (\d+)/))[1]);
  let profiles = 0;
  return {
    kind,
    url: `ws://127.0.0.1:${port}/media`,
    pid: child.pid!,
    async cpuMicros() {
      const answer = nextLine(/^cpu (\d+) (\d+)/);
      child.stdin!.write('cpu\n');
      const m = await answer;
      return { total: Number(m[1]), system: Number(m[2]) };
    },
    async profile() {
      // The preload toggles on each SIGUSR2: the first starts sampling, the next writes profile n.
      child.kill('SIGUSR2');
      profiles++;
      if (profiles % 2 === 1) return;
      const written = `profile ${profiles / 2} written`;
      for (let i = 0; i < 100 && !stderr.includes(written); i++) await new Promise((r) => setTimeout(r, 100));
    },
    stop: () => child.kill('SIGKILL'),
  };
}

/** A child of bench/media-relay-load.ts, spoken to by request and answer over IPC. */
type Client = 'raw' | 'ws';

function startLoad(role: 'carrier' | 'jitter', client: Client = 'raw') {
  const child: ChildProcess = fork(path.join(ROOT, 'bench', 'media-relay-load.ts'), [role], {
    cwd: ROOT,
    execArgv: [...(process.env.BENCH_MEDIA_GENERATOR_FLAGS ?? '').split(' ').filter(Boolean), '--import', 'tsx'],
    env: { ...process.env, BENCH_MEDIA_CLIENT: client },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (c) => reject(new Error(`load process exited ${c}`)));
  });
  return {
    ready,
    client,
    pid: child.pid!,
    ask<T>(m: object): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const exited = (c: number | null) => reject(new Error(`load process (${role}) exited ${c} while asked ${JSON.stringify(m)}`));
        child.once('exit', exited);
        child.once('message', (answer: { error?: string }) => {
          child.off('exit', exited);
          if (answer.error) reject(new Error(`load process (${role}): ${answer.error}`));
          else resolve(answer as T);
        });
        child.send(m);
      });
    },
    stop: () => child.kill('SIGKILL'),
  };
}
type Load = ReturnType<typeof startLoad>;

interface Report {
  rtt: [number, number][];
  lag: [number, number][];
  sent: number;
  received: number;
  lost: number;
  skipped: number;
  /** Replies whose stamp could not be read (none expected). */
  unreadable: number;
  cpuMicros: number;
  /** Of cpuMicros, the kernel's (system) time. */
  systemMicros: number;
  measuredMs: number;
}

/** Quantiles (ms) of sparse 10 µs histograms merged. */
function quantiles(parts: [number, number][][], ps: number[]): number[] {
  const merged = new Map<number, number>();
  for (const part of parts) for (const [b, c] of part) merged.set(b, (merged.get(b) ?? 0) + c);
  const sorted = [...merged].sort((a, b) => a[0] - b[0]);
  const n = sorted.reduce((a, [, c]) => a + c, 0);
  return ps.map((p) => {
    if (n === 0) return Infinity;
    const want = Math.min(n - 1, Math.floor(n * p));
    let seen = 0;
    for (const [b, c] of sorted) {
      seen += c;
      if (seen > want) return Math.round(((b + 1) * 10) / 10) / 100; // the bucket's upper edge, ms to 0.01
    }
    return Infinity;
  });
}

export interface StepResult {
  calls: number;
  p50: number;
  p99: number;
  /** Frames whose reply never came (in the measured window, after a 300 ms grace). */
  lost: number;
  frames: number;
  /** Frames the generator sent per call-second in the window (50 when it keeps up). */
  offeredPerCallSecond: number;
  /** Frames a starved generator skipped (more than a second behind). */
  skipped: number;
  /** Server CPU µs per call-second. */
  cpuPerCallSecond: number;
  /** Server CPU µs per frame relayed (in and back out): its CPU a second over frames relayed a second. */
  cpuPerFrame: number;
  /** Generator CPU µs per frame sent or received. */
  generatorCpuPerFrame: number;
  /** The same per generator process, with the client it speaks through (BENCH_MEDIA_CLIENT=both: one of each at once). */
  generatorByProcess: { client: Client; cpuPerFrame: number }[];
  /** Server CPU as a share of one core. */
  serverCore: string;
  /** The load generator's CPU (all its processes) as a share of one core. */
  generatorCore: string;
  /** The kernel's (system time's) share of the server's and of the generator's CPU. */
  serverKernel: string;
  generatorKernel: string;
  /** Replies the generator could not read a send time from (0 when every reply is counted). */
  unreadable: number;
  /** The idle process's 20 ms timer lateness, ms. */
  jitterP50: number;
  jitterP99: number;
  /** How late the generator's beats were against their schedule, p99 ms. */
  sendLagP99: number;
}

async function measure(server: Server, carriers: Load[], jitter: Load, calls: number, seconds: number, profile: boolean): Promise<StepResult> {
  const shares = carriers.map((_, g) => Math.floor((calls * (g + 1)) / carriers.length) - Math.floor((calls * g) / carriers.length));
  let first = 0;
  await Promise.all(
    carriers.map((c, g) => {
      const m = { cmd: 'open', url: server.url, calls: shares[g], first, total: calls, base: BASE };
      first += shares[g];
      return c.ask(m);
    }),
  );
  // The window, in ms since BASE on every process's clock, after a second of warm-up: frames
  // stamped in it count, with their round trips, and the server's and the generator's CPU are
  // taken over it. Each process learns it before the frames start, so a starved one that reads
  // its messages late still counts the whole window.
  const from = Date.now() - BASE + 1300;
  const to = from + seconds * 1000;
  const window = { from, to };
  await Promise.all([...carriers, jitter].map((c) => c.ask({ cmd: 'measure', ...window })));
  await Promise.all(carriers.map((c) => c.ask({ cmd: 'run' })));
  const until = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms - (Date.now() - BASE))));
  await until(from);
  if (profile) await server.profile();
  if (server.kind !== 'ws' && process.env.BENCH_MEDIA_SERVER_OUT) fs.appendFileSync(`${process.env.BENCH_MEDIA_SERVER_OUT}${server.kind === 'compare' ? '.compare' : ''}`, `${Date.now() - BASE} window ${calls} calls ${from}–${to}\n`);
  const c0 = await server.cpuMicros();
  const t0 = performance.now();
  await until(to);
  const c1 = await server.cpuMicros();
  const cpu0 = c0.total;
  const cpu1 = c1.total;
  const measuredS = (performance.now() - t0) / 1000;
  if (profile) await server.profile();
  const [reports, jitterReport] = await Promise.all([Promise.all(carriers.map((c) => c.ask<Report>({ cmd: 'report', ...window }))), jitter.ask<{ lag: [number, number][] }>({ cmd: 'report', ...window })]);
  await Promise.all(carriers.map((c) => c.ask({ cmd: 'close' })));
  const [p50, p99] = quantiles(
    reports.map((r) => r.rtt),
    [0.5, 0.99],
  );
  const [jitterP50, jitterP99] = quantiles([jitterReport.lag], [0.5, 0.99]);
  const [sendLagP99] = quantiles(
    reports.map((r) => r.lag),
    [0.99],
  );
  const generatorMicros = reports.reduce((a, r) => a + r.cpuMicros, 0);
  const generatorSystemMicros = reports.reduce((a, r) => a + r.systemMicros, 0);
  const generatorS = seconds;
  const sent = reports.reduce((a, r) => a + r.sent, 0);
  const received = reports.reduce((a, r) => a + r.received, 0);
  return {
    calls,
    p50,
    p99,
    lost: reports.reduce((a, r) => a + r.lost, 0),
    frames: received,
    offeredPerCallSecond: Math.round((sent / (calls * seconds)) * 10) / 10,
    skipped: reports.reduce((a, r) => a + r.skipped, 0),
    cpuPerCallSecond: Math.round((cpu1 - cpu0) / (calls * measuredS)),
    // The server's CPU per second over its window, over the frames per second of the generator's.
    cpuPerFrame: Math.round(((cpu1 - cpu0) / measuredS / Math.max(1, received / seconds)) * 100) / 100,
    generatorCpuPerFrame: Math.round((generatorMicros / Math.max(1, sent + received)) * 100) / 100,
    generatorByProcess: reports.map((r, g) => ({ client: carriers[g].client, cpuPerFrame: Math.round((r.cpuMicros / Math.max(1, r.sent + r.received)) * 100) / 100 })),
    serverCore: `${((cpu1 - cpu0) / 1e4 / measuredS).toFixed(0)} %`,
    serverKernel: `${(((c1.system - c0.system) / Math.max(1, cpu1 - cpu0)) * 100).toFixed(0)} %`,
    generatorKernel: `${((generatorSystemMicros / Math.max(1, generatorMicros)) * 100).toFixed(0)} %`,
    unreadable: reports.reduce((a, r) => a + r.unreadable, 0),
    generatorCore: `${(generatorMicros / 1e4 / generatorS).toFixed(0)} %`,
    jitterP50,
    jitterP99,
    sendLagP99,
  };
}

/** Whether `taskset` (util-linux) is here to pin the bench's processes to cores. */
function tasksetWorks(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Every thread of process `pid` on `cpus` (taskset's list, e.g. `0` or `1-3`). */
function pin(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });
}

export async function mediaRelayBench(seconds: number) {
  const steps = (process.env.BENCH_MEDIA_STEPS ?? '100,250,500,750,1000').split(',').map(Number);
  const generators = Number(process.env.BENCH_MEDIA_GENERATORS ?? 2);
  const pinnedGenerators = Math.max(1, Math.min(generators, Number(process.env.BENCH_MEDIA_PINNED_GENERATORS ?? 1)));
  const measureSeconds = Math.min(seconds, 5);
  const profDir = process.env.BENCH_CPU_PROF;
  const compare = process.env.BENCH_MEDIA_COMPARE;
  const servers = await Promise.all([startServer('switchboard', profDir), startServer('ws'), ...(compare ? [startServer('compare')] : [])]);
  // BENCH_MEDIA_CLIENT: `raw` (default) or `ws` for every generator process, or `both`: the two
  // clients side by side (even processes raw, odd ones ws), each process's CPU a frame printed.
  const clients = process.env.BENCH_MEDIA_CLIENT ?? 'raw';
  const carriers = Array.from({ length: generators }, (_, g) => startLoad('carrier', clients === 'ws' || (clients === 'both' && g % 2 === 1) ? 'ws' : 'raw'));
  const jitter = startLoad('jitter');
  const results: Record<Kind, StepResult[]> = { switchboard: [], ws: [], compare: [] };
  const pinned: Partial<Record<Kind, StepResult>> = {};
  const cpus = os.availableParallelism();
  const pinning = process.env.BENCH_MEDIA_PINNED !== '0' && cpus >= 2 && tasksetWorks();
  try {
    await Promise.all([...carriers, jitter].map((l) => l.ready));
    await jitter.ask({ cmd: 'open', base: BASE });
    for (const calls of steps) {
      // In turns at each step, so a burst of load from elsewhere weighs on both.
      for (const server of servers) {
        results[server.kind].push(await measure(server, carriers, jitter, calls, measureSeconds, !!profDir && server.kind === 'switchboard' && calls === steps[steps.length - 1]));
      }
    }
    if (pinning) {
      // The largest step again with the server and the generator on cores of their own, as when
      // the carrier is on other machines: every server (and the idle timer process, so its jitter
      // is the server core's) on CPU 0, the generator on the others. Only the bench's processes
      // are pinned; the rest of the machine still runs on every core.
      // The generator is BENCH_MEDIA_PINNED_GENERATORS processes (default one: on one core, two
      // processes only add context switches and a second 1 ms timer), the others left idle.
      const pinnedCarriers = carriers.slice(0, pinnedGenerators);
      for (const s of servers) pin(s.pid, '0');
      pin(jitter.pid, '0');
      for (const c of pinnedCarriers) pin(c.pid, `1-${cpus - 1}`);
      for (const server of servers) pinned[server.kind] = await measure(server, pinnedCarriers, jitter, steps[steps.length - 1], measureSeconds, false);
      for (const p of [...servers, ...carriers, jitter]) pin(p.pid, `0-${cpus - 1}`);
    }
  } finally {
    for (const s of servers) s.stop();
    for (const l of [...carriers, jitter]) l.stop();
  }
  const LIMIT_MS = 5;
  const TARGET_CALLS = 1000;
  const top = (kind: Kind) => results[kind][results[kind].length - 1];
  const maxUnder = (kind: Kind) => results[kind].filter((r) => r.p99 < LIMIT_MS).reduce((a, r) => Math.max(a, r.calls), 0);
  const ours = top('switchboard');
  const base = top('ws');
  const met = ours.calls >= TARGET_CALLS && ours.p99 < LIMIT_MS;
  const line = (r: StepResult) =>
    `${r.calls} calls p50 ${r.p50} ms p99 ${r.p99} ms, ${r.cpuPerCallSecond} µs CPU per call-second (${r.serverCore} of a core, ${r.serverKernel} of it in the kernel, ${r.cpuPerFrame} µs a frame relayed), ` +
    `${r.offeredPerCallSecond} frames offered per call-second of 50${Math.abs(r.offeredPerCallSecond - 50) > 1 ? ' (the generator did not keep to its beat: this measures the machine, not the relay)' : ''}, ` +
    `${r.lost} of ${r.frames + r.lost} unanswered in the window${r.unreadable ? `, ${r.unreadable} replies without a readable stamp` : ''}`;
  const client = clients === 'ws' ? '`ws` client' : clients === 'both' ? 'raw framing and `ws` client side by side' : 'raw WebSocket framing over net';
  const byClient = (r: StepResult) => r.generatorByProcess.map((g) => `${g.client} ${g.cpuPerFrame}`).join(', ');
  const po = pinned.switchboard;
  const pb = pinned.ws;
  const pinnedLine =
    po && pb
      ? `\nmedia relay with the server on a core of its own (taskset: each server and the idle timer process on CPU 0, the generator (${pinnedGenerators} process${pinnedGenerators === 1 ? '' : 'es'}) on CPU ${cpus > 2 ? `1–${cpus - 1}` : '1'}; the rest of the machine unpinned; target: 1,000 concurrent calls at p99 < 5 ms): ` +
        `ours ${line(po)}; plain ws relay ${line(pb)}; CPU per call-second ours/ws ${((po.cpuPerCallSecond / pb.cpuPerCallSecond) * 100).toFixed(0)} %, p99 ours/ws ${((po.p99 / pb.p99) * 100).toFixed(0)} %; ` +
        `timer jitter on CPU 0 p50 ${po.jitterP50} / p99 ${po.jitterP99} ms in ours' window, ${pb.jitterP50} / ${pb.jitterP99} ms in the baseline's; generator ${po.generatorCore} / ${pb.generatorCore} of a core (${po.generatorCpuPerFrame} / ${pb.generatorCpuPerFrame} µs a frame sent or read), beat lateness p99 ${po.sendLagP99} / ${pb.sendLagP99} ms; ` +
        `target (1,000 calls at p99 < 5 ms) with a core of its own ${po.calls >= TARGET_CALLS && po.p99 < LIMIT_MS ? 'met' : 'not met'}` +
        (pinned.compare ? `; compared: ${compare}${process.env.BENCH_MEDIA_COMPARE_FLAGS !== undefined ? ` (node flags: ${process.env.BENCH_MEDIA_COMPARE_FLAGS})` : ''} ${line(pinned.compare)}` : '')
      : '';
  return {
    name: 'media relay: 1,000 concurrent calls in one process, p99 relay latency and CPU per call-second',
    steps: results,
    pinned,
    summary:
      `media relay (20 ms frames both ways, one server process; target: 1,000 concurrent calls at p99 < 5 ms): ` +
      `ours (uWebSockets.js media server + bridge, node flags as production runs the dialler: ${MEDIA_NODE_FLAGS.join(' ')}) ${line(ours)}; plain ws relay ${line(base)}; ` +
      `CPU per call-second ours/ws ${((ours.cpuPerCallSecond / base.cpuPerCallSecond) * 100).toFixed(0)} %, p99 ours/ws ${((ours.p99 / base.p99) * 100).toFixed(0)} %; ` +
      `timer jitter of this machine (idle 20 ms setInterval lateness) p50 ${ours.jitterP50} / p99 ${ours.jitterP99} ms in ours' window, ${base.jitterP50} / ${base.jitterP99} ms in the baseline's; ` +
      `load generator ${generators} processes (${client}), ${ours.generatorCore} / ${base.generatorCore} of a core (${ours.generatorCpuPerFrame} / ${base.generatorCpuPerFrame} µs a frame sent or read, ${ours.generatorKernel} / ${base.generatorKernel} in the kernel${clients === 'both' ? `; µs a frame by process: ${byClient(ours)} / ${byClient(base)}` : ''}), beat lateness p99 ${ours.sendLagP99} / ${base.sendLagP99} ms; ` +
      `most calls with p99 < 5 ms: ours ${maxUnder('switchboard')}, ws ${maxUnder('ws')}; ` +
      `target ${met ? 'met' : 'not met'}` +
      (compare ? `; compared: ${compare}${process.env.BENCH_MEDIA_COMPARE_FLAGS !== undefined ? ` (node flags: ${process.env.BENCH_MEDIA_COMPARE_FLAGS})` : ''} ${line(top('compare'))}, ours/it CPU ${((ours.cpuPerCallSecond / top('compare').cpuPerCallSecond) * 100).toFixed(0)} %` : '') +
      pinnedLine,
  };
}
