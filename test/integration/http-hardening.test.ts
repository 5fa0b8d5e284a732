import test from 'ava';
import pg from 'pg';
import { startTestService, ADMIN_TOKEN, type TestService } from '../helpers/service.ts';
import { call, client } from '../helpers/http.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { rawExchange, rawRequest } from '../helpers/raw-http.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { mintToken } from '../../runtime/tokens.ts';

/** The request timeout of this file's service: short, so a trickled body is cut within the test. */
const REQUEST_TIMEOUT_MS = 1_000;

let svc: TestService;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
});
test.after.always(async () => {
  await svc?.stop();
});

const errorLines = () => svc.logs.lines.filter((l) => Number(l.level) >= 50);

test('every response says nosniff; responses carrying a one-time secret are no-store', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const endpoint = await a.admin.post(`/admin/v1/accounts/${a.id}/webhook_endpoints`, { url: rx.url, mode: 'test' });
  const secrets = {
    'key secret': await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'test', label: 'x' }),
    'rotated key secret': await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}/rotate`),
    'onboarding URL': await a.api.post(`/v1/customers/${c.id}/onboarding_link`),
    'session token': await a.api.post(`/v1/customers/${c.id}/sessions`, { end_user_ref: 'u1' }),
    'webhook signing secret': endpoint,
    'rolled signing secret': await a.admin.post(`/admin/v1/accounts/${a.id}/webhook_endpoints/${endpoint.body.id}/roll_secret`),
  };
  for (const [what, r] of Object.entries(secrets)) {
    t.true(r.status === 200 || r.status === 201, `${what}: ${r.text}`);
    t.is(r.headers.get('cache-control'), 'no-store', what);
    t.is(r.headers.get('x-content-type-options'), 'nosniff', what);
  }
  const others = [
    await a.api.get('/v1/me'),
    await call(svc.url, 'GET', '/v1/me'),
    await call(svc.url, 'GET', '/nowhere'),
    await call(svc.url, 'GET', '/healthz'),
    await call(svc.url, 'GET', '/v1/openapi.json'),
    await call(svc.url, 'GET', '/onboarding/ob_nothing'),
    await call(svc.url, 'GET', '/chat'),
    await a.api.post('/v1/customers', { name: 'x', colour: 'blue' }),
  ];
  for (const r of others) t.is(r.headers.get('x-content-type-options'), 'nosniff', `${r.status} ${r.text.slice(0, 60)}`);
});

test("fastify's own refusals (414, 431, a malformed path) keep the error shape and carry a request id", async (t) => {
  const a = await makeAccount(svc.url);
  const cases: [string, Parameters<typeof rawRequest>[1], number, string][] = [
    ['a path parameter over 1,024 characters', { method: 'GET', target: `/v1/customers/${'a'.repeat(2_000)}`, headers: { authorization: `Bearer ${a.testKey}` } }, 414, 'uri_too_long'],
    ['headers over 16 KB', { method: 'GET', target: '/v1/me', headers: { 'x-padding': 'a'.repeat(20_000) } }, 431, 'headers_too_large'],
    ['a URL over 16 KB', { method: 'GET', target: `/v1/customers?q=${'a'.repeat(20_000)}` }, 431, 'headers_too_large'],
    ['a path that is not valid percent-encoding', { method: 'GET', target: '/v1/customers/%E0%A4%A' }, 400, 'invalid_string'],
  ];
  for (const [what, request, status, code] of cases) {
    const r = await rawRequest(svc.port, request);
    t.is(r.status, status, what);
    const body = JSON.parse(r.body);
    t.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'request_id', 'type'], what);
    t.is(body.error.code, code, what);
    t.regex(r.headers['request-id'] ?? '', /^req_[0-9a-f]{24}$/, what);
    t.is(body.error.request_id, r.headers['request-id'], what);
    t.is(r.headers['x-content-type-options'], 'nosniff', what);
    t.false(r.body.includes('aaaaaaaaaa'), `${what}: the path is not echoed`);
  }
});

test('a body trickled one byte at a time is cut with 408 after the request timeout, while other requests are served', async (t) => {
  const a = await makeAccount(svc.url);
  const body = JSON.stringify({ name: 'Slow Dental' });
  const head = `POST /v1/customers HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${a.testKey}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
  const slow = rawExchange(svc.port, head, { chunks: [...body], gapMs: 300, timeoutMs: 8_000 });
  const silent = rawExchange(svc.port, '', { timeoutMs: 8_000 });
  // Served meanwhile, one after another, for longer than the timeout.
  const served: number[] = [];
  const until = Date.now() + REQUEST_TIMEOUT_MS + 500;
  while (Date.now() < until) served.push((await a.api.get('/v1/me')).status);

  const [cut, idle] = await Promise.all([slow, silent]);
  t.is(cut.status, 408);
  t.is(JSON.parse(cut.body).error.code, 'request_timeout');
  t.regex(cut.headers['request-id'] ?? '', /^req_/);
  t.true(cut.closedAfterMs >= REQUEST_TIMEOUT_MS && cut.closedAfterMs < REQUEST_TIMEOUT_MS + 1_500, `cut after ${cut.closedAfterMs} ms`);
  t.true(idle.closedAfterMs < REQUEST_TIMEOUT_MS + 1_500, `a connection that sends nothing is closed after ${idle.closedAfterMs} ms`);
  t.true(served.length > 3 && served.every((s) => s === 200), `served: ${served.join(',')}`);
  t.is((await a.api.get('/v1/customers')).body.data.length, 0, 'the trickled request created nothing');
  t.deepEqual(errorLines(), [], 'a timed-out request is not an error of the service');
});

test('a client that goes away in the middle of its body is not logged as an error', async (t) => {
  const a = await makeAccount(svc.url);
  const before = errorLines().length;
  for (const head of [
    `POST /v1/customers HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${a.testKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":`,
    `POST /onboarding/ob_x HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 100\r\n\r\naccepted_by=`,
  ]) {
    await rawExchange(svc.port, head, { timeoutMs: 200 });
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.deepEqual(errorLines().slice(before), []);
  t.false(svc.logs.raw.some((l) => l.includes('"stack"') && l.includes('aborted')), 'no stack for an abort');
});

test('a revoked key and a suspended account are refused at once, even before the change feed says so', async (t) => {
  const a = await makeAccount(svc.url);
  const b = await makeAccount(svc.url);
  const spare = await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'test', label: 'spare' });
  // This process's change feed is frozen: only the process's own handling of the change can act.
  const sql = new pg.Client({ connectionString: svc.databaseUrl });
  await sql.connect();
  const { rows } = await sql.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`);
  t.is(rows.length, 1, 'the feed connection');
  const feedPid: number = rows[0].pid;
  process.kill(feedPid, 'SIGSTOP');
  t.teardown(async () => {
    process.kill(feedPid, 'SIGCONT');
    await sql.end();
  });

  const warm = async (api: ReturnType<typeof client>) => {
    for (let i = 0; i < 3; i++) t.is((await api.get('/v1/me')).status, 200, 'cached');
  };
  await warm(a.api);
  await warm(b.api);
  t.is((await a.admin.delete(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}`)).status, 200);
  const afterRevoke = await Promise.all(Array.from({ length: 20 }, () => a.api.get('/v1/me')));
  t.deepEqual(afterRevoke.map((r) => r.body?.error?.code ?? r.status), Array(20).fill('key_revoked'));
  t.is((await client(svc.url, spare.body.secret).get('/v1/me')).status, 200, "the account's other key still works");

  t.is((await b.admin.post(`/admin/v1/accounts/${b.id}/suspend`)).status, 200);
  const afterSuspend = await Promise.all(Array.from({ length: 20 }, () => b.api.get('/v1/me')));
  t.deepEqual(afterSuspend.map((r) => r.body?.error?.code ?? r.status), Array(20).fill('reseller_suspended'));
});

test.serial('failed authentication is throttled per client address, for the admin token and API keys alike', async (t) => {
  const limited = await startTestService({ SWITCHBOARD_AUTH_FAILURES_PER_MINUTE: '5', SWITCHBOARD_TRUST_PROXY: '1' });
  t.teardown(() => limited.stop());
  const from = (ip: string, key?: string) => (method: string, path: string) => call(limited.url, method, path, { key, headers: { 'x-forwarded-for': ip } });
  const a = await makeAccount(limited.url);

  // 50 wrong operator tokens in parallel from one address: 5 are looked at, the rest refused unread.
  const wrong = await Promise.all(Array.from({ length: 50 }, (_, i) => from('203.0.113.5', `sbc_wrong_${i}`)('GET', '/admin/v1/accounts')));
  const statuses = wrong.map((r) => r.status);
  t.is(statuses.filter((s) => s === 401).length, 5);
  t.is(statuses.filter((s) => s === 429).length, 45);
  const refused = wrong.find((r) => r.status === 429)!;
  t.is(refused.body.error.code, 'rate_limit_exceeded');
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  t.is((await from('203.0.113.5', ADMIN_TOKEN)('GET', '/admin/v1/accounts')).status, 429, 'the address waits, whatever it sends');
  t.is((await from('203.0.113.5', a.testKey)('GET', '/v1/me')).status, 429, 'API keys from that address too');

  // Another address is not affected; unknown API keys count like wrong tokens.
  t.is((await from('203.0.113.6', ADMIN_TOKEN)('GET', '/admin/v1/accounts')).status, 200);
  for (let i = 0; i < 5; i++) t.is((await from('203.0.113.7', mintToken('svc_test_'))('GET', '/v1/me')).status, 401);
  t.is((await from('203.0.113.7', mintToken('svc_test_'))('GET', '/v1/me')).status, 429);
  t.is((await from('203.0.113.8', a.testKey)('GET', '/v1/me')).status, 200);
  // A refusal that is not a guess (a real key without the permission) is not counted.
  const narrow = await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'test', label: 'narrow', scopes: ['customers:read'] });
  for (let i = 0; i < 8; i++) t.is((await from('203.0.113.9', narrow.body.secret)('GET', '/v1/brand')).status, 403);
  t.is((await from('203.0.113.9', narrow.body.secret)('GET', '/v1/customers')).status, 200);
  t.deepEqual(limited.logs.lines.filter((l) => Number(l.level) >= 50), []);
});
