/**
 * The media layer end to end in one process: the uWS media server driven by a `ws` client
 * speaking Twilio Media Streams, the OpenAI Realtime bridge against the fake Realtime server,
 * the scripted bridge, and the μ-law helpers.
 */
import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { createLogger } from '../../runtime/logger.ts';
import type { MediaSession } from '../../telephony/media.ts';
import { startMediaServer } from '../../telephony/media-server.ts';
import { FRAME_BYTES, SILENCE_FRAME_BASE64, linearToMulaw, mulawToLinear, toneFrames, wavFromMulaw } from '../../telephony/mulaw.ts';
import { OpenAIRealtimeBridge, type MarkingBridgeHandlers } from '../../telephony/openai-realtime/openai-realtime-bridge.ts';
import { ScriptedBridge, nextWeekdayAt } from '../../telephony/scripted/scripted-bridge.ts';
import type { AgentSetup } from '../../telephony/speech-bridge.ts';
import { startFakeRealtime } from '../fakes/openai-realtime.ts';
import { agentSetupFor, eventually, quiet, recorder } from '../helpers/realtime.ts';
import { openMediaStream, type MediaNetwork, type MediaStreamOptions } from '../fakes/twilio-media-stream.ts';

// ---------------------------------------------------------------------------------------------
// Helpers

/** A `ws` client playing Twilio's side of a media stream. */
async function twilioClient(port: number, path = '/media') {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
  const inbox: Record<string, any>[] = [];
  const waiters: { match: (m: Record<string, any>) => boolean; resolve: (m: Record<string, any>) => void }[] = [];
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString());
    inbox.push(msg);
    for (const w of waiters.filter((w) => w.match(msg))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(msg);
    }
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  return {
    ws,
    inbox,
    closed,
    send: (msg: unknown) => ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg)),
    next(match: (m: Record<string, any>) => boolean, timeoutMs = 3000): Promise<Record<string, any>> {
      const found = inbox.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('expected carrier message never came')), timeoutMs);
        waiters.push({ match, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      });
    },
  };
}

const startMessage = (callId = 'call_123') => ({
  event: 'start',
  sequenceNumber: '1',
  streamSid: 'MZ00000000000000000000000000000001',
  start: {
    accountSid: 'AC00000000000000000000000000000001',
    streamSid: 'MZ00000000000000000000000000000001',
    callSid: 'CA00000000000000000000000000000001',
    tracks: ['inbound'],
    mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    customParameters: { call_id: callId },
  },
});

const mediaMessage = (payload: string, timestampMs: number, chunk = 1) => ({
  event: 'media',
  sequenceNumber: String(chunk + 1),
  streamSid: 'MZ00000000000000000000000000000001',
  media: { track: 'inbound', chunk: String(chunk), timestamp: String(timestampMs), payload },
});

async function mediaServer(t: { teardown(fn: () => unknown): void }, onSession: (s: MediaSession) => void) {
  // Parsed log lines. (test/helpers/service.ts has a LogCapture, but importing it loads the whole service.)
  const logs = { lines: [] as Record<string, unknown>[], write: (line: string) => void logs.lines.push(JSON.parse(line)) };
  const server = await startMediaServer({ host: '127.0.0.1', port: 0, log: createLogger('debug', logs), onSession });
  t.teardown(() => server.close());
  return { server, logs };
}

/** Resolves with the next session the server hands out. */
function sessionPromise() {
  let resolve!: (s: MediaSession) => void;
  const promise = new Promise<MediaSession>((r) => (resolve = r));
  return { promise, onSession: (s: MediaSession) => resolve(s) };
}

/** The scripted bridge opens with the setup's greeting (the opening's text). */
const setup = (overrides: Partial<AgentSetup> = {}): AgentSetup =>
  agentSetupFor({ greeting: 'Hello, this is an automated assistant calling on behalf of Example Dental.', ...overrides });

// ---------------------------------------------------------------------------------------------
// Media server (Twilio Media Streams)

test('media server: a stream becomes a session only after start, and audio, marks and clear flow both ways', async (t) => {
  const { promise, onSession } = sessionPromise();
  let sessions = 0;
  const { server } = await mediaServer(t, (s) => (sessions++, onSession(s)));
  const twilio = await twilioClient(server.port);

  twilio.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
  twilio.send(mediaMessage(SILENCE_FRAME_BASE64, 0)); // before start: no session to give it to
  await sleep(30);
  t.is(sessions, 0, 'no session before start');

  twilio.send(startMessage('call_abc'));
  const session = await promise;
  t.is(session.callId, 'call_abc');
  t.is(session.streamSid, 'MZ00000000000000000000000000000001');

  const audio: [string, number][] = [];
  const marks: string[] = [];
  session.onAudio((p, ts) => audio.push([p, ts]));
  session.onMark((n) => marks.push(n));
  const payload = toneFrames(20, 300)[0];
  twilio.send(mediaMessage(payload, 40, 2));
  twilio.send(mediaMessage(SILENCE_FRAME_BASE64, 60, 3));

  session.sendAudio(payload);
  session.sendMark('agent-1');
  session.clear();
  const media = await twilio.next((m) => m.event === 'media');
  t.deepEqual(media, { event: 'media', streamSid: session.streamSid, media: { payload } });
  const mark = await twilio.next((m) => m.event === 'mark');
  t.deepEqual(mark, { event: 'mark', streamSid: session.streamSid, mark: { name: 'agent-1' } });
  t.deepEqual(await twilio.next((m) => m.event === 'clear'), { event: 'clear', streamSid: session.streamSid });
  t.deepEqual(twilio.inbox.map((m) => m.event), ['media', 'mark', 'clear'], 'sent in order, nothing else');

  twilio.send({ event: 'mark', sequenceNumber: '5', streamSid: session.streamSid, mark: { name: 'agent-1' } });
  await eventually(() => marks.length === 1); // sent after the media, so the media is in too
  t.deepEqual(audio, [
    [payload, 40],
    [SILENCE_FRAME_BASE64, 60],
  ]);
  t.deepEqual(marks, ['agent-1']);
  t.is(sessions, 1);
});

test('media server: a key pressed before the call listens (it takes its stream a moment after start) reaches its first listener: a 9 at once is an opt-out all the same', async (t) => {
  const { promise, onSession } = sessionPromise();
  const { server } = await mediaServer(t, onSession);
  const twilio = await twilioClient(server.port);
  twilio.send(startMessage('call_keys'));
  const session = await promise;
  const marks: string[] = [];
  session.onMark((n) => marks.push(n));
  twilio.send({ event: 'dtmf', streamSid: session.streamSid, sequenceNumber: '2', dtmf: { track: 'inbound_track', digit: '9' } });
  // A mark sent after the key: once it is in, the key has been taken by the server too.
  twilio.send({ event: 'mark', sequenceNumber: '3', streamSid: session.streamSid, mark: { name: 'after-the-key' } });
  await eventually(() => marks.length === 1); // the call reads its row and prepares its line meanwhile
  const keys: string[] = [];
  session.onDtmf((d) => keys.push(d));
  await eventually(() => keys.length === 1);
  t.deepEqual(keys, ['9']);
  twilio.send({ event: 'dtmf', streamSid: session.streamSid, sequenceNumber: '4', dtmf: { track: 'inbound_track', digit: '1' } });
  await eventually(() => keys.length === 2);
  t.deepEqual(keys, ['9', '1'], 'later keys as they come, each once');
});

test('media server: malformed messages are logged and ignored, and the stream carries on', async (t) => {
  const { promise, onSession } = sessionPromise();
  const { server, logs } = await mediaServer(t, onSession);
  const twilio = await twilioClient(server.port);

  twilio.send('this is not json');
  twilio.send('[1,2,3]');
  twilio.send({ event: 'start', streamSid: 'MZ9', start: { customParameters: {} } }); // no call_id
  twilio.ws.send(Buffer.from([1, 2, 3]), { binary: true });
  twilio.send(startMessage('call_ok'));
  const session = await promise;
  t.is(session.callId, 'call_ok', 'the start without call_id did not open a session');

  const audio: number[] = [];
  const marks: string[] = [];
  session.onAudio((_p, ts) => audio.push(ts));
  session.onMark((n) => marks.push(n));
  twilio.send({ event: 'media', media: { timestamp: '20' } }); // no payload
  twilio.send({ event: 'media', media: { payload: SILENCE_FRAME_BASE64, timestamp: 'soon' } });
  twilio.send({ event: 'mark', mark: {} });
  twilio.send({ event: 'something_new' });
  twilio.send(mediaMessage(SILENCE_FRAME_BASE64, 80));
  twilio.send({ event: 'mark', mark: { name: 'still-alive' } });
  await eventually(() => marks.length === 1);

  t.deepEqual(audio, [80]);
  t.deepEqual(marks, ['still-alive']);
  t.is(twilio.ws.readyState, WebSocket.OPEN);
  const warnings = logs.lines.filter((l) => l.msg === 'ignored malformed media message').map((l) => l.reason);
  t.deepEqual(warnings, [
    'not JSON',
    'no event',
    'start without call_id',
    'binary frame',
    'media without payload',
    'media without timestamp',
    'mark without name',
    'unknown event something_new',
  ]);
});

test('media server: stop handlers run once, whether the carrier sends stop, closes, or both', async (t) => {
  const { server } = await mediaServer(t, (s) => sessions.push(s));
  const sessions: MediaSession[] = [];
  const counts = [0, 0, 0];

  // 1: stop, then the socket closes.
  const a = await twilioClient(server.port);
  a.send(startMessage('call_a'));
  // 2: the socket closes without a stop.
  const b = await twilioClient(server.port);
  b.send(startMessage('call_b'));
  // 3: we close the session (call over).
  const c = await twilioClient(server.port);
  c.send(startMessage('call_c'));
  await eventually(() => sessions.length === 3);
  const byId = (id: string) => sessions.find((s) => s.callId === id)!;
  byId('call_a').onStop(() => counts[0]++);
  byId('call_b').onStop(() => counts[1]++);
  byId('call_c').onStop(() => counts[2]++);

  a.send({ event: 'stop', sequenceNumber: '9', streamSid: 'MZ', stop: { callSid: 'CA' } });
  await eventually(() => counts[0] === 1);
  t.is(b.ws.readyState, WebSocket.OPEN, 'a stop ends only its own stream');
  a.ws.close();
  b.ws.close();
  byId('call_c').close();
  t.is(await c.closed, 1000, 'session.close() closes the carrier socket normally');
  await Promise.all([a.closed, b.closed]);
  await sleep(30);
  t.deepEqual(counts, [1, 1, 1]);

  // Sending on a closed session is a no-op, not a crash; a late onStop still hears of the end.
  byId('call_c').sendAudio(SILENCE_FRAME_BASE64);
  let late = 0;
  byId('call_b').onStop(() => late++);
  await eventually(() => late === 1);
  await sleep(10);
  t.is(late, 1);
});

test('media server: a carrier that reads slowly gets every frame, with one warning logged', async (t) => {
  const { promise, onSession } = sessionPromise();
  const { server, logs } = await mediaServer(t, onSession);
  const twilio = await twilioClient(server.port);
  twilio.send(startMessage('call_slow'));
  const session = await promise;
  (twilio.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
  const FRAMES = 30_000; // ~8 MB of JSON: more than the kernel's socket buffers hold
  for (let i = 0; i < FRAMES; i++) session.sendAudio(SILENCE_FRAME_BASE64);
  const slow = () => logs.lines.filter((l) => l.msg === 'carrier is reading media slowly; buffering');
  t.is(slow().length, 1);
  (twilio.ws as unknown as { _socket: { resume(): void } })._socket.resume();
  await eventually(() => twilio.inbox.length === FRAMES, 10_000);
  t.true(twilio.inbox.every((m) => m.event === 'media' && m.media.payload === SILENCE_FRAME_BASE64));
  t.is(slow().length, 1, 'logged once');
  t.false(logs.lines.some((l) => l.level === 50), 'nothing dropped');
});

test('media server: listens on a free port, refuses other paths, and close() ends open streams', async (t) => {
  const server = await startMediaServer({ host: '127.0.0.1', port: 0, path: '/twilio/media', log: quiet, onSession: () => {} });
  t.true(server.port > 0);
  await t.throwsAsync(twilioClient(server.port, '/media'), { message: /404/ });
  const twilio = await twilioClient(server.port, '/twilio/media');
  await server.close();
  t.is(await twilio.closed, 1001);
  await t.throwsAsync(twilioClient(server.port, '/twilio/media'));
});

// ---------------------------------------------------------------------------------------------
// OpenAI Realtime bridge (against the fake)

test('realtime bridge: a wrong API key fails connect()', async (t) => {
  const fake = await startFakeRealtime();
  t.teardown(() => fake.close());
  const { handlers } = recorder();
  const bridge = new OpenAIRealtimeBridge({ apiKey: 'sk-wrong', baseUrl: fake.url, log: quiet });
  await t.throwsAsync(bridge.connect(setup(), handlers), { message: /401/ });
  t.is(fake.refused, 1);
});

test('realtime bridge: the peer going away reports onError; our own close() does not', async (t) => {
  const fake = await startFakeRealtime();
  t.teardown(() => fake.close());
  const dropped = recorder();
  const closed = recorder();
  const bridge = new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet });
  (await bridge.connect(setup(), dropped.handlers)).takeOver();
  const ours = await bridge.connect(setup(), closed.handlers);
  ours.takeOver();
  await dropped.until(() => dropped.rec.audio.length > 0);
  await closed.until(() => closed.rec.audio.length > 0);

  ours.close();
  await sleep(30);
  fake.dropConnections();
  await dropped.until(() => dropped.rec.errors.length === 1);
  await sleep(30);
  t.is(dropped.rec.errors.length, 1, 'reported once');
  t.deepEqual(closed.rec.errors, []);
});

// ---------------------------------------------------------------------------------------------
// Over the internet: the fake carrier's stream with jitter, stalls (then bursts) and lost frames

/** A stream as it crosses the internet: up to 30 ms of jitter, a 160 ms stall every 12 frames, 3 frames lost in every 17. */
const UNKIND_NETWORK: MediaNetwork = { jitterMs: 30, stallEvery: 12, stallMs: 160, lossEvery: 17, lostFrames: 3, seed: 20 };

/** The fake carrier's media stream (test/fakes/twilio-media-stream.ts) to our media server, for call `callId`. */
function carrierStream(port: number, callId: string, options: Partial<MediaStreamOptions> = {}) {
  const agentAudio: string[] = [];
  const stream = openMediaStream({
    url: `ws://127.0.0.1:${port}/media`,
    accountSid: 'AC00000000000000000000000000000001',
    callSid: 'CA00000000000000000000000000000001',
    customParameters: { call_id: callId },
    bidirectional: true,
    playbackSpeed: 1,
    calleeAudio: [],
    onAgentAudio: (mulaw) => agentAudio.push(mulaw.toString('base64')),
    onEnd: () => {},
    network: UNKIND_NETWORK,
    ...options,
  });
  return { stream, agentAudio };
}

test('media server over the internet: late, bursty and missing frames reach the session in order with their carrier timestamps, stop after the last', async (t) => {
  const { promise, onSession } = sessionPromise();
  const { server, logs } = await mediaServer(t, onSession);
  // 60 frames the callee says, each its own bytes.
  const said = Array.from({ length: 60 }, (_, i) => Buffer.alloc(FRAME_BYTES, i + 1).toString('base64'));
  const { stream } = carrierStream(server.port, 'call_net', { calleeAudio: said });
  const session = await promise;
  const heard: { payload: string; timestampMs: number; atMs: number }[] = [];
  session.onAudio((payload, timestampMs) => heard.push({ payload, timestampMs, atMs: performance.now() }));
  let stops = 0;
  session.onStop(() => stops++);
  await eventually(() => stream.record.framesSent.some((f) => f.index >= 59), 5_000);
  stream.stop();
  await eventually(() => stops === 1, 3_000);

  const { framesSent, framesLost, stalls, protocolErrors } = stream.record;
  t.true(framesLost.length >= 6 && stalls >= 3, `the network was unkind: ${framesLost.length} frames lost, ${stalls} stalls`);
  // Every frame sent after the session's handler was attached arrived, in the order sent, before the stop.
  const first = framesSent.findIndex((f) => f.timestampMs === heard[0].timestampMs);
  t.true(first >= 0);
  t.deepEqual(
    heard.map((h) => h.timestampMs),
    framesSent.slice(first).map((f) => f.timestampMs),
  );
  t.deepEqual(
    heard.map((h) => h.payload),
    framesSent.slice(first).map((f) => said[f.index] ?? SILENCE_FRAME_BASE64),
    'each frame carries its own audio',
  );
  t.true(
    heard.every((h, i) => i === 0 || h.timestampMs > heard[i - 1].timestampMs),
    'timestamps only grow',
  );
  t.true(
    heard.some((h, i) => i > 0 && h.timestampMs - heard[i - 1].timestampMs > 20),
    'lost frames show as a jump of the carrier clock',
  );
  t.false(
    heard.some((h) => framesLost.includes(h.timestampMs)),
    'nothing is made up for a lost frame',
  );
  // A burst: after a stall, several frames within a few ms.
  const gaps = heard.slice(1).map((h, i) => h.atMs - heard[i].atMs);
  t.true(
    gaps.some((g, i) => g > 100 && gaps[i + 1] < 10 && gaps[i + 2] < 10),
    `a stall followed by a burst (${gaps.map((g) => Math.round(g)).join(' ')})`,
  );
  t.deepEqual(protocolErrors, []);
  t.false(logs.lines.some((l) => l.msg === 'ignored malformed media message' || Number(l.level) >= 50));
  t.is(stops, 1);
});

test('call bridge over the internet: the agent is heard in order, barge-in cuts at what the callee heard by the carrier’s clock, the marks come back in order', async (t) => {
  // 50 frames = 1,000 ms of the agent's first words; the callee talks over it after 15 frames of
  // its own, for longer than a backchannel. (The answer after the callee's turn is silent here.)
  const fake = await startFakeRealtime({ script: 'barge_in', greetingFrames: 50, replyFrames: 0, speechAfterAppends: 15 });
  t.teardown(() => fake.close());
  const { promise, onSession } = sessionPromise();
  const { server, logs } = await mediaServer(t, onSession);
  const { stream, agentAudio } = carrierStream(server.port, 'call_net_bridge');
  const session = await promise;

  // What the bridge has been told, in the order it was told: the carrier clock and the returned marks.
  let carrierMs = 0;
  const sentTimestamps: number[] = [];
  let relayedBytes = 0;
  let startMs: number | null = null;
  const markEnds = new Map<string, number>();
  let markedBytes = 0;
  let cutAt: { carrierMs: number; markedBytes: number; startMs: number } | null = null;
  const errors: Error[] = [];
  // Wired as the call actor wires them (actors/call/call-media.ts).
  const conn = await new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet }).connect(setup(), {
    onAudio: (payload) => {
      startMs ??= carrierMs;
      relayedBytes += Buffer.from(payload, 'base64').length;
      session.sendAudio(payload);
    },
    onMark: (name: string) => {
      markEnds.set(name, relayedBytes);
      session.sendMark(name);
    },
    onInterrupted: () => {
      cutAt = { carrierMs, markedBytes, startMs: startMs! };
      session.clear();
    },
    onToolCall: async () => ({ ok: true }),
    onTranscript: () => {},
    onError: (e) => errors.push(e),
  } satisfies MarkingBridgeHandlers);
  t.teardown(() => conn.close());
  conn.takeOver(); // the opening has played (actors/call/call-media.ts calls it once its audio is done)
  session.onAudio((payload, timestampMs) => {
    carrierMs = Math.max(carrierMs, timestampMs);
    sentTimestamps.push(timestampMs);
    conn.sendAudio(payload, timestampMs);
  });
  session.onMark((name) => {
    if (!cutAt) markedBytes = Math.max(markedBytes, markEnds.get(name) ?? 0);
    conn.markPlayed(name);
  });

  const truncate = await fake.waitFor((e) => e.type === 'conversation.item.truncate', 5_000);
  await eventually(() => stream.record.clears === 1 && stream.record.marksEchoed.length === stream.record.marksReceived.length, 3_000);
  await sleep(100);
  const cut = cutAt as { carrierMs: number; markedBytes: number; startMs: number } | null;
  t.truthy(cut, 'the callee talking over the agent interrupted it');
  // What the callee heard: the carrier's clock since the agent's first audio, or what the returned marks confirm, whichever is further.
  const heardMs = Math.floor(Math.max(cut!.carrierMs - cut!.startMs, cut!.markedBytes / 8, 0));
  t.is(truncate.audio_end_ms, heardMs);
  t.true(heardMs > 0 && heardMs < 1_000, `cut inside the greeting (${heardMs} ms)`);
  t.is(fake.received.filter((e) => e.type === 'conversation.item.truncate').length, 1);
  t.deepEqual(fake.truncates.map((x) => [x.item_id, x.accepted]), [[fake.latest().responses[0].itemId, true]], 'the agent’s item, accepted');

  t.true(stream.record.framesLost.length > 0 && stream.record.stalls > 0, 'the network was unkind');
  t.true(
    sentTimestamps.every((ts, i) => i === 0 || ts > sentTimestamps[i - 1]),
    'the callee reached the agent in order',
  );
  t.deepEqual(agentAudio, fake.greetingAudio, 'the carrier played the greeting in order, and nothing of the cut item after it');
  t.deepEqual(stream.record.marksEchoed, stream.record.marksReceived, 'every mark came back, in the order sent');
  t.is(stream.record.clears, 1);

  stream.stop();
  await eventually(() => stream.record.closedBy === 'twilio');
  t.deepEqual(stream.record.protocolErrors, []);
  t.deepEqual(fake.violations, []);
  t.deepEqual(errors, []);
  t.false(logs.lines.some((l) => Number(l.level) >= 50), 'nothing logged as an error');
});

// ---------------------------------------------------------------------------------------------
// Scripted bridge

/** Fri 28 Mar 2025, 12:00 UTC: the next weekday is Mon 31 Mar, after the UK went to summer time. */
const FRIDAY = { now: () => new Date('2025-03-28T12:00:00Z') };

async function runScripted(to: string, timezone = 'Europe/London') {
  const { rec, handlers, until } = recorder();
  const conn = await new ScriptedBridge({ clock: FRIDAY }).connect(setup({ to, timezone }), handlers);
  conn.takeOver(); // the call has played the opening
  await until(() => rec.tools.some((x) => x.name === 'end_call'), 2000);
  conn.close();
  return { rec };
}

test('scripted bridge: digit 1 asks for free slots and, given none, books the next weekday at 10:00 local time, then ends the call', async (t) => {
  const { rec } = await runScripted('+447700900001');
  t.deepEqual(rec.tools, [
    { name: 'find_free_slots', args: {} },
    {
      name: 'book_appointment',
      args: { start_at: '2025-03-31T09:00:00.000Z', attendee_name: 'Pat Example', notes: 'Demo of the service' },
    },
    { name: 'end_call', args: { reason: 'appointment_booked' } },
  ]);
  t.true(rec.audio.length > 0 && rec.audio.every((p) => Buffer.from(p, 'base64').length === FRAME_BYTES));
  t.true(rec.transcripts.some((x) => x.role === 'agent' && x.text === 'Could we book a 30-minute call on Monday, 31 March 2025 at 10:00 (Europe/London)?'), 'it proposes the time it books');
  t.true(rec.transcripts.some((x) => x.role === 'callee'));
});

test('scripted bridge: digit 1 books the first free slot offered and, when it was just taken, the next one the refusal offers', async (t) => {
  const slot = (start_at: string) => ({ start_at, end_at: start_at, says: start_at });
  const { rec, handlers, until } = recorder(async (name, args) => {
    if (name === 'find_free_slots') return { slots: [slot('2025-03-31T13:00:00.000Z'), slot('2025-03-31T13:30:00.000Z')] };
    if (name === 'book_appointment' && args.start_at === '2025-03-31T13:00:00.000Z') return { booked: false, reason: 'slot_taken', next_slots: [slot('2025-03-31T14:00:00.000Z')] };
    return { booked: true };
  });
  const conn = await new ScriptedBridge({ clock: FRIDAY }).connect(setup({ to: '+447700900001', timezone: 'Europe/London' }), handlers);
  conn.takeOver();
  await until(() => rec.tools.some((x) => x.name === 'end_call'), 2000);
  conn.close();
  t.deepEqual(
    rec.tools.map((x) => [x.name, x.args.start_at ?? null]),
    [
      ['find_free_slots', null],
      ['book_appointment', '2025-03-31T13:00:00.000Z'],
      ['book_appointment', '2025-03-31T14:00:00.000Z'],
      ['end_call', null],
    ],
  );
  // The agent's words name each slot as the tool said it (`says`), and the one booked at the end.
  t.deepEqual(
    rec.transcripts.filter((x) => x.role === 'agent').map((x) => x.text),
    [
      'Could we book a 30-minute call on 2025-03-31T13:00:00.000Z?',
      'That time has just been taken. Could we do 2025-03-31T14:00:00.000Z instead?',
      'You are booked in for 2025-03-31T14:00:00.000Z. Thank you, goodbye.',
    ],
  );
});

test('scripted bridge: nothing before takeOver(), never the opening itself (the call plays it); at a machine it says nothing (the machine verdict decides)', async (t) => {
  const waiting = recorder();
  const conn = await new ScriptedBridge({ clock: FRIDAY }).connect(setup({ to: '+15550100000' }), waiting.handlers);
  await sleep(100);
  t.deepEqual([waiting.rec.audio.length, waiting.rec.transcripts.length, waiting.rec.tools.length], [0, 0, 0], 'silent until the opening has played');
  conn.close();
  const { rec } = await runScripted('+15550100000');
  t.false(rec.transcripts.some((x) => x.text === setup().greeting), 'the opening is the call’s, not the agent’s');
  t.notRegex(JSON.stringify(rec.transcripts), /our client/i);
  const { rec: machine, handlers } = recorder();
  const atMachine = await new ScriptedBridge({ clock: FRIDAY }).connect(setup({ to: '+15550100004' }), handlers);
  atMachine.takeOver();
  await sleep(100);
  atMachine.close();
  t.deepEqual([machine.transcripts, machine.tools, machine.audio.length], [[], [], 0]);
});

test('scripted bridge: digit 0 is not interested, digit 5 asks not to be called again', async (t) => {
  const zero = await runScripted('+15550100000');
  t.deepEqual(zero.rec.tools, [{ name: 'end_call', args: { reason: 'not_interested' } }]);
  const five = await runScripted('+15550100005');
  t.deepEqual(five.rec.tools, [
    { name: 'mark_do_not_call', args: { reason: 'asked not to be called again' } },
    { name: 'end_call', args: { reason: 'do_not_call' } },
  ]);
});

test('scripted bridge: digit 6 talks until closed; digit 2 does nothing', async (t) => {
  const { rec, handlers, until } = recorder();
  const conn = await new ScriptedBridge({ clock: FRIDAY }).connect(setup({ to: '+15550100006' }), handlers);
  conn.takeOver();
  await until(() => rec.transcripts.filter((x) => x.role === 'agent').length >= 3, 2000);
  conn.close();
  const frames = rec.audio.length;
  await sleep(250);
  t.is(rec.audio.length, frames, 'nothing after close()');
  t.deepEqual(rec.tools, []);
  t.deepEqual(rec.errors, []);

  const silent = recorder();
  const idle = await new ScriptedBridge().connect(setup({ to: '+15550100002' }), silent.handlers);
  idle.takeOver();
  await sleep(100);
  idle.close();
  t.deepEqual([silent.rec.audio.length, silent.rec.transcripts.length, silent.rec.tools.length], [0, 0, 0]);
});

test('nextWeekdayAt: skips weekends and applies the zone offset of that day', (t) => {
  // Saturday evening in New York (already Sunday in UTC) → Monday 10:00 EST.
  t.is(nextWeekdayAt(new Date('2025-01-12T01:00:00Z'), 'America/New_York', 10).toISOString(), '2025-01-13T15:00:00.000Z');
  // Wednesday in Tokyo → Thursday 10:00 JST.
  t.is(nextWeekdayAt(new Date('2025-06-04T03:00:00Z'), 'Asia/Tokyo', 10).toISOString(), '2025-06-05T01:00:00.000Z');
});

// ---------------------------------------------------------------------------------------------
// μ-law

test('mulaw: silence, round trips within G.711 error, tones and the WAV header', (t) => {
  t.deepEqual(Buffer.from(SILENCE_FRAME_BASE64, 'base64'), Buffer.alloc(160, 0xff));
  t.is(mulawToLinear(0xff), 0);
  for (const sample of [0, 1, -1, 100, -100, 1000, -1000, 8000, -8000, 32000, -32000]) {
    const back = mulawToLinear(linearToMulaw(sample));
    t.true(Math.abs(back - sample) <= Math.max(4, Math.abs(sample) / 16), `${sample} → ${back}`);
  }
  for (let b = 0; b < 256; b++) if (b !== 0x7f) t.is(linearToMulaw(mulawToLinear(b)), b); // 0x7f is −0
  const tone = toneFrames(50, 440);
  t.is(tone.length, 3);
  t.true(tone.every((f) => Buffer.from(f, 'base64').length === FRAME_BYTES));
  t.notDeepEqual(tone[0], SILENCE_FRAME_BASE64);

  const data = Buffer.from([1, 2, 3]);
  const wav = wavFromMulaw(data);
  t.is(wav.toString('ascii', 0, 4), 'RIFF');
  t.is(wav.readUInt32LE(4), wav.length - 8);
  t.is(wav.toString('ascii', 8, 16), 'WAVEfmt ');
  t.is(wav.readUInt16LE(20), 7, 'μ-law format tag');
  t.is(wav.readUInt16LE(22), 1, 'mono');
  t.is(wav.readUInt32LE(24), 8000);
  t.is(wav.toString('ascii', 38, 42), 'fact');
  t.is(wav.toString('ascii', 50, 54), 'data');
  t.is(wav.readUInt32LE(54), 3);
  t.deepEqual(wav.subarray(58, 61), data);
  t.is(wav.length % 2, 0, 'padded to a word');
});
