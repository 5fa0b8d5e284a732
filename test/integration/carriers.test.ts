/**
 * The carrier adapters: TwilioCarrier against the fake Twilio (REST form fields, auth, hangup,
 * recordings), the fake's signed callbacks through `callbacks.ts`, and SimulatedCarrier playing
 * each scenario against a small WebSocket server standing in for our media server.
 */
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { WebSocketServer, type WebSocket } from 'ws';
import { createLogger } from '../../runtime/logger.ts';
import type { CarrierStatusReport, DialRequest, RecordingReport } from '../../telephony/carrier.ts';
import { SILENCE_FRAME_BASE64 } from '../../telephony/mulaw.ts';
import { scenarioFor } from '../../telephony/simulated/scenarios.ts';
import { SimulatedCarrier } from '../../telephony/simulated/simulated-carrier.ts';
import { CarrierCallbackError, parseRecordingCallback, parseStatusCallback, verifyTwilioSignature } from '../../telephony/twilio/callbacks.ts';
import { streamTwiml, TwilioCarrier } from '../../telephony/twilio/twilio-carrier.ts';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio.ts';
import { startCallbackServer } from '../helpers/twilio-callbacks.ts';

const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = 'f00dfeedf00dfeedf00dfeedf00dfeed';
const log = createLogger('silent');

// ---- helpers: a media server, a callback receiver, waiting ----

interface MediaConnection {
  ws: WebSocket;
  messages: any[];
  closed: boolean;
}

interface MediaServer {
  url: string;
  connections: MediaConnection[];
}

/** Our media server's stand-in. `onStart` runs when the carrier's `start` message arrives. */
async function startMediaServer(t: ExecutionContext, onStart: (conn: MediaConnection, start: any) => void): Promise<MediaServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const connections: MediaConnection[] = [];
  wss.on('connection', (ws) => {
    const conn: MediaConnection = { ws, messages: [], closed: false };
    connections.push(conn);
    ws.on('message', (data) => {
      const message = JSON.parse(String(data));
      conn.messages.push(message);
      if (message.event === 'start') onStart(conn, message);
    });
    ws.on('close', () => (conn.closed = true));
  });
  t.teardown(() => new Promise<void>((resolve) => {
    for (const client of wss.clients) client.terminate();
    wss.close(() => resolve());
  }));
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/media`, connections };
}

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function fakeTwilio(t: ExecutionContext, playbackSpeed?: number): Promise<FakeTwilio> {
  const fake = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, playbackSpeed });
  t.teardown(() => fake.close());
  return fake;
}

function dialRequest(overrides: Partial<DialRequest> & Pick<DialRequest, 'mediaUrl'>): DialRequest {
  return {
    callId: 'call_abc123',
    to: '+442071234560',
    from: '+442079876543',
    statusCallbackUrl: 'http://127.0.0.1:9/status',
    recordingCallbackUrl: 'http://127.0.0.1:9/recording',
    timeLimitSeconds: 1200,
    ringTimeoutSeconds: 30,
    ...overrides,
  };
}

/** Sends one frame of agent audio and a mark; closes once the mark comes back (agent hangs up). */
function agentSpeaksThenHangsUp(conn: MediaConnection, start: any): void {
  const streamSid = start.start.streamSid;
  conn.ws.send(JSON.stringify({ event: 'media', streamSid, media: { payload: SILENCE_FRAME_BASE64 } }));
  conn.ws.send(JSON.stringify({ event: 'mark', streamSid, mark: { name: 'goodbye_played' } }));
  conn.ws.on('message', (data) => {
    const message = JSON.parse(String(data));
    if (message.event === 'mark' && message.mark.name === 'goodbye_played') conn.ws.close(1000);
  });
}

/**
 * Starts the call's recording through Calls/{sid}/Recordings (as the call does once the opening's
 * notice has played), then hangs up.
 */
function recordThenClose(carrier: () => TwilioCarrier, recordingUrl = 'http://127.0.0.1:9/recording') {
  return (conn: MediaConnection, start: any) => void carrier().startRecording(start.start.callSid, recordingUrl).finally(() => conn.ws.close());
}

// ---- TwilioCarrier against the fake Twilio ----

test('dial POSTs Calls.json with basic auth and the documented fields: inline <Connect><Stream> TwiML, status events, asynchronous AMD, no recording from the answer, limits', async (t) => {
  const fake = await fakeTwilio(t);
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  const request = dialRequest({
    mediaUrl: 'wss://media.example.com/v1/media',
    statusCallbackUrl: 'https://hooks.example.com/carrier/status?call_id=call_abc123',
    recordingCallbackUrl: 'https://hooks.example.com/carrier/recording?call_id=call_abc123',
    amdCallbackUrl: 'https://hooks.example.com/telephony/twilio/amd?call_id=call_abc123',
  });
  fake.nextCall({ ringMs: 60_000 }); // keep it ringing: no callbacks leave the fake during this test
  const { carrierCallId } = await carrier.dial(request);

  t.regex(carrierCallId, /^CA[0-9a-f]{32}$/);
  t.is(fake.requests.length, 1);
  const [req] = fake.requests;
  t.is(req.method, 'POST');
  t.is(req.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`);
  t.is(req.status, 201);
  const f = req.form;
  t.deepEqual(f.To, ['+442071234560']);
  t.deepEqual(f.From, ['+442079876543']);
  t.is(f.Twiml?.[0], '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://media.example.com/v1/media"><Parameter name="call_id" value="call_abc123"/></Stream></Connect></Response>');
  t.deepEqual(f.StatusCallback, [request.statusCallbackUrl]);
  t.deepEqual(f.StatusCallbackEvent, ['initiated', 'ringing', 'answered', 'completed']);
  t.deepEqual(f.StatusCallbackMethod, ['POST']);
  t.deepEqual(f.MachineDetection, ['DetectMessageEnd']);
  t.deepEqual(f.AsyncAmd, ['true']);
  t.deepEqual(f.AsyncAmdStatusCallback, [request.amdCallbackUrl]);
  t.deepEqual(f.AsyncAmdStatusCallbackMethod, ['POST']);
  t.false('Record' in f, 'recording starts after the opening notice, never from the answer');
  t.false('RecordingStatusCallback' in f);
  t.deepEqual(f.Timeout, ['30']);
  t.deepEqual(f.TimeLimit, ['1200']);
  t.false('Url' in f, 'inline TwiML, no TwiML URL');

  const call = fake.call(carrierCallId);
  t.truthy(call);
  t.deepEqual(call?.stream, { url: 'wss://media.example.com/v1/media', parameters: { call_id: 'call_abc123' }, bidirectional: true });
});

test('the Stream URL and call_id are XML-escaped in the TwiML and reach the media server intact', async (t) => {
  const twiml = streamTwiml('wss://m.example.com/media?x=1&y="2"', 'call_<&>"\'');
  t.false(twiml.includes('call_<&>'), 'raw markup characters must not appear in attribute values');
  const fake = await fakeTwilio(t);
  const media = await startMediaServer(t, (conn) => conn.ws.close());
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  const { carrierCallId } = await carrier.dial(dialRequest({ mediaUrl: media.url, callId: 'call_<&>"\'' }));
  await waitFor('the start message', () => media.connections[0]?.messages.some((m) => m.event === 'start'));
  const start = media.connections[0].messages.find((m) => m.event === 'start');
  t.deepEqual(start.start.customParameters, { call_id: 'call_<&>"\'' });
  t.is(start.start.callSid, carrierCallId);
  await fake.call(carrierCallId)?.done;
});

test('a whole answered call: signed status callbacks in order, Media Streams messages, mark echo, completed on close, recording callback and fetch', async (t) => {
  const fake = await fakeTwilio(t);
  const hooks = await startCallbackServer(t);
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  const recordingUrl = `${hooks.baseUrl}/carrier/recording?call_id=call_abc123`;
  // The recording is started once the stream runs (after the opening's notice, in the service).
  const media = await startMediaServer(t, (conn, start) => void carrier.startRecording(start.start.callSid, recordingUrl).then(() => agentSpeaksThenHangsUp(conn, start)));
  const request = dialRequest({ mediaUrl: media.url, statusCallbackUrl: `${hooks.baseUrl}/carrier/status?call_id=call_abc123`, recordingCallbackUrl: recordingUrl });
  const { carrierCallId } = await carrier.dial(request);
  const call = fake.call(carrierCallId)!;
  await call.done;

  // Media Streams: connected, start (with our call_id), then media frames 20 ms apart; the mark came back.
  t.is(media.connections.length, 1);
  const messages = media.connections[0].messages;
  t.deepEqual(messages[0], { event: 'connected', protocol: 'Call', version: '1.0.0' });
  t.is(messages[1].event, 'start');
  t.is(messages[1].start.callSid, carrierCallId);
  t.is(messages[1].start.accountSid, ACCOUNT_SID);
  t.regex(messages[1].start.streamSid, /^MZ[0-9a-f]{32}$/);
  t.deepEqual(messages[1].start.customParameters, { call_id: 'call_abc123' });
  t.deepEqual(messages[1].start.mediaFormat, { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });
  const timestamps = messages.filter((m) => m.event === 'media').map((m) => Number(m.media.timestamp));
  for (let i = 1; i < timestamps.length; i++) t.is(timestamps[i] - timestamps[i - 1], 20);
  t.deepEqual(messages.filter((m) => m.event === 'mark').map((m) => m.mark.name), ['goodbye_played']);
  t.deepEqual(call.media?.protocolErrors, []);
  t.is(call.media?.closedBy, 'server');
  t.is(call.endReason, 'stream_closed');

  // Callbacks: four statuses in order, then the recording; every one signed for its exact URL.
  const statuses = hooks.received.filter((r) => r.path.startsWith('/carrier/status'));
  t.deepEqual(statuses.map((r) => r.form.CallStatus), ['initiated', 'ringing', 'in-progress', 'completed']);
  for (const r of hooks.received) t.true(verifyTwilioSignature(AUTH_TOKEN, r.fullUrl, r.form, r.signature), `${r.path} ${r.form.CallStatus ?? 'recording'}`);
  const reports = statuses.map((r) => parseStatusCallback('call_abc123', r.form));
  t.deepEqual(reports.map((r) => r.sequence), [0, 1, 2, 3]);
  t.is(reports[2].answeredBy, undefined, 'no AnsweredBy without MachineDetection');
  t.deepEqual({ ...reports[3], durationSeconds: undefined }, { callId: 'call_abc123', carrierCallId, status: 'completed', sequence: 3, durationSeconds: undefined });
  t.true(reports[3].durationSeconds! >= 1, 'CallDuration is whole seconds since answer, rounded up');

  const recordings = hooks.received.filter((r) => r.path.startsWith('/carrier/recording'));
  t.is(recordings.length, 1);
  const recording = parseRecordingCallback('call_abc123', recordings[0].form);
  t.is(recording.carrierCallId, carrierCallId);
  t.regex(recording.recordingId, /^RE[0-9a-f]{32}$/);
  t.is(recording.recordingUrl, `${fake.baseUrl}/2010-04-01/Accounts/${ACCOUNT_SID}/Recordings/${recording.recordingId}`);
  t.is(recording.durationSeconds, reports[3].durationSeconds!);

  const wav = await carrier.fetchRecording(recording.recordingUrl);
  t.is(wav.contentType, 'audio/x-wav');
  t.is(wav.body.subarray(0, 4).toString('ascii'), 'RIFF');
  t.is(wav.body.subarray(8, 12).toString('ascii'), 'WAVE');
  t.is(wav.body.readUInt32LE(40), 160 * 2, 'the one agent frame, as 16-bit PCM');
  const fetchReq = fake.requests.at(-1)!;
  t.is(fetchReq.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/Recordings/${recording.recordingId}.wav`);
  t.is(fetchReq.status, 200);
});

test('a wrong auth token is refused with 401 and creates no call; recordings need the right credentials too', async (t) => {
  const fake = await fakeTwilio(t);
  const media = await startMediaServer(t, recordThenClose(() => right));
  const wrong = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: 'not-the-token', apiBaseUrl: fake.baseUrl, log });
  const err = await t.throwsAsync(wrong.dial(dialRequest({ mediaUrl: media.url })));
  t.is((err as any).status, 401);
  t.is((err as any).code, 20003);
  t.deepEqual(fake.requests.map((r) => r.status), [401]);
  t.is(fake.calls.length, 0);

  const right = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  const { carrierCallId } = await right.dial(dialRequest({ mediaUrl: media.url }));
  const call = fake.call(carrierCallId)!;
  await call.done;
  const url = `${fake.baseUrl}/2010-04-01/Accounts/${ACCOUNT_SID}/Recordings/${call.recordingSid}`;
  await t.throwsAsync(wrong.fetchRecording(url), { message: /HTTP 401/ });
  t.is((await right.fetchRecording(url)).body.subarray(0, 4).toString('ascii'), 'RIFF');
});

test('fetchRecording rewrites api.twilio.com to the base URL and never sends credentials to another host', async (t) => {
  const fake = await fakeTwilio(t);
  const media = await startMediaServer(t, recordThenClose(() => carrier));
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  const call = fake.call((await carrier.dial(dialRequest({ mediaUrl: media.url }))).carrierCallId)!;
  await call.done;
  const wav = await carrier.fetchRecording(`https://api.twilio.com/2010-04-01/Accounts/${ACCOUNT_SID}/Recordings/${call.recordingSid}`);
  t.is(wav.body.subarray(8, 12).toString('ascii'), 'WAVE');

  await t.throwsAsync(carrier.fetchRecording('http://127.0.0.1:9/2010-04-01/Accounts/x/Recordings/RE1'), { message: /refusing/ });
  const production = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, log });
  await t.throwsAsync(production.fetchRecording('https://api.twilio.com.evil.example/Recordings/RE1'), { message: /refusing/ });
  await t.throwsAsync(production.fetchRecording('http://api.twilio.com/Recordings/RE1'), { message: /refusing/ });
});

test('hangup updates the call with Status=completed: the fake stops the stream and reports completed', async (t) => {
  const fake = await fakeTwilio(t);
  const hooks = await startCallbackServer(t);
  const media = await startMediaServer(t, () => {});
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  const { carrierCallId } = await carrier.dial(dialRequest({ mediaUrl: media.url, statusCallbackUrl: `${hooks.baseUrl}/status` }));
  await waitFor('the stream to start', () => media.connections[0]?.messages.some((m) => m.event === 'start'));

  await carrier.hangup(carrierCallId);
  const update = fake.requests.find((r) => r.path === `/2010-04-01/Accounts/${ACCOUNT_SID}/Calls/${carrierCallId}.json`);
  t.is(update?.method, 'POST');
  t.deepEqual(update?.form.Status, ['completed']);
  t.is(update?.status, 200);

  const call = fake.call(carrierCallId)!;
  await call.done;
  await waitFor('the WebSocket to close', () => media.connections[0].closed);
  const conn = media.connections[0];
  t.is(conn.messages.at(-1).event, 'stop');
  t.is(conn.messages.at(-1).stop.callSid, carrierCallId);
  t.is(call.endReason, 'api_hangup');
  t.is(hooks.received.at(-1)?.form.CallStatus, 'completed');

  // Hanging up an ended call is harmless; an unknown call is Twilio's 404.
  await carrier.hangup(carrierCallId);
  const err = await t.throwsAsync(carrier.hangup(`CA${'0'.repeat(32)}`));
  t.is((err as any).status, 404);
});

test('an unanswered (busy) call reports initiated then busy with CallDuration 0, opens no stream and sends no recording', async (t) => {
  const fake = await fakeTwilio(t);
  const hooks = await startCallbackServer(t);
  const media = await startMediaServer(t, () => {});
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  fake.nextCall({ answer: false, status: 'busy' });
  const { carrierCallId } = await carrier.dial(dialRequest({ mediaUrl: media.url, statusCallbackUrl: `${hooks.baseUrl}/status`, recordingCallbackUrl: `${hooks.baseUrl}/recording` }));
  await fake.call(carrierCallId)!.done;
  const reports = hooks.received.map((r) => parseStatusCallback('c', r.form));
  t.deepEqual(reports.map((r) => [r.status, r.durationSeconds]), [['initiated', undefined], ['busy', 0]]);
  t.is(media.connections.length, 0);
  t.false(hooks.received.some((r) => r.path === '/recording'));
});

test('the fake echoes a mark once the agent audio before it has played, and at once on clear', async (t) => {
  const fake = await fakeTwilio(t, 1); // real-time playback
  const sentAt: Record<string, number> = {};
  const echoedAt: Record<string, number> = {};
  const media = await startMediaServer(t, (conn, start) => {
    const streamSid = start.start.streamSid;
    const send = (m: object) => conn.ws.send(JSON.stringify({ streamSid, ...m }));
    const speak = (ms: number) => {
      for (let i = 0; i < ms / 20; i++) send({ event: 'media', media: { payload: SILENCE_FRAME_BASE64 } });
    };
    conn.ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.event !== 'mark') return;
      echoedAt[m.mark.name] = Date.now();
      if (m.mark.name === 'long') conn.ws.close();
    });
    speak(300);
    send({ event: 'mark', mark: { name: 'short' } });
    sentAt.short = Date.now();
    speak(5_000);
    send({ event: 'mark', mark: { name: 'long' } });
    setTimeout(() => {
      sentAt.clear = Date.now();
      send({ event: 'clear' });
    }, 500);
  });
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  const call = fake.call((await carrier.dial(dialRequest({ mediaUrl: media.url }))).carrierCallId)!;
  await call.done;
  t.true(echoedAt.short - sentAt.short >= 280 && echoedAt.short - sentAt.short < 1_500, `short mark after ${echoedAt.short - sentAt.short} ms`);
  t.true(echoedAt.long - sentAt.clear < 1_000, `long mark ${echoedAt.long - sentAt.clear} ms after clear`);
  t.deepEqual(call.media?.marksEchoed, ['short', 'long']);
  t.is(call.media?.clears, 1);
  t.is(call.media?.agentFrames, 15 + 250);
  t.deepEqual(call.media?.protocolErrors, []);
});

test('the fake records protocol errors: a wrong streamSid, an unknown event', async (t) => {
  const fake = await fakeTwilio(t);
  const media = await startMediaServer(t, (conn, start) => {
    conn.ws.send(JSON.stringify({ event: 'media', streamSid: 'MZwrong', media: { payload: SILENCE_FRAME_BASE64 } }));
    conn.ws.send(JSON.stringify({ event: 'dance', streamSid: start.start.streamSid }));
    setTimeout(() => conn.ws.close(), 50);
  });
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  const call = fake.call((await carrier.dial(dialRequest({ mediaUrl: media.url }))).carrierCallId)!;
  await call.done;
  t.deepEqual(call.media?.protocolErrors, ['media with streamSid MZwrong', 'unknown event dance']);
  t.is(call.media?.agentFrames, 0);
});

// ---- signatures and parsing ----

test('the fake signs callbacks so verifyTwilioSignature accepts them, and a changed param, URL, token or missing header fails', async (t) => {
  const fake = await fakeTwilio(t);
  const hooks = await startCallbackServer(t);
  const media = await startMediaServer(t, recordThenClose(() => carrier, `${hooks.baseUrl}/recording?call_id=call_1`));
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  const { carrierCallId } = await carrier.dial(dialRequest({ mediaUrl: media.url, statusCallbackUrl: `${hooks.baseUrl}/status?call_id=call_1&attempt=2`, recordingCallbackUrl: `${hooks.baseUrl}/recording?call_id=call_1` }));
  await fake.call(carrierCallId)!.done;
  t.true(fake.callbacksSent.length >= 5);
  t.true(fake.callbacksSent.every((c) => c.status === 204));

  const completed = hooks.received.find((r) => r.form.CallStatus === 'completed')!;
  const { fullUrl, form, signature } = completed;
  t.true(verifyTwilioSignature(AUTH_TOKEN, fullUrl, form, signature));
  t.false(verifyTwilioSignature(AUTH_TOKEN, fullUrl, { ...form, CallDuration: '999' }, signature), 'a changed param');
  t.false(verifyTwilioSignature(AUTH_TOKEN, fullUrl, { ...form, Extra: 'x' }, signature), 'an added param');
  t.false(verifyTwilioSignature(AUTH_TOKEN, fullUrl.replace('call_1', 'call_2'), form, signature), 'another call id in the query');
  t.false(verifyTwilioSignature(AUTH_TOKEN, fullUrl.replace('/status', '/statuz'), form, signature), 'another path');
  t.false(verifyTwilioSignature('another-token', fullUrl, form, signature), 'another token');
  t.false(verifyTwilioSignature(AUTH_TOKEN, fullUrl, form, undefined), 'no header');
  t.false(verifyTwilioSignature(AUTH_TOKEN, fullUrl, form, ''), 'an empty header');
  t.false(verifyTwilioSignature(AUTH_TOKEN, 'not a url', form, signature), 'a URL that does not parse');

  const recording = hooks.received.find((r) => r.path.startsWith('/recording'))!;
  t.true(verifyTwilioSignature(AUTH_TOKEN, recording.fullUrl, recording.form, recording.signature));
  t.false(verifyTwilioSignature(AUTH_TOKEN, recording.fullUrl, { ...recording.form, RecordingUrl: 'https://evil.example/x' }, recording.signature));
});

test('parseStatusCallback maps CallStatus, CallDuration, AnsweredBy and SequenceNumber, and refuses malformed forms', (t) => {
  const base = { AccountSid: ACCOUNT_SID, CallSid: 'CA1', Direction: 'outbound-api' };
  t.deepEqual(parseStatusCallback('call_1', { ...base, CallStatus: 'ringing', SequenceNumber: '1' }), { callId: 'call_1', carrierCallId: 'CA1', status: 'ringing', sequence: 1 });
  t.deepEqual(parseStatusCallback('call_1', { ...base, CallStatus: 'completed', CallDuration: '61', AnsweredBy: 'machine_start', SequenceNumber: '3' }), {
    callId: 'call_1',
    carrierCallId: 'CA1',
    status: 'completed',
    durationSeconds: 61,
    answeredBy: 'machine_start',
    sequence: 3,
  });
  for (const status of ['no-answer', 'busy', 'failed', 'canceled', 'in-progress', 'initiated', 'queued']) {
    t.is(parseStatusCallback('c', { ...base, CallStatus: status }).status as string, status);
  }
  for (const bad of [{ ...base, CallStatus: 'answered' }, { ...base }, { CallStatus: 'completed' }, { ...base, CallStatus: 'completed', CallDuration: '1.5' }, { ...base, CallStatus: 'completed', SequenceNumber: '-1' }]) {
    const err = t.throws(() => parseStatusCallback('c', bad), { instanceOf: CarrierCallbackError });
    t.is(err?.reason, 'malformed');
  }
});

test('parseRecordingCallback maps a completed recording and tells absent ones apart from malformed ones', (t) => {
  const form = { AccountSid: ACCOUNT_SID, CallSid: 'CA1', RecordingSid: 'RE1', RecordingUrl: 'https://api.twilio.com/2010-04-01/Accounts/AC1/Recordings/RE1', RecordingDuration: '58', RecordingStatus: 'completed', RecordingChannels: '1' };
  const report: RecordingReport = parseRecordingCallback('call_1', form);
  t.deepEqual(report, { callId: 'call_1', carrierCallId: 'CA1', recordingId: 'RE1', recordingUrl: form.RecordingUrl, durationSeconds: 58 });
  t.is(t.throws(() => parseRecordingCallback('c', { ...form, RecordingStatus: 'absent' }), { instanceOf: CarrierCallbackError })?.reason, 'not_completed');
  t.is(t.throws(() => parseRecordingCallback('c', { ...form, RecordingUrl: undefined }), { instanceOf: CarrierCallbackError })?.reason, 'malformed');
  t.is(t.throws(() => parseRecordingCallback('c', { ...form, RecordingDuration: undefined }), { instanceOf: CarrierCallbackError })?.reason, 'malformed');
});

// ---- SimulatedCarrier ----

interface SimHarness {
  carrier: SimulatedCarrier;
  statuses: CarrierStatusReport[];
  recordings: RecordingReport[];
  /** Runs inside each status report, after it was recorded. */
  also?: (report: CarrierStatusReport) => void;
}

function simulated(): SimHarness {
  const harness: SimHarness = {
    carrier: new SimulatedCarrier({
      log,
      onStatus: (r) => {
        harness.statuses.push(r);
        harness.also?.(r);
      },
      onRecording: (r) => harness.recordings.push(r),
    }),
    statuses: [],
    recordings: [],
  };
  return harness;
}

test('SimulatedCarrier plays scenarios 0, 1, 2, 3, 4, 5 and 7 over the Media Streams protocol', async (t) => {
  // Each call's recording is started once its stream runs (a recording is reported only then).
  const media = await startMediaServer(t, (conn, start) => {
    void sim.carrier.startRecording(start.start.callSid);
    agentSpeaksThenHangsUp(conn, start);
  });
  const sim = simulated();
  const digits = [0, 1, 2, 3, 4, 5, 7];
  const dialled = await Promise.all(
    digits.map(async (digit) => {
      const callId = `call_digit_${digit}`;
      const { carrierCallId } = await sim.carrier.dial(dialRequest({ callId, to: `+4420712345${digit}`, mediaUrl: media.url }));
      return { digit, callId, carrierCallId, scenario: scenarioFor(`+4420712345${digit}`) };
    }),
  );
  const answered = dialled.filter((d) => d.scenario.answered);
  await waitFor('every call to end', () => dialled.every((d) => sim.statuses.some((s) => s.carrierCallId === d.carrierCallId && ['completed', 'no-answer', 'busy', 'failed'].includes(s.status))));
  await waitFor('the recordings', () => sim.recordings.length === answered.length);

  for (const { digit, callId, carrierCallId, scenario } of dialled) {
    t.regex(carrierCallId, /^SIM[0-9a-f]{32}$/);
    const mine = sim.statuses.filter((s) => s.carrierCallId === carrierCallId);
    t.true(mine.every((s) => s.callId === callId));
    t.deepEqual(mine.map((s) => s.sequence), mine.map((_, i) => i), `digit ${digit}: sequence numbers`);
    if (scenario.answered) {
      t.deepEqual(mine.map((s) => s.status), ['initiated', 'ringing', 'in-progress', 'completed'], `digit ${digit}`);
      t.is(mine[2].answeredBy, undefined, `digit ${digit}: no verdict without detection asked for`);
      t.is(mine[3].durationSeconds, scenario.durationSeconds, `digit ${digit}: scripted duration`);
      const recording = sim.recordings.find((r) => r.carrierCallId === carrierCallId);
      t.is(recording?.recordingUrl, `simulated://${carrierCallId}`);
      t.is(recording?.durationSeconds, scenario.durationSeconds);
      t.is(recording?.callId, callId);
    } else {
      t.deepEqual(mine.map((s) => [s.status, s.durationSeconds]), [['initiated', undefined], ['ringing', undefined], [scenario.status, 0]], `digit ${digit}`);
      t.false(sim.recordings.some((r) => r.carrierCallId === carrierCallId));
    }
  }
  t.deepEqual(dialled.filter((d) => !d.scenario.answered).map((d) => d.digit), [2, 3, 7]);

  // Only answered calls opened a stream, each with our call id; every mark came back.
  t.is(media.connections.length, answered.length);
  const starts = media.connections.map((c) => c.messages.find((m) => m.event === 'start'));
  t.deepEqual(starts.map((s) => s.start.customParameters.call_id).sort(), answered.map((d) => d.callId).sort());
  for (const conn of media.connections) {
    const [connected, start, ...rest] = conn.messages;
    t.is(connected.event, 'connected');
    t.is(start.start.callSid, answered.find((d) => d.callId === start.start.customParameters.call_id)?.carrierCallId);
    t.regex(start.start.streamSid, /^MZ[0-9a-f]{32}$/);
    t.deepEqual(start.start.mediaFormat, { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });
    t.deepEqual(rest.filter((m) => m.event === 'mark'), [{ event: 'mark', sequenceNumber: rest.find((m) => m.event === 'mark').sequenceNumber, streamSid: start.start.streamSid, mark: { name: 'goodbye_played' } }]);
    const media = rest.filter((m) => m.event === 'media');
    t.true(media.length >= 1);
    t.true(media.every((m, i) => Number(m.media.timestamp) === i * 20 && Buffer.from(m.media.payload, 'base64').length === 160 && m.streamSid === start.start.streamSid));
  }

  // No status twice, even when hung up after the end.
  const before = sim.statuses.length;
  for (const d of dialled) await sim.carrier.hangup(d.carrierCallId);
  await new Promise((r) => setTimeout(r, 100));
  t.is(sim.statuses.length, before);
  t.is(sim.recordings.length, answered.length);

  const wav = await sim.carrier.fetchRecording(`simulated://${answered[0].carrierCallId}`);
  t.is(wav.body.subarray(0, 4).toString('ascii'), 'RIFF');
  t.is(wav.body.subarray(8, 12).toString('ascii'), 'WAVE');
  t.is(wav.body.readUInt16LE(20), 7, 'μ-law');
  t.is(wav.body.readUInt16LE(22), 1, 'mono');
  t.is(wav.body.readUInt32LE(24), 8000);
  await t.throwsAsync(sim.carrier.fetchRecording('https://api.twilio.com/x'));
});

test('SimulatedCarrier sends each stream\'s frames in order even when the event loop runs late', async (t) => {
  // Frame timers of streams started at different times share Node's per-duration timer lists; when
  // the loop is late, one list's expired timers all run before the next list's, and a stream whose
  // frames were all set at once sent frame i+1 before frame i. Found as a flaky scenario test.
  const starts: number[] = [];
  const media = await startMediaServer(t, () => starts.push(Date.now()));
  const sim = simulated();
  const dial = async (digit: number) => (await sim.carrier.dial(dialRequest({ callId: `call_order_${digit}`, to: `+4420712345${digit}`, mediaUrl: media.url }))).carrierCallId;
  // The second stream starts about 50 ms after the first: while its early frames are due, the
  // first's later ones are too (a gap of more than one frame and less than the greeting).
  const first = await dial(0);
  await new Promise((r) => setTimeout(r, 50));
  const second = await dial(1);
  await waitFor('the second stream', () => media.connections.filter((c) => c.messages.some((m) => m.event === 'start')).length === 2);
  // The loop runs late, as on a busy machine, while both streams' frames are due.
  const until = Date.now() + 250;
  console.log('block at', Date.now() - starts[0], 'starts', starts.map((x) => x - starts[0]));
  while (Date.now() < until);
  // Every frame of the callee's greeting (ten: 120 ms of tone, 80 ms of silence) comes in.
  await waitFor('every frame', () => media.connections.every((c) => c.messages.filter((m) => m.event === 'media').length === 10), 20_000);
  for (const conn of media.connections) {
    const timestamps = conn.messages.filter((m) => m.event === 'media').map((m) => Number(m.media.timestamp));
    t.deepEqual(timestamps, timestamps.map((_, i) => i * 20));
  }
  await sim.carrier.hangup(first);
  await sim.carrier.hangup(second);
});

test('SimulatedCarrier hangup: while ringing it cancels without a stream; once answered it sends stop, closes, and reports the scripted duration', async (t) => {
  const media = await startMediaServer(t, () => {});
  const sim = simulated();
  // Hang up from inside the ringing report: no timing window in which the callee could answer.
  let hungUpWhileRinging: Promise<void> | undefined;
  sim.also = (r) => {
    if (r.callId === 'call_ring' && r.status === 'ringing') hungUpWhileRinging = sim.carrier.hangup(r.carrierCallId);
  };
  const ringing = await sim.carrier.dial(dialRequest({ callId: 'call_ring', to: '+442071234560', mediaUrl: media.url }));
  await waitFor('the hangup while ringing', () => hungUpWhileRinging !== undefined);
  await hungUpWhileRinging;
  t.deepEqual(sim.statuses.filter((s) => s.carrierCallId === ringing.carrierCallId).map((s) => s.status), ['initiated', 'ringing', 'canceled']);

  const talking = await sim.carrier.dial(dialRequest({ callId: 'call_talk', to: '+442071234561', mediaUrl: media.url }));
  await waitFor('the stream', () => media.connections.some((c) => c.messages.some((m) => m.event === 'start' && m.start.customParameters.call_id === 'call_talk')));
  await sim.carrier.startRecording(talking.carrierCallId);
  await sim.carrier.hangup(talking.carrierCallId);
  const conn = media.connections.find((c) => c.messages.some((m) => m.event === 'start' && m.start.customParameters.call_id === 'call_talk'))!;
  await waitFor('the close', () => conn.closed);
  t.is(conn.messages.at(-1).event, 'stop');
  t.is(conn.messages.at(-1).stop.callSid, talking.carrierCallId);
  const talked = sim.statuses.filter((s) => s.carrierCallId === talking.carrierCallId);
  t.deepEqual(talked.map((s) => s.status), ['initiated', 'ringing', 'in-progress', 'completed']);
  t.is(talked[3].durationSeconds, 180);
  await waitFor('the recording', () => sim.recordings.some((r) => r.carrierCallId === talking.carrierCallId));
  t.is(media.connections.length, 1, 'the call hung up while ringing never opened a stream');

  await t.notThrowsAsync(sim.carrier.hangup('SIMunknown'));
  await new Promise((r) => setTimeout(r, 250));
  t.is(sim.statuses.filter((s) => s.carrierCallId === ringing.carrierCallId).length, 3, 'nothing after canceled');
});

test('SimulatedCarrier scenario 6 talks until the limit timer (~1 s), then stops the stream and reports 1,200 s', async (t) => {
  const media = await startMediaServer(t, () => {});
  const sim = simulated();
  const started = Date.now();
  const { carrierCallId } = await sim.carrier.dial(dialRequest({ callId: 'call_limit', to: '+442071234566', mediaUrl: media.url }));
  await waitFor('completed', () => sim.statuses.some((s) => s.status === 'completed'), 5_000);
  const elapsedMs = Date.now() - started;
  t.true(elapsedMs >= 1_000 && elapsedMs < 3_000, `${elapsedMs} ms`);
  const completed = sim.statuses.find((s) => s.status === 'completed')!;
  t.is(completed.carrierCallId, carrierCallId);
  t.is(completed.durationSeconds, 1200);
  await waitFor('the close', () => media.connections[0]?.closed);
  t.is(media.connections[0].messages.at(-1).event, 'stop');
});

test('SimulatedCarrier: a media server that cannot be reached ends the answered call as completed with 0 s', async (t) => {
  const sim = simulated();
  const { carrierCallId } = await sim.carrier.dial(dialRequest({ to: '+442071234560', mediaUrl: 'ws://127.0.0.1:9/media' }));
  await waitFor('completed', () => sim.statuses.some((s) => s.status === 'completed'));
  t.deepEqual(sim.statuses.map((s) => s.status), ['initiated', 'ringing', 'in-progress', 'completed']);
  t.is(sim.statuses[3].durationSeconds, 0);
  t.is(sim.statuses[3].carrierCallId, carrierCallId);
});

// ---- line types: Lookup v2 through the twilio SDK, against the fake ----

test('lookupLineType asks Lookup v2 for line_type_intelligence (and caller_name in the US) and maps the answer', async (t) => {
  const fake = await fakeTwilio(t);
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
  t.is(await carrier.lookupLineType('+12025559123'), 'mobile');
  t.is(await carrier.lookupLineType('+12025558123'), 'landline', 'a CONSUMER landline is residential');
  t.is(await carrier.lookupLineType('+12025557123'), 'voip');
  t.is(await carrier.lookupLineType('+12025550123'), 'business_landline', 'a BUSINESS landline');
  t.is(await carrier.lookupLineType('+442079460000'), 'landline', 'outside the US Twilio names no caller type: a landline is read as residential');
  const lookups = fake.requests.filter((r) => r.path.startsWith('/v2/PhoneNumbers/'));
  t.is(lookups.length, 5);
  t.true(lookups.every((r) => r.method === 'GET' && r.status === 200));
  t.is(lookups[0].path, '/v2/PhoneNumbers/+12025559123');
  t.is(lookups[0].query?.get('Fields'), 'line_type_intelligence,caller_name');
  t.is(lookups[4].query?.get('Fields'), 'line_type_intelligence');
});

test('lookupLineType with wrong credentials throws (the gate then reads the number as mobile)', async (t) => {
  const fake = await fakeTwilio(t);
  const wrong = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: 'not-the-token', apiBaseUrl: fake.baseUrl, log });
  await t.throwsAsync(() => wrong.lookupLineType('+12025550123'));
});
