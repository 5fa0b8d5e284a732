import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { makeAccount } from '../helpers/factories.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});

test('every response carries a request id, and errors repeat it in their body', async (t) => {
  const a = await makeAccount(svc.url);
  const ok = await a.api.get('/v1/me');
  t.regex(ok.headers.get('request-id')!, /^req_[0-9a-f]{24}$/);
  const err = await a.api.get('/v1/customers/nope');
  t.is(err.body.error.request_id, err.headers.get('request-id'));
  t.not(ok.headers.get('request-id'), err.headers.get('request-id'));
});

test('an unknown route is 404 route_not_found in the error shape', async (t) => {
  const a = await makeAccount(svc.url);
  for (const [method, path] of [
    ['GET', '/v1/nothing-here'],
    ['DELETE', '/v1/customers'],
    ['GET', '/elsewhere'],
  ]) {
    const r = await call(svc.url, method, path, { key: a.testKey });
    t.is(r.status, 404, path);
    t.deepEqual(Object.keys(r.body.error).sort(), ['code', 'message', 'request_id', 'type']);
    t.is(r.body.error.code, 'route_not_found');
    t.is(r.body.error.type, 'not_found_error');
  }
});

test('authenticated responses carry x-ratelimit-* headers; over the limit is 429 with Retry-After', async (t) => {
  const a = await makeAccount(svc.url);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { requests_per_minute: 5, burst: 100 });
  const first = await a.api.get('/v1/me');
  t.is(first.headers.get('x-ratelimit-limit'), '5');
  t.is(first.headers.get('x-ratelimit-remaining'), '4');
  const reset = Number(first.headers.get('x-ratelimit-reset'));
  const nowS = Date.now() / 1000;
  t.true(reset > nowS && reset <= nowS + 61, 'reset is a Unix time within the minute');
  for (let i = 0; i < 4; i++) t.is((await a.api.get('/v1/me')).status, 200);
  const over = await a.api.get('/v1/me');
  t.is(over.status, 429);
  t.is(over.body.error.code, 'rate_limit_exceeded');
  const retryAfter = Number(over.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60);
  t.is(over.headers.get('x-ratelimit-remaining'), '0');
  // Another account is not affected.
  const b = await makeAccount(svc.url);
  t.is((await b.api.get('/v1/me')).status, 200);
});

test('the 10-second burst window refuses a spike even under the per-minute limit', async (t) => {
  const a = await makeAccount(svc.url);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { requests_per_minute: 1000, burst: 3 });
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await a.api.get('/v1/me')).status);
  t.deepEqual(statuses, [200, 200, 200, 429, 429]);
  const over = await a.api.get('/v1/me');
  t.true(Number(over.headers.get('retry-after')) <= 10);
  t.is(over.headers.get('x-ratelimit-limit'), '3', 'a 429 describes the window that refused');
});

test('limits set in the console show in /v1/me', async (t) => {
  const a = await makeAccount(svc.url);
  const r = await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { requests_per_minute: 600, burst: 100, concurrent_calls: 25, max_customers: 50 });
  t.is(r.status, 200);
  t.deepEqual((await a.api.get('/v1/me')).body.limits, { requests_per_minute: 600, burst: 100, concurrent_calls: 25, max_customers: 50 });
  const bad = await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { requests_per_minute: 0 });
  t.is(bad.body.error.code, 'invalid_limit');
  const cleared = await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { max_customers: null });
  t.is(cleared.body.limits.max_customers, null);
});

test('GET /v1/openapi.json is OpenAPI 3.1 generated from the routes, with their error codes', async (t) => {
  const r = await call(svc.url, 'GET', '/v1/openapi.json');
  t.is(r.status, 200);
  t.is(r.body.openapi, '3.1.0');
  const paths = Object.keys(r.body.paths).sort();
  for (const p of [
    '/v1/me',
    '/v1/customers',
    '/v1/customers/{id}',
    '/v1/customers/{id}/readiness',
    '/v1/customers/{id}/provisioning',
    '/v1/customers/{id}/onboarding_link',
    '/v1/customers/{id}/limits',
    '/v1/brand',
    '/v1/coverage',
    '/v1/balance',
    '/v1/usage',
    '/v1/calls',
    '/v1/calls/{id}',
    '/v1/calls/{id}/transcript',
    '/v1/calls/{id}/recording',
    '/v1/appointments',
    '/v1/appointments/{id}',
    '/v1/dnc',
    '/v1/dnc/{phone}',
    '/v1/events',
    '/v1/events/{id}',
    '/v1/customers/{id}/sessions',
    '/v1/chat',
  ]) {
    t.true(paths.includes(p), p);
  }
  t.regex(r.body.paths['/v1/calls'].post.responses['400'].description, /invalid_phone_number/);
  t.regex(r.body.paths['/v1/calls/{id}'].delete.responses['409'].description, /call_already_claimed/);
  t.false(paths.some((p) => p.startsWith('/console')), 'the console is not part of the public contract');
  const create = r.body.paths['/v1/customers'].post;
  t.truthy(create.requestBody);
  t.truthy(create.responses['201']);
  t.regex(create.responses['400'].description, /name_required/);
  t.regex(create.responses['400'].description, /country_not_supported/);
  t.regex(create.responses['403'].description, /customer_limit_reached/);
  t.regex(create.responses['401'].description, /invalid_api_key/);
  t.regex(r.body.paths['/v1/customers/{id}/limits'].patch.responses['400'].description, /invalid_limit/);
});

test('console routes need the operator token', async (t) => {
  for (const key of [undefined, 'wrong', 'sbc_test_console_token_for_tests_onlY']) {
    const r = await call(svc.url, 'GET', '/admin/v1/accounts', { key });
    t.is(r.status, 401);
    t.is(r.body.error.code, 'admin_unauthorized');
  }
  const a = await makeAccount(svc.url);
  const withApiKey = await call(svc.url, 'GET', '/admin/v1/accounts', { key: a.testKey });
  t.is(withApiKey.body.error.code, 'admin_unauthorized', 'an API key is not a admin token');
});
