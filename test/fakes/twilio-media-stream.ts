/**
 * The Media Streams side of the fake Twilio: dials the `<Stream url>` as a WebSocket client and
 * speaks Twilio's messages (twilio.com/docs/voice/media-streams/websocket-messages). Sends
 * `connected`, `start`, a `media` frame every 20 ms, the callee's keypresses as `dtmf`
 * (`{event:'dtmf', streamSid, sequenceNumber, dtmf:{track:'inbound_track', digit}}`, bidirectional
 * streams only, as Twilio documents) and `stop`;
 * takes `media`, `mark` and `clear` from our server. A mark comes back once the agent audio sent
 * before it has played (at `playbackSpeed` × real time); `clear` drops what has not played and
 * returns the pending marks at once, as Twilio does.
 *
 * With `network`, the stream crosses the internet as a real one does: each message is delayed by
 * a jitter, the connection stalls now and then and the messages held behind the stall arrive in
 * one burst, and frames are lost upstream (the carrier never had them: the next frame's
 * `timestamp` jumps over them, `chunk` does not). The WebSocket is one TCP stream, so messages
 * are late or missing but never out of order, marks and `stop` included.
 */
import WebSocket from 'ws';
import { FRAME_MS, SILENCE_FRAME_BASE64 } from '../../telephony/mulaw.ts';
import { randomHex } from '../../runtime/tokens.ts';

/** μ-law at 8 kHz: one byte per sample, 8 bytes per ms. */
const BYTES_PER_MS = 8;

export interface MediaStreamOptions {
  url: string;
  accountSid: string;
  callSid: string;
  customParameters: Record<string, string>;
  /** `<Connect><Stream>`: our server may send media, mark and clear. */
  bidirectional: boolean;
  playbackSpeed: number;
  /** μ-law frames (base64) the callee says first; silence follows. */
  calleeAudio: string[];
  onAgentAudio(mulaw: Buffer): void;
  /** The stream ended from our server's side (closed, or never opened). */
  onEnd(opened: boolean): void;
  /** Keys the callee presses, each this long after the stream's `start`, ms. */
  dtmf?: { atMs: number; digit: string }[];
  /** Jitter, stalls and losses on the way (default: none, every message at once). */
  network?: MediaNetwork;
}

/** The internet between the carrier and us (every field optional; all off by default). */
export interface MediaNetwork {
  /** Each message is delayed by a random 0 … jitterMs, ms. */
  jitterMs?: number;
  /** Every `stallEvery`-th frame is held `stallMs` longer; the frames behind it then arrive at once. */
  stallEvery?: number;
  stallMs?: number;
  /** Every `lossEvery` frames, `lostFrames` frames are lost (their audio and timestamps skipped). */
  lossEvery?: number;
  lostFrames?: number;
  /** Seed of the random delays (the same seed, the same delays). */
  seed?: number;
}

/** What happened on the stream, for assertions. */
export interface MediaStreamRecord {
  streamSid: string;
  opened: boolean;
  /** Agent media messages received, and their audio bytes. */
  agentFrames: number;
  agentBytes: number;
  marksReceived: string[];
  marksEchoed: string[];
  clears: number;
  /** Messages that break the protocol (wrong streamSid, unknown event, binary frames, …). */
  protocolErrors: string[];
  /** Who closed the WebSocket. */
  closedBy: 'server' | 'twilio' | null;
  /** Callee frames sent, in order: their `timestamp` and the index of their audio in `calleeAudio` (silence past its end). */
  framesSent: { timestampMs: number; index: number }[];
  /** Timestamps of frames lost upstream (never sent). */
  framesLost: number[];
  /** How many times the connection stalled (a burst followed). */
  stalls: number;
  /** Keys sent as `dtmf` messages, in order. */
  dtmfSent: string[];
}

export interface MediaStreamHandle {
  record: MediaStreamRecord;
  /** The call ended on Twilio's side: send `stop` and close. */
  stop(): void;
  /** Drop the connection without a word (fake shutting down). */
  terminate(): void;
}

export function openMediaStream(options: MediaStreamOptions): MediaStreamHandle {
  const record: MediaStreamRecord = {
    streamSid: `MZ${randomHex(16)}`,
    opened: false,
    agentFrames: 0,
    agentBytes: 0,
    marksReceived: [],
    marksEchoed: [],
    clears: 0,
    protocolErrors: [],
    closedBy: null,
    framesSent: [],
    framesLost: [],
    stalls: 0,
    dtmfSent: [],
  };
  const { streamSid } = record;
  const ws = new WebSocket(options.url);
  const net = options.network ?? {};
  const random = seededRandom(net.seed ?? 1);
  let sequence = 0;
  /** Messages of media sent (Twilio's `chunk`), and 20 ms slots of callee time elapsed. */
  let chunk = 0;
  let slot = 0;
  let ending = false;
  let mediaTimer: NodeJS.Timeout | undefined;
  const dtmfTimers: NodeJS.Timeout[] = [];
  /** Wall time at which the agent audio received so far has finished playing. */
  let playheadAt = 0;
  const pendingMarks: { name: string; timer: NodeJS.Timeout }[] = [];
  /** Messages on their way, in order, with the wall time each arrives (never before the one ahead). */
  const inFlight: { at: number; text: string }[] = [];
  let lastArrivalAt = 0;
  let flushTimer: NodeJS.Timeout | undefined;

  const write = (text: string) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(text);
  };
  const flushDue = (all = false) => {
    clearTimeout(flushTimer);
    const now = Date.now();
    while (inFlight.length > 0 && (all || inFlight[0].at <= now)) write(inFlight.shift()!.text);
    if (inFlight.length > 0) flushTimer = setTimeout(() => flushDue(), inFlight[0].at - now);
  };
  /** Sends `message` after the network's delay (`extraMs` more for a stall), behind everything already on its way. */
  const send = (message: object, extraMs = 0) => {
    const text = JSON.stringify(message);
    const delayMs = extraMs + (net.jitterMs ? random() * net.jitterMs : 0);
    if (delayMs === 0 && inFlight.length === 0) return write(text);
    lastArrivalAt = Math.max(lastArrivalAt, Date.now() + delayMs);
    inFlight.push({ at: lastArrivalAt, text });
    if (inFlight.length === 1) flushDue();
  };

  const echoMark = (name: string) => {
    record.marksEchoed.push(name);
    send({ event: 'mark', sequenceNumber: String(++sequence), streamSid, mark: { name } });
  };

  const quiet = () => {
    clearInterval(mediaTimer);
    for (const timer of dtmfTimers.splice(0)) clearTimeout(timer);
    clearTimeout(flushTimer);
    inFlight.splice(0);
    for (const mark of pendingMarks.splice(0)) clearTimeout(mark.timer);
  };

  ws.on('open', () => {
    record.opened = true;
    send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    send({
      event: 'start',
      sequenceNumber: String(++sequence),
      start: {
        accountSid: options.accountSid,
        streamSid,
        callSid: options.callSid,
        tracks: ['inbound'],
        customParameters: options.customParameters,
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
      streamSid,
    });
    mediaTimer = setInterval(() => {
      const index = slot++;
      const timestampMs = index * FRAME_MS;
      // Lost upstream: the carrier never had these frames.
      if (net.lossEvery && net.lostFrames && index % net.lossEvery >= net.lossEvery - net.lostFrames) return void record.framesLost.push(timestampMs);
      const payload = options.calleeAudio[index] ?? SILENCE_FRAME_BASE64;
      chunk++;
      const stall = net.stallEvery && net.stallMs && index % net.stallEvery === net.stallEvery - 1 ? net.stallMs : 0;
      if (stall) record.stalls++;
      record.framesSent.push({ timestampMs, index });
      send({ event: 'media', sequenceNumber: String(++sequence), media: { track: 'inbound', chunk: String(chunk), timestamp: String(timestampMs), payload }, streamSid }, stall);
    }, FRAME_MS);
    // Twilio sends `dtmf` on bidirectional streams only.
    if (options.bidirectional) {
      for (const key of options.dtmf ?? []) {
        dtmfTimers.push(
          setTimeout(() => {
            record.dtmfSent.push(key.digit);
            send({ event: 'dtmf', streamSid, sequenceNumber: String(++sequence), dtmf: { track: 'inbound_track', digit: key.digit } });
          }, key.atMs),
        );
      }
    }
  });

  ws.on('message', (data, isBinary) => {
    if (isBinary) return void record.protocolErrors.push('binary frame');
    let message: { event?: unknown; streamSid?: unknown; media?: { payload?: unknown }; mark?: { name?: unknown } };
    try {
      message = JSON.parse(String(data));
    } catch {
      return void record.protocolErrors.push('message is not JSON');
    }
    if (!options.bidirectional) return void record.protocolErrors.push(`${String(message.event)} on a unidirectional stream`);
    if (message.streamSid !== streamSid) return void record.protocolErrors.push(`${String(message.event)} with streamSid ${String(message.streamSid)}`);
    const now = Date.now();
    switch (message.event) {
      case 'media': {
        if (typeof message.media?.payload !== 'string') return void record.protocolErrors.push('media without payload');
        const bytes = Buffer.from(message.media.payload, 'base64');
        record.agentFrames++;
        record.agentBytes += bytes.length;
        options.onAgentAudio(bytes);
        playheadAt = Math.max(now, playheadAt) + bytes.length / BYTES_PER_MS / options.playbackSpeed;
        return;
      }
      case 'mark': {
        const name = message.mark?.name;
        if (typeof name !== 'string') return void record.protocolErrors.push('mark without name');
        record.marksReceived.push(name);
        const delayMs = Math.max(0, playheadAt - now);
        // Marks come back in order: a mark never overtakes one sent before it.
        const timer = setTimeout(() => {
          const i = pendingMarks.findIndex((m) => m.timer === timer);
          for (const mark of pendingMarks.splice(0, i + 1)) {
            clearTimeout(mark.timer);
            echoMark(mark.name);
          }
        }, delayMs);
        pendingMarks.push({ name, timer });
        return;
      }
      case 'clear':
        record.clears++;
        playheadAt = now;
        for (const mark of pendingMarks.splice(0)) {
          clearTimeout(mark.timer);
          echoMark(mark.name);
        }
        return;
      default:
        record.protocolErrors.push(`unknown event ${String(message.event)}`);
    }
  });

  ws.on('error', () => {}); // a refused connection also emits close, which ends the call
  ws.on('close', () => {
    quiet();
    if (ending) return;
    ending = true;
    record.closedBy = record.opened ? 'server' : null;
    options.onEnd(record.opened);
  });

  return {
    record,
    stop() {
      if (ending) return;
      ending = true;
      // What is on its way arrives before the stop, as on one TCP stream.
      if (ws.readyState === WebSocket.OPEN) flushDue(true);
      quiet();
      if (ws.readyState === WebSocket.OPEN) {
        record.closedBy = 'twilio';
        write(JSON.stringify({ event: 'stop', sequenceNumber: String(++sequence), streamSid, stop: { accountSid: options.accountSid, callSid: options.callSid } }));
        ws.close(1000);
      } else ws.terminate();
    },
    terminate() {
      ending = true;
      quiet();
      ws.terminate();
    },
  };
}

/** mulberry32: a small seeded generator, so a run's delays can be had again. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
