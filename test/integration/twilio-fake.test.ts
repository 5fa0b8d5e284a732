/**
 * The fake Twilio follows Twilio's public documents where issue 23 needs it (cited in
 * test/fakes/twilio.ts): the ring `Timeout`, asynchronous answering-machine detection with its
 * signed AsyncAmdStatusCallback, no verdict without MachineDetection, a machine's greeting and
 * beep in the callee audio, `dtmf` messages reaching our media server's MediaSession.onDtmf, and
 * a call's recording started and stopped through Calls/{sid}/Recordings. Driven through the real
 * TwilioCarrier and the real media server.
 */
import test, { type ExecutionContext } from 'ava';
import { createLogger } from '../../runtime/logger.ts';
import type { DialRequest } from '../../telephony/carrier.ts';
import type { MediaSession } from '../../telephony/media.ts';
import { startMediaServer } from '../../telephony/media-server.ts';
import { toneFrames } from '../../telephony/mulaw.ts';
import { parseAmdCallback, parseStatusCallback, verifyTwilioSignature } from '../../telephony/twilio/callbacks.ts';
import { TwilioCarrier } from '../../telephony/twilio/twilio-carrier.ts';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio.ts';
import { startCallbackServer } from '../helpers/twilio-callbacks.ts';

const ACCOUNT_SID = 'AC' + 'f'.repeat(32);
const AUTH_TOKEN = 'fake-twilio-tests-auth-token';
const log = createLogger('silent');

interface Stream {
  session: MediaSession;
  at: number;
  audio: string[];
  digits: string[];
}

/** Our real media server; each session records what the callee sent. */
async function mediaServer(t: ExecutionContext, onStream: (s: Stream) => void = () => {}) {
  const streams: Stream[] = [];
  const server = await startMediaServer({
    host: '127.0.0.1',
    port: 0,
    log,
    onSession: (session) => {
      const s: Stream = { session, at: Date.now(), audio: [], digits: [] };
      streams.push(s);
      session.onAudio((payload) => s.audio.push(payload));
      session.onDtmf((digit) => s.digits.push(digit));
      onStream(s);
    },
  });
  t.teardown(() => server.close());
  return { url: `ws://127.0.0.1:${server.port}/media`, streams };
}

async function fake(t: ExecutionContext): Promise<FakeTwilio> {
  const f = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, playbackSpeed: Infinity, timeScale: 0.01 });
  t.teardown(() => f.close());
  return f;
}

const carrierFor = (f: FakeTwilio) => new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: f.baseUrl, log });

function request(hooks: string, mediaUrl: string, extra: Partial<DialRequest> = {}): DialRequest {
  return {
    callId: 'call_1',
    to: '+12025550100',
    from: '+12025550188',
    mediaUrl,
    statusCallbackUrl: `${hooks}/status?call_id=call_1`,
    recordingCallbackUrl: `${hooks}/recording?call_id=call_1`,
    timeLimitSeconds: 1200,
    ringTimeoutSeconds: 30,
    ...extra,
  };
}

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('the ring Timeout is honoured: a callee who would pick up after it never does, the call ends no-answer at the Timeout (scaled); one who picks up before it is answered', async (t) => {
  const f = await fake(t);
  const hooks = await startCallbackServer(t);
  const media = await mediaServer(t);
  const carrier = carrierFor(f);
  f.nextCall({ ringMs: 10_000 });
  const started = Date.now();
  const late = await carrier.dial(request(hooks.baseUrl, media.url, { ringTimeoutSeconds: 20 }));
  await f.call(late.carrierCallId)!.done;
  const took = Date.now() - started;
  t.true(took >= 200 && took < 2_000, `rang ${took} ms for a 20 s Timeout at 0.01`);
  const call = f.call(late.carrierCallId)!;
  t.like(call, { status: 'no-answer', endReason: 'unanswered', media: null });
  t.deepEqual(call.form.Timeout, ['20']);
  const statuses = hooks.received.filter((r) => r.form.CallSid === late.carrierCallId).map((r) => parseStatusCallback('call_1', r.form));
  t.deepEqual(statuses.map((s) => [s.status, s.durationSeconds]), [['initiated', undefined], ['ringing', undefined], ['no-answer', 0]]);

  f.nextCall({ ringMs: 100, calleeHangupAfterMs: 100 });
  const early = await carrier.dial(request(hooks.baseUrl, media.url, { ringTimeoutSeconds: 20 }));
  await f.call(early.carrierCallId)!.done;
  t.is(f.call(early.carrierCallId)!.endReason, 'callee_hangup');
});

test('asynchronous AMD: the stream connects at once, the signed AsyncAmdStatusCallback follows at the greeting’s end with AnsweredBy and MachineDetectionDuration; the callee audio is the greeting then the beep', async (t) => {
  const f = await fake(t);
  const hooks = await startCallbackServer(t);
  const media = await mediaServer(t);
  const carrier = carrierFor(f);
  f.nextCall({ answeredBy: 'machine_end_beep', greetingMs: 400 });
  const amdUrl = `${hooks.baseUrl}/amd?call_id=call_1`;
  const { carrierCallId } = await carrier.dial(request(hooks.baseUrl, media.url, { amdCallbackUrl: amdUrl }));
  await waitFor('the verdict', () => hooks.received.some((r) => r.path.startsWith('/amd')));
  const amd = hooks.received.find((r) => r.path.startsWith('/amd'))!;
  t.is(media.streams.length, 1);
  t.true(media.streams[0].at < amd.at, 'connected before the verdict');

  t.true(verifyTwilioSignature(AUTH_TOKEN, amd.fullUrl, amd.form, amd.signature));
  t.is(amd.fullUrl, amdUrl);
  const report = parseAmdCallback('call_1', amd.form);
  t.like(report, { callId: 'call_1', carrierCallId, answeredBy: 'machine_end_beep' });
  // The verdict comes at the message end: 400 ms of greeting and 300 ms of beep after the answer,
  // told in Twilio's milliseconds (wall time ÷ the time scale of 0.01).
  t.true(report.detectionMs! >= 70_000 && report.detectionMs! < 100_000, String(report.detectionMs));
  t.deepEqual(Object.keys(amd.form).sort(), ['AccountSid', 'AnsweredBy', 'CallSid', 'MachineDetectionDuration']);
  // The answered status carries no AnsweredBy (the verdict was not in yet).
  const answered = hooks.received.find((r) => r.form.CallSid === carrierCallId && r.form.CallStatus === 'in-progress')!;
  t.false('AnsweredBy' in answered.form);

  const expected = [...toneFrames(400, 300), ...toneFrames(300, 1000)];
  await waitFor('the greeting and beep', () => media.streams[0].audio.length >= expected.length);
  t.deepEqual(media.streams[0].audio.slice(0, expected.length), expected);
  await carrier.hangup(carrierCallId);
  await f.call(carrierCallId)!.done;
  const completed = hooks.received.find((r) => r.form.CallSid === carrierCallId && r.form.CallStatus === 'completed')!;
  t.is(completed.form.AnsweredBy, 'machine_end_beep');
});

test('without MachineDetection no verdict is made: no AsyncAmdStatusCallback, no AnsweredBy', async (t) => {
  const f = await fake(t);
  const hooks = await startCallbackServer(t);
  const media = await mediaServer(t, (s) => setTimeout(() => s.session.close(), 300));
  f.nextCall({ answeredBy: 'machine_end_beep' });
  const { carrierCallId } = await carrierFor(f).dial(request(hooks.baseUrl, media.url));
  await f.call(carrierCallId)!.done;
  t.false(f.callbacksSent.some((c) => c.kind === 'amd'));
  t.false(hooks.received.some((r) => 'AnsweredBy' in r.form));
  t.is(f.call(carrierCallId)!.answeredBy, null);
});

test('synchronous AMD (no AsyncAmd): the stream waits for the verdict', async (t) => {
  const f = await fake(t);
  const media = await mediaServer(t, (s) => s.session.close());
  f.nextCall({ answeredBy: 'human', amdDelayMs: 400 });
  const form = new URLSearchParams({ To: '+12025550100', From: '+12025550188', Twiml: `<Response><Connect><Stream url="${media.url}"><Parameter name="call_id" value="c"/></Stream></Connect></Response>`, MachineDetection: 'Enable' });
  const created = Date.now();
  const res = await fetch(`${f.baseUrl}/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}` },
  });
  t.is(res.status, 201);
  const sid = (await res.json()).sid;
  await f.call(sid)!.done;
  t.true(media.streams[0].at - created >= 150 + 400, 'the TwiML ran only after the verdict');
  t.is(f.call(sid)!.answeredBy, 'human');
});

test('the callee’s keys arrive as Media Streams `dtmf` messages and reach MediaSession.onDtmf', async (t) => {
  const f = await fake(t);
  const hooks = await startCallbackServer(t);
  const media = await mediaServer(t);
  f.nextCall({ dtmf: [{ atMs: 100, digit: '9' }, { atMs: 160, digit: '#' }] });
  const { carrierCallId } = await carrierFor(f).dial(request(hooks.baseUrl, media.url));
  await waitFor('both keys', () => media.streams[0]?.digits.length === 2);
  t.deepEqual(media.streams[0].digits, ['9', '#']);
  t.deepEqual(f.call(carrierCallId)!.media?.dtmfSent, ['9', '#']);
  t.deepEqual(f.call(carrierCallId)!.media?.protocolErrors, []);
  media.streams[0].session.close();
  await f.call(carrierCallId)!.done;
});

test('a recording started through Calls/{sid}/Recordings is reported when the call ends; Twilio.CURRENT stops it', async (t) => {
  const f = await fake(t);
  const hooks = await startCallbackServer(t);
  const media = await mediaServer(t);
  const carrier = carrierFor(f);
  const { carrierCallId } = await carrier.dial(request(hooks.baseUrl, media.url));
  await waitFor('the stream', () => media.streams.length === 1);
  await carrier.startRecording(carrierCallId, `${hooks.baseUrl}/recording?call_id=call_1`);
  await carrier.stopRecording(carrierCallId);
  const paths = f.requests.map((r) => `${r.method} ${r.path.replace(`/2010-04-01/Accounts/${ACCOUNT_SID}`, '')} ${r.status}`);
  t.true(paths.includes(`POST /Calls/${carrierCallId}/Recordings.json 201`), paths.join('\n'));
  t.true(paths.includes(`POST /Calls/${carrierCallId}/Recordings/Twilio.CURRENT.json 200`), paths.join('\n'));
  media.streams[0].session.close();
  await f.call(carrierCallId)!.done;
  await waitFor('the recording callback', () => hooks.received.some((r) => r.path.startsWith('/recording')));
  const rec = hooks.received.find((r) => r.path.startsWith('/recording'))!;
  t.is(rec.form.RecordingSid, f.call(carrierCallId)!.recordingSid!);
  t.true(verifyTwilioSignature(AUTH_TOKEN, rec.fullUrl, rec.form, rec.signature));
});
