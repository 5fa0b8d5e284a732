/**
 * The fake OpenAI Realtime server (test/fakes/openai-realtime.ts) behaves as the public protocol
 * says a real one does, where the bridge's tests depend on it: session.created first, server VAD
 * answering and cancelling by itself unless told not to, refusals of colliding responses, of
 * cancels with nothing to cancel and of truncates past the audio sent.
 */
import test from 'ava';
import WebSocket from 'ws';
import { SERVER_VAD_DEFAULTS, startFakeRealtime, type FakeRealtimeOptions } from '../fakes/openai-realtime.ts';
import { eventually } from '../helpers/realtime.ts';

async function client(t: { teardown(fn: () => unknown): void }, options: FakeRealtimeOptions = {}) {
  const fake = await startFakeRealtime(options);
  t.teardown(() => fake.close());
  const started = performance.now();
  const ws = new WebSocket(`${fake.url}/realtime?model=gpt-realtime`, { headers: { Authorization: 'Bearer sk-test-fake' } });
  const events: Record<string, any>[] = [];
  ws.on('message', (d) => events.push(JSON.parse(d.toString())));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const openedAfterMs = performance.now() - started;
  t.teardown(() => ws.terminate());
  const send = (e: Record<string, unknown>) => ws.send(JSON.stringify(e));
  const next = async (type: string, after = 0) => {
    await eventually(() => events.slice(after).some((e) => e.type === type));
    return events.slice(after).find((e) => e.type === type)!;
  };
  return { fake, ws, events, send, next, openedAfterMs };
}

const pcmu = { audio: { input: { format: { type: 'audio/pcmu' } }, output: { format: { type: 'audio/pcmu' } } } };

test('session.created comes first, unasked; session.update is answered with session.updated', async (t) => {
  const { events, send, next } = await client(t);
  await eventually(() => events.length === 1);
  t.is(events[0].type, 'session.created');
  t.deepEqual(events[0].session.audio.input.turn_detection, SERVER_VAD_DEFAULTS);
  send({ type: 'session.update', session: { type: 'realtime', ...pcmu, instructions: 'Be brief.' } });
  const updated = await next('session.updated');
  t.is(updated.session.instructions, 'Be brief.');
  t.is(updated.session.audio.input.format.type, 'audio/pcmu');
  t.deepEqual(events.map((e) => e.type), ['session.created', 'session.updated'], 'one session.created only');
});

test('server VAD with its defaults cancels the running response when the callee speaks and makes the next one itself', async (t) => {
  const { fake, events, send, next } = await client(t, { greetingFrames: 50, frameIntervalMs: 10 });
  send({ type: 'session.update', session: { type: 'realtime', ...pcmu, audio: { ...pcmu.audio, input: { ...pcmu.audio.input, turn_detection: { type: 'server_vad', silence_duration_ms: 200 } } } } });
  await next('session.updated');
  send({ type: 'response.create' });
  await next('response.output_audio.delta');
  const speech = fake.latest().calleeSpeaks({ durationMs: 100 });
  const started = await next('input_audio_buffer.speech_started');
  const cancelled = await next('response.done');
  t.like(cancelled.response, { status: 'cancelled', status_details: { type: 'cancelled', reason: 'turn_detected' } });
  t.true(events.indexOf(started) < events.indexOf(cancelled));
  await speech;
  const at = events.indexOf(started);
  await next('response.created', at);
  const order = events.slice(at).map((e) => e.type).filter((x) => !x.startsWith('response.output') && !x.startsWith('conversation.item'));
  t.deepEqual(order.slice(0, 5), ['input_audio_buffer.speech_started', 'response.done', 'input_audio_buffer.speech_stopped', 'input_audio_buffer.committed', 'response.created']);
  t.deepEqual(fake.latest().responses.map((r) => [r.by, r.status]).slice(0, 2), [['client', 'cancelled'], ['server_vad', 'in_progress']]);
  t.deepEqual(fake.cancels, [], 'the server cancelled, the client did not');
});

test('create_response and interrupt_response off: speech is reported, nothing is answered or cancelled', async (t) => {
  const { fake, events, send, next } = await client(t, { greetingFrames: 20, frameIntervalMs: 10 });
  send({ type: 'session.update', session: { type: 'realtime', audio: { input: { turn_detection: { type: 'server_vad', silence_duration_ms: 200, create_response: false, interrupt_response: false } } } } });
  await next('session.updated');
  send({ type: 'response.create' });
  await next('response.output_audio.delta');
  await fake.latest().calleeSpeaks({ durationMs: 50 });
  await next('response.done');
  t.is(fake.latest().responses.length, 1);
  t.is(fake.latest().responses[0].status, 'completed');
  t.is(events.filter((e) => e.type === 'response.output_audio.delta').length, 20, 'the response played on through the speech');
});

test('a response.create during an active response is refused; so is a cancel with none active', async (t) => {
  const { fake, events, send, next } = await client(t, { greetingFrames: 10, firstAudioDelayMs: 100 });
  send({ type: 'response.create' });
  await next('response.created');
  send({ type: 'response.create', event_id: 'evt_twice' });
  const refused = await next('error');
  t.like(refused.error, { type: 'invalid_request_error', code: 'conversation_already_has_active_response', event_id: 'evt_twice' });
  await next('response.done');
  const after = events.length;
  send({ type: 'response.cancel' });
  const none = await next('error', after);
  t.is(none.error.code, 'response_cancel_not_active');
  t.deepEqual(fake.cancels, [{ connection: 0, cancelled: null }]);
  t.is(fake.latest().responses.length, 1);
});

test('truncate: past the audio sent, of an unknown item or of a non-assistant item is refused; within it is truncated', async (t) => {
  const { fake, events, send, next } = await client(t, { greetingFrames: 10 }); // 200 ms sent
  send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', id: 'item_user', content: [{ type: 'input_text', text: 'Hi' }] } });
  send({ type: 'response.create' });
  const done = await next('response.done');
  const itemId = events.find((e) => e.type === 'response.output_audio.delta')!.item_id;
  t.is(fake.latest().audioSentMs(itemId), 200);
  const errorsBefore = () => events.filter((e) => e.type === 'error').length;
  send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: 201 });
  send({ type: 'conversation.item.truncate', item_id: 'item_nobody', content_index: 0, audio_end_ms: 0 });
  send({ type: 'conversation.item.truncate', item_id: 'item_user', content_index: 0, audio_end_ms: 0 });
  await eventually(() => errorsBefore() === 3);
  t.regex(events.filter((e) => e.type === 'error')[0].error.message, /Audio content of 200ms is already shorter than 201ms/);
  t.false(events.some((e) => e.type === 'conversation.item.truncated'));
  send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: 120 });
  const truncated = await next('conversation.item.truncated', events.indexOf(done));
  t.like(truncated, { item_id: itemId, content_index: 0, audio_end_ms: 120 });
  t.deepEqual(
    fake.truncates.map((x) => [x.item_id, x.audio_end_ms, x.accepted]),
    [
      [itemId, 201, false],
      ['item_nobody', 0, false],
      ['item_user', 0, false],
      [itemId, 120, true],
    ],
  );
});

test('connectDelayMs holds the socket; firstAudioDelayMs holds the first delta after response.created', async (t) => {
  const { events, send, next, openedAfterMs } = await client(t, { connectDelayMs: 150, firstAudioDelayMs: 120 });
  t.true(openedAfterMs >= 145, `opened after ${Math.round(openedAfterMs)} ms`);
  send({ type: 'response.create' });
  await next('response.created');
  const created = performance.now();
  await next('response.output_audio.delta');
  t.true(performance.now() - created >= 100, 'first audio after its delay');
  t.is(events[0].type, 'session.created');
});
