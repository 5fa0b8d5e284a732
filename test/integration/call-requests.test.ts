import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { countRows } from '../helpers/db.ts';

/**
 * Calls, do-not-call entries and appointments are no longer handed on by the account actor
 * (docs/decisions.md, "Per-entity write queues and plain modules"). Concurrent writes of one
 * account used to queue in its mailbox, in one process; these check that PostgreSQL now gives
 * the same answers, and that a customer is named only within its own account and mode.
 */

let svc: TestService;
test.before(async () => {
  // The dialler runs only when asked, so a queued request stays queued.
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
});
test.after.always(async () => {
  await svc?.stop();
});

const count = (sql: string, params: unknown[]) => countRows(svc.databaseUrl, sql, params);

test('concurrent cancels of one request all answer 200 with the cancelled request; one call.completed', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const queued = await a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550170' });
  t.is(queued.status, 201);
  const replies = await Promise.all(Array.from({ length: 8 }, () => a.api.delete(`/v1/calls/${queued.body.id}`)));
  t.deepEqual([...new Set(replies.map((r) => r.status))], [200]);
  t.true(replies.every((r) => r.body.status === 'cancelled' && r.body.id === queued.body.id));
  t.is(await count(`SELECT count(*) AS n FROM events WHERE account_id = $1 AND type = 'call.completed'`, [a.id]), 1);
});

test('concurrent requests for one number queue it once: one 201, the others 200 with the same request', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const replies = await Promise.all(Array.from({ length: 8 }, () => a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550171' })));
  t.deepEqual(replies.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
  t.is(new Set(replies.map((r) => r.body.id)).size, 1);
});

test('concurrent do-not-call writes of one number: listed once (one 201), taken off once (one 200, the rest 404)', async (t) => {
  const a = await makeAccount(svc.url);
  const adds = await Promise.all(Array.from({ length: 8 }, () => a.api.post('/v1/dnc', { phone: '+12025550172' })));
  t.deepEqual(adds.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
  const removes = await Promise.all(Array.from({ length: 8 }, () => a.api.delete('/v1/dnc/+12025550172')));
  t.deepEqual(removes.map((r) => r.status).sort(), [200, 404, 404, 404, 404, 404, 404, 404]);
  t.true(removes.filter((r) => r.status === 404).every((r) => r.body.error.code === 'dnc_entry_not_found'));
});

test('a callee’s own do-not-call request cannot be taken off by the reseller', async (t) => {
  const a = await makeAccount(svc.url);
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await db.query(`INSERT INTO dnc_numbers (account_id, e164, source, created_at) VALUES ($1, '+12025550173', 'callee_request', now())`, [a.id]);
  await db.end();
  const r = await a.api.delete('/v1/dnc/+12025550173');
  t.is(r.status, 409);
  t.is(r.body.error.code, 'dnc_entry_protected');
  t.is((await a.api.get('/v1/dnc')).body.data.length, 1);
});

test('a customer is named by id or external_ref only in its own account and mode, whatever was named before', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const b = await makeAccount(svc.url);
  const mine = await makeCustomer(a.api, { external_ref: 'shared-ref' });
  const theirs = await makeCustomer(b.api, { external_ref: 'shared-ref' });
  // Named first in one account, then in the other: each gets its own.
  const ra = await a.api.post('/v1/calls', { called_party: 'business', customer_id: 'shared-ref', phone: '+12025550174' });
  const rb = await b.api.post('/v1/calls', { called_party: 'business', customer_id: 'shared-ref', phone: '+12025550174' });
  t.is(ra.body.customer_id, mine.id);
  t.is(rb.body.customer_id, theirs.id);
  t.is((await b.api.post('/v1/calls', { called_party: 'business', customer_id: mine.id, phone: '+12025550175' })).body.error.code, 'customer_not_found');
  t.is((await b.api.get(`/v1/calls?customer_id=${mine.id}`)).body.error.code, 'customer_not_found');
  t.is((await b.api.get(`/v1/appointments?customer_id=shared-ref`)).status, 200);
  // The live key does not see the test customer, by ref or by id, nor its call.
  t.is((await a.liveApi!.post('/v1/calls', { called_party: 'business', customer_id: 'shared-ref', phone: '+12025550176' })).body.error.code, 'customer_not_found');
  t.is((await a.liveApi!.get(`/v1/calls?customer_id=${mine.id}`)).body.error.code, 'customer_not_found');
  t.is((await a.liveApi!.get(`/v1/calls/${ra.body.id}`)).body.error.code, 'call_not_found');
  // Another account's call is not found, to read or to cancel.
  t.is((await b.api.get(`/v1/calls/${ra.body.id}`)).status, 404);
  t.is((await b.api.delete(`/v1/calls/${ra.body.id}`)).body.error.code, 'call_not_found');
  t.is((await b.api.get(`/v1/calls/${ra.body.id}/transcript`)).body.error.code, 'call_not_found');
});
