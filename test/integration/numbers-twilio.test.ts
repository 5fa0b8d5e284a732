/**
 * Numbers (issue 14) in live mode on the real TwilioCarrier against the fake Twilio: what the
 * service asks Twilio for when it rents, refuses, releases and verifies caller IDs, what it does
 * with Twilio's signed validation callback (and with a forged or lost one), and that a number
 * bought for an order that does not commit goes back. The money invariants after each test that
 * moves money. The tests share one fake (its requests and stock), so they run one at a time.
 */
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import twilio from 'twilio';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { call, type Client } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { startFakeTwilio, type FakeRequest, type FakeTwilio } from '../fakes/twilio.ts';

const SID = 'AC' + '1'.repeat(32);
const AUTH = 'twilio-auth-token-for-number-tests';
const ACCOUNT_PATH = `/2010-04-01/Accounts/${SID}`;

let fake: FakeTwilio;
let svc: TestService;
test.before(async () => {
  fake = await startFakeTwilio({ accountSid: SID, authToken: AUTH });
  svc = await startTestService({
    TWILIO_ACCOUNT_SID: SID,
    TWILIO_AUTH_TOKEN: AUTH,
    TWILIO_API_BASE_URL: fake.baseUrl,
    SWITCHBOARD_JOB_INTERVAL_MS: '3600000',
    SWITCHBOARD_DIALLER_POLL_MS: '3600000',
  });
});
test.after.always(async () => {
  await svc?.stop();
  await fake?.close();
});

type Live = TestAccount & { liveApi: Client };
const liveAccount = async (topUpCents: number): Promise<Live> => {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  const top = await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: topUpCents });
  if (top.status !== 201) throw new Error(`top-up: ${top.text}`);
  return a;
};

async function invariantsHold(t: ExecutionContext) {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
}

const ledgerOf = async (api: Client, customerId: string) => (await api.get(`/v1/usage?customer_id=${customerId}`)).body.data as any[];
const eventsOf = async (api: Client, type: string) => (await api.get(`/v1/events?type=${type}`)).body.data as any[];
const numberOf = async (api: Client, customerId: string, id: string) => (await api.get(`/v1/customers/${customerId}/numbers/${id}`)).body;

/** The fake's requests from here on (`since()` marks where "here" is). */
function requestsFrom() {
  const start = fake.requests.length;
  return () => fake.requests.slice(start);
}
const brief = (r: FakeRequest) => `${r.method} ${r.path.replace(ACCOUNT_PATH, '')} ${r.status}`;

/** Posts `form` to the caller ID callback as Twilio would, signed with `token` over `url` (default: the URL posted to). */
function postCallerIdCallback(numberId: string, form: Record<string, string>, sign: { token?: string; url?: string; signature?: string } = {}) {
  const path = `/telephony/twilio/caller-id?number_id=${numberId}`;
  const signature = sign.signature ?? twilio.getExpectedTwilioSignature(sign.token ?? AUTH, sign.url ?? `${svc.url}${path}`, form);
  return call(svc.url, 'POST', path, {
    rawBody: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
  });
}

/** A snapshot of the rows a refused callback must leave alone. */
async function numbersSnapshot(): Promise<string> {
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query(`SELECT id, status, carrier_ref, renews_on, failure_reason, updated_at FROM phone_numbers ORDER BY seq`);
    const lines = await db.query(`SELECT count(*)::int AS n FROM ledger_entries`);
    const events = await db.query(`SELECT count(*)::int AS n FROM events`);
    return JSON.stringify({ rows, lines: lines.rows[0].n, events: events.rows[0].n });
  } finally {
    await db.end();
  }
}

test.serial('live rent: searched then bought at Twilio, the number is the one Twilio sold, the first month on the ledger; AreaCode is sent, and an area without stock is searched again without it', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  const seen = requestsFrom();
  const r = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { area_code: '415' });
  t.is(r.status, 201, r.text);
  t.like(r.body, { kind: 'rented', status: 'active', mode: 'live', country: 'US', monthly_cents: 1500 });
  t.deepEqual(seen().map(brief), ['GET /AvailablePhoneNumbers/US/Local.json 200', 'POST /IncomingPhoneNumbers.json 201']);
  const [search, buy] = seen();
  t.is(search.query?.get('AreaCode'), '415');
  t.deepEqual(buy.form.PhoneNumber, [r.body.phone_number]);
  t.true(r.body.phone_number.startsWith('+1415'), r.body.phone_number);
  const sold = [...fake.numbers.incoming.values()].filter((n) => n.phoneNumber === r.body.phone_number);
  t.is(sold.length, 1, 'Twilio sold exactly the number the API answers');
  t.is(sold[0].releasedAt, null);

  const lines = await ledgerOf(a.liveApi, c.id);
  t.is(lines.length, 1);
  t.like(lines[0], { type: 'usage', cause: 'number', amount_cents: -1500, applied: true, customer_id: c.id });
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, 10_000 - 1500);

  // The fake has no number in area code 212 (New York, in service): an empty first search, then one without AreaCode.
  const again = requestsFrom();
  const fallback = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { area_code: '212' });
  t.is(fallback.status, 201, fallback.text);
  t.deepEqual(again().map(brief), ['GET /AvailablePhoneNumbers/US/Local.json 200', 'GET /AvailablePhoneNumbers/US/Local.json 200', 'POST /IncomingPhoneNumbers.json 201']);
  t.is(again()[0].query?.get('AreaCode'), '212');
  t.false(again()[1].query?.has('AreaCode'));
  t.true(fallback.body.phone_number.startsWith('+1202'), fallback.body.phone_number);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 2);
  await invariantsHold(t);
});

test.serial('GB rents; DE is 409 no_number_available naming the regulatory bundle, FR naming the address; nothing bought, nothing charged', async (t) => {
  const a = await liveAccount(10_000);
  const gb = await makeCustomer(a.liveApi, { country: 'GB' });
  const rented = await a.liveApi.post(`/v1/customers/${gb.id}/numbers`, {});
  t.is(rented.status, 201, rented.text);
  t.like(rented.body, { country: 'GB', status: 'active' });
  t.true(rented.body.phone_number.startsWith('+44'));
  t.is([...fake.numbers.incoming.values()].filter((n) => n.phoneNumber === rented.body.phone_number).length, 1);

  for (const [country, words] of [['DE', /regulatory bundle/], ['FR', /address/]] as const) {
    const c = await makeCustomer(a.liveApi, { country });
    const seen = requestsFrom();
    const r = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, {});
    t.is(r.status, 409, r.text);
    t.is(r.body.error.code, 'no_number_available');
    t.regex(r.body.error.message, words, country);
    t.regex(r.body.error.message, /nothing was charged/);
    t.deepEqual(seen().map(brief), [`GET /AvailablePhoneNumbers/${country}/Local.json 200`, 'POST /IncomingPhoneNumbers.json 400'], country);
    t.false([...fake.numbers.incoming.values()].some((n) => n.country === country), `nothing bought in ${country}`);
    t.is((await a.liveApi.get(`/v1/customers/${c.id}/numbers`)).body.data.length, 0);
    t.is((await ledgerOf(a.liveApi, c.id)).length, 0);
  }
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, 10_000 - 1500, 'only the GB number was charged');
  await invariantsHold(t);
});

test.serial('NZ (no stock at Twilio) is 409 no_number_available; NZ is not a market, so the test opens it in its own database first', async (t) => {
  const a = await liveAccount(10_000);
  t.is((await a.liveApi.post('/v1/customers', { name: 'Kiwi Dental', country: 'NZ' })).status, 400, 'no customer in a country not opened');
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  t.teardown(() => db.end());
  await db.query(`INSERT INTO countries (country, name, calling_language, default_timezone, number_route) VALUES ('NZ', 'New Zealand', 'en-NZ', 'Pacific/Auckland', 'local_rental') ON CONFLICT DO NOTHING`);
  const c = await makeCustomer(a.liveApi, { country: 'NZ' });
  const seen = requestsFrom();
  const r = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, {});
  t.is(r.status, 409, r.text);
  t.is(r.body.error.code, 'no_number_available');
  t.deepEqual(seen().map(brief), ['GET /AvailablePhoneNumbers/NZ/Local.json 200'], 'searched, nothing to buy');
  t.is((await ledgerOf(a.liveApi, c.id)).length, 0);
  await invariantsHold(t);
});

test.serial('provisioning: the number step of a live DE customer waits on the service for the regulatory bundle, FR for the address; nothing bought or charged', async (t) => {
  const a = await liveAccount(10_000);
  for (const [country, blocker] of [['DE', 'number_regulatory_bundle_required'], ['FR', 'number_address_required']] as const) {
    const c = await makeCustomer(a.liveApi, { country });
    const p = await a.liveApi.post(`/v1/customers/${c.id}/provisioning`, { steps: ['number'] });
    t.true(p.status < 300, p.text);
    t.deepEqual(p.body.steps.find((s: any) => s.step === 'number'), { step: 'number', done: false, waiting_on: 'service', blocker, message: null }, country);
    t.true(p.body.blockers.includes(blocker), country);
    // Asked again (GET), it still says so.
    const got = (await a.liveApi.get(`/v1/customers/${c.id}/provisioning`)).body;
    t.like(got.steps.find((s: any) => s.step === 'number'), { done: false, waiting_on: 'service', blocker }, country);
    t.is((await a.liveApi.get(`/v1/customers/${c.id}/numbers`)).body.data.length, 0);
    t.is((await ledgerOf(a.liveApi, c.id)).length, 0);
  }
  t.false([...fake.numbers.incoming.values()].some((n) => n.country === 'DE' || n.country === 'FR'));
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, 10_000);
  await invariantsHold(t);
});

test.serial('DELETE releases the number at Twilio; a refused release is 503 carrier_unavailable and the number stays active; a second DELETE does not ask Twilio again', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  const n = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, {})).body;
  const [bought] = [...fake.numbers.incoming.values()].filter((x) => x.phoneNumber === n.phone_number);
  const deletes = () => fake.requests.filter((r) => r.method === 'DELETE' && r.path === `${ACCOUNT_PATH}/IncomingPhoneNumbers/${bought.sid}.json`);

  fake.numbers.nextRelease({ error: { status: 500, code: 20500, message: 'Internal Server Error' } });
  const refused = await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${n.id}`);
  t.is(refused.status, 503, refused.text);
  t.is(refused.body.error.code, 'carrier_unavailable');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active', released_at: null });
  t.is(bought.releasedAt, null, 'still ours at Twilio');
  t.deepEqual(deletes().map((r) => r.status), [500]);
  t.is((await eventsOf(a.liveApi, 'number.released')).filter((e) => e.data.id === n.id).length, 0);
  t.true((await a.liveApi.get(`/v1/customers/${c.id}/readiness`)).body.checks.number_in_country);

  const released = await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${n.id}`);
  t.is(released.status, 200, released.text);
  t.like(released.body, { id: n.id, status: 'released' });
  t.deepEqual(deletes().map((r) => r.status), [500, 204]);
  t.truthy(bought.releasedAt);

  const again = await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${n.id}`);
  t.is(again.status, 200);
  t.deepEqual(again.body, released.body, 'answered as it is');
  t.is(deletes().length, 2, 'Twilio is not asked again');
  t.is((await eventsOf(a.liveApi, 'number.released')).filter((e) => e.data.id === n.id).length, 1);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 1, 'nothing refunded');
  await invariantsHold(t);
});

test.serial('caller ID live: Twilio is asked to validate with our StatusCallback, the code is Twilio\'s; its signed callback makes it active and charges 1,200; DELETE removes it at Twilio', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi, { name: 'Bright Dental' });
  // A verification call takes a person seconds; the fake's answers in half a second.
  fake.numbers.nextValidation({ delayMs: 500 });
  const r = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+1 202 555 0142' });
  t.is(r.status, 201, r.text);
  t.like(r.body, { kind: 'caller_id', status: 'verifying', phone_number: '+12025550142', monthly_cents: 1200 });
  const validation = fake.numbers.validations.find((v) => v.phoneNumber === '+12025550142')!;
  t.truthy(validation, 'Twilio was asked to validate the number');
  t.deepEqual(validation.form.StatusCallback, [`${svc.url}/telephony/twilio/caller-id?number_id=${r.body.id}`]);
  t.deepEqual(validation.form.StatusCallbackMethod, ['POST']);
  t.deepEqual(validation.form.FriendlyName, ['Bright Dental']);
  t.is(r.body.verification.code, validation.validationCode, "the code is Twilio's");
  t.is((await ledgerOf(a.liveApi, c.id)).length, 0, 'nothing charged while verifying');

  let active: any;
  await until('the caller ID verified', async () => (active = await numberOf(a.liveApi, c.id, r.body.id)).status === 'active');
  const callback = fake.callbacksSent.find((cb) => cb.kind === 'validation' && cb.callSid === validation.callSid)!;
  t.is(callback.status, 204);
  t.like(active, { verification: null, failure_reason: null });
  t.truthy(active.renews_on);
  const [line] = await ledgerOf(a.liveApi, c.id);
  t.like(line, { cause: 'caller_id', amount_cents: -1200, applied: true, customer_id: c.id });
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, 10_000 - 1200);
  const assigned = (await eventsOf(a.liveApi, 'number.assigned')).filter((e) => e.data.id === r.body.id);
  t.is(assigned.length, 1);
  t.like(assigned[0].data, { status: 'active', phone_number: '+12025550142' });

  const [callerId] = [...fake.numbers.callerIds.values()].filter((x) => x.phoneNumber === '+12025550142');
  const seen = requestsFrom();
  const released = await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${r.body.id}`);
  t.is(released.status, 200, released.text);
  t.deepEqual(seen().map(brief), [`DELETE /OutgoingCallerIds/${callerId.sid}.json 204`]);
  t.false(fake.numbers.callerIds.has(callerId.sid));
  t.is((await eventsOf(a.liveApi, 'number.released')).filter((e) => e.data.id === r.body.id).length, 1);
  await invariantsHold(t);
});

test.serial('caller ID live: a failed verification (scripted, or a number ending in 9) is failed and charges nothing', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  fake.numbers.nextValidation({ outcome: 'failed', delayMs: 500 });
  const wrongCode = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550143' })).body;
  fake.numbers.nextValidation({ delayMs: 500 });
  const endsIn9 = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550149' })).body;
  for (const n of [wrongCode, endsIn9]) {
    let failed: any;
    await until(`${n.phone_number} failed`, async () => (failed = await numberOf(a.liveApi, c.id, n.id)).status === 'failed');
    t.like(failed, { failure_reason: 'verification_failed', verification: null, renews_on: null });
  }
  t.is(fake.callbacksSent.filter((cb) => cb.kind === 'validation' && [wrongCode.phone_number, endsIn9.phone_number].includes(cb.params.To)).length, 2);
  t.false([...fake.numbers.callerIds.values()].some((x) => x.phoneNumber === '+12025550143' || x.phoneNumber === '+12025550149'));
  t.is((await ledgerOf(a.liveApi, c.id)).length, 0);
  t.is((await eventsOf(a.liveApi, 'number.assigned')).filter((e) => e.data.customer_id === c.id).length, 0);
  await invariantsHold(t);
});

test.serial('the caller ID callback: forged or re-pointed signatures are 403 and change nothing; one for a number not verifying changes nothing; a malformed one is 400', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  fake.numbers.nextValidation({ loseCallback: true });
  const n = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550146' })).body;
  await until('the fake verified the number', () => [...fake.numbers.callerIds.values()].some((x) => x.phoneNumber === n.phone_number));
  const callerId = [...fake.numbers.callerIds.values()].find((x) => x.phoneNumber === n.phone_number)!;
  const form = { AccountSid: SID, CallSid: `CA${'2'.repeat(32)}`, To: n.phone_number, Called: n.phone_number, VerificationStatus: 'success', OutgoingCallerIdSid: callerId.sid };

  const before = await numbersSnapshot();
  const other = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, {})).body;
  const withOther = await numbersSnapshot();
  t.not(before, withOther);
  const forgeries = [
    { signature: 'forged' },
    { token: 'not-the-auth-token' },
    // Signed for another number's URL, replayed at this one.
    { url: `${svc.url}/telephony/twilio/caller-id?number_id=${other.id}` },
  ];
  for (const sign of forgeries) {
    const r = await postCallerIdCallback(n.id, form, sign);
    t.is(r.status, 403, `${JSON.stringify(sign)}: ${r.text}`);
    t.is(r.body.error.code, 'invalid_twilio_signature');
  }
  const unsigned = await call(svc.url, 'POST', `/telephony/twilio/caller-id?number_id=${n.id}`, {
    rawBody: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(unsigned.status, 403);
  t.deepEqual(await numbersSnapshot(), withOther, 'the refused callbacks changed nothing');
  t.is((await numberOf(a.liveApi, c.id, n.id)).status, 'verifying');

  const malformed = await postCallerIdCallback(n.id, { To: n.phone_number, VerificationStatus: 'maybe' });
  t.is(malformed.status, 400, malformed.text);
  t.is(malformed.body.error.code, 'invalid_parameter');
  const notUuid = await postCallerIdCallback('num_1', form);
  t.is(notUuid.status, 400, notUuid.text);
  // Signed, but about a rented number: nothing changes.
  t.is((await postCallerIdCallback(other.id, { ...form, To: other.phone_number })).status, 204);
  t.deepEqual(await numbersSnapshot(), withOther);

  // Signed, about this number's id, but reporting another number verified: nothing changes.
  for (const to of ['+12025550147', '+12025550140']) {
    t.is((await postCallerIdCallback(n.id, { ...form, To: to, Called: to })).status, 204);
  }
  t.deepEqual(await numbersSnapshot(), withOther, 'a report whose number does not match changes nothing');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'verifying' });

  // The genuine callback, signed as Twilio signs, settles it.
  t.is((await postCallerIdCallback(n.id, form)).status, 204);
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'active' });
  const settled = await numbersSnapshot();
  // A repeat, or a late "failed", for a number no longer verifying changes nothing.
  t.is((await postCallerIdCallback(n.id, form)).status, 204);
  t.is((await postCallerIdCallback(n.id, { ...form, VerificationStatus: 'failed', OutgoingCallerIdSid: '' })).status, 204);
  t.deepEqual(await numbersSnapshot(), settled);
  t.deepEqual((await ledgerOf(a.liveApi, c.id)).map((l) => l.cause).sort(), ['caller_id', 'number']);
  await invariantsHold(t);
});

test.serial('a caller ID released while Twilio still verifies it: the late verified callback removes it at Twilio, so the number can be added again', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  fake.numbers.nextValidation({ delayMs: 500 });
  const n = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550148' })).body;
  const released = await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${n.id}`);
  t.like(released.body, { status: 'released' });
  const validation = fake.numbers.validations.find((v) => v.phoneNumber === n.phone_number)!;
  await until('the late callback answered', () => fake.callbacksSent.some((cb) => cb.callSid === validation.callSid && cb.status !== null));
  t.is(fake.callbacksSent.find((cb) => cb.callSid === validation.callSid)!.status, 204);
  t.false([...fake.numbers.callerIds.values()].some((x) => x.phoneNumber === n.phone_number), 'nobody\'s caller ID is left at Twilio');
  t.like(await numberOf(a.liveApi, c.id, n.id), { status: 'released' });
  t.is((await ledgerOf(a.liveApi, c.id)).length, 0);
  fake.numbers.nextValidation({ loseCallback: true });
  const again = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550148' });
  t.is(again.status, 201, again.text);
  t.is(again.body.status, 'verifying');
  // Settled here so that no verifying number is left for the expiry test.
  await until('the fake verified it again', () => [...fake.numbers.callerIds.values()].some((x) => x.phoneNumber === n.phone_number));
  await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${again.body.id}`);
  await invariantsHold(t);
});

test.serial('a lost callback: once the verification expired, the job asks Twilio; verified there is active and charged, else failed with verification_expired', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  fake.numbers.nextValidation({ loseCallback: true, outcome: 'success' });
  const verified = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550144' })).body;
  fake.numbers.nextValidation({ loseCallback: true, outcome: 'failed' });
  const unverified = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550145' })).body;
  await until('the fake verified one', () => [...fake.numbers.callerIds.values()].some((x) => x.phoneNumber === verified.phone_number));
  const callerId = [...fake.numbers.callerIds.values()].find((x) => x.phoneNumber === verified.phone_number)!;
  t.false(fake.callbacksSent.some((cb) => cb.params.To === verified.phone_number || cb.params.To === unverified.phone_number), 'no callback reached us');

  // A verification has 10 minutes (the spec's value).
  t.is(Date.parse(verified.verification.expires_at) - Date.parse(verified.created_at), 10 * 60_000);
  // Not expired yet, even a second before the 10 minutes end: the job leaves them alone and asks nothing.
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 10 * 60 - 2 });
  const early = requestsFrom();
  t.like((await a.admin.post('/admin/v1/jobs/expire_caller_id_verifications/run')).body, { processed: 0 });
  t.deepEqual(early(), []);
  t.is((await numberOf(a.liveApi, c.id, verified.id)).status, 'verifying');

  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 3 });
  const seen = requestsFrom();
  const run = await a.admin.post('/admin/v1/jobs/expire_caller_id_verifications/run');
  t.is(run.status, 200, run.text);
  // Two of this test's (a failed test before it may have left one of its own).
  t.true(run.body.processed >= 2, String(run.body.processed));
  const asked = seen().filter((r) => r.method === 'GET' && r.path === `${ACCOUNT_PATH}/OutgoingCallerIds.json`);
  t.deepEqual(asked.map((r) => r.query?.get('PhoneNumber')).sort(), ['+12025550144', '+12025550145']);

  t.like(await numberOf(a.liveApi, c.id, verified.id), { status: 'active', verification: null, failure_reason: null });
  t.like(await numberOf(a.liveApi, c.id, unverified.id), { status: 'failed', failure_reason: 'verification_expired', verification: null });
  const lines = await ledgerOf(a.liveApi, c.id);
  t.is(lines.length, 1);
  t.like(lines[0], { cause: 'caller_id', amount_cents: -1200, applied: true });
  // The carrier's id was kept: DELETE removes that caller ID at Twilio.
  await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${verified.id}`);
  t.false(fake.numbers.callerIds.has(callerId.sid));
  await invariantsHold(t);
});

test.serial('a number bought for an order that then cannot be paid (another order spent the balance meanwhile) is released at Twilio; 402, nothing kept', async (t) => {
  const a = await liveAccount(2_500);
  const available = (await a.liveApi.get('/v1/balance')).body.available_cents;
  t.true(available >= 1500 && available < 3000, `the balance covers one month, not two (${available})`);
  const first = await makeCustomer(a.liveApi, { name: 'First Dental' });
  const second = await makeCustomer(a.liveApi, { name: 'Second Dental' });
  let secondReply: any;
  // While Twilio answers the first purchase, the second order rents and pays its month.
  fake.numbers.nextPurchase({
    beforeAnswer: async () => {
      secondReply = await a.liveApi.post(`/v1/customers/${second.id}/numbers`, {});
    },
  });
  const seen = requestsFrom();
  const r = await a.liveApi.post(`/v1/customers/${first.id}/numbers`, {});
  t.is(secondReply?.status, 201, secondReply?.text);
  t.is(r.status, 402, r.text);
  t.is(r.body.error.code, 'insufficient_balance');

  const buys = seen().filter((x) => x.method === 'POST' && x.path === `${ACCOUNT_PATH}/IncomingPhoneNumbers.json`);
  t.is(buys.length, 2);
  const firstNumber = buys.map((b) => b.form.PhoneNumber[0]).find((e) => e !== secondReply.body.phone_number)!;
  const [givenBack] = [...fake.numbers.incoming.values()].filter((x) => x.phoneNumber === firstNumber);
  t.truthy(givenBack.releasedAt, 'the first order\'s number went back to Twilio');
  t.deepEqual(
    seen().filter((x) => x.method === 'DELETE').map(brief),
    [`DELETE /IncomingPhoneNumbers/${givenBack.sid}.json 204`],
  );
  t.true(svc.logs.lines.some((l) => l.msg === 'number bought for a change that did not commit was released' && l.carrier_number_id === givenBack.sid));
  t.is((await a.liveApi.get(`/v1/customers/${first.id}/numbers`)).body.data.length, 0);
  t.is((await ledgerOf(a.liveApi, first.id)).length, 0);
  t.is((await ledgerOf(a.liveApi, second.id)).length, 1);
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, available - 1500);
  await invariantsHold(t);
});

test.serial("a verification Twilio reports at once (before the number's row is committed) still verifies it, without waiting for the expiry job", async (t) => {
  const a = await liveAccount(20_000);
  const c = await makeCustomer(a.liveApi);
  const phones = ['+12025550131', '+12025550132'];
  // The callback reaches the service while its create is still unanswered (its transaction open).
  for (const _ of phones) fake.numbers.nextValidation({ answerAfterMs: 300 });
  const ids = [];
  for (const phone of phones) {
    const r = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: phone });
    t.is(r.status, 201, r.text);
    ids.push(r.body.id);
  }
  // Within a second: not left to the expiry job ten minutes on.
  for (const id of ids) await until(`caller ID ${id} verified`, async () => (await numberOf(a.liveApi, c.id, id)).status === 'active', 1_500);
  t.is((await ledgerOf(a.liveApi, c.id)).length, phones.length);
  await invariantsHold(t);
});

test.serial('a caller ID released while verifying is asked about at Twilio and removed there if it was verified meanwhile', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  fake.numbers.nextValidation({ loseCallback: true, delayMs: 0 });
  const r = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550138' });
  await until('Twilio verified it', async () => [...fake.numbers.callerIds.values()].some((x) => x.phoneNumber === '+12025550138'));
  const released = await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${r.body.id}`);
  t.like(released.body, { status: 'released' });
  t.false([...fake.numbers.callerIds.values()].some((x) => x.phoneNumber === '+12025550138'), 'removed at Twilio');
  // Added again later: not refused as in use.
  fake.numbers.nextValidation({ delayMs: 200 });
  const again = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550138' });
  t.is(again.status, 201, again.text);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 0, 'nothing charged for the released one');
});

const callerIdOrder = (api: Client, customerId: string, phone: string) => api.post(`/v1/customers/${customerId}/numbers`, { kind: 'caller_id', phone_number: phone });

test.serial('caller ID verifications are bounded: 2 running per customer, 5 per account (429 verification_limit_reached), Twilio not asked for the refused ones', async (t) => {
  const a = await liveAccount(100_000);
  const [c1, c2, c3] = [await makeCustomer(a.liveApi), await makeCustomer(a.liveApi), await makeCustomer(a.liveApi)];
  const started: { customer: string; id: string }[] = [];
  // Each verification call goes on for a minute: they all run while the test asks for more.
  const start = async (customer: string, phone: string) => {
    fake.numbers.nextValidation({ delayMs: 60_000 });
    const r = await callerIdOrder(a.liveApi, customer, phone);
    t.is(r.status, 201, `${phone}: ${r.text}`);
    started.push({ customer, id: r.body.id });
  };
  await start(c1.id, '+12025550161');
  await start(c1.id, '+12025550162');
  const asked = fake.numbers.validations.length;
  const third = await callerIdOrder(a.liveApi, c1.id, '+12025550163');
  t.is(third.status, 429, third.text);
  t.is(third.body.error.code, 'verification_limit_reached');
  t.regex(third.body.error.message, /customer has 2 caller ID verifications running/);
  await start(c2.id, '+12025550163');
  await start(c2.id, '+12025550164');
  await start(c3.id, '+12025550165');
  const sixth = await callerIdOrder(a.liveApi, c3.id, '+12025550166');
  t.is(sixth.status, 429, sixth.text);
  t.is(sixth.body.error.code, 'verification_limit_reached');
  t.regex(sixth.body.error.message, /account has 5 caller ID verifications running/);
  t.is(fake.numbers.validations.length, asked + 3, 'Twilio was asked to call only for the verifications started');
  // Another account is not held back by this one's.
  const other = await liveAccount(10_000);
  fake.numbers.nextValidation({ delayMs: 60_000 });
  const theirs = await callerIdOrder(other.liveApi, (await makeCustomer(other.liveApi)).id, '+12025550167');
  t.is(theirs.status, 201, theirs.text);
  // One ended (released) frees its place.
  await a.liveApi.delete(`/v1/customers/${c1.id}/numbers/${started[0].id}`);
  await start(c1.id, '+12025550168');
  for (const n of [...started.slice(1), { customer: theirs.body.customer_id, id: theirs.body.id }]) {
    await (n.customer === theirs.body.customer_id ? other : a).liveApi.delete(`/v1/customers/${n.customer}/numbers/${n.id}`);
  }
  await invariantsHold(t);
});

test.serial('caller ID verifications: at most 20 started per account per UTC day, whatever came of them (429 verification_daily_limit)', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  for (let i = 0; i < 20; i++) {
    fake.numbers.nextValidation({ outcome: 'failed', delayMs: 60_000 });
    const r = await callerIdOrder(a.liveApi, c.id, '+12025550169');
    t.is(r.status, 201, `start ${i + 1}: ${r.text}`);
    t.is((await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${r.body.id}`)).status, 200);
  }
  const asked = fake.numbers.validations.length;
  const refused = await callerIdOrder(a.liveApi, c.id, '+12025550169');
  t.is(refused.status, 429, refused.text);
  t.is(refused.body.error.code, 'verification_daily_limit');
  t.regex(refused.body.error.message, /20 caller ID verifications today/);
  t.is(fake.numbers.validations.length, asked, 'Twilio was not asked to call');
  // The next UTC day counts afresh.
  const now = new Date((await a.admin.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  const tomorrow = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 0, 5);
  t.is((await a.admin.post('/admin/v1/test_clock/advance', { seconds: Math.ceil((tomorrow - now.getTime()) / 1000) })).status, 200);
  fake.numbers.nextValidation({ outcome: 'failed', delayMs: 60_000 });
  const next = await callerIdOrder(a.liveApi, c.id, '+12025550169');
  t.is(next.status, 201, next.text);
  await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${next.body.id}`);
});

test.serial('a number two accounts verify at once ends active for one: the second is 409 verification_in_progress, and once verified 409 caller_id_in_use; Twilio calls once', async (t) => {
  const a = await liveAccount(10_000);
  const b = await liveAccount(10_000);
  const ca = await makeCustomer(a.liveApi);
  const cb = await makeCustomer(b.liveApi);
  fake.numbers.nextValidation({ delayMs: 300 });
  fake.numbers.nextValidation({ delayMs: 300 });
  const asked = fake.numbers.validations.length;
  const [ra, rb] = await Promise.all([callerIdOrder(a.liveApi, ca.id, '+12025550171'), callerIdOrder(b.liveApi, cb.id, '+12025550171')]);
  const statuses = [ra.status, rb.status].sort();
  t.deepEqual(statuses, [201, 409], `${ra.text} ${rb.text}`);
  const [won, lost] = ra.status === 201 ? [{ api: a.liveApi, c: ca, r: ra }, rb] : [{ api: b.liveApi, c: cb, r: rb }, ra];
  t.is(lost.body.error.code, 'verification_in_progress');
  t.is(fake.numbers.validations.length, asked + 1, 'Twilio called the number once');
  await until('the winner verified', async () => (await numberOf(won.api, won.c.id, won.r.body.id)).status === 'active');
  for (const [api, c] of [[a.liveApi, ca], [b.liveApi, cb]] as const) {
    const again = await callerIdOrder(api, c.id, '+12025550171');
    t.is(again.status, 409, again.text);
    t.is(again.body.error.code, api === won.api ? 'number_already_added' : 'caller_id_in_use');
  }
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  const { rows } = await db.query(`SELECT status FROM phone_numbers WHERE e164 = '+12025550171' AND kind = 'caller_id' AND status IN ('verifying', 'active', 'payment_due')`);
  await db.end();
  t.deepEqual(rows.map((r) => r.status), ['active'], 'one active caller ID of the number');
  await won.api.delete(`/v1/customers/${won.c.id}/numbers/${won.r.body.id}`);
  await invariantsHold(t);
});

test.serial('a number sold to someone else between the search and the purchase (21422): the next candidate is bought, one number kept and charged', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  fake.numbers.nextSearch({ sellOut: 1 });
  const seen = requestsFrom();
  const r = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { area_code: '415' });
  t.is(r.status, 201, r.text);
  const requests = seen();
  t.deepEqual(requests.map(brief), ['GET /AvailablePhoneNumbers/US/Local.json 200', 'POST /IncomingPhoneNumbers.json 400', 'POST /IncomingPhoneNumbers.json 201']);
  const [, soldOut, bought] = requests;
  // The first candidate was sold meanwhile (21422); the second is the one bought and answered.
  t.regex(soldOut.form.PhoneNumber[0], /^\+1415/);
  t.not(bought.form.PhoneNumber[0], soldOut.form.PhoneNumber[0]);
  t.is(r.body.phone_number, bought.form.PhoneNumber[0]);
  t.false([...fake.numbers.incoming.values()].some((n) => n.phoneNumber === soldOut.form.PhoneNumber[0]), 'nothing of ours holds the sold-out number');
  t.is((await ledgerOf(a.liveApi, c.id)).length, 1);
  t.is([...fake.numbers.incoming.values()].filter((n) => n.phoneNumber === r.body.phone_number && n.releasedAt === null).length, 1);
  await invariantsHold(t);
});
