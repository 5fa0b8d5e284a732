import test from 'ava';
import { cleanUpEverything, freePort, makeTempRoot, startSwitchboard, type Instance } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';
import { call, client } from '../helpers/http.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { loadDncRegistries } from '../helpers/dnc-registries.ts';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio.ts';
import { startFakeRealtime, CALLEE_TRANSCRIPT, GREETING_TRANSCRIPT, type FakeRealtime } from '../fakes/openai-realtime.ts';
import { startFakeOpenAISpeech, type FakeOpenAISpeech } from '../fakes/openai-speech.ts';

/**
 * A live call end to end: the program runs as a process with its Twilio and OpenAI adapters
 * pointed at fakes that speak the public protocols (REST + signed callbacks + Media Streams;
 * Realtime events). Nothing in the program knows it is talking to fakes.
 */
const TOKEN = 'sbc_e2e_live_call_console_token_2aEZ9QPmkt3e';
const SID = 'AC' + '0'.repeat(32);
const AUTH = 'twilio-auth-token-for-tests';

let twilio: FakeTwilio;
let realtime: FakeRealtime;
/** The opening is synthesized by OpenAI's speech endpoint in live mode (issue 23 §1). */
let speech: FakeOpenAISpeech;
test.before(async () => {
  speech = await startFakeOpenAISpeech('sk-test-fake');
  twilio = await startFakeTwilio({ accountSid: SID, authToken: AUTH, playbackSpeed: Infinity });
  realtime = await startFakeRealtime({ script: 'find_and_book', speechAfterAppends: 3 });
});
test.after.always(async () => {
  await twilio?.close();
  await realtime?.close();
  await speech?.close();
  await cleanUpEverything();
});

async function start(databaseUrl: string): Promise<Instance> {
  const port = await freePort();
  return startSwitchboard({
    dataDir: await makeTempRoot('switchboard-live-'),
    port,
    env: {
      DATABASE_URL: databaseUrl,
      SWITCHBOARD_ADMIN_TOKEN: TOKEN,
      SWITCHBOARD_TEST_CLOCK: '1',
      SWITCHBOARD_PUBLIC_URL: `http://127.0.0.1:${port}`,
      SWITCHBOARD_DIALLER_POLL_MS: '100',
      SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: AUTH,
      TWILIO_API_BASE_URL: twilio.baseUrl,
      OPENAI_API_KEY: 'sk-test-fake',
      OPENAI_REALTIME_URL: realtime.url,
      OPENAI_BASE_URL: speech.url,
    },
  });
}

/** A live, funded account with a customer every gate lets through, on a Tuesday morning in New York. */
async function liveSetup(url: string) {
  const con = client(url, TOKEN);
  const account = (await con.post('/admin/v1/accounts', { name: 'Live Agency', country: 'US' })).body;
  await con.post(`/admin/v1/accounts/${account.id}/kyb`, { status: 'verified' });
  await con.post(`/admin/v1/accounts/${account.id}/agreement`, { version: 'v1' });
  await con.post(`/admin/v1/accounts/${account.id}/go_live`);
  await con.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 10_000 });
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'live', label: 'e2e' })).body;
  const api = client(url, key.secret);
  const customer = (await api.post('/v1/customers', { name: 'Bright Dental', country: 'US', timezone: 'America/New_York' })).body;
  await con.post('/admin/v1/languages/en-US/certify');
  await loadDncRegistries(con, 'US');
  await con.post(`/admin/v1/customers/${customer.id}/numbers`, { phone_number: '+12025550188' });
  await con.post(`/admin/v1/customers/${customer.id}/script/certify`, { script: 'SCRIPT-MARKER: ask about their front-desk workload.' });
  await con.post(`/admin/v1/customers/${customer.id}/research`, { notes: 'RESEARCH-MARKER: family practice, two chairs.' });
  const link = await api.post(`/v1/customers/${customer.id}/onboarding_link`);
  await call(url, 'POST', new URL(link.body.url).pathname, {
    rawBody: new URLSearchParams({ accepted_by: 'Owner', agree: 'yes' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const ready = await api.get(`/v1/customers/${customer.id}/readiness`);
  if (!ready.body.ready_for_live_calls) throw new Error(JSON.stringify(ready.body.blockers));
  // Tuesday 15:00 UTC: inside every US calling window.
  const now = new Date((await con.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  const target = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 15));
  while (target <= now || target.getUTCDay() !== 2) target.setUTCDate(target.getUTCDate() + 1);
  await con.post('/admin/v1/test_clock/advance', { seconds: Math.ceil((target.getTime() - now.getTime()) / 1000) });
  return { con, account, api, customer, key: key.secret as string };
}

async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // Not faster: the call plays its whole opening first (seconds of prepared audio), and polling
    // every 100 ms for that long spends the account's per-minute request limit (429).
    await new Promise((r) => setTimeout(r, 300));
  }
}

test.serial('a live call through Twilio and OpenAI Realtime books an appointment; outcome, ledger and events follow', async (t) => {
  const databaseUrl = await freshDatabase();
  const sb = await start(databaseUrl);
  const { con, account, api, customer, key } = await liveSetup(sb.url);
  twilio.nextCall({ durationSeconds: 125, calleeAudio: [] });
  const queued = await api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '(202) 555-0101', business_name: 'Acme Plumbing' });
  t.is(queued.status, 201);

  const done = await until('the call to finish', async () => {
    const c = await api.get(`/v1/calls/${queued.body.id}`);
    return c.body.finished ? c.body : null;
  });
  t.like(done, { status: 'completed', outcome: 'appointment_booked', duration_seconds: 125 });

  // The carrier saw exactly what Twilio documents.
  t.is(twilio.calls.length, 1);
  const created = twilio.calls[0];
  t.is(created.to, '+12025550101');
  t.is(created.from, '+12025550188');
  t.is(created.stream?.parameters.call_id, queued.body.id);
  t.regex(created.stream?.parameters.stream_token ?? '', /^[A-Za-z0-9_-]{40,}$/);
  t.regex(created.stream!.url, /^ws:\/\/127\.0\.0\.1:\d+\/media$/);
  t.deepEqual(created.form.TimeLimit, ['1200']);
  t.deepEqual(created.form.MachineDetection, ['DetectMessageEnd']);
  t.deepEqual(created.form.AsyncAmd, ['true']);
  t.false('Record' in created.form, 'recorded only after the opening notice');
  t.deepEqual(created.form.StatusCallbackEvent?.sort(), ['answered', 'completed', 'initiated', 'ringing']);
  t.true(twilio.callbacksSent.length >= 4);
  // The call can finish (its media stream ends) while the carrier's last status callback is still
  // in flight: wait for every answer before judging them.
  await until('every status callback to be answered', async () => (twilio.callbacksSent.every((cb) => cb.status !== null) ? true : null));
  t.true(twilio.callbacksSent.every((cb) => cb.status === 204), JSON.stringify(twilio.callbacksSent.map((c) => c.status)));

  // The agent was set up as the Realtime GA protocol expects, and spoke first.
  const update = realtime.received.find((e) => e.type === 'session.update');
  t.is(update?.session?.audio?.input?.format?.type, 'audio/pcmu');
  t.is(update?.session?.audio?.output?.format?.type, 'audio/pcmu');
  t.deepEqual(update?.session?.tools?.map((x: any) => x.name).sort(), ['book_appointment', 'end_call', 'find_free_slots', 'mark_do_not_call', 'recording_objection']);
  t.notRegex(JSON.stringify(update), /switchboard|twilio|openai/i, 'the agent is never told who supplies it');
  t.regex(update?.session?.instructions ?? '', /SCRIPT-MARKER/, 'briefed with the certified script');
  t.regex(update?.session?.instructions ?? '', /RESEARCH-MARKER/, 'briefed with the research notes');
  t.notRegex(JSON.stringify([done, (await api.get(`/v1/customers/${customer.id}`)).body]), /MARKER/, 'research and script never come back out');
  t.true(realtime.received.some((e) => e.type === 'conversation.item.create' && e.item?.type === 'function_call_output'));
  t.deepEqual(realtime.violations, []);

  // The agent asked for free slots first and booked the first one offered (no calendar connected: business hours only).
  const slotsOutput = realtime.received.find((e) => e.type === 'conversation.item.create' && e.item?.call_id === 'call_slots_1');
  const offered = JSON.parse(slotsOutput?.item?.output ?? '{}').slots as { start_at: string; says: string }[];
  t.is(offered.length, 3);
  t.regex(offered[0].says, /^Tuesday, \d+ \w+ \d{4} at 12:(00|30) \(America\/New_York\)$/, 'two hours after 10:00 in New York, said in its zone');
  const appointment = (await api.get(`/v1/appointments/${done.appointment_id}`)).body;
  t.like(appointment, { call_id: done.id, start_at: offered[0].start_at, timezone: 'America/New_York', status: 'booked', on_calendar: false });

  const usage = (await api.get('/v1/usage')).body.data;
  t.like(usage.find((l: any) => l.reference === done.id), { cause: 'call', amount_cents: -60, minutes: 3, applied: true, customer_id: customer.id });
  const balance = (await api.get('/v1/balance')).body;
  t.like(balance, { reserved_cents: 0, balance_cents: 10_000 - 60 });

  const events = (await con.get(`/admin/v1/accounts/${account.id}/events`)).body.data;
  t.is(events.filter((e: any) => e.type === 'call.completed' && e.data.id === done.id).length, 1);
  t.is(events.filter((e: any) => e.type === 'appointment.booked' && e.data.id === done.appointment_id).length, 1);

  const withRecording = await until('the recording', async () => {
    const c = await api.get(`/v1/calls/${done.id}`);
    return c.body.recording_url ? c.body : null;
  });
  t.is((await fetch(withRecording.recording_url)).status, 401, 'a recording is served only with the API key');
  const audio = await fetch(withRecording.recording_url, { headers: { authorization: `Bearer ${key}` } });
  t.is(audio.status, 200);
  t.regex(audio.headers.get('content-type') ?? '', /wav/);
  t.is(Buffer.from(await audio.arrayBuffer()).subarray(0, 4).toString(), 'RIFF');
  t.deepEqual(await checkMoneyInvariants(databaseUrl), []);
  await sb.stop('SIGTERM');
});

test.serial("the agent naming a supplier (a model saying where it comes from): the transcript names the business instead; the callee's words are kept", async (t) => {
  const databaseUrl = await freshDatabase();
  const sb = await start(databaseUrl);
  const { api, customer } = await liveSetup(sb.url);
  realtime.greetingTranscript = 'Hello, I am an OpenAI assistant built on ChatGPT and Twilio, calling for Bright Dental.';
  t.teardown(() => (realtime.greetingTranscript = GREETING_TRANSCRIPT));
  twilio.nextCall({ durationSeconds: 65, calleeAudio: [] });
  const queued = await api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '(202) 555-0101', business_name: 'Acme Plumbing' });
  await until('the call to finish', async () => (await api.get(`/v1/calls/${queued.body.id}`)).body.finished);
  const transcript = await until('the transcript', async () => {
    const r = await api.get(`/v1/calls/${queued.body.id}/transcript`);
    return r.status === 200 && r.body.lines.length >= 2 ? r.body : null;
  });
  const agent = transcript.lines.filter((l: any) => l.role === 'agent').map((l: any) => l.text).join(' ');
  t.notRegex(agent, /openai|chatgpt|twilio/i);
  t.regex(agent, /Bright Dental assistant built on Bright Dental/);
  t.true(transcript.lines.some((l: any) => l.role === 'callee' && l.text === CALLEE_TRANSCRIPT));
  await sb.stop('SIGTERM');
});

test.serial('a media stream that does not bring its call’s stream token is closed at once', async (t) => {
  const databaseUrl = await freshDatabase();
  const sb = await start(databaseUrl);
  const { api, customer } = await liveSetup(sb.url);
  twilio.nextCall({ calleeAudio: [], calleeHangupAfterMs: 2_000 });
  const queued = await api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550108' });
  await until('the call to be answered', async () => (await api.get(`/v1/calls/${queued.body.id}`)).body.status === 'in_progress');
  const stream = twilio.calls.at(-1)!.stream!;
  const { default: WebSocket } = await import('ws');
  const forged = new WebSocket(stream.url);
  await new Promise((r) => forged.on('open', r));
  forged.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  forged.send(JSON.stringify({ event: 'start', streamSid: 'MZforged', start: { streamSid: 'MZforged', callSid: 'CAforged', customParameters: { call_id: queued.body.id, stream_token: 'forged' } } }));
  const closed = await new Promise<boolean>((resolve) => {
    forged.on('close', () => resolve(true));
    setTimeout(() => resolve(false), 3_000).unref();
  });
  t.true(closed, 'the forged stream was closed');
  await until('the real call to finish', async () => (await api.get(`/v1/calls/${queued.body.id}`)).body.finished);
  await sb.stop('SIGTERM');
});

test.serial('a forged or altered carrier callback is refused and changes nothing', async (t) => {
  const sb = await start(await freshDatabase());
  const form = new URLSearchParams({ CallSid: 'CA1', CallStatus: 'completed', CallDuration: '600' }).toString();
  const r = await call(sb.url, 'POST', '/telephony/twilio/status?call_id=00000000-0000-4000-8000-000000000000', {
    rawBody: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'forged' },
  });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'invalid_twilio_signature');
  await sb.stop('SIGTERM');
});

test.serial('a process killed mid-call: on restart the call is not dialled again, the hold is released, nothing is charged', async (t) => {
  const databaseUrl = await freshDatabase();
  const first = await start(databaseUrl);
  const { api, customer, key } = await liveSetup(first.url);
  twilio.nextCall({ calleeAudio: [], calleeHangupAfterMs: 600_000 });
  const before = twilio.calls.length;
  const queued = await api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550109' });
  await until('the call to be answered', async () => (await api.get(`/v1/calls/${queued.body.id}`)).body.status === 'in_progress');
  t.is((await api.get('/v1/balance')).body.reserved_cents, 400);
  await first.stop('SIGKILL');

  const second = await start(databaseUrl);
  const con = client(second.url, TOKEN);
  const api2 = client(second.url, key);
  // Dialler rounds run; nothing is dialled twice.
  await con.post('/admin/v1/dialler/run');
  await new Promise((r) => setTimeout(r, 500));
  t.is(twilio.calls.length, before + 1, 'exactly one carrier call for the request');
  await con.post('/admin/v1/test_clock/advance', { seconds: 30 * 60 });
  await con.post('/admin/v1/jobs/release_holds/run');
  t.like((await api2.get('/v1/balance')).body, { reserved_cents: 0, balance_cents: 10_000 });
  await con.post('/admin/v1/test_clock/advance', { seconds: 6 * 60 });
  await con.post('/admin/v1/jobs/finish_stale_calls/run');
  const lost = (await api2.get(`/v1/calls/${queued.body.id}`)).body;
  t.like(lost, { status: 'completed', finished: true, outcome: 'failed' });
  t.like((await api2.get('/v1/balance')).body, { reserved_cents: 0, balance_cents: 10_000 });
  t.deepEqual(await checkMoneyInvariants(databaseUrl), []);
  await second.stop('SIGTERM');
});

test.serial('a lost final status callback: the process asks Twilio how the call ended and records the true outcome', async (t) => {
  const databaseUrl = await freshDatabase();
  const sb = await start(databaseUrl);
  const { api, con, account } = await liveSetup(sb.url);
  // This test polls for a while: out of the request limits' way.
  await con.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 100_000, burst: 100_000 });
  // The callee hangs up after 2 s; Twilio's `completed` callback never reaches us (as in a
  // database outage, when it was answered 503 and not retried).
  twilio.nextCall({ calleeAudio: [], calleeHangupAfterMs: 2_000, durationSeconds: 95, loseStatusCallbacks: ['completed'] });
  const queued = await api.post('/v1/calls', { called_party: 'business', customer_id: (await api.get('/v1/customers')).body.data[0].id, phone: '+12025550118' });
  const t0 = Date.now();
  const done = await until(
    'the call to finish',
    async () => {
      const c = await api.get(`/v1/calls/${queued.body.id}`);
      return c.body.finished ? c.body : null;
    },
    45_000,
  );
  t.log(`finished ${Date.now() - t0} ms after queueing, without its final callback`);
  t.like(done, { status: 'completed', duration_seconds: 95 });
  t.not(done.outcome, 'failed', 'the true outcome, not a lost call');
  t.false(twilio.callbacksSent.some((cb) => cb.kind === 'status' && cb.params.CallStatus === 'completed' && cb.params.CallSid === twilio.calls.at(-1)!.sid));
  t.true(sb.logs().some((l) => l.msg === 'a call’s end was learned from the carrier' && l.call_id === queued.body.id));
  const usage = (await api.get('/v1/usage')).body.data;
  t.like(usage.find((l: any) => l.reference === done.id), { cause: 'call', amount_cents: -40, minutes: 2, applied: true });
  t.deepEqual(await checkMoneyInvariants(databaseUrl), []);
  await sb.stop('SIGTERM');
});
