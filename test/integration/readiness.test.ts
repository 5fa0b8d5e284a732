import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { makeAccount, makeCustomer, consoleClient } from '../helpers/factories.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});

const codes = (r: { body: any }) => r.body.blockers.map((b: any) => (typeof b === 'string' ? b : b.code));

/** Accepts the terms through the onboarding page, as the customer would. */
async function acceptTerms(api: any, customerId: string, name = 'Jane Doe') {
  const link = await api.post(`/v1/customers/${customerId}/onboarding_link`);
  const res = await call(svc.url, 'POST', new URL(link.body.url).pathname, {
    rawBody: new URLSearchParams({ accepted_by: name, agree: 'yes' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  if (res.status !== 200) throw new Error(`accept failed ${res.status}`);
}


test('a new test customer: all eight checks reported, only the four test-mode gates block', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { country: 'IE' });
  const r = await a.api.get(`/v1/customers/${c.id}/readiness`);
  t.is(r.status, 200);
  t.like(r.body, { object: 'readiness', customer_id: c.id, country: 'IE', calling_language: 'en-IE', ready_for_live_calls: false });
  t.deepEqual(codes(r), ['human_speech_gate_closed', 'no_number_in_country', 'script_uncertified', 'customer_not_attested']);
  t.deepEqual(r.body.checks, {
    account_live: false,
    business_verified: false,
    agreement_signed: false,
    balance_loaded: false,
    speech_certified_for_language: false,
    number_in_country: false,
    script_certified: false,
    customer_accepted_terms: false,
  });
  for (const b of r.body.blockers) t.true(b.message.length > 10);
});

test.serial('a live customer walks from eight blockers to ready; customer.ready is recorded once', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const live = a.liveApi!;
  const c = await makeCustomer(live, { country: 'NL', external_ref: 'nl-1' });
  // The account is live, verified and signed; what remains is money, service and customer.
  t.deepEqual(codes(await live.get('/v1/customers/nl-1/readiness')), [
    'insufficient_balance',
    'human_speech_gate_closed',
    'no_number_in_country',
    'script_uncertified',
    'customer_not_attested',
  ]);
  const topUp = await a.console.post(`/console/v1/accounts/${a.id}/top_ups`, { amount_cents: 2500 });
  t.is(topUp.status, 201, topUp.text);
  t.false(codes(await live.get('/v1/customers/nl-1/readiness')).includes('insufficient_balance'));

  const con = consoleClient(svc.url);
  await con.post('/console/v1/languages/nl-NL/certify');
  await con.post(`/console/v1/customers/${c.id}/script/certify`);
  const prov = await live.post('/v1/customers/nl-1/provisioning', { steps: ['number'] });
  t.is(prov.status, 202);
  t.deepEqual(prov.body.requested_steps, ['number']);
  t.like(prov.body, { state: 'awaiting_number', waiting_on: 'service', ready: false, mode: 'live' });
  t.deepEqual(codes(await live.get('/v1/customers/nl-1/readiness')), ['no_number_in_country', 'customer_not_attested']);

  const assigned = await con.post(`/console/v1/customers/${c.id}/numbers`, { phone_number: '+31201234567' });
  t.is(assigned.status, 200);
  const p2 = await live.get('/v1/customers/nl-1/provisioning');
  t.like(p2.body, { state: 'awaiting_customer', waiting_on: 'customer', ready: false });
  t.deepEqual(p2.body.blockers, ['customer_not_attested']);

  let events = await con.get(`/console/v1/accounts/${a.id}/events?type=customer.ready`);
  t.is(events.body.data.length, 0);
  await acceptTerms(live, c.id);
  const ready = await live.get('/v1/customers/nl-1/readiness');
  t.true(ready.body.ready_for_live_calls);
  t.deepEqual(ready.body.blockers, []);
  t.true(Object.values(ready.body.checks).every(Boolean));
  const p3 = await live.get('/v1/customers/nl-1/provisioning');
  t.like(p3.body, { state: 'ready', waiting_on: 'nobody', ready: true });
  t.is((await live.get('/v1/customers/nl-1')).body.status, 'active');

  events = await con.get(`/console/v1/accounts/${a.id}/events?type=customer.ready`);
  t.is(events.body.data.length, 1);
  t.is(events.body.data[0].mode, 'live');
  t.is(events.body.data[0].data.customer_id, c.id);
  t.true(events.body.data[0].data.ready_for_live_calls);

  // Re-certifying changes nothing and emits nothing.
  await con.post(`/console/v1/customers/${c.id}/script/certify`);
  events = await con.get(`/console/v1/accounts/${a.id}/events?type=customer.ready`);
  t.is(events.body.data.length, 1);

  // Running calls hold money: six holds of 400 leave 100 available, under one call's reserve.
  for (let i = 0; i < 6; i++) {
    const hold = await a.console.post(`/console/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: c.id, reference: `call-${i}` });
    t.true(hold.body.ok, hold.text);
  }
  t.deepEqual(codes(await live.get('/v1/customers/nl-1/readiness')), ['insufficient_balance']);
  t.false((await live.get('/v1/customers/nl-1/provisioning')).body.ready);

  // Verification withdrawn after go-live blocks live calls again.
  await con.post(`/console/v1/accounts/${a.id}/kyb`, { status: 'rejected' });
  t.deepEqual(codes(await live.get('/v1/customers/nl-1/readiness')), ['kyb_incomplete', 'insufficient_balance']);
});

test('test customers: provisioning a number completes at once with a fictional test number', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { country: 'GB' });
  const before = await a.api.get(`/v1/customers/${c.id}/provisioning`);
  t.like(before.body, { object: 'provisioning', customer_id: c.id, state: 'awaiting_number', ready: false, mode: 'test' });
  t.deepEqual(before.body.steps.map((s: any) => s.step), ['number', 'script', 'agent']);
  t.is(before.body.requested_steps, undefined, 'only the POST response carries requested_steps');
  const r = await a.api.post(`/v1/customers/${c.id}/provisioning`);
  t.is(r.status, 202);
  t.deepEqual(r.body.requested_steps, ['number', 'script', 'agent']);
  t.deepEqual(r.body.steps[0], { step: 'number', done: true, waiting_on: 'service', blocker: null });
  t.false(codes(await a.api.get(`/v1/customers/${c.id}/readiness`)).includes('no_number_in_country'));
});

test('a requested calendar step waits on the customer and blocks provisioning until connected', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const r = await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
  t.is(r.status, 202);
  const cal = r.body.steps.find((s: any) => s.step === 'calendar');
  t.deepEqual(cal, { step: 'calendar', done: false, waiting_on: 'customer', blocker: 'no_calendar_connected' });
  t.true(r.body.blockers.includes('no_calendar_connected'));
  await consoleClient(svc.url).post(`/console/v1/customers/${c.id}/calendar/connect`);
  const after = await a.api.get(`/v1/customers/${c.id}/provisioning`);
  t.false(after.body.blockers.includes('no_calendar_connected'));
  t.true(after.body.steps.find((s: any) => s.step === 'calendar').done);
});

test('provisioning refuses unknown steps and unknown fields', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const bad = await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['teleport'] });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_provisioning_step');
  const extra = await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['number'], rush: true });
  t.is(extra.body.error.code, 'unknown_parameter');
  t.is((await a.api.post('/v1/customers/missing/provisioning')).body.error.code, 'customer_not_found');
});

test('readiness and provisioning of an unknown customer are customer_not_found', async (t) => {
  const a = await makeAccount(svc.url);
  for (const path of ['readiness', 'provisioning', 'limits', 'onboarding_link']) {
    const r = await a.api.get(`/v1/customers/00000000-0000-4000-8000-000000000000/${path}`);
    t.is(r.status, 404);
    t.is(r.body.error.code, 'customer_not_found');
  }
});
