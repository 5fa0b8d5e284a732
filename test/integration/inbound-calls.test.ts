/**
 * People call back (issue 23, §5), in live mode on the real Twilio adapter against the fake
 * Twilio: the number is bought with its voice webhook, and test/fakes/twilio-inbound.ts plays a
 * person calling it: the signed webhook, the TwiML answered (Dial, Connect/Stream, Gather), the
 * number's final status callback. The tests share one fake and one service, so they run one at a time.
 */
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { until } from '../helpers/wait.ts';
import type { Client } from '../helpers/http.ts';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio.ts';
import { placeInboundCall } from '../fakes/twilio-inbound.ts';
import { loadAdmissionFacts } from '../../db/admission.ts';
import { createCallRepository } from '../../db/calls.ts';

const SID = 'AC' + '4'.repeat(32);
const AUTH = 'twilio-auth-token-for-inbound-tests';
const auth = { accountSid: SID, authToken: AUTH };

let fake: FakeTwilio;
let svc: TestService;
let db: pg.Pool;
test.before(async () => {
  fake = await startFakeTwilio({ accountSid: SID, authToken: AUTH, playbackSpeed: Infinity });
  svc = await startTestService({
    TWILIO_ACCOUNT_SID: SID,
    TWILIO_AUTH_TOKEN: AUTH,
    TWILIO_API_BASE_URL: fake.baseUrl,
    SWITCHBOARD_JOB_INTERVAL_MS: '3600000',
    SWITCHBOARD_DIALLER_POLL_MS: '3600000',
  });
  db = new pg.Pool({ connectionString: svc.databaseUrl, max: 2 });
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
  await fake?.close();
});

/** A funded live account, a customer (with `fields`), its rented number and its call settings. */
async function customerWithNumber(fields: Record<string, unknown>, callSettings: Record<string, unknown> = {}) {
  const a = await makeAccount(svc.url, { live: true });
  const top = await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 10_000 });
  if (top.status !== 201) throw new Error(top.text);
  const api = a.liveApi as Client;
  const customer = await makeCustomer(api, fields);
  const rented = await api.post(`/v1/customers/${customer.id}/numbers`, {});
  if (rented.status !== 201) throw new Error(rented.text);
  await db.query(`UPDATE customers SET call_settings = $2 WHERE id = $1`, [customer.id, JSON.stringify(callSettings)]);
  return { a, api, customer, number: rented.body.phone_number as string };
}

const callId = (url: string) => new URL(url).searchParams.get('call_id')!;
const countCalls = async () => (await db.query(`SELECT count(*)::int AS n FROM calls`)).rows[0].n as number;

async function finishedCall(api: Client, id: string) {
  let body: any;
  await until('the inbound call to finish', async () => {
    body = (await api.get(`/v1/calls/${id}`)).body;
    return body.finished;
  });
  return body;
}

async function invariantsHold(t: ExecutionContext) {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
}

test.serial('forward: the number is bought with its voice webhook; the call back is dialled to the customer’s phone showing the number called, recorded inbound with its outcome, billed by the minute, call.completed', async (t) => {
  const { api, customer, number } = await customerWithNumber({ name: 'Bright Dental', phone: '+12025550142' });
  // Item 1: Twilio was asked to send calls to the number to our webhook.
  const bought = [...fake.numbers.incoming.values()].find((n) => n.phoneNumber === number)!;
  t.deepEqual(bought.form.VoiceUrl, [`${svc.url}/telephony/twilio/inbound`]);
  t.deepEqual(bought.form.VoiceMethod, ['POST']);
  t.deepEqual(bought.form.StatusCallback, [`${svc.url}/telephony/twilio/inbound/status`]);

  const caller = '+12025550111';
  const call = await placeInboundCall(fake, auth, { from: caller, to: number, forward: { status: 'completed', durationSeconds: 80 }, durationSeconds: 95 });
  const [webhook, dialAction, status] = call.steps;
  t.is(webhook.status, 200);
  const id = callId(call.dials[0].attributes.action);
  t.is(
    webhook.body,
    '<?xml version="1.0" encoding="UTF-8"?><Response>' +
      // The opt-out offer first (2 s for a key), then the forward.
      `<Gather numDigits="1" timeout="2" action="${svc.url}/telephony/twilio/inbound/opt-out?call_id=${id}" method="POST"><Say language="en-US">To stop these calls, press 9.</Say></Gather>` +
      `<Dial callerId="${number}" timeout="20" timeLimit="1200" action="${svc.url}/telephony/twilio/inbound/dial-status?call_id=${id}" method="POST">` +
      '<Number>+12025550142</Number></Dial></Response>',
  );
  t.deepEqual(call.dials.map((d) => d.number), ['+12025550142']);
  t.is(dialAction.status, 200);
  t.regex(dialAction.body, /<Response><Hangup\/><\/Response>/);
  t.is(status.status, 204);

  const done = await finishedCall(api, id);
  t.like(done, { object: 'call', customer_id: customer.id, direction: 'inbound', phone: caller, status: 'completed', outcome: 'forwarded', duration_seconds: 95 });
  t.regex(done.summary, /forwarded/);
  const row = (await db.query(`SELECT direction, inbound_action, to_e164, from_e164, carrier_call_id FROM calls WHERE id = $1`, [id])).rows[0];
  t.deepEqual(row, { direction: 'inbound', inbound_action: 'forward', to_e164: caller, from_e164: number, carrier_call_id: call.callSid });

  // 95 seconds: two minutes at the spec's first tier (20 cents), through the call's hold.
  const usage = (await api.get(`/v1/usage?customer_id=${customer.id}`)).body.data as any[];
  t.like(usage.find((l) => l.reference === id), { cause: 'call', amount_cents: -40, minutes: 2, applied: true });
  t.like((await api.get('/v1/balance')).body, { reserved_cents: 0 });

  const events = (await api.get('/v1/events?type=call.completed')).body.data as any[];
  const completed = events.filter((e) => e.data.id === id);
  t.is(completed.length, 1);
  t.like(completed[0].data, { direction: 'inbound', outcome: 'forwarded', duration_seconds: 95, phone: caller });
  // What the reseller and its customer see never names a supplier (the TwiML goes to the carrier only).
  t.notRegex(JSON.stringify(done), /switchboard|twilio/i);
  await invariantsHold(t);
});

test.serial('forward nobody answers: the caller hears the message and the opt-out offer; nothing is charged', async (t) => {
  const { api, number } = await customerWithNumber({ name: 'Bright Dental', phone: '+12025550142' });
  const call = await placeInboundCall(fake, auth, { from: '+12025550112', to: number, forward: { status: 'no-answer' }, durationSeconds: 40 });
  const id = callId(call.dials[0].attributes.action);
  t.is(call.gathers.length, 2, 'the opt-out offer before the forward, and again with the message');
  t.true(call.said.some((s) => s.text.includes('Bright Dental')));
  const done = await finishedCall(api, id);
  t.like(done, { direction: 'inbound', outcome: 'message_played', duration_seconds: 40 });
  const usage = (await api.get(`/v1/usage`)).body.data as any[];
  t.false(usage.some((l) => l.reference === id && l.amount_cents !== 0));
  t.like((await api.get('/v1/balance')).body, { reserved_cents: 0 });
  await invariantsHold(t);
});

test.serial('agent: the call is streamed to the media server bound to the call; the agent greets the caller with the business’s name', async (t) => {
  const { api, number } = await customerWithNumber({ name: 'Bright Dental' }, { inbound: { action: 'agent' } });
  // A caller whose number ends in 0: the scripted agent hears "not interested" and ends the call.
  const caller = '+12025550120';
  const call = await placeInboundCall(fake, auth, { from: caller, to: number, durationSeconds: 30 });
  t.is(call.steps[0].status, 200);
  t.regex(call.steps[0].body, /^<\?xml version="1.0" encoding="UTF-8"\?><Response><Connect><Stream url="ws:\/\/127\.0\.0\.1:\d+\/media">/);
  const id = call.stream!.parameters.call_id;
  t.regex(id, /^[0-9a-f-]{36}$/);
  t.regex(call.stream!.parameters.stream_token, /^[A-Za-z0-9_-]{40,}$/);
  t.true(call.stream!.handle.record.opened);
  t.true(call.agentBytes > 0, 'the agent spoke on the stream');

  const done = await finishedCall(api, id);
  t.like(done, { direction: 'inbound', phone: caller, outcome: 'not_interested', duration_seconds: 30 });
  const transcript = (await api.get(`/v1/calls/${id}/transcript`)).body;
  const lines = (transcript.lines ?? transcript.data ?? transcript.transcript ?? transcript) as any[];
  t.is(lines.find((l) => l.role === 'agent')?.text, 'Thank you for calling Bright Dental. How can I help you?');
  t.notRegex(JSON.stringify(lines), /switchboard|twilio|openai/i);
  const usage = (await api.get(`/v1/usage`)).body.data as any[];
  t.like(usage.find((l) => l.reference === id), { cause: 'call', amount_cents: -20, minutes: 1 });
  await invariantsHold(t);
});

test.serial('message: a branded message says whom they reached; 9 records a do-not-call entry for the caller on the customer’s account and confirms; no charge', async (t) => {
  const { api, customer, number } = await customerWithNumber({ name: 'Bright Dental', brand_name: 'Bright Smiles' });
  // The identification names the registered name (issue 23), not the brand.
  await db.query(`UPDATE customers SET registered_name = 'Bright Dental LLC' WHERE id = $1`, [customer.id]);
  const caller = '+12025550113';
  const call = await placeInboundCall(fake, auth, { from: caller, to: number, digits: '9', durationSeconds: 20 });
  const [webhook, optOut] = call.steps;
  t.is(webhook.status, 200);
  t.regex(webhook.body, /<Say language="en-US">You have reached Bright Dental LLC\. /);
  t.regex(webhook.body, /<Gather numDigits="1" timeout="6" action="[^"]+\/telephony\/twilio\/inbound\/opt-out\?call_id=[0-9a-f-]{36}" method="POST"><Say language="en-US">To stop these calls, press 9\.<\/Say><\/Gather>/);
  t.is(optOut.status, 200);
  t.regex(optOut.body, /Your number has been removed\. Bright Dental LLC will not call you again\. Goodbye\.<\/Say><Hangup\/>/);
  t.true(call.hungUp);
  const id = callId(call.gathers[0].attributes.action);

  const entries = (await api.get('/v1/dnc')).body.data as any[];
  t.deepEqual(entries.filter((e) => e.phone === caller).map((e) => ({ source: e.source, call_id: e.call_id })), [{ source: 'callee_request', call_id: id }]);
  const done = await finishedCall(api, id);
  t.like(done, { direction: 'inbound', outcome: 'do_not_call', duration_seconds: 20 });
  t.false(((await api.get(`/v1/usage`)).body.data as any[]).some((l) => l.reference === id && l.amount_cents !== 0));
  await invariantsHold(t);
});

test.serial('forward refused a hold (the customer may run no call at once): the message answers instead, nothing is held or charged', async (t) => {
  const { api, customer, number } = await customerWithNumber({ name: 'Bright Dental', phone: '+12025550142' });
  await db.query(`UPDATE customers SET max_concurrent_calls = 0 WHERE id = $1`, [customer.id]);
  const available = (await api.get('/v1/balance')).body.available_cents;
  const call = await placeInboundCall(fake, auth, { from: '+12025550117', to: number, durationSeconds: 25 });
  t.deepEqual(call.dials, [], 'nothing was forwarded');
  t.is(call.gathers.length, 1);
  const id = callId(call.gathers[0].attributes.action);
  const done = await finishedCall(api, id);
  t.like(done, { direction: 'inbound', outcome: 'message_played', duration_seconds: 25 });
  t.like((await api.get('/v1/balance')).body, { reserved_cents: 0, available_cents: available });
  await invariantsHold(t);
});

test.serial('a withheld caller pressing 9 is thanked; no do-not-call entry is made for a number it does not have', async (t) => {
  const { api, number } = await customerWithNumber({ name: 'Bright Dental' });
  const call = await placeInboundCall(fake, auth, { from: 'anonymous', to: number, digits: '9', durationSeconds: 12 });
  t.regex(call.steps[1].body, /Thank you for calling\. Goodbye\.<\/Say><Hangup\/>/);
  t.deepEqual(((await api.get('/v1/dnc')).body.data as any[]).filter((e) => e.call_id === callId(call.gathers[0].attributes.action)), []);
});

test.serial('an unsigned or wrongly signed voice webhook is 403 and records nothing', async (t) => {
  const { number } = await customerWithNumber({ name: 'Bright Dental', phone: '+12025550142' });
  const before = await countCalls();
  for (const signature of ['none', 'wrong'] as const) {
    const call = await placeInboundCall(fake, auth, { from: '+12025550114', to: number, durationSeconds: 10, signature });
    t.is(call.steps.length, 1);
    t.is(call.steps[0].status, 403);
    t.is(JSON.parse(call.steps[0].body).error.code, 'invalid_twilio_signature');
  }
  t.is(await countCalls(), before);
});

test.serial('a number nobody rents hears the generic message; nothing is recorded against any customer', async (t) => {
  await customerWithNumber({ name: 'Bright Dental', phone: '+12025550142' });
  const before = await countCalls();
  const events = (await db.query(`SELECT count(*)::int AS n FROM events`)).rows[0].n;
  const call = await placeInboundCall(fake, auth, {
    from: '+12025550115',
    to: '+12025550999',
    voiceUrl: `${svc.url}/telephony/twilio/inbound`,
    statusCallbackUrl: `${svc.url}/telephony/twilio/inbound/status`,
    durationSeconds: 5,
  });
  t.is(call.steps[0].status, 200);
  t.is(call.steps[0].body, '<?xml version="1.0" encoding="UTF-8"?><Response><Say language="en-US">The number you have called is not taking calls. Goodbye.</Say><Hangup/></Response>');
  t.is(call.steps[1].status, 204, 'the status callback of a call never recorded is acknowledged');
  t.is(await countCalls(), before);
  t.is((await db.query(`SELECT count(*)::int AS n FROM events`)).rows[0].n, events);
  t.is((await db.query(`SELECT count(*)::int AS n FROM dnc_numbers WHERE e164 = '+12025550115'`)).rows[0].n, 0);
});

test.serial('inbound calls are never dialled, never outbound attempts or earlier outcomes, and never an open request for the number', async (t) => {
  const { a, api, customer, number } = await customerWithNumber({ name: 'Bright Dental', phone: '+12025550142' });
  const caller = '+12025550116';
  const call = await placeInboundCall(fake, auth, { from: caller, to: number, forward: { status: 'completed', durationSeconds: 10 }, durationSeconds: 15 });
  const id = callId(call.dials[0].attributes.action);
  await finishedCall(api, id);
  const dialled = fake.calls.length;

  const repo = createCallRepository(db);
  // The dialler's claim never takes it (nothing queued), nor does the frequency cap or the no-redial rule count it.
  t.deepEqual((await repo.claimDue(new Date(Date.now() + 86_400_000), 100, 'test', 30)).filter((c) => c.id === id), []);
  t.deepEqual(await repo.earlierOutcomes(customer.id, caller), []);
  const facts = await loadAdmissionFacts(db, { accountId: a.id, customerId: customer.id, toE164: caller, attemptsSince: new Date(0) }, new Date());
  t.deepEqual(facts.attempts, []);
  t.deepEqual(facts.earlier_outcomes, []);
  // A request to the caller is a new request, not the inbound call.
  const queued = await api.post('/v1/calls', { customer_id: customer.id, phone: caller, called_party: 'business' });
  t.is(queued.status, 201, queued.text);
  t.not(queued.body.id, id);
  t.is(fake.calls.length, dialled, 'nothing was dialled');
  // The calls list shows the inbound call among the calls.
  const listed = (await api.get(`/v1/calls?view=calls&customer_id=${customer.id}`)).body.data as any[];
  t.true(listed.some((c) => c.id === id && c.direction === 'inbound'));
});

test.serial('forward: the caller hears the opt-out offer before the forward (the voicemail message gives this number to stop the calls); 9 lists the caller and is not forwarded nor charged; another key is forwarded', async (t) => {
  const { api, number } = await customerWithNumber({ name: 'Bright Dental', phone: '+12025550142' });
  const caller = '+12025550118';
  const optedOut = await placeInboundCall(fake, auth, { from: caller, to: number, digits: '9', forward: { status: 'completed', durationSeconds: 30 }, durationSeconds: 9 });
  t.regex(optedOut.steps[0].body, /<Gather numDigits="1" timeout="[0-9]+" action="[^"]+\/telephony\/twilio\/inbound\/opt-out\?call_id=[0-9a-f-]{36}" method="POST"><Say language="en-US">To stop these calls, press 9\.<\/Say><\/Gather><Dial /);
  t.deepEqual(optedOut.dials, [], 'not forwarded after the 9');
  t.regex(optedOut.steps[1].body, /Your number has been removed\. Bright Dental will not call you again\. Goodbye\.<\/Say><Hangup\/>/);
  const id = callId(optedOut.gathers[0].attributes.action);
  t.deepEqual(((await api.get('/v1/dnc')).body.data as any[]).filter((e) => e.phone === caller).map((e) => e.call_id), [id]);
  const done = await finishedCall(api, id);
  t.like(done, { direction: 'inbound', outcome: 'do_not_call' });
  t.false(((await api.get(`/v1/usage`)).body.data as any[]).some((l) => l.reference === id && l.amount_cents !== 0), 'an opt-out costs nothing');

  const other = await placeInboundCall(fake, auth, { from: '+12025550119', to: number, digits: '1', forward: { status: 'completed', durationSeconds: 30 }, durationSeconds: 40 });
  t.deepEqual(other.dials.map((d) => d.number), ['+12025550142'], 'another key: forwarded');
  t.deepEqual(((await api.get('/v1/dnc')).body.data as any[]).filter((e) => e.phone === '+12025550119'), []);
  t.like(await finishedCall(api, callId(other.gathers[0].attributes.action)), { outcome: 'forwarded' });

  // A withheld caller's 9: nothing to list, thanked and not forwarded.
  const withheld = await placeInboundCall(fake, auth, { from: 'anonymous', to: number, digits: '9', forward: { status: 'completed', durationSeconds: 30 }, durationSeconds: 6 });
  t.deepEqual(withheld.dials, []);
  t.regex(withheld.steps[1].body, /Thank you for calling\. Goodbye\.<\/Say><Hangup\/>/);
  const withheldId = callId(withheld.gathers[0].attributes.action);
  t.like(await finishedCall(api, withheldId), { outcome: 'message_played' });
  t.false(((await api.get(`/v1/usage`)).body.data as any[]).some((l) => l.reference === withheldId && l.amount_cents !== 0), 'not forwarded: nothing charged');
  await invariantsHold(t);
});

test.serial('agent: a withheld caller pressing 9 is hung up on at once, and no do-not-call entry is made for a number it does not have', async (t) => {
  const { api, number } = await customerWithNumber({ name: 'Bright Dental' }, { inbound: { action: 'agent' } });
  const call = await placeInboundCall(fake, auth, { from: 'anonymous', to: number, streamDtmf: [{ atMs: 1, digit: '9' }], durationSeconds: 5 });
  const id = call.stream!.parameters.call_id;
  const done = await finishedCall(api, id);
  t.is(done.direction, 'inbound');
  t.is((await db.query(`SELECT end_reason FROM calls WHERE id = $1`, [id])).rows[0].end_reason, 'do_not_call', 'hung up for the 9');
  t.deepEqual((await db.query(`SELECT e164 FROM dnc_numbers WHERE call_id = $1 OR e164 = 'anonymous'`, [id])).rows, []);
  await invariantsHold(t);
});
