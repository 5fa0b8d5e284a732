import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { makeAccount, makeCustomer, adminClient } from '../helpers/factories.ts';
import { connectSimulatedCalendar } from '../helpers/calendar.ts';

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


const TEST_GATES = ['human_speech_gate_closed', 'no_number_in_country', 'script_uncertified', 'customer_not_attested'];
const ACCOUNT_GATES = ['reseller_not_live', 'kyb_incomplete', 'agreement_unsigned', 'insufficient_balance'];

test('a new test customer of a test account: every false check has its blocker; test calls wait on the four service/customer gates', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { country: 'IE' });
  const r = await a.api.get(`/v1/customers/${c.id}/readiness`);
  t.is(r.status, 200);
  t.like(r.body, {
    object: 'readiness', customer_id: c.id, country: 'IE', calling_language: 'en-IE', ready_for_live_calls: false, ready_for_test_calls: false,
  });
  t.deepEqual(r.body.checks, {
    account_live: false,
    business_verified: false,
    agreement_signed: false,
    balance_loaded: false,
    carrier_configured: true,
    speech_certified_for_language: false,
    number_in_country: false,
    script_certified: false,
    customer_accepted_terms: false,
    dnc_registries_current: true, // Ireland: no national registry is modelled (docs/compliance.md)
  });
  // The live question: would a live call be turned away? Every false check says why.
  t.deepEqual(codes(r), [...ACCOUNT_GATES, ...TEST_GATES]);
  // The test question: exactly what the test call path refuses on.
  t.deepEqual(r.body.test_blockers.map((b: any) => b.code), TEST_GATES);
  t.deepEqual(r.body.test_blockers, r.body.blockers.slice(4), 'a test blocker reads the same in both lists');
  for (const b of [...r.body.blockers, ...r.body.test_blockers]) {
    t.true(b.message.length > 10);
    t.true(['service', 'customer', 'reseller'].includes(b.waiting_on), b.code);
    t.true(b.action === null || (typeof b.action.description === 'string' && ['api', 'console'].includes(b.action.type)), b.code);
  }
  const byCode = Object.fromEntries(r.body.blockers.map((b: any) => [b.code, b]));
  for (const code of ['reseller_not_live', 'kyb_incomplete', 'agreement_unsigned']) {
    t.like(byCode[code], { waiting_on: 'reseller', action: { type: 'console' } }, code);
  }
  // en-IE is not certified: only the service can move, so there is nothing to do.
  t.like(byCode.human_speech_gate_closed, { waiting_on: 'service', action: null });
  // Nothing asked for and no link sent: the reseller owes those moves, and the action says how.
  t.deepEqual(byCode.no_number_in_country.action, {
    type: 'api', method: 'POST', path: `/v1/customers/${c.id}/provisioning`, body: { steps: ['number'] }, description: byCode.no_number_in_country.action.description,
  });
  t.is(byCode.no_number_in_country.waiting_on, 'reseller');
  t.like(byCode.script_uncertified, { waiting_on: 'reseller', action: { type: 'api', method: 'POST', path: `/v1/customers/${c.id}/provisioning`, body: { steps: ['script'] } } });
  t.like(byCode.customer_not_attested, { waiting_on: 'reseller', action: { type: 'api', method: 'POST', path: `/v1/customers/${c.id}/onboarding_link` } });
});

test('an action is a request a program can make: following two of them clears one blocker and hands the other to the customer', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { country: 'GB', external_ref: 'follow-1' });
  const blocker = async (code: string) => (await a.api.get('/v1/customers/follow-1/readiness')).body.test_blockers.find((b: any) => b.code === code);
  for (const code of ['no_number_in_country', 'customer_not_attested']) {
    const { action } = await blocker(code);
    const done = await (a.api as any)[action.method.toLowerCase()](action.path, action.body);
    t.true(done.status >= 200 && done.status < 300, `${code}: ${done.status} ${done.text}`);
  }
  // A test customer's number is assigned at once; the terms now wait on the customer, who has a link.
  t.is(await blocker('no_number_in_country'), undefined);
  t.like(await blocker('customer_not_attested'), { waiting_on: 'customer', action: { type: 'api', path: `/v1/customers/${c.id}/onboarding_link` } });
  const provisioning = await a.api.get('/v1/customers/follow-1/provisioning');
  t.like(provisioning.body.steps[0], { step: 'number', done: true });
});

test('a test customer reads the test balance, like a test key: live money makes live customers ready, not test ones', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const topUp = await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 10_000 });
  t.is(topUp.status, 201, topUp.text);
  const testCustomer = await makeCustomer(a.api);
  const liveCustomer = await makeCustomer(a.liveApi!);

  const live = (await a.liveApi!.get(`/v1/customers/${liveCustomer.id}/readiness`)).body;
  t.true(live.checks.balance_loaded);
  t.false(codes({ body: live }).includes('insufficient_balance'));

  const test = (await a.api.get(`/v1/customers/${testCustomer.id}/readiness`)).body;
  t.is((await a.api.get('/v1/balance')).body.available_cents, 0, 'the test key sees no money');
  t.false(test.checks.balance_loaded, 'the same key sees no money in readiness either');
  t.true(test.checks.account_live);
  const insufficient = test.blockers.find((b: any) => b.code === 'insufficient_balance');
  t.truthy(insufficient, 'the false check has its blocker');
  t.regex(insufficient.message, /live balance/);
  t.regex(insufficient.message, /live key/);
  t.is(insufficient.waiting_on, 'reseller');
  t.not(insufficient.message, live.blockers.find((b: any) => b.code === 'insufficient_balance')?.message);
  t.false(test.test_blockers.some((b: any) => ACCOUNT_GATES.includes(b.code)), 'test calls are never held back by money');
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
  const topUp = await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 2500 });
  t.is(topUp.status, 201, topUp.text);
  t.false(codes(await live.get('/v1/customers/nl-1/readiness')).includes('insufficient_balance'));

  const con = adminClient(svc.url);
  await con.post('/admin/v1/languages/nl-NL/certify');
  await con.post(`/admin/v1/customers/${c.id}/script/certify`);
  // Nothing asked for yet: the number waits on the reseller's request, not on the service.
  const unasked = await live.get('/v1/customers/nl-1/provisioning');
  t.like(unasked.body, { state: 'awaiting_number', waiting_on: 'reseller', ready: false });
  t.deepEqual(unasked.body.steps[0], { step: 'number', done: false, waiting_on: 'reseller', blocker: 'no_number_in_country', message: null });
  // Asked for: the number is the service's move, made at once (rented, its first month charged).
  const prov = await live.post('/v1/customers/nl-1/provisioning', { steps: ['number'] });
  t.is(prov.status, 202);
  t.deepEqual(prov.body.requested_steps, ['number']);
  t.deepEqual(prov.body.steps[0], { step: 'number', done: true, waiting_on: 'service', blocker: null, message: null });
  t.deepEqual(codes(await live.get('/v1/customers/nl-1/readiness')), ['customer_not_attested']);
  const [rented] = (await live.get('/v1/customers/nl-1/numbers')).body.data;
  t.like(rented, { kind: 'rented', country: 'NL', status: 'active' });
  t.is((await live.get('/v1/balance')).body.available_cents, 2500 - 1500);

  const p2 = await live.get('/v1/customers/nl-1/provisioning');
  // The customer cannot accept terms they were never sent: the link is the reseller's move.
  t.like(p2.body, { state: 'awaiting_customer', waiting_on: 'reseller', ready: false });
  t.deepEqual(p2.body.blockers, ['customer_not_attested']);
  await live.post('/v1/customers/nl-1/onboarding_link');
  t.like((await live.get('/v1/customers/nl-1/provisioning')).body, { state: 'awaiting_customer', waiting_on: 'customer', ready: false });

  let events = await con.get(`/admin/v1/accounts/${a.id}/events?type=customer.ready`);
  t.is(events.body.data.length, 0);
  await acceptTerms(live, c.id);
  const ready = await live.get('/v1/customers/nl-1/readiness');
  t.true(ready.body.ready_for_live_calls);
  t.deepEqual(ready.body.blockers, []);
  t.true(Object.values(ready.body.checks).every(Boolean));
  const p3 = await live.get('/v1/customers/nl-1/provisioning');
  t.like(p3.body, { state: 'ready', waiting_on: 'nobody', ready: true });
  t.is((await live.get('/v1/customers/nl-1')).body.status, 'active');

  events = await con.get(`/admin/v1/accounts/${a.id}/events?type=customer.ready`);
  t.is(events.body.data.length, 1);
  t.is(events.body.data[0].mode, 'live');
  t.is(events.body.data[0].data.customer_id, c.id);
  t.true(events.body.data[0].data.ready_for_live_calls);

  // Re-certifying changes nothing and emits nothing.
  await con.post(`/admin/v1/customers/${c.id}/script/certify`);
  events = await con.get(`/admin/v1/accounts/${a.id}/events?type=customer.ready`);
  t.is(events.body.data.length, 1);

  // Running calls hold money: of the 1,000 left after the rent, two holds of 400 leave 200
  // available, under one call's reserve.
  for (let i = 0; i < 2; i++) {
    const hold = await a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: c.id, reference: `call-${i}` });
    t.true(hold.body.ok, hold.text);
  }
  t.deepEqual(codes(await live.get('/v1/customers/nl-1/readiness')), ['insufficient_balance']);
  t.false((await live.get('/v1/customers/nl-1/provisioning')).body.ready);

  // Verification withdrawn after go-live blocks live calls again.
  await con.post(`/admin/v1/accounts/${a.id}/kyb`, { status: 'rejected' });
  t.deepEqual(codes(await live.get('/v1/customers/nl-1/readiness')), ['kyb_incomplete', 'insufficient_balance']);
});

test('test customers: provisioning a number completes at once with a fictional test number', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { country: 'GB' });
  const before = await a.api.get(`/v1/customers/${c.id}/provisioning`);
  t.like(before.body, { object: 'provisioning', customer_id: c.id, state: 'awaiting_number', ready: false, mode: 'test' });
  t.deepEqual(before.body.steps.map((s: any) => s.step), ['number', 'script', 'agent']);
  // Until the reseller asks, the number and the script wait on the reseller; the calling language
  // is the service's own gate, asked for or not.
  t.like(before.body, { waiting_on: 'reseller' });
  t.deepEqual(before.body.steps.map((s: any) => s.waiting_on), ['reseller', 'reseller', 'service']);
  t.is(before.body.requested_steps, undefined, 'only the POST response carries requested_steps');
  const r = await a.api.post(`/v1/customers/${c.id}/provisioning`);
  t.is(r.status, 202);
  t.deepEqual(r.body.requested_steps, ['number', 'script', 'agent']);
  t.deepEqual(r.body.steps[0], { step: 'number', done: true, waiting_on: 'service', blocker: null, message: null });
  t.deepEqual(r.body.steps[1], { step: 'script', done: false, waiting_on: 'service', blocker: 'script_uncertified', message: null });
  t.false(codes(await a.api.get(`/v1/customers/${c.id}/readiness`)).includes('no_number_in_country'));
});

test('a test customer: customer.ready follows ready_for_test_calls, while ready_for_live_calls stays false', async (t) => {
  const a = await makeAccount(svc.url);
  const con = adminClient(svc.url);
  const c = await makeCustomer(a.api, { country: 'ES' });
  await con.post('/admin/v1/languages/es-ES/certify');
  await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['number', 'script'] });
  await con.post(`/admin/v1/customers/${c.id}/script/certify`);
  const readyEvents = async () => (await con.get(`/admin/v1/accounts/${a.id}/events?type=customer.ready`)).body.data;
  const before = (await a.api.get(`/v1/customers/${c.id}/readiness`)).body;
  t.deepEqual(before.test_blockers.map((b: any) => b.code), ['customer_not_attested']);
  t.false(before.ready_for_test_calls);
  t.is((await readyEvents()).length, 0);

  await acceptTerms(a.api, c.id);
  const after = (await a.api.get(`/v1/customers/${c.id}/readiness`)).body;
  t.true(after.ready_for_test_calls);
  t.deepEqual(after.test_blockers, []);
  t.false(after.ready_for_live_calls, 'a test customer never takes live calls');
  t.deepEqual(codes({ body: after }), ACCOUNT_GATES);
  t.is((await a.api.get(`/v1/customers/${c.id}`)).body.status, 'active');

  const events = await readyEvents();
  t.is(events.length, 1);
  t.is(events[0].mode, 'test');
  t.like(events[0].data, { customer_id: c.id, ready_for_test_calls: true, ready_for_live_calls: false, test_blockers: [] });
  t.deepEqual(events[0].data, after, 'the event carries the readiness object');
});

test('a requested calendar step waits on the customer and blocks provisioning until connected', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const r = await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
  t.is(r.status, 202);
  const cal = r.body.steps.find((s: any) => s.step === 'calendar');
  t.deepEqual(cal, {
    step: 'calendar',
    done: false,
    waiting_on: 'customer',
    blocker: 'no_calendar_connected',
    message: 'The customer has not connected a calendar yet; send them a calendar link to connect it.',
  });
  t.true(r.body.blockers.includes('no_calendar_connected'));
  await connectSimulatedCalendar(a.api, c.id);
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

test('the OpenAPI document declares both questions and the blocker item with waiting_on and action', async (t) => {
  const doc = (await call(svc.url, 'GET', '/v1/openapi.json')).body;
  // Named schemas (issue 26): Readiness, ReadinessBlocker, ReadinessAction (api or console, by type).
  const named = (s: any) => (s.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
  const schema = named(doc.paths['/v1/customers/{id}/readiness'].get.responses['200'].content['application/json'].schema);
  t.like(schema.properties, { ready_for_live_calls: { type: 'boolean' }, ready_for_test_calls: { type: 'boolean' } });
  for (const list of ['blockers', 'test_blockers']) {
    const item = named(schema.properties[list].items);
    t.deepEqual(Object.keys(item.properties).sort(), ['action', 'code', 'message', 'waiting_on'], list);
    t.deepEqual([...item.properties.waiting_on.enum].sort(), ['customer', 'reseller', 'service']);
    t.deepEqual(item.properties.action.anyOf[1], { type: 'null' });
    const [api, console] = named(item.properties.action.anyOf[0]).anyOf.map(named);
    t.deepEqual(Object.keys(api.properties).sort(), ['body', 'description', 'method', 'path', 'type']);
    t.deepEqual(api.properties.type.enum, ['api']);
    t.deepEqual(Object.keys(console.properties).sort(), ['description', 'type']);
  }
});

test('readiness and provisioning of an unknown customer are customer_not_found', async (t) => {
  const a = await makeAccount(svc.url);
  for (const path of ['readiness', 'provisioning', 'limits', 'onboarding_link']) {
    const r = await a.api.get(`/v1/customers/00000000-0000-4000-8000-000000000000/${path}`);
    t.is(r.status, 404);
    t.is(r.body.error.code, 'customer_not_found');
  }
});
