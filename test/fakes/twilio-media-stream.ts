/**
 * The Media Streams side of the fake Twilio: dials the `<Stream url>` as a WebSocket client and
 * speaks Twilio's messages. Sends `connected`, `start`, a `media` frame every 20 ms and `stop`;
 * takes `media`, `mark` and `clear` from our server. A mark comes back once the agent audio sent
 * before it has played (at `playbackSpeed` × real time); `clear` drops what has not played and
 * returns the pending marks at once, as Twilio does.
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
  };
  const { streamSid } = record;
  const ws = new WebSocket(options.url);
  let sequence = 0;
  let chunk = 0;
  let ending = false;
  let mediaTimer: NodeJS.Timeout | undefined;
  /** Wall time at which the agent audio received so far has finished playing. */
  let playheadAt = 0;
  const pendingMarks: { name: string; timer: NodeJS.Timeout }[] = [];

  const send = (message: object) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
  };

  const echoMark = (name: string) => {
    record.marksEchoed.push(name);
    send({ event: 'mark', sequenceNumber: String(++sequence), streamSid, mark: { name } });
  };

  const quiet = () => {
    clearInterval(mediaTimer);
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
      const payload = options.calleeAudio[chunk] ?? SILENCE_FRAME_BASE64;
      chunk++;
      send({ event: 'media', sequenceNumber: String(++sequence), media: { track: 'inbound', chunk: String(chunk), timestamp: String((chunk - 1) * FRAME_MS), payload }, streamSid });
    }, FRAME_MS);
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
      quiet();
      if (ws.readyState === WebSocket.OPEN) {
        record.closedBy = 'twilio';
        send({ event: 'stop', sequenceNumber: String(++sequence), streamSid, stop: { accountSid: options.accountSid, callSid: options.callSid } });
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
