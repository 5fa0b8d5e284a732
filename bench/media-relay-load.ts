/**
 * A child process of the media relay benchmark (bench/media-relay.ts), run with an IPC channel.
 *
 * `carrier`: simulated carrier streams. Told `open` (url, its calls, their place in the 20 ms beat),
 * it opens one WebSocket per call and sends `connected` and `start`; told `run`, each call sends a
 * 20 ms μ-law frame every 20 ms, the calls spread over the beat; between `measure` and `report` it
 * records the round trip of every frame (the send time travels in the frame's first six bytes, so
 * nothing is looked up per frame) and its own CPU; `close` ends its sockets. Frames are built from
 * a per-call prefix and a precomputed base64 tail, and replies read at the `"payload":"` mark,
 * without JSON.stringify or JSON.parse per frame, so the generator stays cheap.
 *
 * `jitter`: an idle process whose only work is a 20 ms setInterval; between `measure` and `report`
 * it records how late each tick came (this machine's own timer jitter, in the same run).
 */
import WebSocket from 'ws';

type Command =
  | { cmd: 'open'; url: string; calls: number; first: number; total: number; base: number }
  | { cmd: 'run' }
  | { cmd: 'measure'; from: number; to: number }
  | { cmd: 'report'; from: number; to: number }
  | { cmd: 'close' };

/** Round trips and lateness are kept in 10 µs buckets up to 2 s (the last bucket holds the rest). */
const BUCKET_US = 10;
const BUCKETS = 200_000;

class Histogram {
  readonly counts = new Uint32Array(BUCKETS);
  n = 0;
  add(micros: number): void {
    this.counts[Math.min(BUCKETS - 1, Math.max(0, Math.floor(micros / BUCKET_US)))]++;
    this.n++;
  }
  /** The non-empty buckets as [bucket, count] pairs (what goes back over IPC). */
  sparse(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i]) out.push([i, this.counts[i]]);
    return out;
  }
  clear(): void {
    this.counts.fill(0);
    this.n = 0;
  }
}

const send = (m: unknown) => process.send!(m);
const role = process.argv[2];

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < B64.length; i++) B64_VALUE[B64.charCodeAt(i)] = i;

/** A 48-bit integer as the 8 base64 characters of its six big-endian bytes. */
function encode48(n: number): string {
  const hi = Math.floor(n / 0x1000000);
  const lo = n % 0x1000000;
  return B64[(hi >> 18) & 63] + B64[(hi >> 12) & 63] + B64[(hi >> 6) & 63] + B64[hi & 63] + B64[(lo >> 18) & 63] + B64[(lo >> 12) & 63] + B64[(lo >> 6) & 63] + B64[lo & 63];
}

/** The integer `encode48` wrote at `at` in `text`, or -1. */
function decode48(text: string, at: number): number {
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < 4; i++) {
    const a = B64_VALUE[text.charCodeAt(at + i) & 127];
    const b = B64_VALUE[text.charCodeAt(at + 4 + i) & 127];
    if (a < 0 || b < 0) return -1;
    hi = (hi << 6) | a;
    lo = (lo << 6) | b;
  }
  return hi * 0x1000000 + lo;
}

/** Bytes 6…159 of every frame (μ-law silence), base64: six bytes are whole base64 groups, so it follows the stamp as is. */
const TAIL = Buffer.alloc(154, 0xff).toString('base64');
const PAYLOAD_MARK = '"payload":"';

/** µs since `base` (an epoch ms the parent gives every process), so windows agree across processes. */
let base = 0;
const nowMicros = () => Math.round((performance.timeOrigin + performance.now() - base) * 1000);

function carrier() {
  const rtt = new Histogram();
  /** Lateness of each beat against its slot in the 20 ms schedule. */
  const lag = new Histogram();
  let sockets: WebSocket[] = [];
  /** The calls of each millisecond of the 20 ms beat. */
  let slots: { ws: WebSocket; seq: number; streamSid: string }[][] = [];
  /** The measured window, µs since `base`: frames sent in it count, with their round trips. */
  let measureFromMicros = Infinity;
  let measureToMicros = -Infinity;
  let sent = 0;
  let skipped = 0;
  let cpuOfWindow = () => 0;
  let timer: NodeJS.Timeout | undefined;

  const onMessage = (data: WebSocket.RawData) => {
    const text = String(data);
    const at = text.indexOf(PAYLOAD_MARK);
    if (at < 0) return;
    const stamp = decode48(text, at + PAYLOAD_MARK.length);
    if (stamp < measureFromMicros || stamp >= measureToMicros) return;
    rtt.add(nowMicros() - stamp);
  };

  const frame = (c: { ws: WebSocket; seq: number; streamSid: string }, stamp: number) => {
    c.seq++;
    const n = String(c.seq);
    return `{"event":"media","sequenceNumber":"${n}","media":{"track":"inbound","chunk":"${n}","timestamp":"${c.seq * 20}","payload":"${encode48(stamp)}${TAIL}"},"streamSid":"${c.streamSid}"}`;
  };

  process.on('message', (m: Command) => {
    handle(m).catch((err: Error) => send({ error: String(err?.stack ?? err) }));
  });
  const handle = async (m: Command) => {
    if (process.env.BENCH_DEBUG) process.stderr.write(`carrier ${process.pid}: ${m.cmd}\n`);
    switch (m.cmd) {
      case 'open': {
        base = m.base;
        slots = Array.from({ length: 20 }, () => []);
        sockets = await Promise.all(
          Array.from({ length: m.calls }, (_, k) => {
            const i = m.first + k;
            return new Promise<WebSocket>((resolve, reject) => {
              const ws = new WebSocket(m.url, { perMessageDeflate: false });
              ws.on('open', () => {
                const streamSid = `MZ${i}`;
                ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
                ws.send(JSON.stringify({ event: 'start', sequenceNumber: '1', streamSid, start: { streamSid, callSid: `CA${i}`, customParameters: { call_id: `call-${i}` }, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } }));
                // Calls are not in step: call i of `total` sends in millisecond ⌊20·i/total⌋ of each beat.
                slots[Math.floor((20 * i) / m.total)].push({ ws, seq: 1, streamSid });
                resolve(ws);
              });
              ws.on('message', onMessage);
              ws.on('error', reject);
            });
          }),
        );
        send({ opened: sockets.length });
        return;
      }
      case 'run': {
        const start = nowMicros();
        let nextMs = 0;
        const tick = () => {
          const now = nowMicros();
          const elapsedMs = (now - start) / 1000;
          // Every slot that is due, late ones included, so each call keeps its 50 frames a second;
          // but a generator more than a second behind (a starved process) skips what it missed.
          if (elapsedMs - nextMs > 1000) {
            const behind = Math.floor(elapsedMs - 1000) - nextMs;
            if (now >= measureFromMicros && now < measureToMicros) for (let k = 0; k < behind; k++) skipped += slots[(nextMs + k) % 20].length;
            nextMs += behind;
          }
          while (nextMs <= elapsedMs) {
            const due = start + nextMs * 1000;
            const calls = slots[nextMs % 20];
            if (due >= measureFromMicros && due < measureToMicros) lag.add(now - due);
            for (const c of calls) {
              if (c.ws.readyState !== WebSocket.OPEN) continue;
              const stamp = nowMicros();
              c.ws.send(frame(c, stamp));
              if (stamp >= measureFromMicros && stamp < measureToMicros) sent++;
            }
            nextMs++;
          }
        };
        timer = setInterval(tick, 1);
        send({ running: true });
        return;
      }
      case 'measure': {
        rtt.clear();
        lag.clear();
        sent = 0;
        skipped = 0;
        measureFromMicros = m.from * 1000;
        measureToMicros = m.to * 1000;
        // This process's CPU over the same window.
        let cpu0 = process.cpuUsage();
        let cpuMicros = 0;
        setTimeout(() => (cpu0 = process.cpuUsage()), Math.max(0, m.from - nowMicros() / 1000));
        setTimeout(() => (cpuMicros = (({ user, system }) => user + system)(process.cpuUsage(cpu0))), Math.max(0, m.to - nowMicros() / 1000));
        cpuOfWindow = () => cpuMicros;
        send({ measuring: true });
        return;
      }
      case 'report': {
        // Replies to the last frames of the window may still be on their way: a grace period.
        await new Promise((r) => setTimeout(r, Math.max(300, m.to + 300 - nowMicros() / 1000)));
        clearInterval(timer);
        send({ rtt: rtt.sparse(), lag: lag.sparse(), sent, received: rtt.n, lost: sent - rtt.n, skipped, cpuMicros: cpuOfWindow(), measuredMs: m.to - m.from });
        return;
      }
      case 'close':
        for (const ws of sockets) ws.terminate();
        sockets = [];
        await new Promise((r) => setTimeout(r, 100));
        send({ closed: true });
        return;
    }
  };
}

function jitter() {
  const lateness = new Histogram();
  let from = Infinity;
  let to = -Infinity;
  let last = nowMicros();
  setInterval(() => {
    const now = nowMicros();
    if (now >= from && now < to) lateness.add(now - last - 20_000);
    last = now;
  }, 20);
  process.on('message', async (m: Command) => {
    if (m.cmd === 'open') {
      base = m.base;
      last = nowMicros();
      send({ opened: 0 });
    } else if (m.cmd === 'measure') {
      lateness.clear();
      from = m.from * 1000;
      to = m.to * 1000;
      send({ measuring: true });
    } else if (m.cmd === 'report') {
      await new Promise((r) => setTimeout(r, Math.max(0, m.to - nowMicros() / 1000)));
      send({ lag: lateness.sparse() });
    }
  });
}

if (role === 'carrier') carrier();
else if (role === 'jitter') jitter();
else throw new Error(`unknown role ${role}`);
send({ ready: true });
