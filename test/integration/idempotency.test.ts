import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { countRows } from '../helpers/db.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});

const idem = (key: string) => ({ headers: { 'idempotency-key': key } });

const count = (sql: string, params: unknown[]) => countRows(svc.databaseUrl, sql, params);

test('a replayed key returns the first response, status and body, and creates nothing more', async (t) => {
  const a = await makeAccount(svc.url);
  const first = await a.api.post('/v1/customers', { name: 'Once' }, idem('k-1'));
  t.is(first.status, 201);
  t.is(first.headers.get('idempotent-replayed'), null);
  const second = await a.api.post('/v1/customers', { name: 'Once' }, idem('k-1'));
  t.is(second.status, 201);
  t.deepEqual(second.body, first.body);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.is((await a.api.get('/v1/customers')).body.data.length, 1);
});

test('the same key with a different body is idempotency_key_reused (409)', async (t) => {
  const a = await makeAccount(svc.url);
  await a.api.post('/v1/customers', { name: 'One' }, idem('k-2'));
  const r = await a.api.post('/v1/customers', { name: 'Two' }, idem('k-2'));
  t.is(r.status, 409);
  t.is(r.body.error.code, 'idempotency_key_reused');
  t.is(r.body.error.type, 'conflict_error');
  const other = await a.api.patch('/v1/brand', { display_name: 'X' }, idem('k-2'));
  t.is(other.body.error.code, 'idempotency_key_reused', 'a key is bound to its first request, whatever the route');
});

test('keys are scoped to the account and mode', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const b = await makeAccount(svc.url);
  const r1 = await a.api.post('/v1/customers', { name: 'Same' }, idem('shared'));
  const r2 = await b.api.post('/v1/customers', { name: 'Same' }, idem('shared'));
  const r3 = await a.liveApi!.post('/v1/customers', { name: 'Same' }, idem('shared'));
  t.is(r1.status, 201);
  t.is(r2.status, 201);
  t.is(r3.status, 201);
  t.not(r1.body.id, r2.body.id);
  t.not(r1.body.id, r3.body.id);
});

test('concurrent requests with one key execute once', async (t) => {
  const a = await makeAccount(svc.url);
  const results = await Promise.all(Array.from({ length: 20 }, () => a.api.post('/v1/customers', { name: 'Race' }, idem('race'))));
  t.true(results.every((r) => r.status === 201));
  t.is(new Set(results.map((r) => r.body.id)).size, 1);
  t.is(await count('SELECT count(*) AS n FROM customers WHERE account_id = $1', [a.id]), 1);
});

test('a request refused by validation or by a rule stores nothing, so a corrected retry runs', async (t) => {
  const a = await makeAccount(svc.url);
  const bad = await a.api.post('/v1/customers', { name: '' }, idem('fix-me'));
  t.is(bad.body.error.code, 'name_required');
  const unopened = await a.api.post('/v1/customers', { name: 'A', country: 'BR' }, idem('fix-me'));
  t.is(unopened.body.error.code, 'country_not_supported');
  t.is(await count('SELECT count(*) AS n FROM idempotency_keys WHERE account_id = $1', [a.id]), 0);
  const good = await a.api.post('/v1/customers', { name: 'A' }, idem('fix-me'));
  t.is(good.status, 201);
});

test('keys over 255 characters are refused; every write route that takes a key replays', async (t) => {
  const a = await makeAccount(svc.url);
  const long = await a.api.post('/v1/customers', { name: 'A' }, idem('k'.repeat(256)));
  t.is(long.status, 400);
  t.is(long.body.error.code, 'idempotency_key_too_long');
  const c = await makeCustomer(a.api);
  const routes: [string, string, unknown][] = [
    ['patch', `/v1/customers/${c.id}/limits`, { max_concurrent_calls: 1 }],
    ['patch', '/v1/brand', { display_name: 'B' }],
    ['post', `/v1/customers/${c.id}/provisioning`, { steps: ['number'] }],
  ];
  for (const [method, path, body] of routes) {
    const one = await (a.api as any)[method](path, body, idem(`r-${path}`));
    const two = await (a.api as any)[method](path, body, idem(`r-${path}`));
    t.is(two.status, one.status, path);
    t.deepEqual(two.body, one.body, path);
    t.is(two.headers.get('idempotent-replayed'), 'true', path);
  }
  t.is(await count('SELECT count(*) AS n FROM provisioning_requests WHERE customer_id = $1', [c.id]), 1);
});

test('a replayed onboarding-link mint returns the link without its URL (only a hash is kept)', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const one = await a.api.post(`/v1/customers/${c.id}/onboarding_link`, undefined, idem('mint'));
  const two = await a.api.post(`/v1/customers/${c.id}/onboarding_link`, undefined, idem('mint'));
  t.is(two.status, 201);
  t.is(two.body.id, one.body.id);
  t.truthy(one.body.url);
  t.is(two.body.url, undefined);
  t.is((await a.api.get(`/v1/customers/${c.id}/onboarding_link`)).body.data.length, 1);
});

test.serial('a key is forgotten after 24 hours', async (t) => {
  const a = await makeAccount(svc.url);
  const one = await a.api.post('/v1/customers', { name: 'Day one' }, idem('daily'));
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 24 * 3600 + 1 });
  const two = await a.api.post('/v1/customers', { name: 'Day two' }, idem('daily'));
  t.is(two.status, 201);
  t.not(two.body.id, one.body.id);
});

// The domain's replies say only whether a write created its resource; each route picks its
// status, and a replay (from the stored record) must come back with the route's same status.
test('a replay answers with the status its route gives, whatever that is: 201, 200, 202', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const writes: [string, string, unknown, number][] = [
    ['post', '/v1/customers', { name: 'Replayed' }, 201],
    ['post', `/v1/customers/${c.id}/onboarding_link`, undefined, 201],
    ['post', `/v1/customers/${c.id}/sessions`, { end_user_ref: 'staff-1' }, 201],
    ['post', `/v1/customers/${c.id}/provisioning`, { steps: ['script'] }, 202],
    ['patch', `/v1/customers/${c.id}/limits`, { max_concurrent_calls: 2 }, 200],
    ['patch', '/v1/brand', { display_name: 'Replayed' }, 200],
    ['post', '/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550120' }, 201],
  ];
  for (const [method, path, body, status] of writes) {
    const one = await (a.api as any)[method](path, body, idem(`status-${path}`));
    const two = await (a.api as any)[method](path, body, idem(`status-${path}`));
    t.is(one.status, status, path);
    t.is(two.status, status, `${path} replayed`);
    t.is(two.headers.get('idempotent-replayed'), 'true', path);
  }
  // The open request found again is 200 (duplicate rule), and so is its replay.
  const again = await a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550120' }, idem('status-again'));
  t.is(again.status, 200);
  const replay = await a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550120' }, idem('status-again'));
  t.is(replay.status, 200);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.body.id, again.body.id);
});

test('requests racing on one key that found an existing resource all answer 200 (the replay inside the transaction)', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const first = await a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550121' });
  t.is(first.status, 201);
  // The first to claim the key finds the open request (200); the others wait on the key's lock and replay its record.
  const results = await Promise.all(Array.from({ length: 8 }, () => a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550121' }, idem('race-200'))));
  t.deepEqual([...new Set(results.map((r) => r.status))], [200]);
  t.true(results.every((r) => r.body.id === first.body.id));
});

test('a record a process of the previous version finished (its status only, migration 012) replays with that status', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const created = await a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550122' }, idem('old-201'));
  const found = await a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550122' }, idem('old-200'));
  t.deepEqual([created.status, found.status], [201, 200]);
  // What the previous version wrote: the HTTP status, and no `response_created`.
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await db.query(
    `UPDATE idempotency_keys SET response_created = NULL, response_status = CASE key WHEN 'old-201' THEN 201 ELSE 200 END
      WHERE account_id = $1 AND key IN ('old-201', 'old-200')`,
    [a.id],
  );
  await db.end();
  const replay201 = await a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550122' }, idem('old-201'));
  const replay200 = await a.api.post('/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+12025550122' }, idem('old-200'));
  t.deepEqual([replay201.status, replay200.status], [201, 200]);
  t.is(replay201.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(replay201.body, created.body);
});

// POST /v1/dnc took a key and never recorded it: a repeat ran again (200 "already listed"), and
// after the number was taken off, the same key listed it anew.
test('POST /v1/dnc records its key: a repeat replays the first answer, a reused key is refused', async (t) => {
  const a = await makeAccount(svc.url);
  const one = await a.api.post('/v1/dnc', { phone: '+12025550160', reason: 'asked' }, idem('dnc-1'));
  t.is(one.status, 201);
  const two = await a.api.post('/v1/dnc', { phone: '+12025550160', reason: 'asked' }, idem('dnc-1'));
  t.is(two.status, 201);
  t.deepEqual(two.body, one.body);
  t.is(two.headers.get('idempotent-replayed'), 'true');
  t.like((await a.api.delete('/v1/dnc/+12025550160')).body, { deleted: true });
  const after = await a.api.post('/v1/dnc', { phone: '+12025550160', reason: 'asked' }, idem('dnc-1'));
  t.is(after.status, 201);
  t.is(after.headers.get('idempotent-replayed'), 'true');
  t.is((await a.api.get('/v1/dnc')).body.data.length, 0, 'the replay listed nothing again');
  const other = await a.api.post('/v1/dnc', { phone: '+12025550161' }, idem('dnc-1'));
  t.is(other.status, 409);
  t.is(other.body.error.code, 'idempotency_key_reused');
});
