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
  | { cmd: 'open'; url: string; calls: number; first: number; total: number }
  | { cmd: 'run' }
  | { cmd: 'measure' }
  | { cmd: 'report' }
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

function carrier() {
  const t0 = process.hrtime.bigint();
  const nowMicros = () => Number(process.hrtime.bigint() - t0) / 1000;
  const rtt = new Histogram();
  /** Lateness of each beat against its slot in the 20 ms schedule. */
  const lag = new Histogram();
  let sockets: WebSocket[] = [];
  /** The calls of each millisecond of the 20 ms beat. */
  let slots: { ws: WebSocket; seq: number; streamSid: string }[][] = [];
  let measuring = false;
  let measureFromMicros = Infinity;
  let sent = 0;
  let lost = 0;
  let cpu0 = process.cpuUsage();
  let timer: NodeJS.Timeout | undefined;

  const onMessage = (data: WebSocket.RawData) => {
    const text = String(data);
    const at = text.indexOf(PAYLOAD_MARK);
    if (at < 0) return;
    const stamp = decode48(text, at + PAYLOAD_MARK.length);
    if (stamp < 0 || !measuring || stamp < measureFromMicros) return;
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
          // Every slot that is due, late ones included, so each call keeps its 50 frames a second.
          while (nextMs <= elapsedMs) {
            const due = start + nextMs * 1000;
            const calls = slots[nextMs % 20];
            if (measuring && due >= measureFromMicros) lag.add(now - due);
            for (const c of calls) {
              if (c.ws.readyState !== WebSocket.OPEN) continue;
              const stamp = Math.round(nowMicros());
              c.ws.send(frame(c, stamp));
              if (measuring && stamp >= measureFromMicros) sent++;
            }
            nextMs++;
          }
        };
        timer = setInterval(tick, 1);
        send({ running: true });
        return;
      }
      case 'measure':
        rtt.clear();
        lag.clear();
        sent = 0;
        lost = 0;
        measureFromMicros = nowMicros();
        measuring = true;
        cpu0 = process.cpuUsage();
        send({ measuring: true });
        return;
      case 'report': {
        const cpu = process.cpuUsage(cpu0);
        const measuredMs = (nowMicros() - measureFromMicros) / 1000;
        // Replies to the last frames sent may still be on their way: stop counting after a grace period.
        clearInterval(timer);
        await new Promise((r) => setTimeout(r, 300));
        measuring = false;
        lost = sent - rtt.n;
        send({ rtt: rtt.sparse(), lag: lag.sparse(), sent, received: rtt.n, lost, cpuMicros: cpu.user + cpu.system, measuredMs });
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
  let measuring = false;
  let last = process.hrtime.bigint();
  setInterval(() => {
    const now = process.hrtime.bigint();
    if (measuring) lateness.add(Number(now - last) / 1000 - 20_000);
    last = now;
  }, 20);
  process.on('message', (m: Command) => {
    if (m.cmd === 'measure') {
      lateness.clear();
      measuring = true;
      send({ measuring: true });
    } else if (m.cmd === 'report') {
      measuring = false;
      send({ lag: lateness.sparse() });
    }
  });
}

if (role === 'carrier') carrier();
else if (role === 'jitter') jitter();
else throw new Error(`unknown role ${role}`);
send({ ready: true });
