import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, makeReadyCustomer } from '../helpers/calls.ts';
import { createPool, type Pool } from '../../db/pool.ts';
import { loadAdmissionFacts } from '../../db/admission.ts';

// The operator switch of emergency closures (La. R.S. 45:844.31), from the console route through
// the table and the admission statement to the dialler's decision.

let svc: TestService;
let account: TestAccount;
let ready: any;
let pool: Pool;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  ready = await makeReadyCustomer(svc.url, account.api);
  pool = createPool(svc.databaseUrl, 2);
  // A Wednesday, 17:00 UTC: noon in New Orleans.
  await advanceToNext(account, 3, 17);
});
test.after.always(async () => {
  await pool?.end();
  await svc?.stop();
});

const NEW_ORLEANS = '+15045550123';
const facts = (toE164: string) => loadAdmissionFacts(pool, { accountId: account.id, customerId: ready.id, toE164, attemptsSince: new Date(Date.now() - 367 * 24 * 3600_000) }, new Date());

test.serial('closing a jurisdiction: the console switch, the statement that reads it, a request that waits; reopening lifts it', async (t) => {
  const closed = await account.admin.put('/admin/v1/emergency_closures/us-la', { reason: 'Proclamation 2026-99 (hurricane)' });
  t.is(closed.status, 200);
  t.like(closed.body, { object: 'emergency_closure', jurisdiction: 'US-LA', closed: true, reason: 'Proclamation 2026-99 (hurricane)' });
  t.truthy(Date.parse(closed.body.closed_at));
  // Closing again keeps the first closed_at and takes the new reason.
  const again = await account.admin.put('/admin/v1/emergency_closures/US-LA', { reason: 'extended' });
  t.like(again.body, { reason: 'extended', closed_at: closed.body.closed_at });
  t.deepEqual((await account.admin.get('/admin/v1/emergency_closures')).body.data.map((c: { jurisdiction: string }) => c.jurisdiction), ['US-LA']);
  t.deepEqual((await facts(NEW_ORLEANS)).emergency_closures, ['US-LA']);

  const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, phone: NEW_ORLEANS });
  t.is(r.status, 201);
  await account.admin.post('/admin/v1/dialler/run');
  t.like((await account.api.get(`/v1/calls/${r.body.id}`)).body, { status: 'queued', finished: false, waiting_reason: 'emergency_closure' });

  const reopened = await account.admin.delete('/admin/v1/emergency_closures/US-LA');
  t.like(reopened.body, { object: 'emergency_closure', jurisdiction: 'US-LA', closed: false, reason: null, closed_at: null });
  t.like((await account.admin.delete('/admin/v1/emergency_closures/US-LA')).body, { closed: false }, 'reopening twice changes nothing');
  t.deepEqual((await facts(NEW_ORLEANS)).emergency_closures, []);
  // Reopening makes the held request due at once, not after its 15 minutes.
  const woken = (await account.api.get(`/v1/calls/${r.body.id}`)).body;
  t.true(Date.parse(woken.next_attempt_at) <= Date.parse((await account.admin.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now));
  // The wait was 15 minutes; after it the closure is no longer the reason.
  await account.admin.post('/admin/v1/test_clock/advance', { seconds: 16 * 60 });
  await account.admin.post('/admin/v1/dialler/run');
  t.not((await account.api.get(`/v1/calls/${r.body.id}`)).body.waiting_reason, 'emergency_closure');
});

test.serial('only jurisdictions calls are made to can be closed, with a reason', async (t) => {
  for (const j of ['US-ZZ', 'XX', 'usa', 'US-LA-1']) {
    const res = await account.admin.put(`/admin/v1/emergency_closures/${j}`, { reason: 'x' });
    t.is(res.status, 400, j);
    t.is(res.body.error.code, 'invalid_parameter', j);
  }
  t.is((await account.admin.put('/admin/v1/emergency_closures/US-LA', {})).status, 400, 'a reason is required');
  t.is((await account.admin.put('/admin/v1/emergency_closures/US-LA', { reason: '' })).status, 400);
  t.is((await account.admin.delete('/admin/v1/emergency_closures/US-ZZ')).status, 400);
  t.is((await account.admin.get('/admin/v1/emergency_closures')).body.data.length, 0);
  const unauthorized = await account.api.put('/admin/v1/emergency_closures/US-LA', { reason: 'x' });
  t.is(unauthorized.status, 401);
});
