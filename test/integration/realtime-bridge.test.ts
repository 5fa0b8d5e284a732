/**
 * The OpenAI Realtime bridge against the strict fake over real WebSockets (issue 23 §2): the
 * session is opened and primed with the opening while the phone rings, the agent says nothing
 * before takeOver(), the bridge takes the turns (no collision with a server-made response), and
 * barge-in stops the voice at once, cuts exactly the playing item at exactly the played position,
 * plays nothing more of it, and keeps a backchannel from interrupting.
 */
import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { OpenAIRealtimeBridge } from '../../telephony/openai-realtime/openai-realtime-bridge.ts';
import type { BridgeConnection, TurnSettings } from '../../telephony/speech-bridge.ts';
import { BOOKING_ARGS, CALLEE_TRANSCRIPT, GREETING_TRANSCRIPT, REPLY_TRANSCRIPT, startFakeRealtime, type FakeRealtimeOptions } from '../fakes/openai-realtime.ts';
import { OPENING, TOOLS, agentSetupFor, bytesOf, eventually, quiet, recorder } from '../helpers/realtime.ts';

/** Quick turns for tests: 200 ms of silence ends a turn; speech under 700 ms is a backchannel. */
const TURN: TurnSettings = { silence_ms: 200, threshold: 0.6, prefix_padding_ms: 250, backchannel_max_ms: 700 };

async function connected(t: { teardown(fn: () => unknown): void }, options: FakeRealtimeOptions = {}, turn: TurnSettings = TURN, toolResult?: Parameters<typeof recorder>[0]) {
  const fake = await startFakeRealtime(options);
  t.teardown(() => fake.close());
  const r = recorder(toolResult);
  const conn = await new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet }).connect(agentSetupFor({ turn, voice: 'cedar' }), r.handlers);
  t.teardown(() => conn.close());
  const server = await fake.waitForConnection();
  // The test's callee speaks after the session is configured, as a real callee's audio follows it on the socket.
  await eventually(() => server.sent.some((e) => e.type === 'session.updated'));
  return { fake, server, conn, ...r };
}

/** Reports every mark given so far as played (the carrier played everything it was sent). */
const playAll = (conn: BridgeConnection, marks: string[]) => marks.forEach((m) => conn.markPlayed(m));

const clientTypes = (fake: { received: { type: string }[] }) => fake.received.map((e) => e.type).filter((x) => x !== 'input_audio_buffer.append');

test('session order: session.created first, then our session.update (turns ours, μ-law, voice, language) and the opening as an assistant item', async (t) => {
  const { fake, server } = await connected(t);
  await fake.waitFor((e) => e.type === 'conversation.item.create');
  await eventually(() => server.sent.some((e) => e.type === 'session.updated'));
  t.is(server.sent[0].type, 'session.created', 'the server spoke first');
  t.deepEqual(clientTypes(fake), ['session.update', 'conversation.item.create']);
  const update = fake.received[0];
  t.like(update.session, {
    type: 'realtime',
    instructions: 'You call on behalf of Example Dental.',
    audio: {
      input: {
        format: { type: 'audio/pcmu' },
        turn_detection: { type: 'server_vad', threshold: 0.6, prefix_padding_ms: 250, silence_duration_ms: 200, create_response: false, interrupt_response: false },
        transcription: { model: 'gpt-4o-mini-transcribe', language: 'en' },
      },
      output: { format: { type: 'audio/pcmu' }, voice: 'cedar' },
    },
  });
  t.deepEqual(update.session.tools, TOOLS.map((tool) => ({ type: 'function', ...tool })));
  t.deepEqual(fake.received[1].item, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: OPENING }] });
  t.deepEqual(server.items.map((i) => [i.role, i.text]), [['assistant', OPENING]]);
  t.deepEqual(server.errors, []);
});

test('without turn settings the bridge uses the documented defaults and the marin voice', async (t) => {
  const fake = await startFakeRealtime();
  t.teardown(() => fake.close());
  const conn = await new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet }).connect(agentSetupFor(), recorder().handlers);
  t.teardown(() => conn.close());
  const update = await fake.waitFor((e) => e.type === 'session.update');
  t.like(update.session.audio, {
    input: { turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500, create_response: false, interrupt_response: false } },
    output: { voice: 'marin' },
  });
});

test('nothing is said before takeOver(), even when the callee speaks; takeOver() asks for one response, twice still one', async (t) => {
  const { fake, server, conn, rec, until } = await connected(t, { greetingFrames: 6 });
  conn.sendAudio('/////w==', 20);
  await fake.calleeSpeaks({ durationMs: 100 });
  await sleep(50);
  t.false(fake.received.some((e) => e.type === 'response.create'), 'no response before takeOver');
  t.deepEqual(server.responses, []);
  t.deepEqual(rec.audio, []);
  t.deepEqual(rec.interruptedAt, []);

  conn.takeOver();
  conn.takeOver();
  await until(() => rec.audio.length === 6);
  await sleep(50);
  t.is(fake.received.filter((e) => e.type === 'response.create').length, 1);
  t.deepEqual(rec.audio, fake.greetingAudio, 'μ-law deltas reach onAudio byte for byte, in order');
  t.is(rec.marks.length, 6, 'one mark per delta');
  playAll(conn, rec.marks);
  await until(() => rec.transcripts.some((x) => x.role === 'agent'));
  t.deepEqual(rec.transcripts, [
    { role: 'callee', text: CALLEE_TRANSCRIPT },
    { role: 'agent', text: GREETING_TRANSCRIPT },
  ]);
  t.false(rec.transcripts.some((x) => x.text === OPENING), 'the opening is never reported by the bridge');
  t.deepEqual(fake.violations, []);
});

test('takeOver() while the callee is talking waits for their turn, then one response', async (t) => {
  const { fake, server, conn, until, rec } = await connected(t, { greetingFrames: 3 });
  // A long turn: the checks below run well inside it even on a loaded machine.
  const speech = server.calleeSpeaks({ durationMs: 1500 });
  await eventually(() => server.sent.some((e) => e.type === 'input_audio_buffer.speech_started'));
  await sleep(20);
  conn.takeOver();
  await sleep(50);
  t.false(server.sent.some((e) => e.type === 'input_audio_buffer.speech_stopped'), 'the callee is still talking');
  t.false(fake.received.some((e) => e.type === 'response.create'), 'not while the callee talks');
  await speech;
  await until(() => rec.audio.length === 3);
  t.is(fake.received.filter((e) => e.type === 'response.create').length, 1);
  t.deepEqual(fake.violations, []);
});

test('a callee turn gets exactly one response, made by the bridge: never a collision', async (t) => {
  const { fake, server, conn, rec, until } = await connected(t, { greetingFrames: 5, replyFrames: 5, firstAudioDelayMs: 30 });
  conn.takeOver();
  await until(() => rec.audio.length === 5);
  playAll(conn, rec.marks);
  for (let turn = 0; turn < 3; turn++) {
    await server.calleeSpeaks({ durationMs: 100 });
    await until(() => rec.audio.length === 10 + turn * 5);
    playAll(conn, rec.marks);
  }
  await sleep(50);
  t.is(fake.received.filter((e) => e.type === 'response.create').length, 4);
  t.deepEqual(server.responses.map((r) => [r.by, r.status]), [
    ['client', 'completed'],
    ['client', 'completed'],
    ['client', 'completed'],
    ['client', 'completed'],
  ]);
  t.deepEqual(server.errors, [], 'no conversation_already_has_active_response');
  t.deepEqual(rec.interruptedAt, [], 'each turn came after the agent had been heard');
  t.deepEqual(rec.audio.slice(5), [...fake.replyAudio, ...fake.replyAudio, ...fake.replyAudio]);
});

/**
 * The agent's reply (50 frames, 1,000 ms) streams in while the callee listens; the carrier has
 * played 10 frames (200 ms, by the returned marks) when the callee speaks.
 */
async function replyPlaying(t: Parameters<typeof connected>[0], options: FakeRealtimeOptions, turn: TurnSettings = TURN) {
  const c = await connected(t, { greetingFrames: 5, replyFrames: 50, ...options }, turn);
  const { conn, rec, until, server } = c;
  conn.takeOver();
  await until(() => rec.audio.length === 5);
  playAll(conn, rec.marks);
  void server.calleeSpeaks({ durationMs: 100 });
  await until(() => rec.audio.length >= 5 + 20);
  const reply = server.responses[1];
  const replyMarks = rec.marks.slice(5, 15);
  playAll(conn, replyMarks);
  return { ...c, reply };
}

test('barge-in: stops at once, cancels, truncates exactly the playing item at exactly the played position, plays nothing more of it', async (t) => {
  // The reply streams at 30 ms a frame; speech over 200 ms (+ 200 ms of silence) is an interruption.
  const { fake, server, rec, until, reply } = await replyPlaying(t, { frameIntervalMs: 30 }, { ...TURN, backchannel_max_ms: 200 });
  t.is(reply.status, 'in_progress', 'the reply is still streaming');
  void server.calleeSpeaks({ durationMs: 1000 });
  await until(() => rec.interruptedAt.length === 1);
  // Everything the server sent before speech_started was relayed, and nothing after.
  const started = server.sent.findLastIndex((e) => e.type === 'input_audio_buffer.speech_started');
  const sentBefore = server.sent.slice(0, started).filter((e) => e.type === 'response.output_audio.delta').length;
  t.is(rec.interruptedAt[0], sentBefore, 'interrupted in the same event, before another delta');
  await until(() => server.truncates.length === 1, 3000);
  t.deepEqual(server.truncates, [{ connection: 0, item_id: reply.itemId!, content_index: 0, audio_end_ms: 200, accepted: true }], 'the reply, not the greeting, at the 200 ms the callee heard');
  t.not(reply.itemId, server.responses[0].itemId);
  t.deepEqual(server.cancels, [{ connection: 0, cancelled: reply.id }]);
  await eventually(() => reply.status === 'cancelled');
  t.is(server.audioSentMs(reply.itemId!), 200, 'the server keeps what was heard');
  const cutAt = rec.interruptedAt[0];
  const lateDeltas = server.sent.slice(started).filter((e) => e.type === 'response.output_audio.delta' && e.item_id === reply.itemId).length;
  // The callee finishes; the bridge answers once, after the cancelled response is done.
  await until(() => server.responses.length === 3, 4000);
  await until(() => rec.audio.length >= cutAt + 5);
  const after = rec.audio.slice(cutAt);
  t.deepEqual(after, fake.replyAudio.slice(0, after.length), 'no frame of the interrupted item after the interruption, only the next reply');
  t.true(lateDeltas > 0, `${lateDeltas} deltas of the cut item came after speech_started and were dropped`);
  t.deepEqual(server.responses.map((r) => [r.by, r.status]), [
    ['client', 'completed'],
    ['client', 'cancelled'],
    ['client', 'in_progress'],
  ]);
  t.deepEqual(server.errors, []);
  t.deepEqual(fake.violations, []);
  t.is(rec.interruptedAt.length, 1);
});

test('a backchannel (300 ms) pauses the agent and carries on from the played position: no truncate, no cancel, no new response, all of the item heard', async (t) => {
  const { fake, server, conn, rec, until, reply } = await replyPlaying(t, { frameIntervalMs: 8 });
  const relayedBefore = rec.audio.length;
  await server.calleeSpeaks({ durationMs: 300, transcript: 'Mm-hm.' });
  t.is(rec.interruptedAt.length, 1, 'the agent paused at once');
  await eventually(() => reply.status === 'completed', 3000);
  await sleep(100);
  const item = Buffer.concat(fake.replyAudio.map((f) => Buffer.from(f, 'base64')));
  // What the callee hears of the item: the 200 ms played before the pause, then the rest from there.
  const heard = Buffer.concat([bytesOf(rec.audio.slice(5, 15)), bytesOf(rec.audio.slice(relayedBefore))]);
  t.is(heard.length, item.length);
  t.true(heard.equals(item), 'all of the item’s audio reaches the carrier, in order, once');
  t.deepEqual(server.truncates, []);
  t.deepEqual(server.cancels, []);
  t.is(fake.received.filter((e) => e.type === 'response.create').length, 2, 'the backchannel got no answer of its own');
  playAll(conn, rec.marks);
  await until(() => rec.transcripts.filter((x) => x.role === 'agent').length === 2);
  t.deepEqual(rec.transcripts.filter((x) => x.role === 'agent').at(-1), { role: 'agent', text: REPLY_TRANSCRIPT });
  t.deepEqual(fake.violations, []);
});

test('backchannel_max_ms 0: any speech interrupts at once, before the callee has stopped', async (t) => {
  const { server, rec, until, reply } = await replyPlaying(t, { frameIntervalMs: 8 }, { ...TURN, backchannel_max_ms: 0 });
  void server.calleeSpeaks({ durationMs: 300 });
  await until(() => server.truncates.length === 1, 1000);
  t.false(server.sent.filter((e) => e.type === 'input_audio_buffer.speech_stopped').length > 1, 'cut while the callee still spoke');
  t.like(server.truncates[0], { item_id: reply.itemId, audio_end_ms: 200, accepted: true });
  t.deepEqual(server.cancels, [{ connection: 0, cancelled: reply.id }]);
  t.is(rec.interruptedAt.length, 1);
});

test('the transcript of a cut item keeps only the words played', async (t) => {
  // The reply arrives whole (the server is faster than real time), then is cut after 200 of its 1,000 ms.
  const { server, conn, rec, until, reply } = await replyPlaying(t, {}, { ...TURN, backchannel_max_ms: 0 });
  await until(() => rec.audio.length === 55);
  void server.calleeSpeaks({ durationMs: 300 });
  await until(() => server.truncates.length === 1);
  t.like(server.truncates[0], { item_id: reply.itemId, audio_end_ms: 200, accepted: true });
  t.deepEqual(server.cancels, [], 'the reply was complete: nothing to cancel');
  await until(() => rec.transcripts.filter((x) => x.role === 'agent').length === 2);
  // 10 words over 1,000 ms, 200 ms heard.
  t.deepEqual(rec.transcripts.filter((x) => x.role === 'agent')[1], { role: 'agent', text: 'Thank you.' });
  conn.close();
  t.false(rec.transcripts.some((x) => x.text === REPLY_TRANSCRIPT));
});

test('the agent line is reported once it has played, whole; close() reports what was heard of the playing one', async (t) => {
  const { conn, rec, until } = await connected(t, { greetingFrames: 50 });
  conn.takeOver();
  await until(() => rec.audio.length === 50);
  await sleep(30);
  t.deepEqual(rec.transcripts, [], 'not before it is heard');
  playAll(conn, rec.marks.slice(0, 25)); // 500 ms of 1,000
  conn.close();
  t.deepEqual(rec.transcripts, [{ role: 'agent', text: GREETING_TRANSCRIPT.split(' ').slice(0, 6).join(' ') }]);
});

test('tool calls still work: the output with its call_id, then response.create once the response is done', async (t) => {
  const fake = await startFakeRealtime({ script: 'book', speechAfterAppends: 3, calleeSpeechMs: 100, responseDoneDelayMs: 40 });
  t.teardown(() => fake.close());
  const { rec, handlers, until } = recorder(async (name) => (name === 'book_appointment' ? { appointment_id: 'appt_1' } : { ended: true }));
  const conn = await new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet }).connect(agentSetupFor({ turn: TURN }), handlers);
  t.teardown(() => conn.close());
  conn.takeOver();
  await until(() => rec.audio.length === 5);
  playAll(conn, rec.marks);
  for (let i = 0; i < 3; i++) conn.sendAudio('/////w==', 20 + i * 20);
  await until(() => rec.tools.length === 2, 4000);
  t.deepEqual(rec.tools, [
    { name: 'book_appointment', args: BOOKING_ARGS },
    { name: 'end_call', args: { reason: 'appointment_booked' } },
  ]);
  const output = await fake.waitFor((e) => e.type === 'conversation.item.create' && e.item?.call_id === 'call_book_1');
  t.deepEqual(output.item, { type: 'function_call_output', call_id: 'call_book_1', output: JSON.stringify({ appointment_id: 'appt_1' }) });
  t.deepEqual(clientTypes(fake).slice(0, 5), ['session.update', 'conversation.item.create', 'response.create', 'response.create', 'conversation.item.create']);
  await fake.waitFor((e) => e.type === 'conversation.item.create' && e.item?.call_id === 'call_end_1');
  t.deepEqual(fake.violations, [], 'never asked for a response while one was still running');
  t.deepEqual(rec.interruptedAt, []);
});

test('a failing tool is reported to the model as the function output', async (t) => {
  const fake = await startFakeRealtime({ script: 'book', speechAfterAppends: 1, calleeSpeechMs: 50, responseDoneDelayMs: 5 });
  t.teardown(() => fake.close());
  const { rec, handlers, until } = recorder(async () => {
    throw new Error('slot taken');
  });
  const conn = await new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet }).connect(agentSetupFor({ turn: TURN }), handlers);
  t.teardown(() => conn.close());
  conn.takeOver();
  await until(() => rec.audio.length === 5);
  playAll(conn, rec.marks);
  conn.sendAudio('/////w==', 200);
  const output = await fake.waitFor((e) => e.type === 'conversation.item.create' && e.item?.call_id === 'call_book_1');
  t.deepEqual(JSON.parse(output.item.output), { error: 'slot taken' });
});

test('returned marks count as played audio when they are ahead of the media clock; the carrier clock when it is ahead of the marks', async (t) => {
  const { server, conn, rec, until } = await connected(t, { greetingFrames: 50 }, { ...TURN, backchannel_max_ms: 0 });
  conn.takeOver();
  await until(() => rec.marks.length === 50);
  playAll(conn, rec.marks.slice(0, 30)); // 600 ms played
  conn.markPlayed('not-one-of-ours');
  for (let i = 1; i <= 3; i++) conn.sendAudio('/////w==', i * 20); // the clock says 60 ms
  void server.calleeSpeaks({ durationMs: 100 });
  await until(() => server.truncates.length === 1);
  t.like(server.truncates[0], { item_id: server.responses[0].itemId, audio_end_ms: 600, accepted: true });

  const second = await connected(t, { greetingFrames: 50 }, { ...TURN, backchannel_max_ms: 0 });
  second.conn.takeOver();
  await second.until(() => second.rec.marks.length === 50);
  playAll(second.conn, second.rec.marks.slice(0, 5)); // marks: 100 ms
  for (let i = 1; i <= 17; i++) second.conn.sendAudio('/////w==', i * 20); // the clock: 340 ms
  void second.server.calleeSpeaks({ durationMs: 100 });
  await second.until(() => second.server.truncates.length === 1);
  t.like(second.server.truncates[0], { audio_end_ms: 340, accepted: true });
});

test('speech after the agent finished playing is not a barge-in', async (t) => {
  const { fake, server, conn, rec, until } = await connected(t, { greetingFrames: 5 }); // 100 ms
  conn.takeOver();
  await until(() => rec.audio.length === 5);
  for (let i = 1; i <= 10; i++) conn.sendAudio('/////w==', i * 20); // 200 ms of carrier time: it has played
  await server.calleeSpeaks({ durationMs: 100 });
  await until(() => fake.received.filter((e) => e.type === 'response.create').length === 2);
  t.deepEqual(rec.interruptedAt, []);
  t.deepEqual(server.truncates, []);
  t.deepEqual(server.cancels, []);
});

test('barge-in while the carrier has caught up with a reply still streaming cuts at what was played, not at 0', async (t) => {
  const { server, conn, rec, until, reply } = await replyPlaying(t, { frameIntervalMs: 30 }, { ...TURN, backchannel_max_ms: 0 });
  const played = rec.marks.length;
  playAll(conn, rec.marks); // everything relayed so far has played
  void server.calleeSpeaks({ durationMs: 300 });
  await until(() => server.truncates.length === 1);
  t.is(reply.status === 'cancelled' || reply.status === 'in_progress', true);
  t.like(server.truncates[0], { item_id: reply.itemId, audio_end_ms: (played - 5) * 20, accepted: true });
  t.deepEqual(server.cancels, [{ connection: 0, cancelled: reply.id }]);
});

test('backchannel_max_ms 0 cuts at speech_started itself, not after the turn’s silence (docs/api.md: "0: any speech interrupts")', async (t) => {
  // A long silence_ms (1,500 ms): a bridge that waited for it before cutting would truncate only after 1,500 ms.
  const { server, rec, until, reply } = await replyPlaying(t, { frameIntervalMs: 8 }, { ...TURN, silence_ms: 1500, backchannel_max_ms: 0 });
  void server.calleeSpeaks({ durationMs: 2000 });
  await until(() => server.truncates.length === 1, 1000);
  t.like(server.truncates[0], { item_id: reply.itemId, audio_end_ms: 200, accepted: true });
  t.deepEqual(server.cancels, [{ connection: 0, cancelled: reply.id }]);
  t.is(rec.interruptedAt.length, 1);
});

test('speech of 500 ms under backchannel_max_ms 700 is a backchannel even with 500 ms of silence_ms: the silence is not counted as speech (docs/api.md "Call settings")', async (t) => {
  // speech_stopped comes 500 + 500 = 1,000 ms after speech_started: later than 700 ms, yet the speech was 500 ms.
  const { server, rec, reply } = await replyPlaying(t, { frameIntervalMs: 8 }, { ...TURN, silence_ms: 500, backchannel_max_ms: 700 });
  await server.calleeSpeaks({ durationMs: 500, transcript: 'Okay.' });
  await eventually(() => reply.status === 'completed', 3000);
  await sleep(100);
  t.is(rec.interruptedAt.length, 1, 'paused at once');
  t.deepEqual(server.truncates, [], 'not cut');
  t.deepEqual(server.cancels, [], 'not cancelled');
});

test('speech of 1,000 ms over backchannel_max_ms 700 interrupts, cut while the callee still speaks (docs/api.md "Call settings")', async (t) => {
  // TURN: 700 ms and 200 ms of silence; the callee's end would be reported at 1,200 ms, the cut comes at 900 ms.
  const { server, rec, until, reply } = await replyPlaying(t, { frameIntervalMs: 30 });
  void server.calleeSpeaks({ durationMs: 1000 });
  await until(() => server.truncates.length === 1, 3000);
  t.false(server.sent.filter((e) => e.type === 'input_audio_buffer.speech_stopped').length > 1, 'cut before the callee stopped');
  t.like(server.truncates[0], { item_id: reply.itemId, audio_end_ms: 200, accepted: true });
  t.deepEqual(server.cancels, [{ connection: 0, cancelled: reply.id }]);
  t.is(rec.interruptedAt.length, 1);
});

/** A socket whose `response.cancel` reaches the server 150 ms late, as one in flight does: the server goes on streaming meanwhile. */
class SlowCancelSocket extends WebSocket {
  override send(data: any, ...rest: any[]): void {
    if (String(data).includes('"type":"response.cancel"')) {
      setTimeout(() => (super.send as (...a: any[]) => void)(data, ...rest), 150);
      return;
    }
    (super.send as (...a: any[]) => void)(data, ...rest);
  }
}

test('deltas of the cut item that arrive after the cut (the cancel still in flight) never reach the carrier: zero frames of it after clear', async (t) => {
  const fake = await startFakeRealtime({ greetingFrames: 5, replyFrames: 50, frameIntervalMs: 8 });
  t.teardown(() => fake.close());
  const { rec, handlers, until } = recorder();
  const conn = await new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet, WebSocketImpl: SlowCancelSocket as typeof WebSocket }).connect(
    agentSetupFor({ turn: { ...TURN, backchannel_max_ms: 0 }, voice: 'cedar' }),
    handlers,
  );
  t.teardown(() => conn.close());
  const server = await fake.waitForConnection();
  await eventually(() => server.sent.some((e) => e.type === 'session.updated'));
  conn.takeOver();
  await until(() => rec.audio.length === 5);
  playAll(conn, rec.marks);
  void server.calleeSpeaks({ durationMs: 100 });
  await until(() => rec.audio.length >= 5 + 20);
  const reply = server.responses[1]!;
  playAll(conn, rec.marks.slice(5, 15));
  void server.calleeSpeaks({ durationMs: 300 });
  await until(() => rec.interruptedAt.length === 1);
  const cutAt = rec.interruptedAt[0]!;
  await eventually(() => reply.status === 'cancelled');
  const started = server.sent.findLastIndex((e) => e.type === 'input_audio_buffer.speech_started');
  const late = server.sent.slice(started).filter((e) => e.type === 'response.output_audio.delta' && e.item_id === reply.itemId).length;
  t.true(late > 0, `${late} deltas of the cut item were sent after the cut`);
  await until(() => server.responses.length === 3 && rec.audio.length >= cutAt + 5, 4000);
  const after = rec.audio.slice(cutAt);
  t.deepEqual(after, fake.replyAudio.slice(0, after.length), 'after the clear only the next reply, from its start');
});
