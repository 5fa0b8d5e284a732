import net from 'node:net';
import { cpuMeter, type LoadResult } from './lib.ts';

/** What an open-loop run measured besides `LoadResult`: how late the generator itself sent. */
export interface OpenLoopResult extends LoadResult {
  /** Requests offered (intended) and answered. */
  offered: number;
  answered: number;
  /** p99 and largest lateness of a request's dispatch behind its intended time, ms: the generator's own lag (its timer's), not the wait for a free connection. */
  sendLagP99Ms: number;
  sendLagMaxMs: number;
  /** p99 of the time from the actual send to the answer, ms (what the server and the kernel took, without the wait for a free connection). */
  p99FromSendMs: number;
  /** Connections it needed (a request finding none free opens one, up to `maxConnections`). */
  connections: number;
}

/**
 * An open-loop GET load at an even `rate`: request i is due at start + i/rate, whatever became of
 * the earlier ones, and its latency is counted from that intended time, not from when it was sent
 * (corrected for coordinated omission: a request that waited for the generator, for a free
 * connection or for the server counts all of its wait). Each request takes a free keep-alive
 * connection, opens one if none is free (up to `maxConnections`), or else waits for the next one
 * to free up. Requests go out as they fall due, a timer tick at a time (node's timers run every
 * millisecond at best, so at 2,000/s about two a tick); the send lag is reported so that the
 * generator's own lateness can be told from the server's.
 *
 * autocannon's `overallRate` measures something else: each of its connections sends as fast as
 * its answers come back until it has made its share of the second's requests, then waits for the
 * next second, so every second begins with all connections at full speed (a closed-loop burst
 * at the server's maximum rate) and the rest of the second is idle; and its correction for
 * coordinated omission takes the expected interval as ceil(1 / per-connection rate) = 1 ms, adding
 * a made-up sample for every millisecond of each slow answer.
 */
export async function openLoop(
  url: string,
  opts: { rate: number; seconds: number; headers?: Record<string, string>; connections?: number; maxConnections?: number; serverPid?: number; postgresPid?: number },
): Promise<OpenLoopResult> {
  const target = new URL(url);
  const port = Number(target.port || 80);
  const host = target.hostname;
  const head = Object.entries(opts.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const request = Buffer.from(`GET ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\n${head}\r\n`);
  const maxConnections = opts.maxConnections ?? 64;
  const interval = 1000 / opts.rate;
  const total = Math.round(opts.rate * opts.seconds);

  const latencies: number[] = [];
  const lags: number[] = [];
  const fromSend: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let answered = 0;
  const free: Conn[] = [];
  const all = new Set<Conn>();
  const waiting: number[] = [];
  let open = 0;
  let finished: (() => void) | undefined;

  interface Conn {
    socket: net.Socket;
    /** Intended time of the request in flight on it, or undefined when free. */
    intended?: number;
    /** When that request was actually written. */
    sentAt: number;
    buf: Buffer;
  }

  const send = (conn: Conn, intended: number) => {
    conn.intended = intended;
    conn.sentAt = performance.now();
    conn.socket.write(request);
  };
  const release = (conn: Conn) => {
    const next = waiting.shift();
    if (next !== undefined) send(conn, next);
    else free.push(conn);
  };
  const done = () => {
    answered++;
    if (answered + errors >= total) finished?.();
  };
  const connect = (): Promise<Conn> =>
    new Promise((resolve, reject) => {
      const socket = net.connect(port, host);
      socket.setNoDelay(true);
      const conn: Conn = { socket, sentAt: 0, buf: Buffer.alloc(0) };
      open++;
      all.add(conn);
      socket.once('connect', () => resolve(conn));
      socket.on('error', (err) => {
        if (conn.intended !== undefined) {
          errors++;
          conn.intended = undefined;
          if (answered + errors >= total) finished?.();
        }
        reject(err);
      });
      socket.on('close', () => {
        open--;
        const i = free.indexOf(conn);
        if (i >= 0) free.splice(i, 1);
      });
      socket.on('data', (chunk: Buffer) => {
        conn.buf = conn.buf.length ? Buffer.concat([conn.buf, chunk]) : chunk;
        // One answer at a time per connection (no pipelining): status line, headers, Content-Length body.
        for (;;) {
          const end = conn.buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          const headText = conn.buf.subarray(0, end).toString('latin1');
          const m = /\r\ncontent-length: *(\d+)/i.exec(headText);
          if (!m) throw new Error(`open-loop: an answer without Content-Length from ${url}`);
          const length = end + 4 + Number(m[1]);
          if (conn.buf.length < length) return;
          const status = Number(headText.slice(9, 12));
          conn.buf = conn.buf.subarray(length);
          if (conn.intended === undefined) continue;
          const intended = conn.intended;
          conn.intended = undefined;
          const now = performance.now();
          if (status >= 200 && status < 300) {
            latencies.push(now - intended);
            fromSend.push(now - conn.sentAt);
          }
          else non2xx++;
          done();
          release(conn);
        }
      });
    });

  const dispatch = (intended: number) => {
    lags.push(performance.now() - intended);
    const conn = free.pop();
    if (conn) return send(conn, intended);
    waiting.push(intended);
    if (open < maxConnections) {
      connect().then(release, () => {});
    }
  };

  // Connections opened before the clock starts, as a load balancer keeps them.
  for (const c of await Promise.all(Array.from({ length: opts.connections ?? 16 }, connect))) free.push(c);
  const meter = opts.serverPid === undefined ? undefined : cpuMeter({ pid: opts.serverPid, postmaster: opts.postgresPid });
  const allAnswered = new Promise<void>((resolve) => (finished = resolve));
  const start = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * interval <= now) dispatch(start + sent++ * interval);
      if (sent >= total) return resolve();
      setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    };
    tick();
  });
  // Whatever is still in flight gets 10 s; an answer later than that counts as an error.
  await Promise.race([allAnswered, new Promise((r) => setTimeout(r, 10_000))]);
  const elapsedSeconds = (performance.now() - start) / 1000;
  const cpu = meter?.perOp(answered);
  const connections = open;
  for (const c of all) c.socket.destroy();
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const pct = (xs: number[], p: number) => (xs.length ? Math.round(xs[Math.min(xs.length - 1, Math.floor(xs.length * p))] * 100) / 100 : NaN);
  const lat = sorted(latencies);
  const lag = sorted(lags);
  return {
    requestsPerSecond: Math.round(answered / elapsedSeconds),
    p50Ms: pct(lat, 0.5),
    p99Ms: pct(lat, 0.99),
    non2xx,
    errors: errors + (total - answered - errors),
    offered: total,
    answered,
    p99FromSendMs: pct(sorted(fromSend), 0.99),
    sendLagP99Ms: pct(lag, 0.99),
    sendLagMaxMs: Math.round((lag.at(-1) ?? 0) * 100) / 100,
    connections,
    ...(cpu ? { cpu } : {}),
  };
}
