/**
 * Machines and voicemail in test mode (issue 23 §3): the simulated carrier answers, reports its
 * answering-machine verdict asynchronously (as Twilio's AsyncAmd does) and the call acts on it.
 * Scenarios by the called number: last digit 0 a person; last digit 4 a machine, whose kind is
 * the second-to-last digit (7 silence, 8 fax, else a beep).
 */
import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { nationalFormat } from '../../actors/shared/phone.ts';

let svc: TestService;
let account: TestAccount;
let ready: any;
let db: pg.Client;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  ready = await makeReadyCustomer(svc.url, account.api, { name: 'Bright Dental LLC', brand_name: 'Bright Smile' });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  // The registered name is the customer's own field (issue 23); set here as the API would store it.
  await db.query(`UPDATE customers SET registered_name = 'Bright Dental Holdings LLC' WHERE id = $1`, [ready.id]);
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

const voicemailAction = (action: 'hang_up' | 'leave_message') =>
  db.query(`UPDATE customers SET call_settings = jsonb_build_object('voicemail', jsonb_build_object('action', $2::text)) WHERE id = $1`, [ready.id, action]);
const queue = (phone: string) => account.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, phone });
const record = async (callId: string) => (await db.query(`SELECT amd_verdict, amd_at, voicemail_left FROM call_compliance_records WHERE call_id = $1`, [callId])).rows[0];
const usageOf = async (callId: string) => (await account.api.get('/v1/usage')).body.data.find((l: any) => l.reference === callId);

test.serial('a person answers: the verdict `human` is recorded and nothing stops; the call ends as the conversation does', async (t) => {
  await voicemailAction('leave_message');
  const r = await queue('+12025550100');
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.like(done, { outcome: 'not_interested', duration_seconds: 60 });
  const rec = await record(r.body.id);
  t.is(rec.amd_verdict, 'human');
  t.truthy(rec.amd_at);
  t.is(rec.voicemail_left, null);
});

test.serial('a machine with a beep, leave_message: the message (registered name, opt-out number) is played after the verdict, then the call hangs up; outcome voicemail, minutes billed', async (t) => {
  await voicemailAction('leave_message');
  const r = await queue('+12025550104');
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.like(done, { outcome: 'voicemail', duration_seconds: 30, summary: 'The call reached voicemail.' });
  const rec = await record(r.body.id);
  t.is(rec.amd_verdict, 'machine_end_beep');
  const from = (await db.query(`SELECT from_e164 FROM calls WHERE id = $1`, [r.body.id])).rows[0].from_e164;
  t.truthy(from);
  t.regex(rec.voicemail_left, /^Hello, this is an automated message from Bright Dental Holdings LLC\./);
  t.true(rec.voicemail_left.includes(`to stop these calls, call ${nationalFormat(from)}`), rec.voicemail_left);
  t.notRegex(rec.voicemail_left, /switchboard|twilio|openai/i);
  const transcript = (await account.api.get(`/v1/calls/${r.body.id}/transcript`)).body;
  t.true(transcript.lines.some((l: any) => l.role === 'agent' && l.text === rec.voicemail_left), 'the message left is in the transcript');
  t.like(await usageOf(r.body.id), { cause: 'call', minutes: 1, amount_cents: -20 });
});

test.serial("the customer's own voicemail message is said between the name and the opt-out number", async (t) => {
  await db.query(
    `UPDATE customers SET call_settings = '{"voicemail":{"action":"leave_message","message":"We have a spring offer on cleanings."}}' WHERE id = $1`,
    [ready.id],
  );
  const r = await queue('+12025550114');
  await dialUntilFinished(account, account.api, r.body.id);
  const rec = await record(r.body.id);
  t.regex(rec.voicemail_left, /Bright Dental Holdings LLC\. We have a spring offer on cleanings\. To reach Bright Dental Holdings LLC, or to stop these calls, call /);
});

test.serial('a machine ending in silence, hang_up: the call hangs up at the verdict without a message; outcome voicemail', async (t) => {
  await voicemailAction('hang_up');
  const r = await queue('+12025550174');
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.like(done, { outcome: 'voicemail', duration_seconds: 30 });
  const rec = await record(r.body.id);
  t.is(rec.amd_verdict, 'machine_end_silence');
  t.is(rec.voicemail_left, null);
  t.like(await usageOf(r.body.id), { cause: 'call', minutes: 1 });
});

test.serial('a fax: hung up at once, outcome fax', async (t) => {
  await voicemailAction('leave_message');
  const r = await queue('+12025550184');
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.like(done, { outcome: 'fax', duration_seconds: 5, summary: 'A fax machine answered the call.' });
  const rec = await record(r.body.id);
  t.is(rec.amd_verdict, 'fax');
  t.is(rec.voicemail_left, null);
  t.is((await db.query(`SELECT end_reason FROM calls WHERE id = $1`, [r.body.id])).rows[0].end_reason, 'fax');
});

test.serial('no answer: the call ends no_answer and nothing is billed', async (t) => {
  const r = await queue('+12025550102');
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.like(done, { outcome: 'no_answer', duration_seconds: 0 });
  t.is(await record(r.body.id).then((x) => x.amd_verdict), null);
});
