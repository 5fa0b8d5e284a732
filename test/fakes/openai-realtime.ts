/**
 * A fake OpenAI Realtime server speaking the public GA event protocol over `ws`, for tests and
 * benches. It follows these documents where a client can tell the difference:
 *
 * - platform.openai.com/docs/api-reference/realtime-server-events: `session.created` is the first
 *   event of every connection, unasked; `session.updated` answers `session.update`; `error` events
 *   carry `{type, code, message, param, event_id}`; `response.done` carries the final `status`
 *   (`completed`, `cancelled` with `status_details.reason` `turn_detected` or `client_cancelled`).
 * - platform.openai.com/docs/api-reference/realtime-client-events: `response.create` while a
 *   response is active is refused (`conversation_already_has_active_response`); `response.cancel`
 *   with none active is refused (`response_cancel_not_active`); `conversation.item.truncate` works
 *   on an assistant message's audio only, and an `audio_end_ms` past the audio sent for that item
 *   is refused ("Audio content of … is already shorter than …"), as is an unknown item.
 * - platform.openai.com/docs/guides/realtime-conversations: items are added to the conversation
 *   (`conversation.item.added` / `conversation.item.done`), a response streams
 *   `response.output_audio.delta` then the `.done` events and `response.done`.
 * - platform.openai.com/docs/guides/realtime-vad: with `server_vad`, speech in the input buffer
 *   sends `input_audio_buffer.speech_started` (with `interrupt_response`, default true, it cancels
 *   a running response); after `silence_duration_ms` of silence `input_audio_buffer.speech_stopped`,
 *   `input_audio_buffer.committed` and the user item; with `create_response` (default true) the
 *   server then creates a response itself. `audio_start_ms` includes `prefix_padding_ms`,
 *   `audio_end_ms` includes the silence.
 *
 * The fake does not listen to the audio: the callee "speaks" when a test says so
 * (`connection.calleeSpeaks`) or when a script's trigger fires (after `speechAfterAppends` callee
 * frames following the first response). Responses: the first is `greetingAudio` (the model's first
 * words), a `book` script answers the callee's first turn with a `book_appointment` call and the
 * function output with an `end_call` call; a `find_and_book` script first calls `find_free_slots` and
 * books the first slot its output lists (issue 24); any other response says `replyAudio`. Every client
 * event, every truncate (item, position, accepted or not) and every cancel is recorded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export type FakeRealtimeScript = 'greet' | 'barge_in' | 'book' | 'find_and_book';

export interface FakeRealtimeOptions {
  /** Key the client must present as `Authorization: Bearer`. Default `sk-test-fake`. */
  apiKey?: string;
  /** `greet`: the callee never speaks unasked; `barge_in` and `book`: the callee speaks after `speechAfterAppends`. */
  script?: FakeRealtimeScript;
  /** Audio frames (20 ms, 160 bytes each) of the first response. Default 5. */
  greetingFrames?: number;
  /** Audio frames of every later spoken response. Default 5. */
  replyFrames?: number;
  /** Callee audio messages after the first response started before the scripted callee speaks. Default 10. */
  speechAfterAppends?: number;
  /** How long the scripted callee speaks, ms. Default 1,000. */
  calleeSpeechMs?: number;
  /** Wall delay between a function call and the `response.done` of its response, ms. Default 30. */
  responseDoneDelayMs?: number;
  /** Wall delay before the WebSocket is accepted, ms. Default 0. */
  connectDelayMs?: number;
  /** Wall delay from `response.created` to the first audio delta, ms. Default 0. */
  firstAudioDelayMs?: number;
  /** Wall delay between two audio deltas of a response, ms. Default 0 (all at once, faster than real time as the real server). */
  frameIntervalMs?: number;
  /** 20 ms frames per audio delta. Default 1. */
  deltaFrames?: number;
  /**
   * With `interrupt_response`, how long after `speech_started` the server's own cancel takes
   * effect, ms (the deltas it had generated keep coming meanwhile). Default 0 (at once).
   */
  vadCancelDelayMs?: number;
}

/** A client event as received, parsed. */
export type ClientEvent = { type: string } & Record<string, any>;

export interface TruncateRecord {
  connection: number;
  item_id: string;
  content_index: number;
  audio_end_ms: number;
  /** Refused with an `error` (past the audio sent, unknown or non-assistant item). */
  accepted: boolean;
}

export interface CancelRecord {
  connection: number;
  /** The response it cancelled; null: none was active (refused). */
  cancelled: string | null;
}

export interface FakeResponseRecord {
  id: string;
  /** What started it: the client's `response.create` or the server's VAD (`create_response`). */
  by: 'client' | 'server_vad';
  status: 'in_progress' | 'completed' | 'cancelled';
  /** The assistant message item of a spoken response. */
  itemId: string | null;
  /** Audio deltas sent for it. */
  framesSent: number;
}

export interface FakeConnection {
  index: number;
  /** The session as configured (the defaults, then each `session.update` over them). */
  session: Record<string, any>;
  received: ClientEvent[];
  /** Server events sent, in order. */
  sent: Record<string, any>[];
  responses: FakeResponseRecord[];
  truncates: TruncateRecord[];
  cancels: CancelRecord[];
  /** Error events sent (code and message). */
  errors: { code: string; message: string }[];
  /** The conversation's items, in order (type, role, id, audio sent). */
  items: { id: string; type: string; role?: string; audioMs: number; text?: string }[];
  /** Audio ms sent for `itemId` so far. */
  audioSentMs(itemId: string): number;
  /**
   * The callee speaks for `durationMs` (default 1,000): speech_started now; speech_stopped,
   * committed and the transcript after `durationMs` + the session's `silence_duration_ms`. Resolves
   * after the commit. Without server VAD, nothing is detected.
   */
  calleeSpeaks(opts?: { durationMs?: number; transcript?: string }): Promise<void>;
  /** Closes this connection abruptly. */
  drop(): void;
}

export interface FakeRealtime {
  /** Base URL for the bridge (`ws://127.0.0.1:<port>/v1`). */
  url: string;
  /** Every client event of every connection, in arrival order. */
  received: ClientEvent[];
  /** Things a real server answers with an `error` event, as text. */
  violations: string[];
  /** Audio payloads, base64, of the first response of a connection, in the order sent. */
  greetingAudio: string[];
  /** Audio payloads of every later spoken response. */
  replyAudio: string[];
  /** Connections refused for a wrong or missing key. */
  refused: number;
  /** What the first response is transcribed as (default GREETING_TRANSCRIPT). */
  greetingTranscript: string;
  connections: FakeConnection[];
  /** The connection opened last. */
  latest(): FakeConnection;
  /** The callee speaks on connection `connection` (default the latest): see FakeConnection.calleeSpeaks. */
  calleeSpeaks(opts?: { durationMs?: number; transcript?: string }, connection?: number): Promise<void>;
  /** Every truncate of every connection. */
  truncates: TruncateRecord[];
  /** Every response.cancel of every connection. */
  cancels: CancelRecord[];
  /** Resolves with the first received event matching `match` (already received or future). */
  waitFor(match: (e: ClientEvent) => boolean, timeoutMs?: number): Promise<ClientEvent>;
  /** Resolves once `count` connections are open. */
  waitForConnection(count?: number, timeoutMs?: number): Promise<FakeConnection>;
  /** Drops every open connection abruptly (as a network failure would). */
  dropConnections(): void;
  close(): Promise<void>;
}

export const GREETING_TRANSCRIPT = 'Hello, this is Ava calling for Example Dental. Is now a good time?';
export const REPLY_TRANSCRIPT = 'Thank you. When would suit you for a short demonstration?';
export const CALLEE_TRANSCRIPT = 'Yes, I would like to book an appointment.';
export const BOOKING_ARGS = {
  start_at: '2030-01-07T10:00:00.000Z',
  duration_minutes: 30,
  attendee_name: 'Pat Example',
  notes: 'Demo of the service',
};

/** Server VAD defaults (guides/realtime-vad). */
export const SERVER_VAD_DEFAULTS = {
  type: 'server_vad',
  threshold: 0.5,
  prefix_padding_ms: 300,
  silence_duration_ms: 500,
  create_response: true,
  interrupt_response: true,
  idle_timeout_ms: null,
};

const FRAME_BYTES = 160;
const FRAME_MS = 20;

/** Distinct μ-law frames so tests can check audio arrives byte for byte. */
export function fakeFrame(i: number): string {
  const b = Buffer.alloc(FRAME_BYTES);
  for (let j = 0; j < b.length; j++) b[j] = (i * 37 + j) & 0xff;
  return b.toString('base64');
}

/** The first `fraction` of `text`'s words (what had been said when a response was cut). */
function wordsUpTo(text: string, fraction: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, Math.floor(words.length * Math.max(0, Math.min(1, fraction)))).join(' ');
}

/** The first slot's start_at in a find_free_slots output, if any. */
function firstSlotOf(output: string): string | undefined {
  try {
    const start = JSON.parse(output)?.slots?.[0]?.start_at;
    return typeof start === 'string' ? start : undefined;
  } catch {
    return undefined;
  }
}

const isRecord = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

function merge(base: Record<string, any>, over: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isRecord(v) && isRecord(base[k]) ? merge(base[k], v) : v;
  return out;
}

export async function startFakeRealtime(options: FakeRealtimeOptions = {}): Promise<FakeRealtime> {
  const apiKey = options.apiKey ?? 'sk-test-fake';
  const script = options.script ?? 'greet';
  let greetingTranscript = GREETING_TRANSCRIPT;
  const greetingAudio = Array.from({ length: options.greetingFrames ?? 5 }, (_, i) => fakeFrame(i));
  const replyAudio = Array.from({ length: options.replyFrames ?? 5 }, (_, i) => fakeFrame(100 + i));
  const speechAfter = options.speechAfterAppends ?? 10;
  const calleeSpeechMs = options.calleeSpeechMs ?? 1000;
  const doneDelayMs = options.responseDoneDelayMs ?? 30;
  const firstAudioDelayMs = options.firstAudioDelayMs ?? 0;
  const frameIntervalMs = options.frameIntervalMs ?? 0;
  const vadCancelDelayMs = options.vadCancelDelayMs ?? 0;
  const deltaFrames = Math.max(1, options.deltaFrames ?? 1);
  const received: ClientEvent[] = [];
  const violations: string[] = [];
  const connections: FakeConnection[] = [];
  const truncates: TruncateRecord[] = [];
  const cancels: CancelRecord[] = [];
  const waiters: { match: (e: ClientEvent) => boolean; resolve: (e: ClientEvent) => void }[] = [];
  const connectionWaiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<WebSocket>();
  const timers = new Set<NodeJS.Timeout>();
  let refused = 0;

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  };

  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({
    server,
    path: '/v1/realtime',
    verifyClient: (info, done) => {
      const ok = info.req.headers.authorization === `Bearer ${apiKey}`;
      if (!ok) refused++;
      if (options.connectDelayMs) later(options.connectDelayMs, () => done(ok, 401, 'Unauthorized'));
      else done(ok, 401, 'Unauthorized');
    },
  });

  wss.on('connection', (ws, req) => {
    sockets.add(ws);
    const model = new URL(req.url ?? '/', 'http://x').searchParams.get('model') ?? 'gpt-realtime';
    let seq = 0;
    const index = connections.length;
    const id = (prefix: string) => `${prefix}_${index}_${++seq}`;
    const sent: Record<string, any>[] = [];
    const emit = (event: Record<string, unknown>) => {
      const full = { event_id: id('event'), ...event };
      sent.push(full);
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(full));
    };
    const errors: { code: string; message: string }[] = [];
    const refuse = (code: string, message: string, clientEvent: ClientEvent, param: string | null = null) => {
      errors.push({ code, message });
      violations.push(`${clientEvent.type}: ${message}`);
      emit({ type: 'error', error: { type: 'invalid_request_error', code, message, param, event_id: clientEvent.event_id ?? null } });
    };

    // Conversation state of this connection.
    let session: Record<string, any> = {
      type: 'realtime',
      object: 'realtime.session',
      id: id('sess'),
      model,
      output_modalities: ['audio'],
      instructions: '',
      audio: {
        input: { format: { type: 'audio/pcm', rate: 24000 }, transcription: null, noise_reduction: null, turn_detection: { ...SERVER_VAD_DEFAULTS } },
        output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'alloy', speed: 1 },
      },
      tools: [],
      tool_choice: 'auto',
    };
    const items: FakeConnection['items'] = [];
    const audioMs = new Map<string, number>();
    const responses: FakeResponseRecord[] = [];
    const connTruncates: TruncateRecord[] = [];
    const connCancels: CancelRecord[] = [];
    const connReceived: ClientEvent[] = [];
    let active: { record: FakeResponseRecord; timers: NodeJS.Timeout[]; frames: string[]; transcript: string } | null = null;
    let calleeTurns = 0;
    let appendsAfterFirst = 0;
    let scriptedSpoke = false;
    let inputBytes = 0;
    let speaking = false;
    let awaitingOutputFor: string | null = null;
    let outputReceived = false;
    /** The last function_call_output's `output` (the tool result as JSON text). */
    let lastOutput = '';

    const turnDetection = () => session.audio?.input?.turn_detection as Record<string, any> | null;
    const inputBytesPerMs = () => (['audio/pcmu', 'audio/pcma'].includes(session.audio?.input?.format?.type) ? 8 : 48);
    const lastItemId = () => items.at(-1)?.id ?? null;
    const addItem = (item: Record<string, any>) => {
      const previous = lastItemId();
      items.push({ id: item.id, type: item.type, role: item.role, audioMs: 0, text: item.content?.[0]?.text ?? item.content?.[0]?.transcript });
      emit({ type: 'conversation.item.added', previous_item_id: previous, item });
      emit({ type: 'conversation.item.done', previous_item_id: previous, item });
    };

    const finish = (status: 'completed' | 'cancelled', reason?: 'turn_detected' | 'client_cancelled') => {
      const a = active!;
      active = null;
      a.timers.forEach((t) => (clearTimeout(t), timers.delete(t)));
      a.record.status = status;
      const r = a.record;
      if (r.itemId) {
        const said = status === 'completed' ? a.transcript : wordsUpTo(a.transcript, r.framesSent / Math.max(1, a.frames.length));
        const base = { response_id: r.id, item_id: r.itemId, output_index: 0, content_index: 0 };
        emit({ type: 'response.output_audio.done', ...base });
        emit({ type: 'response.output_audio_transcript.done', ...base, transcript: said });
        emit({ type: 'response.output_item.done', response_id: r.id, output_index: 0, item: { id: r.itemId, type: 'message', role: 'assistant', status: status === 'completed' ? 'completed' : 'incomplete', content: [{ type: 'output_audio', transcript: said }] } });
      }
      emit({
        type: 'response.done',
        response: { id: r.id, object: 'realtime.response', status, status_details: status === 'cancelled' ? { type: 'cancelled', reason } : null, output: [] },
      });
    };

    /** Starts a response: a spoken one or, in the `book` script, a function call. */
    const startResponse = (by: FakeResponseRecord['by']) => {
      const record: FakeResponseRecord = { id: id('resp'), by, status: 'in_progress', itemId: null, framesSent: 0 };
      responses.push(record);
      emit({ type: 'response.created', response: { id: record.id, object: 'realtime.response', status: 'in_progress', output: [] } });
      const first = responses.length === 1;
      if (script === 'book' && calleeTurns >= 1 && awaitingOutputFor === null) return callTool(record, 'book_appointment', 'call_book_1', BOOKING_ARGS);
      if (script === 'find_and_book' && calleeTurns >= 1 && awaitingOutputFor === null) return callTool(record, 'find_free_slots', 'call_slots_1', {});
      if (script === 'find_and_book' && awaitingOutputFor === 'call_slots_1') {
        if (!outputReceived) violations.push('response.create before the function_call_output');
        const { duration_minutes: _unused, ...args } = BOOKING_ARGS;
        return callTool(record, 'book_appointment', 'call_book_1', { ...args, start_at: firstSlotOf(lastOutput) ?? BOOKING_ARGS.start_at });
      }
      if ((script === 'book' || script === 'find_and_book') && awaitingOutputFor === 'call_book_1') {
        if (!outputReceived) violations.push('response.create before the function_call_output');
        return callTool(record, 'end_call', 'call_end_1', { reason: 'appointment_booked' });
      }
      const frames = first ? greetingAudio : replyAudio;
      const transcript = first ? greetingTranscript : REPLY_TRANSCRIPT;
      const a = (active = { record, timers: [] as NodeJS.Timeout[], frames, transcript });
      record.itemId = id('item');
      const itemId = record.itemId;
      emit({ type: 'response.output_item.added', response_id: record.id, output_index: 0, item: { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
      addItem({ id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] });
      audioMs.set(itemId, 0);
      const sendFrame = (i: number) => {
        if (active !== a) return;
        const batch = frames.slice(i, i + deltaFrames);
        const delta = batch.length === 1 ? batch[0] : Buffer.concat(batch.map((f) => Buffer.from(f, 'base64'))).toString('base64');
        emit({ type: 'response.output_audio.delta', response_id: record.id, item_id: itemId, output_index: 0, content_index: 0, delta });
        record.framesSent += batch.length;
        audioMs.set(itemId, record.framesSent * FRAME_MS);
        items.find((x) => x.id === itemId)!.audioMs = record.framesSent * FRAME_MS;
        const next = i + batch.length;
        if (next < frames.length) {
          if (frameIntervalMs > 0) a.timers.push(later(frameIntervalMs, () => sendFrame(next)));
          else sendFrame(next);
        } else finish('completed');
      };
      if (frames.length === 0) finish('completed');
      else if (firstAudioDelayMs > 0) a.timers.push(later(firstAudioDelayMs, () => sendFrame(0)));
      else sendFrame(0);
    };

    const callTool = (record: FakeResponseRecord, name: string, callId: string, args: unknown) => {
      const a = (active = { record, timers: [] as NodeJS.Timeout[], frames: [], transcript: '' });
      awaitingOutputFor = callId;
      outputReceived = false;
      const itemId = id('item');
      const item = { id: itemId, type: 'function_call', status: 'completed', call_id: callId, name, arguments: JSON.stringify(args) };
      emit({ type: 'response.output_item.added', response_id: record.id, output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
      emit({ type: 'response.function_call_arguments.done', response_id: record.id, item_id: itemId, output_index: 0, call_id: callId, name, arguments: item.arguments });
      addItem(item);
      // The real server finishes the response a little after the arguments: a client that asks
      // for the next response before this is refused.
      a.timers.push(later(doneDelayMs, () => active === a && finish('completed')));
    };

    const calleeSpeaks: FakeConnection['calleeSpeaks'] = ({ durationMs = calleeSpeechMs, transcript = CALLEE_TRANSCRIPT } = {}) => {
      const td = turnDetection();
      if (!td || (td.type !== 'server_vad' && td.type !== 'semantic_vad') || speaking || ws.readyState !== ws.OPEN) return Promise.resolve();
      speaking = true;
      const itemId = id('item');
      const nowMs = Math.floor(inputBytes / inputBytesPerMs());
      const audioStartMs = Math.max(0, nowMs - (td.prefix_padding_ms ?? 300));
      emit({ type: 'input_audio_buffer.speech_started', audio_start_ms: audioStartMs, item_id: itemId });
      // interrupt_response: the server cancels the running response itself (not a client cancel).
      if (td.interrupt_response !== false && active) {
        const running = active;
        if (vadCancelDelayMs > 0) running.timers.push(later(vadCancelDelayMs, () => active === running && finish('cancelled', 'turn_detected')));
        else finish('cancelled', 'turn_detected');
      }
      const silenceMs = td.silence_duration_ms ?? 500;
      return new Promise<void>((resolve) => {
        later(durationMs + silenceMs, () => {
          speaking = false;
          calleeTurns++;
          emit({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: nowMs + durationMs + silenceMs, item_id: itemId });
          const previous = lastItemId();
          emit({ type: 'input_audio_buffer.committed', previous_item_id: previous, item_id: itemId });
          addItem({ id: itemId, type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_audio', transcript: null }] });
          if (session.audio?.input?.transcription) {
            emit({ type: 'conversation.item.input_audio_transcription.completed', item_id: itemId, content_index: 0, transcript });
          }
          // create_response: "may fail to create a response if the model is already responding".
          if (td.create_response !== false && !active) startResponse('server_vad');
          resolve();
        });
      });
    };

    const connection: FakeConnection = {
      index,
      get session() {
        return session;
      },
      received: connReceived,
      sent,
      responses,
      truncates: connTruncates,
      cancels: connCancels,
      errors,
      items,
      audioSentMs: (itemId) => audioMs.get(itemId) ?? 0,
      calleeSpeaks,
      drop: () => ws.terminate(),
    };
    connections.push(connection);
    ws.on('close', () => {
      sockets.delete(ws);
      if (active) active.timers.forEach((t) => (clearTimeout(t), timers.delete(t)));
      active = null;
    });
    for (const w of connectionWaiters.filter((w) => connections.length >= w.count)) {
      connectionWaiters.splice(connectionWaiters.indexOf(w), 1);
      w.resolve();
    }
    // The server speaks first: the session as it stands, unasked.
    emit({ type: 'session.created', session });

    ws.on('message', (data) => {
      let event: ClientEvent;
      try {
        event = JSON.parse(data.toString());
      } catch {
        violations.push('non-JSON client message');
        return;
      }
      event.connection = index;
      connReceived.push(event);
      received.push(event);
      for (const w of waiters.filter((w) => w.match(event))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
      switch (event.type) {
        case 'session.update': {
          if (!isRecord(event.session)) return refuse('missing_required_parameter', 'Missing required parameter: session', event, 'session');
          const given = event.session;
          let next = merge(session, given);
          const td = given.audio?.input?.turn_detection;
          if (td !== undefined) next = merge(next, { audio: { input: { turn_detection: td === null ? null : { ...SERVER_VAD_DEFAULTS, ...td } } } });
          if (td === null) next.audio.input.turn_detection = null;
          session = next;
          emit({ type: 'session.updated', session });
          return;
        }
        case 'response.create': {
          if (active) {
            return refuse('conversation_already_has_active_response', `Conversation already has an active response in progress: ${active.record.id}. Wait until the response is finished before creating a new one.`, event);
          }
          startResponse('client');
          return;
        }
        case 'response.cancel': {
          if (!active || (event.response_id && event.response_id !== active.record.id)) {
            connCancels.push({ connection: index, cancelled: null });
            cancels.push(connCancels.at(-1)!);
            return refuse('response_cancel_not_active', 'Cancellation failed: no active response found', event);
          }
          connCancels.push({ connection: index, cancelled: active.record.id });
          cancels.push(connCancels.at(-1)!);
          finish('cancelled', 'client_cancelled');
          return;
        }
        case 'input_audio_buffer.append':
          inputBytes += Buffer.byteLength(String(event.audio ?? ''), 'base64');
          if (responses.length >= 1 && !scriptedSpoke && script !== 'greet' && ++appendsAfterFirst >= speechAfter) {
            scriptedSpoke = true;
            void calleeSpeaks({ durationMs: calleeSpeechMs });
          }
          return;
        case 'conversation.item.create': {
          const item = event.item;
          if (!isRecord(item)) return refuse('missing_required_parameter', 'Missing required parameter: item', event, 'item');
          if (item.type === 'function_call_output') {
            if (item.call_id !== awaitingOutputFor) return refuse('invalid_value', `Tool call ID '${item.call_id}' not found in conversation.`, event, 'item.call_id');
            outputReceived = true;
            lastOutput = typeof item.output === 'string' ? item.output : '';
          } else if (item.type === 'message') {
            const allowed: Record<string, string[]> = { assistant: ['output_text', 'output_audio'], user: ['input_text', 'input_audio', 'input_image'], system: ['input_text'] };
            const kinds = allowed[item.role];
            if (!kinds) return refuse('invalid_value', `Invalid value: '${item.role}'. Supported values are: 'system', 'user' and 'assistant'.`, event, 'item.role');
            if (!Array.isArray(item.content) || item.content.some((c: any) => !kinds.includes(c?.type))) {
              return refuse('invalid_value', `Invalid content for a ${item.role} message: ${kinds.join(' or ')} expected.`, event, 'item.content');
            }
          }
          addItem({ ...item, id: item.id ?? id('item'), status: 'completed' });
          return;
        }
        case 'conversation.item.truncate': {
          const record: TruncateRecord = { connection: index, item_id: event.item_id, content_index: event.content_index, audio_end_ms: event.audio_end_ms, accepted: false };
          connTruncates.push(record);
          truncates.push(record);
          const item = items.find((x) => x.id === event.item_id);
          if (!item) return refuse('item_truncate_invalid_item_id', `Item with item_id not found: ${event.item_id}`, event, 'item_id');
          if (item.type !== 'message' || item.role !== 'assistant' || !audioMs.has(item.id)) {
            return refuse('invalid_value', 'Only assistant messages with audio can be truncated.', event, 'item_id');
          }
          if (event.content_index !== 0) return refuse('invalid_value', 'content_index must be 0.', event, 'content_index');
          const sentMs = audioMs.get(item.id)!;
          if (!Number.isInteger(event.audio_end_ms) || event.audio_end_ms < 0 || event.audio_end_ms > sentMs) {
            return refuse('invalid_value', `Audio content of ${sentMs}ms is already shorter than ${event.audio_end_ms}ms`, event, 'audio_end_ms');
          }
          record.accepted = true;
          audioMs.set(item.id, event.audio_end_ms);
          item.audioMs = event.audio_end_ms;
          emit({ type: 'conversation.item.truncated', item_id: event.item_id, content_index: event.content_index, audio_end_ms: event.audio_end_ms });
          return;
        }
        default:
          return;
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `ws://127.0.0.1:${port}/v1`,
    received,
    violations,
    greetingAudio,
    replyAudio,
    connections,
    truncates,
    cancels,
    latest() {
      const c = connections.at(-1);
      if (!c) throw new Error('fake realtime: no connection yet');
      return c;
    },
    calleeSpeaks(opts, connection) {
      const c = connection === undefined ? connections.at(-1) : connections[connection];
      if (!c) throw new Error('fake realtime: no such connection');
      return c.calleeSpeaks(opts);
    },
    get refused() {
      return refused;
    },
    get greetingTranscript() {
      return greetingTranscript;
    },
    set greetingTranscript(text: string) {
      greetingTranscript = text;
    },
    waitFor(match, timeoutMs = 5000) {
      const found = received.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('fake realtime: awaited client event never came')), timeoutMs);
        waiters.push({ match, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    waitForConnection(count = 1, timeoutMs = 5000) {
      if (connections.length >= count) return Promise.resolve(connections[count - 1]);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('fake realtime: awaited connection never came')), timeoutMs);
        connectionWaiters.push({ count, resolve: () => (clearTimeout(timer), resolve(connections[count - 1])) });
      });
    },
    dropConnections() {
      for (const ws of sockets) ws.terminate();
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const ws of sockets) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => server.close(() => resolve())));
    },
  };
}
