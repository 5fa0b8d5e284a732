/**
 * A child process of the media relay benchmark (bench/media-relay.ts), run with an IPC channel.
 *
 * `carrier`: simulated carrier streams. Told `open` (url, its calls, their place in the 20 ms beat),
 * it opens one WebSocket per call and sends `connected` and `start`; told `run`, each call sends a
 * 20 ms μ-law frame every 20 ms, the calls spread over the beat; between `measure` and `report` it
 * records the round trip of every frame (the send time travels in the frame's first six bytes, so
 * nothing is looked up per frame) and its own CPU; `close` ends its sockets.
 *
 * The carrier is the machine's other big consumer of CPU in this bench (in production it is on the
 * carrier's machines), so by default it speaks WebSocket itself over raw `net` sockets, as cheaply
 * as it can: each call's `media` frame is built once, masked with a fixed key chosen for the call
 * (RFC 6455 client framing), and per frame only the send time and the sequence numbers (fixed
 * width, zero-padded) are patched and masked into a copy; replies are read through one shared read
 * buffer (`onread`, no Buffer or stream event per read) by walking the frame headers and reading
 * the stamp at `"payload":"` in the bytes. BENCH_MEDIA_CLIENT=ws uses the `ws` client instead (the
 * generator of earlier rounds: same frames, unpadded numbers, a string built and parsed per frame;
 * the parent sets it per process, so BENCH_MEDIA_CLIENT=both there runs the two side by side).
 *
 * `jitter`: an idle process whose only work is a 20 ms setInterval; between `measure` and `report`
 * it records how late each tick came (this machine's own timer jitter, in the same run).
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
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
const B64_CODE = Uint8Array.from(B64, (c) => c.charCodeAt(0));
const B64_VALUE = new Int8Array(256).fill(-1);
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
    const a = B64_VALUE[text.charCodeAt(at + i) & 255];
    const b = B64_VALUE[text.charCodeAt(at + 4 + i) & 255];
    if (a < 0 || b < 0) return -1;
    hi = (hi << 6) | a;
    lo = (lo << 6) | b;
  }
  return hi * 0x1000000 + lo;
}

/** `decode48` over bytes: the integer whose 8 base64 characters start at `at` in `buf`, or -1. */
function decode48Bytes(buf: Buffer, at: number): number {
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < 4; i++) {
    const a = B64_VALUE[buf[at + i]];
    const b = B64_VALUE[buf[at + 4 + i]];
    if (a < 0 || b < 0) return -1;
    hi = (hi << 6) | a;
    lo = (lo << 6) | b;
  }
  return hi * 0x1000000 + lo;
}

/** Bytes 6…159 of every frame (μ-law silence), base64: six bytes are whole base64 groups, so it follows the stamp as is. */
const TAIL = Buffer.alloc(154, 0xff).toString('base64');
const PAYLOAD_MARK = '"payload":"';
const PAYLOAD_MARK_BYTES = Buffer.from(PAYLOAD_MARK);

/** µs since `base` (an epoch ms the parent gives every process), so windows agree across processes. */
let base = 0;
const nowMicros = () => Math.round((performance.timeOrigin + performance.now() - base) * 1000);

/** One simulated call as the beat sees it: whether it may send, and its next frame stamped `stamp`. */
interface Call {
  readonly open: boolean;
  sendFrame(stamp: number): void;
  close(): void;
}

/** What a generator does with a reply's stamp: the round trip if it was sent in the window. */
interface Counter {
  reply(stamp: number): void;
  /** A reply whose stamp could not be read (counted, and reported). */
  unreadable(): void;
}

/** The `start` message of call `i`, as the carrier sends it. */
const startMessage = (i: number) =>
  JSON.stringify({ event: 'start', sequenceNumber: '1', streamSid: `MZ${i}`, start: { streamSid: `MZ${i}`, callSid: `CA${i}`, customParameters: { call_id: `call-${i}` }, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } });
const CONNECTED = JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' });

// ---- the `ws` client (BENCH_MEDIA_CLIENT=ws) ----

function openWsCall(url: string, i: number, counter: Counter): Promise<Call> {
  return new Promise<Call>((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const streamSid = `MZ${i}`;
    let seq = 1;
    ws.on('open', () => {
      ws.send(CONNECTED);
      ws.send(startMessage(i));
      resolve({
        get open() {
          return ws.readyState === WebSocket.OPEN;
        },
        sendFrame(stamp) {
          seq++;
          const n = String(seq);
          ws.send(`{"event":"media","sequenceNumber":"${n}","media":{"track":"inbound","chunk":"${n}","timestamp":"${seq * 20}","payload":"${encode48(stamp)}${TAIL}"},"streamSid":"${streamSid}"}`);
        },
        close: () => ws.terminate(),
      });
    });
    ws.on('message', (data) => {
      const text = String(data);
      const at = text.indexOf(PAYLOAD_MARK);
      const stamp = at < 0 ? -1 : decode48(text, at + PAYLOAD_MARK.length);
      if (stamp < 0) counter.unreadable();
      else counter.reply(stamp);
    });
    ws.on('error', reject);
  });
}

// ---- the raw client: WebSocket framing done here over `net` ----

/** Sequence numbers are written in this many digits (zero-padded), so every frame of a call has one length. */
const SEQ_DIGITS = 9;
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** A masked client text (or pong) frame of `payload` under `mask`. */
function clientFrame(payload: Buffer, mask: Buffer, opcode = 0x1): Buffer {
  const len = payload.length;
  const head = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const out = Buffer.allocUnsafe(head + 4 + len);
  out[0] = 0x80 | opcode;
  if (len < 126) out[1] = 0x80 | len;
  else if (len < 65536) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(len, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeBigUInt64BE(BigInt(len), 2);
  }
  mask.copy(out, head);
  for (let k = 0; k < len; k++) out[head + 4 + k] = payload[k] ^ mask[k & 3];
  return out;
}

/**
 * The read buffer every raw socket of this process shares (net's `onread`): a read is handled
 * before the next one, so nothing is allocated per read; only a frame cut between two reads is
 * copied out (`pending`).
 */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

function openRawCall(url: string, i: number, counter: Counter): Promise<Call> {
  const { hostname, port, pathname } = new URL(url);
  const key = randomBytes(16).toString('base64');
  const accept = createHash('sha1').update(key + WS_GUID).digest('base64');
  const mask = randomBytes(4);
  const streamSid = `MZ${i}`;
  const zeros = '0'.repeat(SEQ_DIGITS);
  const text = `{"event":"media","sequenceNumber":"${zeros}","media":{"track":"inbound","chunk":"${zeros}","timestamp":"${zeros}","payload":"${encode48(0)}${TAIL}"},"streamSid":"${streamSid}"}`;
  const template = clientFrame(Buffer.from(text), mask);
  const head = template.length - text.length;
  const seqAt = head + text.indexOf('"sequenceNumber":"') + 18;
  const chunkAt = head + text.indexOf('"chunk":"') + 9;
  const timestampAt = head + text.indexOf('"timestamp":"') + 13;
  const stampAt = head + text.indexOf(PAYLOAD_MARK) + PAYLOAD_MARK.length;
  /** The mask byte that applies at frame offset `at`. */
  const maskAt = (at: number) => mask[(at - head) & 3];
  const writeDigits = (frame: Buffer, at: number, n: number) => {
    for (let k = SEQ_DIGITS - 1; k >= 0; k--, n = Math.floor(n / 10)) frame[at + k] = (48 + (n % 10)) ^ maskAt(at + k);
  };

  return new Promise<Call>((resolve, reject) => {
    let handshaken = false;
    let open = false;
    let seq = 1;
    let handshake = '';
    /** Bytes of a frame cut by the end of a read, kept for the next. */
    let pending: Buffer | null = null;
    const fail = (err: Error) => {
      if (!handshaken) reject(err);
      else counter.unreadable();
      socket.destroy();
    };

    /** Handles the whole frames in buf[from, to) and keeps the rest. */
    const frames = (buf: Buffer, from: number, to: number) => {
      let at = from;
      while (to - at >= 2) {
        const b0 = buf[at];
        let len = buf[at + 1];
        let h = 2;
        if (len & 0x80) return fail(new Error('a masked frame from the server'));
        if (len === 126) {
          if (to - at < 4) break;
          len = buf.readUInt16BE(at + 2);
          h = 4;
        } else if (len === 127) {
          if (to - at < 10) break;
          len = Number(buf.readBigUInt64BE(at + 2));
          h = 10;
        }
        if (to - at < h + len) break;
        const start = at + h;
        const end = start + len;
        const opcode = b0 & 0x0f;
        if (!(b0 & 0x80)) return fail(new Error('a fragmented message (the servers send none)'));
        if (opcode === 0x1) {
          const mark = buf.indexOf(PAYLOAD_MARK_BYTES, start);
          const stamp = mark < 0 || mark + PAYLOAD_MARK_BYTES.length + 8 > end ? -1 : decode48Bytes(buf, mark + PAYLOAD_MARK_BYTES.length);
          if (stamp < 0) counter.unreadable();
          else counter.reply(stamp);
        } else if (opcode === 0x9) {
          socket.write(clientFrame(buf.subarray(start, end), mask, 0xa));
        } else if (opcode === 0x8) {
          open = false;
        }
        at = end;
      }
      pending = at < to ? Buffer.from(buf.subarray(at, to)) : null;
    };

    const socket = net.connect({
      host: hostname,
      port: Number(port),
      noDelay: true,
      onread: {
        buffer: READ_BUFFER,
        callback(nread: number, buf: Uint8Array) {
          const bytes = buf as Buffer;
          if (!handshaken) {
            handshake += bytes.toString('latin1', 0, nread);
            const endOfHead = handshake.indexOf('\r\n\r\n');
            if (endOfHead < 0) return true;
            const head = handshake.slice(0, endOfHead);
            if (!/^HTTP\/1\.1 101 /.test(head) || !head.toLowerCase().includes(`sec-websocket-accept: ${accept.toLowerCase()}`)) {
              fail(new Error(`WebSocket upgrade refused: ${head.split('\r\n')[0]}`));
              return false;
            }
            handshaken = true;
            open = true;
            socket.write(clientFrame(Buffer.from(CONNECTED), mask));
            socket.write(clientFrame(Buffer.from(startMessage(i)), mask));
            const rest = Buffer.from(handshake.slice(endOfHead + 4), 'latin1');
            handshake = '';
            resolve(call);
            if (rest.length) frames(rest, 0, rest.length);
            return true;
          }
          if (pending) {
            const joined = Buffer.concat([pending, bytes.subarray(0, nread)]);
            frames(joined, 0, joined.length);
          } else frames(bytes, 0, nread);
          return true;
        },
      },
    });
    socket.on('connect', () => {
      socket.write(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    socket.on('error', fail);
    socket.on('close', () => (open = false));

    /** This call's frame, reused while its socket keeps up (every patched byte is rewritten each frame). */
    const own = Buffer.from(template);
    const call: Call = {
      get open() {
        return open;
      },
      sendFrame(stamp) {
        seq++;
        // The call's own frame, patched in place, when the socket has written the last one out
        // (nothing queued: net wrote it at once); a new copy only while the kernel holds the rest back.
        let frame = own;
        if (socket.writableLength !== 0) {
          frame = Buffer.allocUnsafe(template.length);
          template.copy(frame);
        }
        writeDigits(frame, seqAt, seq);
        writeDigits(frame, chunkAt, seq);
        writeDigits(frame, timestampAt, seq * 20);
        const hi = Math.floor(stamp / 0x1000000);
        const lo = stamp % 0x1000000;
        frame[stampAt] = B64_CODE[(hi >> 18) & 63] ^ maskAt(stampAt);
        frame[stampAt + 1] = B64_CODE[(hi >> 12) & 63] ^ maskAt(stampAt + 1);
        frame[stampAt + 2] = B64_CODE[(hi >> 6) & 63] ^ maskAt(stampAt + 2);
        frame[stampAt + 3] = B64_CODE[hi & 63] ^ maskAt(stampAt + 3);
        frame[stampAt + 4] = B64_CODE[(lo >> 18) & 63] ^ maskAt(stampAt + 4);
        frame[stampAt + 5] = B64_CODE[(lo >> 12) & 63] ^ maskAt(stampAt + 5);
        frame[stampAt + 6] = B64_CODE[(lo >> 6) & 63] ^ maskAt(stampAt + 6);
        frame[stampAt + 7] = B64_CODE[lo & 63] ^ maskAt(stampAt + 7);
        socket.write(frame);
      },
      close: () => socket.destroy(),
    };
  });
}

function carrier() {
  const openCall = process.env.BENCH_MEDIA_CLIENT === 'ws' ? openWsCall : openRawCall;
  const rtt = new Histogram();
  /** Lateness of each beat against its slot in the 20 ms schedule. */
  const lag = new Histogram();
  let calls: Call[] = [];
  /** The calls of each millisecond of the 20 ms beat. */
  let slots: Call[][] = [];
  /** The measured window, µs since `base`: frames sent in it count, with their round trips. */
  let measureFromMicros = Infinity;
  let measureToMicros = -Infinity;
  let sent = 0;
  let skipped = 0;
  /** Replies (to any frame, in the window or not) and replies whose stamp could not be read, since `measure`. */
  let replies = 0;
  let unreadable = 0;
  let cpuOfWindow = () => ({ user: 0, system: 0 });
  let timer: NodeJS.Timeout | undefined;

  const counter: Counter = {
    reply(stamp) {
      replies++;
      if (stamp < measureFromMicros || stamp >= measureToMicros) return;
      rtt.add(nowMicros() - stamp);
    },
    unreadable() {
      unreadable++;
    },
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
        calls = await Promise.all(
          Array.from({ length: m.calls }, async (_, k) => {
            const i = m.first + k;
            const call = await openCall(m.url, i, counter);
            // Calls are not in step: call i of `total` sends in millisecond ⌊20·i/total⌋ of each beat.
            slots[Math.floor((20 * i) / m.total)].push(call);
            return call;
          }),
        );
        send({ opened: calls.length });
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
            const slot = slots[nextMs % 20];
            if (due >= measureFromMicros && due < measureToMicros) lag.add(now - due);
            for (const c of slot) {
              if (!c.open) continue;
              const stamp = nowMicros();
              c.sendFrame(stamp);
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
        replies = 0;
        unreadable = 0;
        measureFromMicros = m.from * 1000;
        measureToMicros = m.to * 1000;
        // This process's CPU over the same window.
        let cpu0 = process.cpuUsage();
        let cpu = { user: 0, system: 0 };
        setTimeout(() => (cpu0 = process.cpuUsage()), Math.max(0, m.from - nowMicros() / 1000));
        setTimeout(() => (cpu = process.cpuUsage(cpu0)), Math.max(0, m.to - nowMicros() / 1000));
        cpuOfWindow = () => cpu;
        send({ measuring: true });
        return;
      }
      case 'report': {
        // Replies to the last frames of the window may still be on their way: a grace period.
        await new Promise((r) => setTimeout(r, Math.max(300, m.to + 300 - nowMicros() / 1000)));
        clearInterval(timer);
        send({ rtt: rtt.sparse(), lag: lag.sparse(), sent, received: rtt.n, lost: sent - rtt.n, skipped, replies, unreadable, cpuMicros: cpuOfWindow().user + cpuOfWindow().system, systemMicros: cpuOfWindow().system, measuredMs: m.to - m.from });
        return;
      }
      case 'close':
        for (const c of calls) c.close();
        calls = [];
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
