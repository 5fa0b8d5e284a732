import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';

/**
 * The simulated carrier's ring (SWITCHBOARD_SIMULATED_RING_MS) and the test facility that ends
 * every ring at once (`POST /admin/v1/simulated_carrier/release_ringing`, SWITCHBOARD_TEST_CLOCK=1
 * only): the dialler's bench holds its calls ringing through its window with them.
 */
let svc: TestService;
let account: TestAccount;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000', SWITCHBOARD_JOB_INTERVAL_MS: '3600000', SWITCHBOARD_SIMULATED_RING_MS: '600000' });
  account = await makeAccount(svc.url);
});
test.after.always(() => svc?.stop());

test.serial('a call rings as long as SWITCHBOARD_SIMULATED_RING_MS says until release_ringing ends the ring, then goes on as its number says', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  await advanceToNext(account, 2, 15);
  const phone = '+12025550102'; // a business landline (line number 0…); last digit 2: no answer
  const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, business_name: 'Acme Plumbing', phone });
  t.is(r.status, 201, JSON.stringify(r.body));
  await account.admin.post('/admin/v1/dialler/run');
  await new Promise((res) => setTimeout(res, 1_500));
  const ringing = (await account.api.get(`/v1/calls/${r.body.id}`)).body;
  t.false(ringing.finished, 'still ringing 1.5 s after the dial');
  t.truthy(ringing.dialed_at);
  const released = await account.admin.post('/admin/v1/simulated_carrier/release_ringing');
  t.is(released.status, 200);
  t.deepEqual(released.body, { object: 'simulated_carrier_release', released: 1 });
  t.like(await dialUntilFinished(account, account.api, r.body.id), { finished: true, outcome: 'no_answer' });
  t.deepEqual((await account.admin.post('/admin/v1/simulated_carrier/release_ringing')).body, { object: 'simulated_carrier_release', released: 0 }, 'nothing left ringing');
});

test.serial('release_ringing is the operator\'s and a test facility only', async (t) => {
  t.is((await account.api.post('/admin/v1/simulated_carrier/release_ringing')).status, 401, 'a reseller key is not the operator token');
  const plain = await startTestService({ SWITCHBOARD_TEST_CLOCK: '0', SWITCHBOARD_DIALLER_POLL_MS: '3600000', SWITCHBOARD_JOB_INTERVAL_MS: '3600000' });
  t.teardown(() => plain.stop());
  const res = await fetch(`${plain.url}/admin/v1/simulated_carrier/release_ringing`, { method: 'POST', headers: { authorization: 'Bearer sbc_test_console_token_for_tests_only' } });
  const body = await res.json();
  t.is(body.error.code, 'test_clock_disabled');
  t.true(res.status >= 400 && res.status < 500);
});
