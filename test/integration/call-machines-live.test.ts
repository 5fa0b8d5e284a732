/**
 * Machines and voicemail in live mode (issue 23 §3): the service's Twilio adapter against the
 * fake Twilio (REST, signed callbacks, Media Streams), which answers at once and posts its
 * asynchronous answering-machine verdict, as Twilio does with `AsyncAmd=true`. The agent is the
 * scripted one (no OpenAI key): silent at a machine (numbers ending in 4), so what happens there
 * is the call's own doing.
 */
import test from 'ava';
import pg from 'pg';
import twilioSdk from 'twilio';
import { call } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, makeReadyCustomer } from '../helpers/calls.ts';
import type { Client } from '../helpers/http.ts';
import { startFakeTwilio, type FakeCall, type FakeTwilio } from '../fakes/twilio.ts';
import { nationalFormat } from '../../actors/shared/phone.ts';

const SID = 'AC' + '2'.repeat(32);
const AUTH = 'twilio-auth-token-for-machine-tests';

let twilio: FakeTwilio;
let svc: TestService;
let account: TestAccount;
let api: Client;
let ready: any;
let db: pg.Client;

test.before(async () => {
  // Agent audio plays 50 times faster than real time: the voicemail message's mark comes back soon.
  twilio = await startFakeTwilio({ accountSid: SID, authToken: AUTH, playbackSpeed: 50 });
  svc = await startTestService({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: AUTH, TWILIO_API_BASE_URL: twilio.baseUrl, SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url, { live: true });
  api = (account as any).liveApi;
  await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 10_000 });
  ready = await makeReadyCustomer(svc.url, api, { name: 'Bright Dental LLC' });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await db.query(`UPDATE customers SET registered_name = 'Bright Dental Holdings LLC' WHERE id = $1`, [ready.id]);
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
  await twilio?.close();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

const voicemailAction = (action: 'hang_up' | 'leave_message') =>
  db.query(`UPDATE customers SET call_settings = jsonb_build_object('voicemail', jsonb_build_object('action', $2::text)) WHERE id = $1`, [ready.id, action]);
const record = async (callId: string) => (await db.query(`SELECT amd_verdict, voicemail_left FROM call_compliance_records WHERE call_id = $1`, [callId])).rows[0];

/** Queues a call, dials it and waits until it is finished and the fake's last callback was answered. */
async function place(phone: string): Promise<{ done: any; carrier: FakeCall }> {
  const before = twilio.calls.length;
  const r = await api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, phone });
  if (r.status !== 201) throw new Error(r.text);
  const deadline = Date.now() + 20_000;
  for (;;) {
    await account.admin.post('/admin/v1/dialler/run');
    const c = await api.get(`/v1/calls/${r.body.id}`);
    if (c.body.finished) {
      const carrier = twilio.calls[before];
      await carrier.done;
      return { done: c.body, carrier };
    }
    if (Date.now() > deadline) throw new Error(`call did not finish: ${JSON.stringify(c.body)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

const amdCallbacks = (carrier: FakeCall) => twilio.callbacksSent.filter((c) => c.callSid === carrier.sid && c.kind === 'amd');

test.serial('the call asks Twilio for asynchronous detection (DetectMessageEnd, AsyncAmd, its AMD callback) and records nothing from the answer; a person: nothing stops', async (t) => {
  await voicemailAction('leave_message');
  twilio.nextCall({ answeredBy: 'human', durationSeconds: 60 });
  const { done, carrier } = await place('+12025550100');
  t.deepEqual(carrier.form.MachineDetection, ['DetectMessageEnd']);
  t.deepEqual(carrier.form.AsyncAmd, ['true']);
  t.deepEqual(carrier.form.AsyncAmdStatusCallback, [`${svc.url}/telephony/twilio/amd?call_id=${done.id}`]);
  t.deepEqual(carrier.form.AsyncAmdStatusCallbackMethod, ['POST']);
  t.false('Record' in carrier.form);
  t.deepEqual(carrier.form.Timeout, ['30']);
  t.like(done, { outcome: 'not_interested', duration_seconds: 60 });
  const amd = amdCallbacks(carrier);
  t.is(amd.length, 1);
  t.like(amd[0], { status: 204, params: { AnsweredBy: 'human' } });
  t.is(carrier.media?.clears, 0, 'the opening was never stopped');
  t.false(carrier.media?.marksReceived.includes('voicemail_message_end'));
  t.is((await record(done.id)).amd_verdict, 'human');
});

test.serial('a machine with a beep, leave_message: the opening stops at the verdict, the message (registered name, opt-out number) plays, the call hangs up once its mark is back; outcome voicemail; the minutes billed as used', async (t) => {
  await voicemailAction('leave_message');
  twilio.nextCall({ answeredBy: 'machine_end_beep', durationSeconds: 75 });
  const { done, carrier } = await place('+12025550104');
  t.like(done, { outcome: 'voicemail', duration_seconds: 75, summary: 'The call reached voicemail.' });
  t.like(amdCallbacks(carrier)[0], { status: 204, params: { AnsweredBy: 'machine_end_beep' } });
  t.true(carrier.media!.clears >= 1, 'the opening was stopped');
  t.deepEqual(carrier.media!.marksEchoed.filter((m) => m === 'voicemail_message_end'), ['voicemail_message_end'], 'the message played to its end');
  t.is(carrier.endReason, 'api_hangup', 'we hung up after it');
  const rec = await record(done.id);
  t.is(rec.amd_verdict, 'machine_end_beep');
  t.regex(rec.voicemail_left, /^Hello, this is an automated message from Bright Dental Holdings LLC\./);
  t.true(rec.voicemail_left.includes(nationalFormat('+12025550188')), rec.voicemail_left);
  // The message's audio reached the carrier: the deterministic voice speaks 65 ms per character.
  t.true(carrier.media!.agentBytes >= rec.voicemail_left.replace(/\s/g, '').length * 65 * 8);
  const usage = (await api.get('/v1/usage')).body.data.find((l: any) => l.reference === done.id);
  t.like(usage, { cause: 'call', minutes: 2, amount_cents: -40 });
});

test.serial('a machine ending in silence, hang_up: hung up at the verdict, no message; outcome voicemail', async (t) => {
  await voicemailAction('hang_up');
  twilio.nextCall({ answeredBy: 'machine_end_silence', durationSeconds: 20 });
  const { done, carrier } = await place('+12025550174');
  t.like(done, { outcome: 'voicemail', duration_seconds: 20 });
  t.like(amdCallbacks(carrier)[0], { params: { AnsweredBy: 'machine_end_silence' } });
  t.is(carrier.endReason, 'api_hangup');
  t.false(carrier.media!.marksReceived.includes('voicemail_message_end'));
  t.like(await record(done.id), { amd_verdict: 'machine_end_silence', voicemail_left: null });
  t.like((await api.get('/v1/usage')).body.data.find((l: any) => l.reference === done.id), { minutes: 1, amount_cents: -20 });
});

test.serial('a fax: hung up at once, outcome fax', async (t) => {
  await voicemailAction('leave_message');
  twilio.nextCall({ answeredBy: 'fax', durationSeconds: 4 });
  const { done, carrier } = await place('+12025550184');
  t.like(done, { outcome: 'fax', summary: 'A fax machine answered the call.' });
  t.is(carrier.endReason, 'api_hangup');
  t.false(carrier.media!.marksReceived.includes('voicemail_message_end'));
  t.like(await record(done.id), { amd_verdict: 'fax', voicemail_left: null });
});

test.serial('machine_start (a machine, before its greeting ends), leave_message: hung up with no message, which the greeting would cut; outcome voicemail', async (t) => {
  await voicemailAction('leave_message');
  twilio.nextCall({ answeredBy: 'machine_start', durationSeconds: 20 });
  const { done, carrier } = await place('+12025550124');
  t.like(done, { outcome: 'voicemail' });
  t.like(amdCallbacks(carrier)[0], { params: { AnsweredBy: 'machine_start' } });
  t.is(carrier.endReason, 'api_hangup');
  t.false(carrier.media!.marksReceived.includes('voicemail_message_end'));
  t.like(await record(done.id), { amd_verdict: 'machine_start', voicemail_left: null });
});

test.serial('machine_end_other, leave_message: a machine too, the message with the registered name is left; outcome voicemail', async (t) => {
  await voicemailAction('leave_message');
  twilio.nextCall({ answeredBy: 'machine_end_other', durationSeconds: 40 });
  const { done, carrier } = await place('+12025550134');
  t.like(done, { outcome: 'voicemail' });
  t.deepEqual(carrier.media!.marksEchoed.filter((m) => m === 'voicemail_message_end'), ['voicemail_message_end']);
  const rec = await record(done.id);
  t.is(rec.amd_verdict, 'machine_end_other');
  t.regex(rec.voicemail_left, /^Hello, this is an automated message from Bright Dental Holdings LLC\./);
});

test.serial('unknown: treated as a person, nothing stops; the call ends as the conversation does', async (t) => {
  await voicemailAction('leave_message');
  twilio.nextCall({ answeredBy: 'unknown', durationSeconds: 60 });
  const { done, carrier } = await place('+12025550120');
  t.like(done, { outcome: 'not_interested' });
  t.is(carrier.media?.clears, 0, 'the opening was never stopped');
  t.like(await record(done.id), { amd_verdict: 'unknown', voicemail_left: null });
});

test.serial('nobody picks up within the ring Timeout: the call ends no_answer at the Timeout, nothing billed', async (t) => {
  twilio.nextCall({ ringMs: 60_000 });
  const started = Date.now();
  const { done, carrier } = await place('+12025550190');
  t.true(Date.now() - started < 10_000, 'not the 60 s the callee would have taken');
  t.like(done, { outcome: 'no_answer', duration_seconds: 0 });
  t.like(carrier, { status: 'no-answer', endReason: 'unanswered', media: null });
  t.is(amdCallbacks(carrier).length, 0);
});

test.serial('the AMD callback: a forged one is refused (403), a malformed one is 400, a repeat is stored and acted on once', async (t) => {
  twilio.nextCall({ answeredBy: 'human', durationSeconds: 30 });
  const { done, carrier } = await place('+12025550110');
  const path = `/telephony/twilio/amd?call_id=${done.id}`;
  const post = (form: Record<string, string>, signature = twilioSdk.getExpectedTwilioSignature(AUTH, `${svc.url}${path}`, form)) =>
    call(svc.url, 'POST', path, { rawBody: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature } });
  const form = { AccountSid: SID, CallSid: carrier.sid, AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '4100' };
  const forged = await post(form, 'forged');
  t.is(forged.status, 403);
  t.is(forged.body.error.code, 'invalid_twilio_signature');
  const malformed = await post({ ...form, AnsweredBy: 'robot' });
  t.is(malformed.status, 400);
  t.is(malformed.body.error.code, 'invalid_parameter');
  // Twilio's verdict came already (human): a second one for the same call is the first one.
  t.is((await post(form)).status, 204);
  const rows = (await db.query(`SELECT kind, report, processed_at FROM carrier_reports WHERE call_id = $1 AND kind = 'amd'`, [done.id])).rows;
  t.is(rows.length, 1);
  t.is(rows[0].report.answeredBy, 'human');
  t.truthy(rows[0].processed_at);
  t.is((await record(done.id)).amd_verdict, 'human');
});

test.serial('a verdict whose callback reaches a process without the call’s stream is left for the process that holds it: the message is still left', async (t) => {
  await voicemailAction('leave_message');
  // A second process on the same database, serving the API only (no media server, no dialler).
  const other = await startTestService({ DATABASE_URL: svc.databaseUrl, SWITCHBOARD_ROLES: 'api', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: AUTH, TWILIO_API_BASE_URL: twilio.baseUrl });
  t.teardown(() => other.stop());
  // Twilio's callback is delivered to the other process (here: lost on its way to ours, and posted there by the test).
  twilio.nextCall({ answeredBy: 'machine_end_beep', durationSeconds: 40, loseAmdCallback: true });
  const before = twilio.calls.length;
  const r = await api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, phone: '+12025550144' });
  const deadline = Date.now() + 15_000;
  while (!twilio.calls[before]?.amdAt) {
    if (Date.now() > deadline) throw new Error('no verdict');
    await account.admin.post('/admin/v1/dialler/run');
    await new Promise((res) => setTimeout(res, 50));
  }
  const carrier = twilio.calls[before];
  const path = `/telephony/twilio/amd?call_id=${r.body.id}`;
  const form = { AccountSid: SID, CallSid: carrier.sid, AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '7000' };
  const posted = await call(other.url, 'POST', path, {
    rawBody: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSdk.getExpectedTwilioSignature(AUTH, `${other.url}${path}`, form) },
  });
  t.is(posted.status, 204);
  let done: any;
  while (!(done = (await api.get(`/v1/calls/${r.body.id}`)).body).finished) {
    if (Date.now() > deadline + 15_000) throw new Error(`not finished: ${JSON.stringify(done)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  await carrier.done;
  t.like(done, { outcome: 'voicemail', duration_seconds: 40 });
  t.true(carrier.media!.marksEchoed.includes('voicemail_message_end'), 'the process with the stream played the message');
  const rec = await record(done.id);
  t.like(rec, { amd_verdict: 'machine_end_beep' });
  t.regex(rec.voicemail_left ?? '', /Bright Dental Holdings LLC/);
});
