import test from 'ava';
import { cleanUpEverything, freePort, makeTempRoot, startSwitchboard } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';
import { client } from '../helpers/http.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { until } from '../helpers/wait.ts';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio.ts';

/**
 * A reseller's walk through numbers in live mode, end to end: the program runs as a process with
 * its Twilio adapter pointed at the fake Twilio, rents a number through the provisioning number
 * step, verifies the customer's own number as caller ID through Twilio's signed callback to the
 * process, lists both and releases both. Nothing in the program knows it is talking to a fake.
 */
const TOKEN = 'sbc_e2e_numbers_live_console_token_7fQ2mZx9';
const SID = 'AC' + '2'.repeat(32);
const AUTH = 'twilio-auth-token-for-numbers-e2e';
const ACCOUNT_PATH = `/2010-04-01/Accounts/${SID}`;

let twilio: FakeTwilio;
test.before(async () => {
  twilio = await startFakeTwilio({ accountSid: SID, authToken: AUTH });
});
test.after.always(async () => {
  await twilio?.close();
  await cleanUpEverything();
});

test('live numbers: the number step rents at Twilio, a caller ID is verified by its signed callback, both listed and released, events and money follow', async (t) => {
  const databaseUrl = await freshDatabase();
  const port = await freePort();
  const sb = await startSwitchboard({
    dataDir: await makeTempRoot('switchboard-numbers-'),
    port,
    env: {
      DATABASE_URL: databaseUrl,
      SWITCHBOARD_ADMIN_TOKEN: TOKEN,
      SWITCHBOARD_TEST_CLOCK: '1',
      SWITCHBOARD_PUBLIC_URL: `http://127.0.0.1:${port}`,
      SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: AUTH,
      TWILIO_API_BASE_URL: twilio.baseUrl,
    },
  });
  const con = client(sb.url, TOKEN);
  const account = (await con.post('/admin/v1/accounts', { name: 'Numbers Agency', country: 'US' })).body;
  await con.post(`/admin/v1/accounts/${account.id}/kyb`, { status: 'verified' });
  await con.post(`/admin/v1/accounts/${account.id}/agreement`, { version: 'v1' });
  t.is((await con.post(`/admin/v1/accounts/${account.id}/go_live`)).status, 200);
  t.is((await con.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 10_000 })).status, 201);
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'live', label: 'e2e' })).body;
  const api = client(sb.url, key.secret);
  const customer = (await api.post('/v1/customers', { name: 'Bright Dental', country: 'US', timezone: 'America/New_York' })).body;
  t.false((await api.get(`/v1/customers/${customer.id}/readiness`)).body.checks.number_in_country);

  // The number step rents at Twilio: searched, then bought.
  const p = await api.post(`/v1/customers/${customer.id}/provisioning`, { steps: ['number'] });
  t.true(p.status < 300, p.text);
  t.like(p.body.steps.find((s: any) => s.step === 'number'), { done: true, blocker: null });
  t.deepEqual(
    twilio.requests.map((r) => `${r.method} ${r.path.replace(ACCOUNT_PATH, '')} ${r.status}`),
    ['GET /AvailablePhoneNumbers/US/Local.json 200', 'POST /IncomingPhoneNumbers.json 201'],
  );
  const [rented] = (await api.get(`/v1/customers/${customer.id}/numbers`)).body.data;
  t.like(rented, { kind: 'rented', status: 'active', mode: 'live', country: 'US', monthly_cents: 1500 });
  const [bought] = [...twilio.numbers.incoming.values()];
  t.is(bought.phoneNumber, rented.phone_number, 'the number Twilio sold');
  t.true((await api.get(`/v1/customers/${customer.id}/readiness`)).body.checks.number_in_country);

  // The customer's own number as caller ID: Twilio calls it and reports to the process, signed.
  twilio.numbers.nextValidation({ delayMs: 500 });
  const own = await api.post(`/v1/customers/${customer.id}/numbers`, { kind: 'caller_id', phone_number: '(202) 555-0142' });
  t.is(own.status, 201, own.text);
  t.like(own.body, { status: 'verifying', phone_number: '+12025550142' });
  const [validation] = twilio.numbers.validations;
  t.is(own.body.verification.code, validation.validationCode);
  t.deepEqual(validation.form.StatusCallback, [`${sb.url}/telephony/twilio/caller-id?number_id=${own.body.id}`]);
  await until('the caller ID verified', async () => (await api.get(`/v1/customers/${customer.id}/numbers/${own.body.id}`)).body.status === 'active', 10_000);
  const callback = twilio.callbacksSent.find((cb) => cb.kind === 'validation')!;
  t.is(callback.status, 204, 'the process took the signed callback');
  const [callerId] = [...twilio.numbers.callerIds.values()];

  const list = (await api.get(`/v1/customers/${customer.id}/numbers`)).body;
  t.deepEqual(list.data.map((n: any) => [n.id, n.kind, n.status]), [
    [own.body.id, 'caller_id', 'active'],
    [rented.id, 'rented', 'active'],
  ]);
  const usage = (await api.get(`/v1/usage?customer_id=${customer.id}`)).body.data;
  t.deepEqual(usage.map((l: any) => [l.cause, l.amount_cents, l.applied]).sort(), [['caller_id', -1200, true], ['number', -1500, true]]);
  t.is((await api.get('/v1/balance')).body.available_cents, 10_000 - 2700);

  // Both released: Twilio gets the number back and forgets the caller ID.
  for (const n of [rented, own.body]) {
    const r = await api.delete(`/v1/customers/${customer.id}/numbers/${n.id}`);
    t.is(r.status, 200, r.text);
    t.is(r.body.status, 'released');
  }
  const deletes = twilio.requests.filter((r) => r.method === 'DELETE').map((r) => `${r.path.replace(ACCOUNT_PATH, '')} ${r.status}`);
  t.deepEqual(deletes, [`/IncomingPhoneNumbers/${bought.sid}.json 204`, `/OutgoingCallerIds/${callerId.sid}.json 204`]);
  t.truthy(bought.releasedAt);
  t.is(twilio.numbers.callerIds.size, 0);
  t.false((await api.get(`/v1/customers/${customer.id}/readiness`)).body.checks.number_in_country);

  const ids = (type: string) => api.get(`/v1/events?type=${type}`).then((r) => r.body.data.map((e: any) => e.data.id).sort());
  t.deepEqual(await ids('number.assigned'), [rented.id, own.body.id].sort());
  t.deepEqual(await ids('number.released'), [rented.id, own.body.id].sort());
  t.deepEqual(await checkMoneyInvariants(databaseUrl), []);
  const stopped = await sb.stop('SIGTERM');
  t.is(stopped.code, 0);
});
