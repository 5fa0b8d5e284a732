/**
 * Live mode without a configured carrier (issue 20, §4): no TWILIO_* settings and no simulated
 * live carrier asked for. Live number orders and live calls are refused with 503
 * carrier_unavailable and nothing is charged; readiness says carrier_not_configured, and the call
 * path refuses on that same blocker; test mode keeps its simulated carrier.
 */
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { createPool, type Pool } from '../../db/pool.ts';
import { loadAdmissionFacts } from '../../db/admission.ts';
import { readinessFactsOf } from '../../actors/customer/readiness-check.ts';
import { assessReadiness } from '../../actors/customer/readiness.ts';
import type { Client } from '../helpers/http.ts';

let svc: TestService;
let pool: Pool;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_SIMULATED_LIVE_CARRIER: '', SWITCHBOARD_JOB_INTERVAL_MS: '3600000', SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  pool = createPool(svc.databaseUrl, 2);
});
test.after.always(async () => {
  await pool?.end();
  await svc?.stop();
});

const liveAccount = async () => {
  const a = (await makeAccount(svc.url, { live: true })) as Awaited<ReturnType<typeof makeAccount>> & { liveApi: Client };
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 10_000 });
  return a;
};

test('a live number order (rented or caller ID) is 503 carrier_unavailable: nothing bought, nothing charged, no number', async (t) => {
  const a = await liveAccount();
  const c = await makeCustomer(a.liveApi);
  for (const body of [{}, { area_code: '415' }, { kind: 'caller_id', phone_number: '+12025550142' }]) {
    const r = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, body);
    t.is(r.status, 503, `${JSON.stringify(body)}: ${r.text}`);
    t.is(r.body.error.code, 'carrier_unavailable');
    t.regex(r.body.error.message, /no carrier is set up for live numbers/i);
  }
  t.deepEqual((await a.liveApi.get(`/v1/customers/${c.id}/numbers`)).body.data, []);
  t.deepEqual((await a.liveApi.get(`/v1/usage?customer_id=${c.id}`)).body.data, []);
  t.like((await a.liveApi.get('/v1/balance')).body, { balance_cents: 10_000, available_cents: 10_000 });
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test('the provisioning number step of a live customer rents nothing and names carrier_unavailable, waiting on the service', async (t) => {
  const a = await liveAccount();
  const c = await makeCustomer(a.liveApi);
  const r = await a.liveApi.post(`/v1/customers/${c.id}/provisioning`, { steps: ['number'] });
  t.true([200, 201, 202].includes(r.status), r.text);
  const p = (await a.liveApi.get(`/v1/customers/${c.id}/provisioning`)).body;
  t.true(p.blockers.includes('carrier_unavailable'), JSON.stringify(p));
  t.deepEqual((await a.liveApi.get(`/v1/customers/${c.id}/numbers`)).body.data, []);
  t.deepEqual((await a.liveApi.get(`/v1/usage?customer_id=${c.id}`)).body.data, []);
});

test('readiness: carrier_not_configured among a live customer\'s blockers (the service\'s move) and not among test blockers; the call path refuses on it', async (t) => {
  const a = await liveAccount();
  // Ready in every other way: the operator assigned a number.
  const c = await makeCustomer(a.liveApi, { country: 'US', timezone: 'America/New_York' });
  const language = (await a.liveApi.get(`/v1/coverage?country=US`)).body.calling_language;
  await a.admin.post(`/admin/v1/languages/${language}/certify`);
  await a.admin.post(`/admin/v1/customers/${c.id}/numbers`, { phone_number: '+12025550188' });
  await a.admin.post(`/admin/v1/customers/${c.id}/script/certify`);
  const link = await a.liveApi.post(`/v1/customers/${c.id}/onboarding_link`);
  await fetch(link.body.url, { method: 'POST', body: new URLSearchParams({ accepted_by: 'Owner', agree: 'yes' }) });
  const r = (await a.liveApi.get(`/v1/customers/${c.id}/readiness`)).body;
  t.false(r.ready_for_live_calls);
  t.false(r.checks.carrier_configured);
  t.deepEqual(r.blockers.map((b: any) => b.code), ['carrier_not_configured']);
  t.like(r.blockers[0], { waiting_on: 'service', action: null });
  t.false(r.test_blockers.some((b: any) => b.code === 'carrier_not_configured'));
  // The dialler decides on the admission statement's row through the same rule.
  const admission = await loadAdmissionFacts(pool, { accountId: a.id, customerId: c.id, toE164: '+12025550111', attemptsSince: new Date(0) }, new Date());
  const assessed = assessReadiness(readinessFactsOf(admission.readiness!, new Date()));
  t.deepEqual(assessed.blockers.map((b) => b.code), ['carrier_not_configured']);

  const call = await a.liveApi.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550111' });
  t.is(call.status, 503, call.text);
  t.is(call.body.error.code, 'carrier_unavailable');
  t.regex(call.body.error.message, /no carrier is set up for live calls/i);
  t.deepEqual((await a.liveApi.get('/v1/calls?view=requests')).body.data, [], 'nothing queued');
  t.like((await a.liveApi.get('/v1/balance')).body, { available_cents: 10_000 });
});

test('test mode keeps the simulated carrier: a test number is rented and a test customer is ready for test calls', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeReadyCustomer(svc.url, a.api);
  const r = await a.api.post(`/v1/customers/${c.id}/numbers`, {});
  t.is(r.status, 201, r.text);
  const readiness = (await a.api.get(`/v1/customers/${c.id}/readiness`)).body;
  t.true(readiness.ready_for_test_calls);
  t.true(readiness.blockers.some((b: any) => b.code === 'carrier_not_configured'), 'the live question says why a live call would be turned away');
  const call = await a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550111' });
  t.is(call.status, 201, call.text);
});
