import test from 'ava';
import { createCallMedia, playPrepared, stopOpening } from '../../actors/call/call-media.ts';
import { closeLine, newCallLine, type CallDeps, type CallLine, type CallState } from '../../actors/call/call-state.ts';
import { composeOpening } from '../../actors/call/opening.ts';
import { createLogger } from '../../runtime/logger.ts';
import type { MediaSession } from '../../telephony/media.ts';
import type { BridgeConnection, TakeOverOptions } from '../../telephony/speech-bridge.ts';
import { toneFrames } from '../../telephony/mulaw.ts';

/**
 * The call's side of the opening (actors/call/call-media.ts) with everything around it faked: a
 * database that records each query, a media session that records what is sent, a carrier, an agent.
 * Ordering is asserted, never timing.
 */

type Event = string;

function harness() {
  const events: Event[] = [];
  const asked: Record<string, unknown>[] = [];
  const queries: { sql: string; params: unknown[] }[] = [];
  const pool = {
    async query(q: string | { text: string; values?: unknown[] }, params: unknown[] = []) {
      const sql = typeof q === 'string' ? q : q.text;
      events.push('db');
      queries.push({ sql, params: typeof q === 'string' ? params : (q.values ?? []) });
      if (/FROM calls/i.test(sql)) return { rows: [{ id: 'call-1', status: 'in_progress', customer_id: 'cust-1' }], rowCount: 1 };
      return { rows: [], rowCount: 0 };
    },
  };
  const carrier = {
    async startRecording(carrierCallId: string, url: string) {
      events.push(`record:${carrierCallId}:${url}`);
    },
  };
  const deps = {
    pool,
    clock: { now: () => new Date('2026-12-01T15:00:00Z') },
    log: createLogger('silent'),
    config: { publicUrl: 'https://api.example' },
    streamToken: () => 'token-1',
    calls: () => ({ ask: async (_id: string, msg: Record<string, unknown>) => (asked.push(msg), events.push(`ask:${msg.type}`), { ok: true }) }),
    carriers: { test: carrier, live: carrier },
  } as unknown as CallDeps;
  const media = createCallMedia(deps);
  const handlers = { mark: [] as ((n: string) => void)[], dtmf: [] as ((d: string) => void)[], audio: [] as ((p: string, ts: number) => void)[] };
  const session: MediaSession = {
    streamSid: 'MZ1',
    callId: 'call-1',
    streamToken: 'token-1',
    sendAudio: () => void events.push('audio'),
    sendMark: (name) => void events.push(`mark:${name}`),
    clear: () => void events.push('clear'),
    close: () => void events.push('close'),
    onAudio: (h) => void handlers.audio.push(h),
    onMark: (h) => void handlers.mark.push(h),
    onDtmf: (h) => void handlers.dtmf.push(h),
    onStop: () => {},
  };
  const takeOvers: (TakeOverOptions | undefined)[] = [];
  const bridge: BridgeConnection = {
    takeOver: (options) => void (events.push('takeOver'), takeOvers.push(options)),
    sendAudio: () => void events.push('callee-audio'),
    markPlayed: (n) => void events.push(`bridge-mark:${n}`),
    close: () => void events.push('bridge-close'),
  };
  const opening = composeOpening({ registeredName: 'Bright Dental LLC', callbackNumber: '+12025550188', to: '+12125550100', language: 'en-US' });
  const line: CallLine = {
    ...newCallLine(
      { instructions: '', businessName: 'Bright Smile Dental', greeting: opening.text, tools: [], language: 'en-US', to: '+12125550100', timezone: 'America/New_York' },
      { ...opening, segments: opening.segments.map((s) => ({ ...s, frames: toneFrames(60, 440), durationMs: 60 })), sha256: 'ab'.repeat(32) },
    ),
    carrierCallId: 'CA1',
    bridge,
    bridgeStatus: 'connected',
    bridgeAttempts: 1,
  };
  const state: CallState = { id: 'call-1', accountId: 'acct-1', mode: 'test', customerId: 'cust-1', media: null, bridge, limitTimer: null, line };
  const mark = (name: string) => handlers.mark.forEach((h) => h(name));
  const dtmf = (digit: string) => handlers.dtmf.forEach((h) => h(digit));
  const recorded = () => queries.filter((q) => /SET opening =/.test(q.sql));
  return { events, asked, queries, media, session, bridge, line, state, opening, mark, dtmf, recorded, handlers, takeOvers };
}

test('the first frame of the opening is sent before any database read after the stream starts, every segment with its mark', async (t) => {
  const h = harness();
  const connected = h.media.connectMedia(h.state, h.session);
  // Synchronously, before connectMedia awaits anything: the opening's first 100 ms (here each
  // segment is 3 frames of 20 ms: the identification, its mark and the offer's first two frames).
  const sentBeforeAwait = [...h.events];
  await connected;
  t.deepEqual(sentBeforeAwait.slice(0, 5), ['audio', 'audio', 'audio', 'mark:opening:0', 'audio'], 'the opening starts at once, before any read');
  t.is(sentBeforeAwait.filter((e) => e === 'audio').length, 5, '100 ms of it');
  t.is(h.events.indexOf('db'), 6, 'the call row is read only after');
  // The rest follows on a timer (500 ms ahead of play-out: here all of it), every segment with its mark, in order.
  await new Promise((r) => setTimeout(r, 80));
  t.deepEqual(
    h.events.filter((e) => e.startsWith('mark:')),
    h.opening.segments.map((_, i) => `mark:opening:${i}`),
  );
});

test('a stream without its call’s token is closed and hears nothing', async (t) => {
  const h = harness();
  await h.media.connectMedia(h.state, { ...h.session, streamToken: 'forged' });
  t.deepEqual(h.events, ['close']);
});

test('recording starts only after the notice’s mark; the agent is asked to speak 600 ms before the opening ends (at once, the opening being shorter), told its words start at the opening’s end; the opening played is recorded', async (t) => {
  const h = harness();
  await h.media.connectMedia(h.state, h.session);
  const kinds = h.opening.segments.map((s) => s.kind);
  t.deepEqual(kinds, ['identification', 'opt_out', 'notice', 'callback', 'question']);
  h.handlers.audio.forEach((a) => a('AAAA', 0));
  t.true(h.events.includes('callee-audio'), 'the callee is heard by the agent from the first frame');
  h.mark('opening:0');
  h.mark('opening:1');
  // The start is asynchronous (it reads the objection first): let it run, so a start at an earlier mark would show.
  await new Promise((r) => setTimeout(r, 10));
  t.false(h.events.some((e) => e.startsWith('record:')), 'not recorded before the notice has played');
  h.mark('opening:2');
  await new Promise((r) => setImmediate(r));
  t.true(h.events.includes('record:CA1:https://api.example/telephony/twilio/recording?call_id=call-1'));
  h.mark('opening:3');
  // The opening (5 × 60 ms) is shorter than the pre-roll: the agent was asked at once, its words
  // start once the 300 ms of the opening have played (the carrier's clock, no callee frame yet: 0 at the start).
  t.is(h.events.filter((e) => e === 'takeOver').length, 1, 'before the last mark came back');
  const startsAt = h.takeOvers[0]?.startsAtMediaMs ?? -1;
  t.true(startsAt > 0 && startsAt <= 300, `words held until the opening's end (${startsAt} ms)`);
  h.mark('opening:4');
  t.is(h.events.filter((e) => e === 'takeOver').length, 1, 'once');
  await new Promise((r) => setImmediate(r));
  const [write] = h.recorded();
  const written = JSON.parse(write!.params[1] as string);
  t.deepEqual(written.segments.map((s: { played: boolean }) => s.played), [true, true, true, true, true]);
  t.is(write!.params[5], h.opening.text, 'identification keeps the opening text');
  t.is(write!.params[6], true, 'opt_out_offered: the opt-out segment was played');
  t.like(h.asked.find((m) => m.type === 'transcript_heard'), { role: 'agent', text: h.opening.text });
  // The agent's own marks go to it.
  h.mark('agent-7');
  t.true(h.events.includes('bridge-mark:agent-7'));
});

test('callee speech never cuts the opening: only the marks end it', async (t) => {
  const h = harness();
  await h.media.connectMedia(h.state, h.session);
  for (let i = 0; i < 50; i++) h.handlers.audio.forEach((a) => a('AAAA', i * 20));
  t.false(h.events.includes('clear'));
  t.false(h.events.includes('takeOver'));
});

test('a 9 pressed during the opening: the opening is cleared, the agent closed, the opt-out sent to the call, and what played is recorded', async (t) => {
  const h = harness();
  await h.media.connectMedia(h.state, h.session);
  h.mark('opening:0');
  h.dtmf('5');
  t.false(h.events.includes('clear'), 'only 9 opts out');
  h.dtmf('9');
  t.true(h.events.includes('clear'));
  t.true(h.events.includes('bridge-close'));
  t.like(h.asked.find((m) => m.type === 'opted_out'), { via: 'dtmf' });
  // Marks of the cleared audio come back but were not played; the agent never takes over.
  h.mark('opening:1');
  h.mark('opening:4');
  t.false(h.events.includes('takeOver'));
  await new Promise((r) => setImmediate(r));
  const written = JSON.parse(h.recorded()[0]!.params[1] as string);
  t.deepEqual(written.segments.map((s: { played: boolean }) => s.played), [true, false, false, false, false]);
  t.is(h.recorded()[0]!.params[6], false, 'the opt-out segment was not played to its end');
});

test('an agent still connecting when the opening ends takes over as soon as it connects; a failed pre-open connects again', async (t) => {
  const h = harness();
  h.line.bridge = null;
  h.line.bridgeStatus = 'connecting';
  await h.media.connectMedia({ ...h.state, bridge: null }, h.session);
  h.opening.segments.forEach((_, i) => h.mark(`opening:${i}`));
  t.false(h.events.includes('takeOver'));
  h.media.bridgeConnected(h.state, h.bridge);
  t.is(h.events.filter((e) => e === 'takeOver').length, 1);
  // The pre-open failed: the opening's end connects again (bridge_failed says not to hang up).
  const f = harness();
  f.line.bridge = null;
  f.line.bridgeStatus = 'connecting';
  t.false(f.media.bridgeFailed(f.state, new Error('refused')), 'a failed pre-open does not end the call');
  t.is(f.line.bridgeStatus as string, 'failed');
});

test('a call never answered closes the agent pre-opened for it, and one still connecting is closed when it connects', (t) => {
  const h = harness();
  closeLine(h.line);
  t.true(h.events.includes('bridge-close'));
  const late: string[] = [];
  h.media.bridgeConnected(h.state, { ...h.bridge, close: () => void late.push('closed'), takeOver: () => void late.push('takeOver') });
  t.deepEqual(late, ['closed']);
});

test('stopOpening clears the rest and the agent does not take over; playPrepared resolves on its mark', async (t) => {
  const h = harness();
  await h.media.connectMedia(h.state, h.session);
  h.mark('opening:0');
  stopOpening(h.state);
  t.true(h.events.includes('clear'));
  h.mark('opening:4');
  t.false(h.events.includes('takeOver'));
  let done = false;
  const played = playPrepared(h.state, toneFrames(40, 300), 'voicemail').then(() => (done = true));
  t.true(h.events.includes('mark:voicemail'));
  await new Promise((r) => setImmediate(r));
  t.false(done);
  h.mark('voicemail');
  await played;
  t.true(done);
});

test('a machine stops the opening: what was played is written at once, so the transcript has it before the voicemail message', async (t) => {
  const h = harness();
  await h.media.connectMedia(h.state, h.session);
  h.mark('opening:0');
  h.mark('opening:1');
  stopOpening(h.state);
  // Written now, not when the stream stops (after the message left on the machine).
  t.deepEqual(
    h.asked.filter((m) => m.type === 'transcript_heard'),
    [{ type: 'transcript_heard', role: 'agent', text: 'Hello, this call is on behalf of Bright Dental LLC. To stop these calls, press 9 or say stop.' }],
  );
  await new Promise((r) => setImmediate(r));
  t.is(h.recorded().length, 1);
  // The stream's end writes nothing more.
  await h.media.mediaStopped({ ...h.state, media: h.session });
  t.is(h.asked.filter((m) => m.type === 'transcript_heard').length, 1);
});

test('the opt-out offer is sent straight after the identification: nothing between them, so it starts 0 ms (within 2,000 ms) after the identification ends (47 CFR 64.1200(b)(3))', async (t) => {
  const h = harness();
  // Each segment its own tone, so the frames show which segment they belong to.
  h.line.opening.segments.forEach((s, i) => (s.frames = toneFrames(60, 300 + 100 * i)));
  const sent: string[] = [];
  await h.media.connectMedia(h.state, { ...h.session, sendAudio: (p) => void sent.push(p), sendMark: (n) => void sent.push(`mark:${n}`) });
  await new Promise((r) => setTimeout(r, 80)); // the first top-up (40 ms after the start) sends the rest
  const [identification, optOut] = h.line.opening.segments;
  t.is(identification!.kind, 'identification');
  t.is(optOut!.kind, 'opt_out');
  const idEnd = sent.indexOf('mark:opening:0');
  const offerEnd = sent.indexOf('mark:opening:1');
  t.deepEqual(sent.slice(0, idEnd), identification!.frames, 'the identification first');
  const between = sent.slice(idEnd + 1, offerEnd);
  t.deepEqual(between, optOut!.frames, 'then at once the offer, and nothing else');
});
