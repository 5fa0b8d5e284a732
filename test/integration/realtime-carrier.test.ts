/**
 * Barge-in as the fake carrier hears it (issue 23 §2): the media server, the OpenAI Realtime
 * bridge and the fake Realtime server, wired as actors/call/call-media.ts wires them, with the
 * fake Twilio media stream playing the agent in real time and echoing marks. The agent's words
 * stream in while the callee talks over them: after the carrier's `clear`, not one frame of the
 * interrupted item reaches it; the item is truncated at what the carrier had played.
 */
import test from 'ava';
import type { MediaSession } from '../../telephony/media.ts';
import { startMediaServer } from '../../telephony/media-server.ts';
import { OpenAIRealtimeBridge } from '../../telephony/openai-realtime/openai-realtime-bridge.ts';
import { startFakeRealtime } from '../fakes/openai-realtime.ts';
import { openMediaStream } from '../fakes/twilio-media-stream.ts';
import { agentSetupFor, eventually, quiet } from '../helpers/realtime.ts';

test('after the carrier’s clear, no frame of the interrupted item reaches it; the cut is where the carrier’s marks say playback was', async (t) => {
  // 100 frames (2 s) streamed in real time; the callee talks over them after 400 ms, for 1.5 s.
  const fake = await startFakeRealtime({ script: 'barge_in', greetingFrames: 100, frameIntervalMs: 20, replyFrames: 5, speechAfterAppends: 20, calleeSpeechMs: 1500 });
  t.teardown(() => fake.close());
  let onSession!: (s: MediaSession) => void;
  const gotSession = new Promise<MediaSession>((resolve) => (onSession = resolve));
  const server = await startMediaServer({ host: '127.0.0.1', port: 0, log: quiet, onSession: (s) => onSession(s) });
  t.teardown(() => server.close());

  // What the carrier receives: each agent frame, and whether it came after the clear.
  const heard: { audio: string; afterClear: boolean }[] = [];
  const stream = openMediaStream({
    url: `ws://127.0.0.1:${server.port}/media`,
    accountSid: 'AC00000000000000000000000000000001',
    callSid: 'CA00000000000000000000000000000001',
    customParameters: { call_id: 'call_carrier' },
    bidirectional: true,
    playbackSpeed: 1,
    calleeAudio: [],
    onAgentAudio: (mulaw) => heard.push({ audio: mulaw.toString('base64'), afterClear: stream.record.clears > 0 }),
    onEnd: () => {},
  });
  const session = await gotSession;

  const conn = await new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet }).connect(agentSetupFor({ turn: { silence_ms: 200, threshold: 0.5, prefix_padding_ms: 300, backchannel_max_ms: 300 } }), {
    onAudio: (payload) => session.sendAudio(payload),
    onMark: (name: string) => session.sendMark(name),
    onInterrupted: () => session.clear(),
    onToolCall: async () => ({ ok: true }),
    onTranscript: () => {},
    onError: (e) => t.fail(e.message),
  });
  t.teardown(() => conn.close());
  session.onAudio((payload, timestampMs) => conn.sendAudio(payload, timestampMs));
  session.onMark((name) => conn.markPlayed(name));
  conn.takeOver();

  await eventually(() => fake.truncates.length === 1, 5000);
  const cutItem = fake.latest().responses[0].itemId!;
  const truncate = fake.truncates[0];
  t.is(truncate.item_id, cutItem);
  t.true(truncate.accepted);
  // The carrier plays in real time: the cut is inside what it had received before the clear, not at its start.
  const beforeClear = heard.filter((h) => !h.afterClear).length;
  t.true(truncate.audio_end_ms > 0 && truncate.audio_end_ms <= beforeClear * 20, `cut at ${truncate.audio_end_ms} ms of ${beforeClear * 20} ms received`);
  t.is(truncate.audio_end_ms % 20, 0, 'at a mark the carrier returned (each 20 ms frame has one)');
  t.deepEqual(fake.cancels, [{ connection: 0, cancelled: fake.latest().responses[0].id }], 'the response was still streaming');

  await eventually(() => fake.latest().responses.length === 2 && heard.filter((h) => h.afterClear).length === 5, 5000);
  const item = new Set(fake.greetingAudio);
  const afterClear = heard.filter((h) => h.afterClear);
  t.deepEqual(afterClear.filter((h) => item.has(h.audio)), [], 'no frame of the interrupted item after the clear');
  t.deepEqual(afterClear.map((h) => h.audio), fake.replyAudio, 'then the answer to the callee');
  t.is(stream.record.clears, 1);
  t.true(heard.filter((h) => !h.afterClear).length < 100, 'the carrier never got the whole item');
  stream.stop();
  t.deepEqual(stream.record.protocolErrors, []);
  t.deepEqual(fake.violations, []);
});
