/**
 * Issue 23, second look, live mode: the service's Twilio adapter against the fake Twilio (REST,
 * signed callbacks, Media Streams with `dtmf`, playback in real time), with the scripted agent and
 * the deterministic voice. Races between a keypress and a machine.
 */
import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, makeReadyCustomer } from '../helpers/calls.ts';
import type { Client } from '../helpers/http.ts';
import { startFakeTwilio, type FakeCall, type FakeTwilio } from '../fakes/twilio.ts';

const SID = 'AC' + '3'.repeat(32);
const AUTH = 'twilio-auth-token-for-second-look-tests';

let twilio: FakeTwilio;
let svc: TestService;
let account: TestAccount;
let api: Client;
let ready: any;
let db: pg.Client;

test.before(async () => {
  twilio = await startFakeTwilio({ accountSid: SID, authToken: AUTH, playbackSpeed: 1 });
  svc = await startTestService({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: AUTH, TWILIO_API_BASE_URL: twilio.baseUrl, SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url, { live: true });
  api = (account as any).liveApi;
  await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 10_000 });
  ready = await makeReadyCustomer(svc.url, api, { name: 'Bright Dental LLC' });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await db.query(`UPDATE customers SET registered_name = 'Bright Dental Holdings LLC', call_settings = '{"voicemail":{"action":"leave_message"}}' WHERE id = $1`, [ready.id]);
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

const record = async (callId: string) => (await db.query(`SELECT amd_verdict, voicemail_left, opted_out_via FROM call_compliance_records WHERE call_id = $1`, [callId])).rows[0];

/** Queues a call, dials it and waits until it is finished and the fake's last callback was answered. */
async function place(phone: string): Promise<{ done: any; carrier: FakeCall }> {
  const before = twilio.calls.length;
  const r = await api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, phone });
  if (r.status !== 201) throw new Error(r.text);
  const deadline = Date.now() + 30_000;
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

test.serial('a 9 pressed while the voicemail message plays: listed once, hung up at once, and the record does not say the message was left', async (t) => {
  // The machine's verdict comes early; the message (about 12 s at real-time playback) is playing when the 9 comes.
  twilio.nextCall({ answeredBy: 'machine_end_beep', amdDelayMs: 300, dtmf: [{ atMs: 2_500, digit: '9' }], durationSeconds: 30 });
  const { done, carrier } = await place('+12025550164');
  t.is(done.outcome, 'do_not_call');
  t.is(carrier.endReason, 'api_hangup');
  t.true(carrier.media!.marksReceived.includes('voicemail_message_end'), 'the message was being played');
  const rec = await record(done.id);
  t.like(rec, { amd_verdict: 'machine_end_beep', opted_out_via: 'dtmf' });
  t.is(rec.voicemail_left, null, 'the message was cut by the 9: it was not left');
  const transcript = (await db.query(`SELECT transcript FROM calls WHERE id = $1`, [done.id])).rows[0].transcript ?? [];
  t.false(transcript.some((l: any) => /automated message from/.test(l.text)), 'no transcript line claims the whole message was said');
  const entries = (await db.query(`SELECT source, call_id FROM dnc_numbers WHERE account_id = $1 AND e164 = '+12025550164'`, [account.id])).rows;
  t.deepEqual(entries, [{ source: 'callee_request', call_id: done.id }]);
});

test.serial('a machine, leave_message, but the caller ID is a verified caller ID (the customer’s own line, never answered by us): no message is left, since its number would reach no automated opt-out; hung up, outcome voicemail', async (t) => {
  const numbers = (await db.query(`SELECT id FROM phone_numbers WHERE customer_id = $1 AND kind = 'rented'`, [ready.id])).rows;
  await db.query(`UPDATE phone_numbers SET kind = 'caller_id' WHERE customer_id = $1 AND kind = 'rented'`, [ready.id]);
  t.teardown(() => db.query(`UPDATE phone_numbers SET kind = 'rented' WHERE id = ANY($1::uuid[])`, [numbers.map((n) => n.id)]));
  twilio.nextCall({ answeredBy: 'machine_end_beep', amdDelayMs: 300, durationSeconds: 20 });
  const { done, carrier } = await place('+12025550154');
  t.like(done, { outcome: 'voicemail' });
  t.is(carrier.endReason, 'api_hangup');
  t.false(carrier.media!.marksReceived.includes('voicemail_message_end'), 'no message was played');
  t.like(await record(done.id), { amd_verdict: 'machine_end_beep', voicemail_left: null });
});
