import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call, client } from '../helpers/http.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { mintToken } from '../../runtime/tokens.ts';
import { TestClock } from '../../runtime/clock.ts';

let svc: TestService;
/** Real time, which a test moves to reach a live key's expiry and the end of its rotation grace. */
const wall = new TestClock();
test.before(async () => {
  svc = await startTestService({}, { realClock: wall });
});
test.after.always(async () => {
  await svc?.stop();
});

const codeOf = (r: { body: any }) => r.body?.error?.code;

test('no key, a junk key, a truncated key and an unknown well-formed key are all invalid_api_key (401)', async (t) => {
  const a = await makeAccount(svc.url);
  for (const key of [undefined, 'nonsense', a.testKey.slice(0, -1), a.testKey.slice(0, -1) + (a.testKey.endsWith('a') ? 'b' : 'a'), mintToken('svc_test_')]) {
    const r = await call(svc.url, 'GET', '/v1/me', { key });
    t.is(r.status, 401, String(key));
    t.is(codeOf(r), 'invalid_api_key');
    t.is(r.body.error.type, 'authentication_error');
    t.regex(r.body.error.request_id, /^req_/);
  }
});

test('GET /v1/me describes the account and the calling key', async (t) => {
  const a = await makeAccount(svc.url, { name: 'Me Agency' });
  const r = await a.api.get('/v1/me');
  t.is(r.status, 200);
  t.is(r.body.object, 'account');
  t.is(r.body.name, 'Me Agency');
  t.is(r.body.mode, 'test');
  t.is(r.body.status, 'active');
  t.deepEqual(r.body.onboarding, { kyb_status: 'pending', agreement_signed: false, agreement_version: null });
  t.is(r.body.key.id, a.testKeyId);
  t.true(a.testKey.startsWith(r.body.key.prefix));
  t.true(a.testKey.endsWith(r.body.key.last_four));
  t.is(r.body.limits.requests_per_minute, 1_000_000, 'as the factory set it');
  const fresh = await a.admin.post('/admin/v1/accounts', { name: 'Defaults', country: 'US' });
  t.like(fresh.body.limits, { requests_per_minute: 120, burst: 30, concurrent_calls: 10, max_customers: null });
  t.deepEqual(r.body.customers, { count: 0 });
});

test('sixty agencies of the same name are all created, each with its own slug', async (t) => {
  const con = (await makeAccount(svc.url)).admin;
  const slugs = new Set<string>();
  for (let i = 0; i < 60; i++) {
    const r = await con.post('/admin/v1/accounts', { name: 'Same Name Agency', country: 'US' });
    t.is(r.status, 201, r.text);
    slugs.add(r.body.slug);
  }
  t.is(slugs.size, 60);
  t.true(slugs.has('same-name-agency') && slugs.has('same-name-agency-2') && slugs.has('same-name-agency-3'));
});

test('a revoked key answers key_revoked', async (t) => {
  const a = await makeAccount(svc.url);
  t.is((await a.admin.delete(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}`)).status, 200);
  const r = await a.api.get('/v1/me');
  t.is(r.status, 401);
  t.is(codeOf(r), 'key_revoked');
});

test.serial('rotation: the old secret works for 24 hours, then answers key_rotated; key.rotated is recorded', async (t) => {
  const a = await makeAccount(svc.url);
  const rotated = await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}/rotate`);
  t.is(rotated.status, 200);
  t.not(rotated.body.secret, a.testKey);
  const fresh = client(svc.url, rotated.body.secret);
  t.is((await fresh.get('/v1/me')).status, 200);
  t.is((await a.api.get('/v1/me')).status, 200, 'old secret inside grace');

  const events = await a.admin.get(`/admin/v1/accounts/${a.id}/events?type=key.rotated`);
  t.is(events.body.data.length, 1);
  t.is(events.body.data[0].data.id, a.testKeyId);
  t.truthy(events.body.data[0].data.previous_secret_expires_at);
  t.false(JSON.stringify(events.body).includes(rotated.body.secret), 'event never carries the secret');

  // Tests that move the shared clock are serial: ava runs them before the concurrent ones.
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 24 * 3600 + 1 });
  const old = await a.api.get('/v1/me');
  t.is(old.status, 401);
  t.is(codeOf(old), 'key_rotated');
  t.is((await fresh.get('/v1/me')).status, 200);
});

test.serial('an expired key answers key_expired', async (t) => {
  const a = await makeAccount(svc.url);
  const expiresAt = new Date(Date.now() + 3 * 86_400_000 * 365).toISOString();
  const k = await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'test', label: 'short', expires_at: expiresAt });
  t.is(k.status, 201);
  t.is(k.body.expires_at, new Date(expiresAt).toISOString());
  const api = client(svc.url, k.body.secret);
  t.is((await api.get('/v1/me')).status, 200);
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 3 * 86_400 * 365 + 10 });
  const r = await api.get('/v1/me');
  t.is(r.status, 401);
  t.is(codeOf(r), 'key_expired');
});

test.serial('a live key is on real time: a moved test clock neither expires it nor ends its rotation grace, and revokes it at once (issue 20 §4)', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const liveKey = async (body: Record<string, unknown>) => {
    const k = await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'live', label: 'real time', ...body });
    t.is(k.status, 201);
    return { id: k.body.id as string, api: client(svc.url, k.body.secret) };
  };
  // Expires in 2 days of real time.
  const expiring = await liveKey({ expires_at: new Date(wall.now().getTime() + 2 * 86_400_000).toISOString() });
  const rotating = await liveKey({});
  const revoking = await liveKey({});
  const before = wall.now().getTime();
  const rotated = await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${rotating.id}/rotate`);
  const after = wall.now().getTime();
  t.is(rotated.status, 200);
  const fresh = client(svc.url, rotated.body.secret);
  const event = (await a.admin.get(`/admin/v1/accounts/${a.id}/events?type=key.rotated`)).body.data[0];
  const graceEnds = new Date(event.data.previous_secret_expires_at).getTime();
  t.true(graceEnds >= before + 24 * 3_600_000 && graceEnds <= after + 24 * 3_600_000, 'the grace ends 24 hours after the real time of the rotation');

  // Three days on the test clock: past the expiry and the grace on it, neither on real time.
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 3 * 86_400 });
  t.is((await expiring.api.get('/v1/me')).status, 200, 'not expired');
  t.is((await rotating.api.get('/v1/me')).status, 200, 'the old secret is inside its 24-hour grace');
  t.is((await fresh.get('/v1/me')).status, 200);
  // A revocation after the move holds at once (it is not dated days ahead of the check).
  t.is((await a.admin.delete(`/admin/v1/accounts/${a.id}/keys/${revoking.id}`)).status, 200);
  t.is(codeOf(await revoking.api.get('/v1/me')), 'key_revoked');

  // Real time: 24 hours and a minute later the old secret is refused; the key still works.
  wall.advance(24 * 3_600_000 + 60_000);
  const old = await rotating.api.get('/v1/me');
  t.is(old.status, 401);
  t.is(codeOf(old), 'key_rotated');
  t.is((await fresh.get('/v1/me')).status, 200);
  t.is((await expiring.api.get('/v1/me')).status, 200, 'one day of its 2 left');
  // Real time past the 2 days: expired.
  wall.advance(86_400_000);
  const expired = await expiring.api.get('/v1/me');
  t.is(expired.status, 401);
  t.is(codeOf(expired), 'key_expired');
});

test('an IP allowlist admits listed addresses and ranges and refuses others with ip_not_allowed (403)', async (t) => {
  const a = await makeAccount(svc.url);
  const make = async (ip_allowlist: string[]) => {
    const k = await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'test', label: 'ip', ip_allowlist });
    t.is(k.status, 201, k.text);
    return client(svc.url, k.body.secret);
  };
  t.is((await (await make(['127.0.0.0/8'])).get('/v1/me')).status, 200);
  t.is((await (await make(['::1', '127.0.0.1'])).get('/v1/me')).status, 200);
  const outside = await (await make(['203.0.113.0/24', '2001:db8::/32'])).get('/v1/me');
  t.is(outside.status, 403);
  t.is(codeOf(outside), 'ip_not_allowed');
  t.is(outside.body.error.type, 'permission_error');

  const bad = await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'test', label: 'bad', ip_allowlist: ['10.0.0.0/99'] });
  t.is(bad.status, 400);
  t.is(codeOf(bad), 'invalid_ip_allowlist');
});

test('a key without the route scope gets scope_missing (403); /v1/me needs no scope', async (t) => {
  const a = await makeAccount(svc.url, { scopes: ['customers:read'] });
  t.is((await a.api.get('/v1/me')).status, 200);
  t.is((await a.api.get('/v1/customers')).status, 200);
  const r = await a.api.post('/v1/customers', { name: 'X' });
  t.is(r.status, 403);
  t.is(codeOf(r), 'scope_missing');
  t.regex(r.body.error.message, /customers:write/);
  const brand = await a.api.get('/v1/brand');
  t.is(codeOf(brand), 'scope_missing');
});

test('an unknown scope is refused when the key is created', async (t) => {
  const a = await makeAccount(svc.url);
  const r = await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'test', label: 'x', scopes: ['customers:read', 'root'] });
  t.is(r.status, 400);
  t.is(codeOf(r), 'invalid_scope');
});

test('a suspended account answers reseller_suspended until reinstated', async (t) => {
  const a = await makeAccount(svc.url);
  await a.admin.post(`/admin/v1/accounts/${a.id}/suspend`);
  const r = await a.api.get('/v1/me');
  t.is(r.status, 403);
  t.is(codeOf(r), 'reseller_suspended');
  await a.admin.post(`/admin/v1/accounts/${a.id}/reinstate`);
  t.is((await a.api.get('/v1/me')).status, 200);
});

test('live keys need KYB; a live key on an account not yet live answers live_not_enabled', async (t) => {
  const a = await makeAccount(svc.url);
  const early = await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'live', label: 'live' });
  t.is(early.status, 409);
  t.is(codeOf(early), 'kyb_incomplete');
  await a.admin.post(`/admin/v1/accounts/${a.id}/kyb`, { status: 'verified' });
  const live = await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'live', label: 'live' });
  t.is(live.status, 201);
  t.true(live.body.secret.startsWith('svc_live_'));
  const api = client(svc.url, live.body.secret);
  const refused = await api.get('/v1/customers');
  t.is(refused.status, 403);
  t.is(codeOf(refused), 'live_not_enabled');
  t.is((await api.get('/v1/me')).body.mode, 'test', 'the account is not live yet');

  const blocked = await a.admin.post(`/admin/v1/accounts/${a.id}/go_live`);
  t.is(codeOf(blocked), 'go_live_blocked', 'agreement still unsigned');
  await a.admin.post(`/admin/v1/accounts/${a.id}/agreement`, { version: 'v1' });
  t.is((await a.admin.post(`/admin/v1/accounts/${a.id}/go_live`)).status, 200);
  const me = await api.get('/v1/me');
  t.is(me.status, 200);
  t.is(me.body.mode, 'live');
});

test('before go-live a live key reads the account\'s own money and brand and sets the brand; nothing live is acted on', async (t) => {
  const a = await makeAccount(svc.url);
  await a.admin.post(`/admin/v1/accounts/${a.id}/kyb`, { status: 'verified' });
  const liveKey: string = (await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'live', label: 'live' })).body.secret;
  const live = client(svc.url, liveKey);
  t.is((await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 5_000 })).status, 201);

  const me = await live.get('/v1/me');
  t.is(me.status, 200, me.text);
  t.like(me.body, { mode: 'test', key: { mode: 'live' } });
  const balance = await live.get('/v1/balance');
  t.is(balance.status, 200, balance.text);
  t.is(balance.body.paid_cents, 5_000, 'the money paid before go-live');
  t.is((await a.api.get('/v1/balance')).body.paid_cents, 0, 'a test key still sees the money-less test balance');
  const usage = await live.get('/v1/usage');
  t.is(usage.status, 200, usage.text);
  t.deepEqual(usage.body.data.map((l: any) => [l.type, l.amount_cents]), [['top_up', 5_000]]);
  t.is((await live.get('/v1/brand')).status, 200);
  const brand = await live.patch('/v1/brand', { display_name: 'Northwind Calls' });
  t.is(brand.status, 200, brand.text);
  t.is((await a.api.get('/v1/brand')).body.display_name, 'Northwind Calls', 'one brand for the account');

  const c = await makeCustomer(a.api);
  for (const [method, path, body] of [
    ['GET', '/v1/customers', undefined],
    ['POST', '/v1/customers', { name: 'Live Dental' }],
    ['GET', `/v1/customers/${c.id}/readiness`, undefined],
    ['POST', '/v1/calls', { called_party: 'business', customer_id: c.id, phone: '+14155550123' }],
    ['GET', '/v1/calls', undefined],
    ['POST', '/v1/dnc', { phone: '+14155550123' }],
    ['POST', `/v1/customers/${c.id}/sessions`, { end_user_ref: 'u' }],
  ] as const) {
    const r = await call(svc.url, method, path, { key: liveKey, body });
    t.is(codeOf(r), 'live_not_enabled', `${method} ${path}`);
  }
});

test('a key sees only its own mode: the other mode\'s customer is customer_not_found', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const testCustomer = await makeCustomer(a.api, { external_ref: 'shared-ref' });
  const liveCustomer = await makeCustomer(a.liveApi!, { external_ref: 'shared-ref' });
  t.is(testCustomer.mode, 'test');
  t.is(liveCustomer.mode, 'live');
  const cross = await a.liveApi!.get(`/v1/customers/${testCustomer.id}`);
  t.is(cross.status, 404);
  t.is(codeOf(cross), 'customer_not_found');
  t.is((await a.api.get(`/v1/customers/${liveCustomer.id}/readiness`)).status, 404);
  t.is((await a.liveApi!.get('/v1/customers/shared-ref')).body.id, liveCustomer.id);
  t.is((await a.api.get('/v1/customers/shared-ref')).body.id, testCustomer.id);
  const liveList = await a.liveApi!.get('/v1/customers');
  t.deepEqual(liveList.body.data.map((c: any) => c.id), [liveCustomer.id]);
});

test('another account\'s customer is customer_not_found', async (t) => {
  const a = await makeAccount(svc.url);
  const b = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const r = await b.api.get(`/v1/customers/${c.id}`);
  t.is(r.status, 404);
  t.is(codeOf(r), 'customer_not_found');
});

test('logs never contain a secret, a token or an Authorization header', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const link = await a.api.post(`/v1/customers/${c.id}/onboarding_link`);
  await call(svc.url, 'GET', new URL(link.body.url).pathname);
  await a.api.get('/v1/me');
  const rotated = await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}/rotate`);
  const token = new URL(link.body.url).pathname.split('/').pop()!;
  const all = svc.logs.raw.join('\n');
  for (const secret of [a.testKey, rotated.body.secret, token, 'sbc_test_console_token_for_tests_only']) {
    t.false(all.includes(secret), `log leaked ${secret.slice(0, 12)}`);
  }
  t.false(/authorization/i.test(all.replace(/"route":"[^"]*"/g, '')), 'no header is logged');
  const requestLines = svc.logs.lines.filter((l) => l.msg === 'request' && l.account_id === a.id);
  t.true(requestLines.length >= 3);
  for (const l of requestLines) {
    t.regex(String(l.request_id), /^req_/);
    t.is(typeof l.route, 'string');
    t.is(typeof l.status, 'number');
    t.is(typeof l.duration_ms, 'number');
  }
});

test("GET /v1/me names the calling key's mode, which is not the account's", async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const viaTest = await a.api.get('/v1/me');
  t.is(viaTest.status, 200);
  t.is(viaTest.body.mode, 'live', 'the account has gone live');
  t.is(viaTest.body.key.mode, 'test', 'the key asking is a test key');
  const viaLive = await a.liveApi!.get('/v1/me');
  t.like(viaLive.body, { mode: 'live', key: { mode: 'live' } });

  // The OpenAPI document says so, and requires it.
  const doc = (await call(svc.url, 'GET', '/v1/openapi.json')).body;
  // (The named Account schema since issue 26.)
  const { $ref } = doc.paths['/v1/me'].get.responses['200'].content['application/json'].schema;
  const key = doc.components.schemas[$ref.split('/').pop()].properties.key;
  t.true(key.required.includes('mode'));
  t.deepEqual(key.properties.mode.anyOf.flatMap((s: any) => s.enum ?? [s.const]).sort(), ['live', 'test']);
});
