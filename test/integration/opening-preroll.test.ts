/**
 * The agent's pre-roll (issue 23 §1, actors/call/call-media.ts): the agent is asked for its first
 * words AGENT_PREROLL_MS before the opening ends, and what it says is held until the opening's last
 * mark comes back, then sent at once. Wired as the call wires it: call-media with the media server,
 * the fake Twilio media stream playing in real time and echoing marks, the OpenAI Realtime bridge
 * and the strict fake Realtime server; the database is faked (call-media reads the call's row and
 * writes the compliance record through it).
 */
import test, { type ExecutionContext } from 'ava';
import { createCallMedia, playPrepared, stopOpening } from '../../actors/call/call-media.ts';
import { newCallLine, type CallDeps, type CallState } from '../../actors/call/call-state.ts';
import { composeOpening } from '../../actors/call/opening.ts';
import type { MediaSession } from '../../telephony/media.ts';
import { startMediaServer } from '../../telephony/media-server.ts';
import { toneFrames } from '../../telephony/mulaw.ts';
import { OpenAIRealtimeBridge } from '../../telephony/openai-realtime/openai-realtime-bridge.ts';
import type { BridgeConnection } from '../../telephony/speech-bridge.ts';
import { startFakeRealtime, type FakeRealtimeOptions } from '../fakes/openai-realtime.ts';
import { openMediaStream } from '../fakes/twilio-media-stream.ts';
import { agentSetupFor, eventually, quiet } from '../helpers/realtime.ts';

/** Each of the opening's five segments lasts this long: 1.2 s in all, so the pre-roll (600 ms) comes halfway. */
const SEGMENT_MS = 240;
const LAST_MARK = 'opening:4';

interface Heard {
  audio: string;
  at: number;
}

async function preroll(t: ExecutionContext, opts: { fake?: FakeRealtimeOptions; dtmf?: { atMs: number; digit: string }[] } = {}) {
  const fake = await startFakeRealtime({ greetingFrames: 50, replyFrames: 5, ...opts.fake });
  t.teardown(() => fake.close());
  const asked: { type: string; [k: string]: unknown }[] = [];
  const states = new Map<string, CallState>();
  const writes: { sql: string; params: unknown[] }[] = [];
  const pool = {
    async query(q: string | { text: string; values?: unknown[] }, params: unknown[] = []) {
      const sql = typeof q === 'string' ? q : q.text;
      writes.push({ sql, params: typeof q === 'string' ? params : (q.values ?? []) });
      if (/FROM calls/i.test(sql)) return { rows: [{ id: 'call-1', status: 'in_progress', customer_id: 'cust-1' }], rowCount: 1 };
      return { rows: [], rowCount: 0 };
    },
  };
  let media!: ReturnType<typeof createCallMedia>;
  const registry = {
    async ask(id: string, msg: { type: string; [k: string]: unknown }) {
      asked.push(msg);
      const state = states.get(id)!;
      if (msg.type === 'media_connected') states.set(id, await media.connectMedia(state, msg.session as MediaSession));
      else if (msg.type === 'bridge_connected') states.set(id, media.bridgeConnected(state, msg.connection as BridgeConnection));
      else if (msg.type === 'bridge_failed') media.bridgeFailed(state, msg.error as Error);
      return { ok: true };
    },
  };
  const bridge = new OpenAIRealtimeBridge({ apiKey: 'sk-test-fake', baseUrl: fake.url, log: quiet });
  const carrier = { startRecording: async () => {}, stopRecording: async () => {} };
  media = createCallMedia({
    pool,
    clock: { now: () => new Date() },
    log: quiet,
    config: { publicUrl: 'https://api.example' },
    streamToken: () => 'token-1',
    calls: () => registry,
    carriers: { test: carrier, live: carrier },
    bridges: { test: bridge, live: bridge },
  } as unknown as CallDeps);
  const opening = composeOpening({ registeredName: 'Bright Dental LLC', callbackNumber: '+12025550188', to: '+12125550100', language: 'en-US' });
  const segments = opening.segments.map((s, i) => ({ ...s, frames: toneFrames(SEGMENT_MS, 300 + 100 * i), durationMs: SEGMENT_MS }));
  const openingFrames = new Set(segments.flatMap((s) => s.frames));
  const line = { ...newCallLine(agentSetupFor({ greeting: opening.text }), { ...opening, segments, sha256: 'ab'.repeat(32) }), carrierCallId: 'CA1' };
  states.set('call-1', { id: 'call-1', accountId: 'acct-1', mode: 'test', customerId: 'cust-1', media: null, bridge: null, limitTimer: null, line });
  // The agent connects while the phone rings.
  media.openBridge(states.get('call-1')!, line);
  await eventually(() => asked.some((m) => m.type === 'bridge_connected'), 3000);

  // When each mark came back to our server, and what the agent had said by then.
  const marksBack = new Map<string, { at: number; responseAsked: boolean; agentFramesSent: number }>();
  const server = await startMediaServer({
    host: '127.0.0.1',
    port: 0,
    log: quiet,
    onSession: (s) => {
      s.onMark((name) => marksBack.set(name, { at: performance.now(), responseAsked: fake.received.some((e) => e.type === 'response.create'), agentFramesSent: fake.latest().responses[0]?.framesSent ?? 0 }));
      void registry.ask(s.callId, { type: 'media_connected', session: s });
    },
  });
  t.teardown(() => server.close());
  const heard: Heard[] = [];
  const stream = openMediaStream({
    url: `ws://127.0.0.1:${server.port}/media`,
    accountSid: 'AC00000000000000000000000000000001',
    callSid: 'CA1',
    customParameters: { call_id: 'call-1', stream_token: 'token-1' },
    bidirectional: true,
    playbackSpeed: 1,
    calleeAudio: [],
    onAgentAudio: (mulaw) => heard.push({ audio: mulaw.toString('base64'), at: performance.now() }),
    onEnd: () => {},
    dtmf: opts.dtmf,
  });
  t.teardown(() => stream.stop());
  const isAgent = (h: Heard) => !openingFrames.has(h.audio) && h.audio !== VOICEMAIL_FRAME;
  /** The agent's words are held: asked for, audio sent by the server, the opening not yet played. */
  const held = () => eventually(() => (fake.latest().responses[0]?.framesSent ?? 0) > 0, 3000).then(() => t.false(marksBack.has(LAST_MARK), 'the opening still plays'));
  const openingWrite = () => {
    const write = writes.find((w) => /SET opening =/.test(w.sql));
    return write ? (JSON.parse(write.params[1] as string) as { segments: { played: boolean }[] }).segments.map((s) => s.played) : null;
  };
  return { fake, stream, heard, marksBack, asked, isAgent, held, openingWrite, state: () => states.get('call-1')!, line };
}

const VOICEMAIL_FRAME = toneFrames(20, 1234)[0]!;
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('the agent is asked 600 ms before the opening ends; its words reach the carrier only after the opening’s last mark came back, and at once then, all of them in order', async (t) => {
  const c = await preroll(t);
  await c.held();
  await eventually(() => c.heard.some(c.isAgent), 5000);
  const last = c.marksBack.get(LAST_MARK)!;
  t.true(last.responseAsked, 'the response was asked for before the opening ended');
  t.is(last.agentFramesSent, 50, 'and the model had answered: its words were held');
  const firstAgent = c.heard.findIndex(c.isAgent);
  t.true(c.heard[firstAgent]!.at >= last.at, 'nothing of the agent before the opening has played');
  t.true(c.heard[firstAgent]!.at - last.at < 100, `then at once (${(c.heard[firstAgent]!.at - last.at).toFixed(1)} ms after the last mark)`);
  t.false(c.heard.slice(firstAgent).some((h) => !c.isAgent(h)), 'the whole opening before the agent');
  await eventually(() => c.heard.filter(c.isAgent).length === 50, 3000);
  t.deepEqual(c.heard.filter(c.isAgent).map((h) => h.audio), c.fake.greetingAudio);
  t.is(c.stream.record.clears, 0);
  t.deepEqual(c.openingWrite(), [true, true, true, true, true], 'the opening recorded as played whole');
  t.deepEqual(c.fake.violations, []);
});

test('the callee speaking during the hold drops the held words; the opening is not cleared and plays to its end; the agent answers them afterwards', async (t) => {
  const c = await preroll(t);
  await c.held();
  await c.fake.calleeSpeaks({ durationMs: 1500 });
  await eventually(() => c.heard.filter(c.isAgent).length === 5, 5000);
  t.is(c.stream.record.clears, 0, 'the carrier was never cleared: the opening was not cut');
  t.deepEqual(c.openingWrite(), [true, true, true, true, true], 'every segment played to its end');
  const heardAgent = c.heard.filter(c.isAgent).map((h) => h.audio);
  t.deepEqual(heardAgent, c.fake.replyAudio, 'not one word of the held response; the answer to the callee');
  t.true(c.heard.findIndex(c.isAgent) > c.heard.findLastIndex((h) => !c.isAgent(h)), 'after the opening');
  const first = c.fake.latest().responses[0]!;
  t.deepEqual(c.fake.truncates.map((x) => ({ item_id: x.item_id, audio_end_ms: x.audio_end_ms, accepted: x.accepted })), [{ item_id: first.itemId!, audio_end_ms: 0, accepted: true }], 'cut where the callee heard it: nothing');
  t.deepEqual(c.fake.violations, []);
});

test('a machine verdict during the hold: no frame of the agent ever reaches the carrier, even from the connection still open; the voicemail message plays', async (t) => {
  const c = await preroll(t);
  await c.held();
  stopOpening(c.state());
  // The agent's connection is left open here: call-media alone keeps its words from the machine.
  await c.fake.calleeSpeaks({ durationMs: 200 }); // a backchannel: the bridge plays its words again
  const played = playPrepared(c.state(), [VOICEMAIL_FRAME, VOICEMAIL_FRAME], 'voicemail');
  await played;
  await wait(1200);
  t.deepEqual(c.heard.filter(c.isAgent), [], 'no agent frame');
  t.true(c.heard.some((h) => h.audio === VOICEMAIL_FRAME), 'the voicemail message played');
  t.true(c.openingWrite()!.includes(false), 'the opening was stopped');
});

test('a 9 pressed during the hold: the opt-out is taken, and no frame of the agent ever reaches the carrier', async (t) => {
  // The pre-roll comes at 600 ms, the model answers at once; the 9 at 800 ms, before the opening ends at 1,200.
  const c = await preroll(t, { dtmf: [{ atMs: 800, digit: '9' }] });
  await c.held();
  await eventually(() => c.asked.some((m) => m.type === 'opted_out'), 3000);
  await wait(1500);
  t.deepEqual(c.heard.filter(c.isAgent), [], 'no agent frame');
  t.is(c.stream.record.clears, 1, 'the opening stopped');
  t.false(c.openingWrite()!.every(Boolean));
});

test('a barge-in shortly after the agent starts: the item is cut at what the callee heard from the agent’s real start, not from when its words were given and held', async (t) => {
  const c = await preroll(t, { fake: { greetingFrames: 150, script: 'greet' } });
  await c.held();
  await eventually(() => c.heard.some(c.isAgent), 5000);
  const startedAt = c.heard.find(c.isAgent)!.at;
  await wait(400);
  const spokeAfter = performance.now() - startedAt;
  await c.fake.calleeSpeaks({ durationMs: 1500 });
  await eventually(() => c.fake.truncates.length === 1, 5000);
  const cut = c.fake.truncates[0]!;
  t.is(cut.item_id, c.fake.latest().responses[0]!.itemId!);
  t.true(cut.accepted);
  // The words were held ~600 ms: counted from when they were given, the cut would be ~1,000 ms.
  t.true(cut.audio_end_ms >= spokeAfter - 150 && cut.audio_end_ms <= spokeAfter + 150, `cut at ${cut.audio_end_ms} ms, the callee spoke ${spokeAfter.toFixed(0)} ms after the agent started`);
  t.is(c.stream.record.clears, 1, 'the agent (not the opening) was cleared');
  t.deepEqual(c.fake.violations, []);
});
