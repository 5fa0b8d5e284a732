/**
 * The media server: the WebSocket endpoint the carrier streams call audio to, speaking the
 * Twilio Media Streams protocol (`connected`, `start`, `media`, `mark`, `stop` in; `media`,
 * `mark`, `clear` out). Each stream becomes a `MediaSession` once its `start` names our call.
 * uWebSockets.js, because every live call sends 50 small messages a second each way.
 */
import uWS, { type WebSocket as UwsSocket, type us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import type { Logger } from '../runtime/logger.ts';
import type { MediaSession } from './media.ts';
import { countFrameIn, countFrameOut, observeFirstFrame, secondsSince, streamClosed, streamOpened } from '../runtime/metrics.ts';

export interface MediaServerOptions {
  host: string;
  /** 0 picks a free port; the chosen one is returned. */
  port: number;
  /** WebSocket path, default `/media`. */
  path?: string;
  log: Logger;
  /** A stream has started (after its `start` message); called once per stream. */
  onSession: (session: MediaSession) => void;
}

export interface MediaServer {
  port: number;
  /** Stops listening and closes every open stream (their stop handlers run). */
  close(): Promise<void>;
}

/** Largest message we accept, bytes; a `start` with custom parameters is well under 4 KiB. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/**
 * uWS drops sends once a socket has this much queued. Audio must not be dropped silently, so the
 * limit is far above anything a healthy carrier connection reaches (a minute of audio is ~1 MB).
 */
const MAX_BACKPRESSURE_BYTES = 16 * 1024 * 1024;
/** A base64 payload (what may go into a message unescaped). */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Queued bytes at which a stream logs (once) that the carrier is reading slowly: ~10 s of audio. */
const BACKPRESSURE_WARN_BYTES = 256 * 1024;

/** Decodes each message as Buffer's toString('utf8') would (a leading BOM kept), without a Buffer per message. */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** Carrier → us messages we act on, validated. */
type TwilioInbound =
  | { event: 'connected' }
  | { event: 'start'; streamSid: string; callSid: string; callId: string; streamToken: string | null }
  | { event: 'media'; payload: string; timestampMs: number }
  | { event: 'mark'; name: string }
  | { event: 'dtmf'; digit: string }
  | { event: 'stop' };

type Parsed = { ok: true; message: TwilioInbound } | { ok: false; reason: string };

interface SocketData {
  stream?: StreamConnection;
}

export function startMediaServer(opts: MediaServerOptions): Promise<MediaServer> {
  const path = opts.path ?? '/media';
  const log = opts.log.child({ component: 'media-server' });
  const open = new Set<UwsSocket<SocketData>>();
  const app = uWS.App();

  app.ws<SocketData>(path, {
    maxPayloadLength: MAX_MESSAGE_BYTES,
    maxBackpressure: MAX_BACKPRESSURE_BYTES,
    idleTimeout: 60,
    open(ws) {
      open.add(ws);
      ws.getUserData().stream = new StreamConnection(ws, log, opts.onSession);
    },
    message(ws, message, isBinary) {
      // The ArrayBuffer is only valid during this callback: decode it now.
      const text = UTF8.decode(message);
      ws.getUserData().stream?.receive(text, isBinary);
    },
    close(ws) {
      open.delete(ws);
      ws.getUserData().stream?.socketClosed();
    },
  });
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').end('not found');
  });

  return new Promise((resolve, reject) => {
    app.listen(opts.host, opts.port, (listenSocket: us_listen_socket | false) => {
      if (!listenSocket) {
        reject(new Error(`media server could not listen on ${opts.host}:${opts.port}`));
        return;
      }
      const port = uWS.us_socket_local_port(listenSocket);
      log.info({ host: opts.host, port, path }, 'media server listening');
      let closed = false;
      resolve({
        port,
        async close() {
          if (closed) return;
          closed = true;
          uWS.us_listen_socket_close(listenSocket);
          // end() runs each socket's close handler synchronously, which removes it from `open`.
          for (const ws of [...open]) ws.end(1001, 'server closing');
        },
      });
    });
  });
}

/** One carrier WebSocket: parses its messages and, after `start`, drives its MediaSession. */
class StreamConnection {
  private session: TwilioMediaSession | null = null;
  private log: Logger;

  constructor(
    private readonly ws: UwsSocket<SocketData>,
    log: Logger,
    private readonly onSession: (session: MediaSession) => void,
  ) {
    this.log = log;
  }

  receive(text: string, isBinary: boolean): void {
    const parsed = isBinary ? { ok: false as const, reason: 'binary frame' } : parseTwilioMessage(text);
    if (!parsed.ok) {
      this.log.warn({ reason: parsed.reason, sample: text.slice(0, 120) }, 'ignored malformed media message');
      return;
    }
    const msg = parsed.message;
    switch (msg.event) {
      case 'connected':
        this.log.debug('media stream connected');
        return;
      case 'start':
        return this.start(msg);
      case 'media':
        countFrameIn();
        this.session?.emitAudio(msg.payload, msg.timestampMs);
        return;
      case 'mark':
        this.session?.emitMark(msg.name);
        return;
      case 'dtmf':
        this.session?.emitDtmf(msg.digit);
        return;
      case 'stop':
        this.session?.emitStop();
        return;
      default: {
        const never: never = msg;
        throw new Error(`unhandled media message ${JSON.stringify(never)}`);
      }
    }
  }

  socketClosed(): void {
    this.session?.socketClosed();
  }

  private start(msg: Extract<TwilioInbound, { event: 'start' }>): void {
    if (this.session) {
      this.log.warn({ streamSid: msg.streamSid }, 'ignored second start on one stream');
      return;
    }
    this.log = this.log.child({ callId: msg.callId, streamSid: msg.streamSid });
    this.session = new TwilioMediaSession(this.ws, msg.streamSid, msg.callId, msg.streamToken, this.log);
    this.log.info({ callSid: msg.callSid }, 'media stream started');
    try {
      this.onSession(this.session);
    } catch (err) {
      this.log.error({ err }, 'media session handler failed; closing the stream');
      this.session.close();
    }
  }
}

/** The MediaSession of one started stream. */
class TwilioMediaSession implements MediaSession {
  private readonly audioHandlers: ((payloadBase64: string, timestampMs: number) => void)[] = [];
  private readonly markHandlers: ((name: string) => void)[] = [];
  private readonly dtmfHandlers: ((digit: string) => void)[] = [];
  /** Keys pressed before anyone listened (the call takes its stream a moment after `start`): given to the first listener. */
  private readonly earlyDigits: string[] = [];
  private readonly stopHandlers: (() => void)[] = [];
  private closed = false;
  private stopped = false;
  private warnedBackpressure = false;
  private warnedDropped = false;
  /** `{"event":"media","streamSid":…,"media":{"payload":"` for this stream: a frame's message is built without JSON.stringify (50 a second a call). */
  private readonly mediaPrefix: string;
  /** When the stream's `start` came (performance.now()); 0 once its first frame has gone back (switchboard_call_first_frame_seconds). */
  private startedAtMs = performance.now();

  constructor(
    private readonly ws: UwsSocket<SocketData>,
    readonly streamSid: string,
    readonly callId: string,
    readonly streamToken: string | null,
    private readonly log: Logger,
  ) {
    this.mediaPrefix = `{"event":"media","streamSid":${JSON.stringify(streamSid)},"media":{"payload":"`;
    streamOpened();
  }

  sendAudio(payloadBase64: string): void {
    if (this.closed) return;
    countFrameOut();
    if (this.startedAtMs !== 0) {
      observeFirstFrame(secondsSince(this.startedAtMs));
      this.startedAtMs = 0;
    }
    // Base64 needs no escaping; anything else is serialized properly.
    if (BASE64.test(payloadBase64)) this.sendText(`${this.mediaPrefix}${payloadBase64}"}}`);
    else this.send({ event: 'media', streamSid: this.streamSid, media: { payload: payloadBase64 } });
  }

  sendMark(name: string): void {
    this.send({ event: 'mark', streamSid: this.streamSid, mark: { name } });
  }

  clear(): void {
    this.send({ event: 'clear', streamSid: this.streamSid });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true; // uWS throws on a second end()
    this.ws.end(1000, 'call over');
  }

  onAudio(handler: (payloadBase64: string, timestampMs: number) => void): void {
    this.audioHandlers.push(handler);
  }

  onMark(handler: (name: string) => void): void {
    this.markHandlers.push(handler);
  }

  onDtmf(handler: (digit: string) => void): void {
    this.dtmfHandlers.push(handler);
    // A 9 pressed the instant the stream started is an opt-out all the same.
    for (const digit of this.earlyDigits.splice(0)) queueMicrotask(() => this.call('dtmf', () => handler(digit)));
  }

  onStop(handler: () => void): void {
    // A late subscriber still learns that the stream is over.
    if (this.stopped) queueMicrotask(() => this.call('stop', handler));
    else this.stopHandlers.push(handler);
  }

  emitAudio(payload: string, timestampMs: number): void {
    if (this.stopped) return;
    // No closure per frame (this.call's would be made 50 times a second a call): the same guard inline.
    for (const h of this.audioHandlers) {
      try {
        h(payload, timestampMs);
      } catch (err) {
        this.log.error({ err, kind: 'audio' }, 'media session handler threw');
      }
    }
  }

  emitMark(name: string): void {
    if (this.stopped) return;
    for (const h of this.markHandlers) this.call('mark', () => h(name));
  }

  emitDtmf(digit: string): void {
    if (this.stopped) return;
    if (this.dtmfHandlers.length === 0 && this.earlyDigits.length < 16) this.earlyDigits.push(digit);
    for (const h of this.dtmfHandlers) this.call('dtmf', () => h(digit));
  }

  /** The carrier's `stop` or the socket closing, whichever comes first; handlers run once. */
  emitStop(): void {
    if (this.stopped) return;
    this.stopped = true;
    streamClosed();
    this.log.info('media stream stopped');
    for (const h of this.stopHandlers.splice(0)) this.call('stop', h);
  }

  socketClosed(): void {
    this.closed = true;
    this.emitStop();
  }

  private send(message: object): void {
    this.sendText(JSON.stringify(message));
  }

  private sendText(text: string): void {
    // uWS throws on any use of a closed socket; a call may still be sending as the carrier hangs up.
    if (this.closed) return;
    const status = this.ws.send(text, false);
    if (status === 2 && !this.warnedDropped) {
      this.warnedDropped = true;
      this.log.error('media message dropped: carrier connection backpressure limit reached');
    }
    if (!this.warnedBackpressure && this.ws.getBufferedAmount() > BACKPRESSURE_WARN_BYTES) {
      this.warnedBackpressure = true;
      this.log.warn({ bufferedBytes: this.ws.getBufferedAmount() }, 'carrier is reading media slowly; buffering');
    }
  }

  /** Handler errors are the caller's bugs; they must not take the server down with them. */
  private call(kind: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err, kind }, 'media session handler threw');
    }
  }
}

/** Validates one carrier message; anything we cannot use is reported, never thrown. */
export function parseTwilioMessage(text: string): Parsed {
  // 50 media frames a second a call: read those without building their objects (same answer).
  return parseMediaFrame(text) ?? parseTwilioJson(text);
}

/** parseTwilioMessage through JSON.parse: every message parseMediaFrame leaves, and the reference it is tested against. */
export function parseTwilioJson(text: string): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (!isRecord(raw) || typeof raw.event !== 'string') return { ok: false, reason: 'no event' };
  switch (raw.event) {
    case 'connected':
      return { ok: true, message: { event: 'connected' } };
    case 'start': {
      const start = isRecord(raw.start) ? raw.start : {};
      const params = isRecord(start.customParameters) ? start.customParameters : {};
      const streamSid = typeof raw.streamSid === 'string' ? raw.streamSid : start.streamSid;
      if (typeof streamSid !== 'string' || !streamSid) return { ok: false, reason: 'start without streamSid' };
      if (typeof params.call_id !== 'string' || !params.call_id) return { ok: false, reason: 'start without call_id' };
      const callSid = typeof start.callSid === 'string' ? start.callSid : '';
      const streamToken = typeof params.stream_token === 'string' ? params.stream_token : null;
      return { ok: true, message: { event: 'start', streamSid, callSid, callId: params.call_id, streamToken } };
    }
    case 'media': {
      const media = isRecord(raw.media) ? raw.media : {};
      const timestampMs = Number(media.timestamp);
      if (typeof media.payload !== 'string') return { ok: false, reason: 'media without payload' };
      if (!Number.isFinite(timestampMs)) return { ok: false, reason: 'media without timestamp' };
      return { ok: true, message: { event: 'media', payload: media.payload, timestampMs } };
    }
    case 'mark': {
      const mark = isRecord(raw.mark) ? raw.mark : {};
      if (typeof mark.name !== 'string') return { ok: false, reason: 'mark without name' };
      return { ok: true, message: { event: 'mark', name: mark.name } };
    }
    case 'dtmf': {
      const dtmf = isRecord(raw.dtmf) ? raw.dtmf : {};
      const digit = typeof dtmf.digit === 'string' ? dtmf.digit : '';
      if (!/^[0-9*#]$/.test(digit)) return { ok: false, reason: 'dtmf without a key' };
      return { ok: true, message: { event: 'dtmf', digit } };
    }
    case 'stop':
      return { ok: true, message: { event: 'stop' } };
    default:
      return { ok: false, reason: `unknown event ${raw.event.slice(0, 40)}` };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A `media` frame read without JSON.parse: the answer parseTwilioMessage's JSON path gives for
 * the same text, or null for the JSON path to decide. It accepts only the plain shape a carrier
 * sends — an object whose values are strings without escapes or objects of such strings, with
 * no whitespace, numbers, arrays or repeated `event`/`media`/`payload`/`timestamp` keys, an
 * `event` of `media`, and a media object with a string payload and a string timestamp that is a
 * finite number — and leaves everything else (other events, anything malformed) to JSON.parse.
 * One pass over the text, no closures and no objects but the answer.
 */
export function parseMediaFrame(text: string): { ok: true; message: Extract<TwilioInbound, { event: 'media' }> } | null {
  // Twilio's own shape, the frame nearly every message is: one regular expression, a third of the scan's cost.
  const shaped = readTwilioMediaShape(text);
  if (shaped !== undefined) return shaped;
  const end = text.length;
  if (end < 2 || text.charCodeAt(0) !== LBRACE || text.charCodeAt(end - 1) !== RBRACE || !PLAIN_TEXT.test(text)) return null;
  let event: string | undefined;
  let payload: string | undefined;
  let timestamp: string | undefined;
  let sawMedia = false;
  /** Inside a nested object (only one level is accepted), and whether it is `media`. */
  let nested = false;
  let inMedia = false;
  let i = 1;
  if (text.charCodeAt(i) === RBRACE) return null; // {}: no event
  for (;;) {
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0 || text.charCodeAt(keyEnd + 1) !== COLON) return null;
    const keyFrom = i + 1;
    const keyLength = keyEnd - keyFrom;
    i = keyEnd + 2;
    if (text.charCodeAt(i) === LBRACE) {
      if (nested) return null;
      if (!nested && keyLength === 5 && text.startsWith('event', keyFrom)) return null;
      inMedia = keyLength === 5 && text.startsWith('media', keyFrom);
      if (inMedia) {
        if (sawMedia) return null;
        sawMedia = true;
      }
      nested = true;
      i++;
      if (text.charCodeAt(i) !== RBRACE) continue;
      // An empty nested object: close it below.
    } else {
      const valueEnd = stringEnd(text, i);
      if (valueEnd < 0) return null;
      if (!nested) {
        if (keyLength === 5 && text.startsWith('media', keyFrom)) return null;
        if (keyLength === 5 && text.startsWith('event', keyFrom)) {
          if (event !== undefined) return null;
          event = text.slice(i + 1, valueEnd);
        }
      } else if (inMedia) {
        if (keyLength === 7 && text.startsWith('payload', keyFrom)) {
          if (payload !== undefined) return null;
          payload = text.slice(i + 1, valueEnd);
        } else if (keyLength === 9 && text.startsWith('timestamp', keyFrom)) {
          if (timestamp !== undefined) return null;
          timestamp = text.slice(i + 1, valueEnd);
        }
      }
      i = valueEnd + 1;
    }
    // After a value: `,` and the next key, or `}` closing the nested object or the whole text.
    let c = text.charCodeAt(i++);
    if (c === RBRACE && nested) {
      nested = false;
      inMedia = false;
      c = text.charCodeAt(i++);
    }
    if (c === COMMA) continue;
    if (c === RBRACE && !nested && i === end) break;
    return null;
  }
  if (event !== 'media' || payload === undefined || timestamp === undefined) return null;
  const timestampMs = Number(timestamp);
  if (!Number.isFinite(timestampMs)) return null;
  return { ok: true, message: { event: 'media', payload, timestampMs } };
}

/**
 * A media frame exactly as Twilio Media Streams sends it: its members in its order, and every
 * string free of quotes, backslashes (so of escapes) and control characters. Such a text is one
 * parseMediaFrame's scan accepts (one level of nesting, string values, no repeated key), so its
 * answer is the scan's, which is the JSON path's.
 */
const TWILIO_MEDIA_SHAPE =
  /^\{"event":"media","sequenceNumber":"[^"\\\u0000-\u001f]*","media":\{"track":"[^"\\\u0000-\u001f]*","chunk":"[^"\\\u0000-\u001f]*","timestamp":"([^"\\\u0000-\u001f]*)","payload":"([^"\\\u0000-\u001f]*)"\},"streamSid":"[^"\\\u0000-\u001f]*"\}$/;

/**
 * parseMediaFrame's answer for a text in Twilio's exact shape (TWILIO_MEDIA_SHAPE): the frame, or
 * null when its timestamp is not a finite number (the JSON path decides, as the scan leaves it);
 * undefined for any other text (the scan reads it).
 */
export function readTwilioMediaShape(text: string): { ok: true; message: Extract<TwilioInbound, { event: 'media' }> } | null | undefined {
  const m = TWILIO_MEDIA_SHAPE.exec(text);
  if (m === null) return undefined;
  const timestampMs = Number(m[1]);
  if (!Number.isFinite(timestampMs)) return null;
  return { ok: true, message: { event: 'media', payload: m[2], timestampMs } };
}

const LBRACE = 0x7b;
const RBRACE = 0x7d;
const COLON = 0x3a;
const COMMA = 0x2c;
const QUOTE = 0x22;

/** Text without a backslash or a control character (else it may hold an escape or be malformed, and JSON.parse decides). */
const PLAIN_TEXT = /^[^\\\u0000-\u001f]*$/;

/** The index of the closing quote of the string that opens at `i`, or -1 (the text is free of escapes and control characters). */
function stringEnd(text: string, i: number): number {
  return text.charCodeAt(i) === QUOTE ? text.indexOf('"', i + 1) : -1;
}
