/**
 * A fake OpenAI Realtime server speaking the public GA event protocol over `ws`, for tests. It
 * checks the bearer key, answers `session.update`, streams μ-law audio for each response, and
 * plays one of a few scripts: greet only, barge-in, or a booking with two tool calls. It records
 * every client event and flags protocol mistakes a real server would refuse.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export type FakeRealtimeScript = 'greet' | 'barge_in' | 'book';

export interface FakeRealtimeOptions {
  /** Key the client must present as `Authorization: Bearer`. Default `sk-test-fake`. */
  apiKey?: string;
  script?: FakeRealtimeScript;
  /** Audio frames (20 ms, 160 bytes each) in the greeting. Default 5. */
  greetingFrames?: number;
  /** Callee audio messages after the greeting before the callee "speaks". Default 10. */
  speechAfterAppends?: number;
  /** Wall delay between a function call and the `response.done` of its response, ms. Default 30. */
  responseDoneDelayMs?: number;
}

/** A client event as received, parsed. */
export type ClientEvent = { type: string } & Record<string, any>;

export interface FakeRealtime {
  /** Base URL for the bridge (`ws://127.0.0.1:<port>/v1`). */
  url: string;
  received: ClientEvent[];
  /** Things a real server would answer with an `error` event (e.g. response.create during a response). */
  violations: string[];
  /** Greeting audio payloads, base64, in the order they are sent. */
  greetingAudio: string[];
  /** Connections refused for a wrong or missing key. */
  refused: number;
  /** What the agent's greeting is transcribed as, for the responses that follow (default GREETING_TRANSCRIPT). */
  greetingTranscript: string;
  /** Resolves with the first received event matching `match` (already received or future). */
  waitFor(match: (e: ClientEvent) => boolean, timeoutMs?: number): Promise<ClientEvent>;
  /** Drops every open connection abruptly (as a network failure would). */
  dropConnections(): void;
  close(): Promise<void>;
}

export const GREETING_TRANSCRIPT = 'Hello, this is Ava calling for Example Dental. Is now a good time?';
export const CALLEE_TRANSCRIPT = 'Yes, I would like to book an appointment.';
export const BOOKING_ARGS = {
  start_at: '2030-01-07T10:00:00.000Z',
  duration_minutes: 30,
  attendee_name: 'Pat Example',
  notes: 'Demo of the service',
};

/** Distinct μ-law frames so tests can check audio arrives byte for byte. */
function frame(i: number): string {
  const b = Buffer.alloc(160);
  for (let j = 0; j < b.length; j++) b[j] = (i * 37 + j) & 0xff;
  return b.toString('base64');
}

export async function startFakeRealtime(options: FakeRealtimeOptions = {}): Promise<FakeRealtime> {
  const apiKey = options.apiKey ?? 'sk-test-fake';
  const script = options.script ?? 'greet';
  let greetingTranscript = GREETING_TRANSCRIPT;
  const greetingAudio = Array.from({ length: options.greetingFrames ?? 5 }, (_, i) => frame(i));
  const speechAfter = options.speechAfterAppends ?? 10;
  const doneDelayMs = options.responseDoneDelayMs ?? 30;
  const received: ClientEvent[] = [];
  const violations: string[] = [];
  const waiters: { match: (e: ClientEvent) => boolean; resolve: (e: ClientEvent) => void }[] = [];
  const sockets = new Set<WebSocket>();
  let refused = 0;

  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({
    server,
    path: '/v1/realtime',
    verifyClient: (info, done) => {
      const ok = info.req.headers.authorization === `Bearer ${apiKey}`;
      if (!ok) refused++;
      done(ok, 401, 'Unauthorized');
    },
  });

  wss.on('connection', (ws, req) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    const model = new URL(req.url ?? '/', 'http://x').searchParams.get('model');
    let seq = 0;
    const id = (prefix: string) => `${prefix}_${++seq}`;
    const emit = (event: Record<string, unknown>) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ event_id: id('event'), ...event }));
    };
    // Conversation state of this connection.
    let responseActive = false;
    let responses = 0;
    let appendsSinceGreeting = 0;
    let calleeSpoke = false;
    let greetingItem = '';
    let awaitingOutputFor: string | null = null;
    let outputReceived = false;

    const startResponse = () => {
      responseActive = true;
      const responseId = id('resp');
      emit({ type: 'response.created', response: { id: responseId, object: 'realtime.response', status: 'in_progress', output: [] } });
      return responseId;
    };
    const finishResponse = (responseId: string, status = 'completed') => {
      responseActive = false;
      emit({ type: 'response.done', response: { id: responseId, object: 'realtime.response', status, output: [] } });
    };
    const greet = () => {
      const responseId = startResponse();
      greetingItem = id('item');
      greetingAudio.forEach((delta, i) =>
        emit({ type: 'response.output_audio.delta', response_id: responseId, item_id: greetingItem, output_index: 0, content_index: 0, delta, seq: i }),
      );
      emit({ type: 'response.output_audio_transcript.done', response_id: responseId, item_id: greetingItem, output_index: 0, content_index: 0, transcript: greetingTranscript });
      finishResponse(responseId);
    };
    const callTool = (name: string, callId: string, args: unknown) => {
      const responseId = startResponse();
      awaitingOutputFor = callId;
      outputReceived = false;
      emit({ type: 'response.function_call_arguments.done', response_id: responseId, item_id: id('item'), output_index: 0, call_id: callId, name, arguments: JSON.stringify(args) });
      // The real server finishes the response a little after the arguments: a client that asks
      // for the next response before this is refused.
      setTimeout(() => finishResponse(responseId), doneDelayMs);
    };
    const calleeSpeaks = () => {
      calleeSpoke = true;
      emit({ type: 'input_audio_buffer.speech_started', audio_start_ms: 1000, item_id: id('item') });
      if (script === 'barge_in') {
        // Deltas already in flight when the server cut the response: the client must drop them.
        emit({ type: 'response.output_audio.delta', response_id: 'resp_late', item_id: greetingItem, output_index: 0, content_index: 0, delta: frame(99) });
      }
      emit({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: 1800, item_id: id('item') });
      emit({ type: 'conversation.item.input_audio_transcription.completed', item_id: id('item'), content_index: 0, transcript: CALLEE_TRANSCRIPT });
      if (script === 'book') callTool('book_appointment', 'call_book_1', BOOKING_ARGS);
    };

    ws.on('message', (data) => {
      let event: ClientEvent;
      try {
        event = JSON.parse(data.toString());
      } catch {
        violations.push('non-JSON client message');
        return;
      }
      received.push(event);
      for (const w of waiters.filter((w) => w.match(event))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
      switch (event.type) {
        case 'session.update': {
          const session = { ...event.session, id: id('sess'), object: 'realtime.session', model: event.session?.model ?? model };
          emit({ type: 'session.created', session });
          emit({ type: 'session.updated', session });
          return;
        }
        case 'response.create': {
          if (responseActive) {
            violations.push('response.create while a response is active');
            emit({ type: 'error', error: { type: 'invalid_request_error', code: 'conversation_already_has_active_response', message: 'Conversation already has an active response' } });
            return;
          }
          responses++;
          if (responses === 1) return greet();
          if (script === 'book' && awaitingOutputFor === 'call_book_1') {
            if (!outputReceived) violations.push('response.create before the function_call_output');
            return callTool('end_call', 'call_end_1', { reason: 'appointment_booked' });
          }
          // Any later response: a short spoken reply.
          const responseId = startResponse();
          return finishResponse(responseId);
        }
        case 'input_audio_buffer.append':
          if (responses >= 1 && !calleeSpoke && script !== 'greet' && ++appendsSinceGreeting >= speechAfter) calleeSpeaks();
          return;
        case 'conversation.item.create':
          if (event.item?.type === 'function_call_output') {
            if (event.item.call_id !== awaitingOutputFor) violations.push(`function_call_output for unknown call ${event.item.call_id}`);
            else outputReceived = true;
          }
          return;
        case 'conversation.item.truncate':
          emit({ type: 'conversation.item.truncated', item_id: event.item_id, content_index: event.content_index, audio_end_ms: event.audio_end_ms });
          return;
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
    dropConnections() {
      for (const ws of sockets) ws.terminate();
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => server.close(() => resolve())));
    },
  };
}
