import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});

const codeOf = (r: { body: any }) => r.body?.error?.code;

test('POST /v1/customers creates a prospect with its coverage and provisions nothing', async (t) => {
  const a = await makeAccount(svc.url);
  const r = await a.api.post('/v1/customers', {
    name: 'Bright Dental',
    external_ref: 'crm-42',
    brand_name: 'Bright',
    website_url: 'https://bright.example',
    country: 'gb',
    timezone: 'Europe/London',
  });
  t.is(r.status, 201);
  t.like(r.body, {
    object: 'customer',
    external_ref: 'crm-42',
    name: 'Bright Dental',
    brand_name: 'Bright',
    website_url: 'https://bright.example',
    country: 'GB',
    timezone: 'Europe/London',
    status: 'prospect',
    mode: 'test',
  });
  t.regex(r.body.id, /^[0-9a-f-]{36}$/);
  t.regex(r.body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  t.like(r.body.coverage, { object: 'coverage', country: 'GB', calling_language: 'en-GB', sellable: false });
  const readiness = await a.api.get(`/v1/customers/${r.body.id}/readiness`);
  t.false(readiness.body.checks.number_in_country, 'no number was bought');
});

test('country and timezone default to the account country and its zone', async (t) => {
  const a = await makeAccount(svc.url, { country: 'AU' });
  const c = await makeCustomer(a.api, { country: undefined });
  t.is(c.country, 'AU');
  t.is(c.timezone, 'Australia/Sydney');
});

test('name missing or blank is name_required', async (t) => {
  const a = await makeAccount(svc.url);
  for (const body of [{}, { name: '' }, { name: '   ' }, { name: null }, { name: 42 }]) {
    const r = await a.api.post('/v1/customers', body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(codeOf(r), 'name_required');
    t.is(r.body.error.type, 'invalid_request_error');
  }
});

test('an unopened country is country_not_supported; a bad zone, URL or field is refused and nothing is written', async (t) => {
  const a = await makeAccount(svc.url);
  const cases: [Record<string, unknown>, string][] = [
    [{ name: 'A', country: 'ZZ' }, 'country_not_supported'],
    [{ name: 'A', country: 'BR' }, 'country_not_supported'],
    [{ name: 'A', country: 'USA' }, 'country_not_supported'],
    [{ name: 'A', timezone: 'Mars/Olympus' }, 'invalid_timezone'],
    [{ name: 'A', website_url: 'ftp://x.example' }, 'invalid_url'],
    [{ name: 'A', colour: 'red' }, 'unknown_parameter'],
    [{ name: 'x'.repeat(201) }, 'field_too_long'],
    [{ name: 'A', external_ref: 'r'.repeat(256) }, 'field_too_long'],
  ];
  for (const [body, code] of cases) {
    const r = await a.api.post('/v1/customers', body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(codeOf(r), code, JSON.stringify(body));
  }
  t.deepEqual((await a.api.get('/v1/customers')).body.data, []);
});

test('malformed JSON is invalid_json; a body over 1 MB is payload_too_large; text bodies are refused', async (t) => {
  const a = await makeAccount(svc.url);
  const bad = await call(svc.url, 'POST', '/v1/customers', { key: a.testKey, rawBody: '{"name": "A",' });
  t.is(bad.status, 400);
  t.is(codeOf(bad), 'invalid_json');
  const big = await call(svc.url, 'POST', '/v1/customers', { key: a.testKey, rawBody: JSON.stringify({ name: 'x'.repeat(1_100_000) }) });
  t.is(big.status, 400);
  t.is(codeOf(big), 'payload_too_large');
  const text = await call(svc.url, 'POST', '/v1/customers', { key: a.testKey, rawBody: 'name=A', headers: { 'content-type': 'text/plain' } });
  t.is(text.status, 400);
  t.is(codeOf(text), 'unsupported_content_type');
});

test('external_ref is unique per account and mode, and works wherever an id does', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { external_ref: 'dup' });
  const again = await a.api.post('/v1/customers', { name: 'Other', external_ref: 'dup' });
  t.is(again.status, 409);
  t.is(codeOf(again), 'external_ref_taken');
  for (const path of ['', '/readiness', '/provisioning', '/limits', '/onboarding_link']) {
    const r = await a.api.get(`/v1/customers/dup${path}`);
    t.is(r.status, 200, path);
  }
  t.is((await a.api.get('/v1/customers/dup')).body.id, c.id);
  const other = await makeAccount(svc.url);
  t.is((await other.api.post('/v1/customers', { name: 'Theirs', external_ref: 'dup' })).status, 201, 'another account may use the same ref');
  t.is(codeOf(await a.api.get('/v1/customers/nope')), 'customer_not_found');
});

test('lists are newest first, paged by limit and starting_after, with has_more', async (t) => {
  const a = await makeAccount(svc.url);
  const made = [];
  for (let i = 0; i < 5; i++) made.push(await makeCustomer(a.api, { name: `C${i}` }));
  const ids = made.map((c) => c.id).reverse();
  const all = await a.api.get('/v1/customers');
  t.is(all.body.object, 'list');
  t.deepEqual(all.body.data.map((c: any) => c.id), ids);
  t.false(all.body.has_more);
  const page1 = await a.api.get('/v1/customers?limit=2');
  t.deepEqual(page1.body.data.map((c: any) => c.id), ids.slice(0, 2));
  t.true(page1.body.has_more);
  const page2 = await a.api.get(`/v1/customers?limit=2&starting_after=${ids[1]}`);
  t.deepEqual(page2.body.data.map((c: any) => c.id), ids.slice(2, 4));
  t.true(page2.body.has_more);
  const page3 = await a.api.get(`/v1/customers?limit=2&starting_after=${ids[3]}`);
  t.deepEqual(page3.body.data.map((c: any) => c.id), ids.slice(4));
  t.false(page3.body.has_more);
  for (const q of ['limit=0', 'limit=201', 'limit=abc', 'limit=1.5']) {
    const r = await a.api.get(`/v1/customers?${q}`);
    t.is(r.status, 400, q);
    t.is(codeOf(r), 'invalid_parameter', q);
  }
  t.is(codeOf(await a.api.get('/v1/customers?starting_after=not-an-id')), 'invalid_cursor');
  const foreign = await makeCustomer((await makeAccount(svc.url)).api);
  t.is(codeOf(await a.api.get(`/v1/customers?starting_after=${foreign.id}`)), 'invalid_cursor');
  t.is(codeOf(await a.api.get('/v1/customers?sort=asc')), 'unknown_parameter');
});

test('the customer ceiling stops creation with customer_limit_reached (403)', async (t) => {
  const a = await makeAccount(svc.url);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { max_customers: 2 });
  await makeCustomer(a.api);
  await makeCustomer(a.api);
  const r = await a.api.post('/v1/customers', { name: 'Third' });
  t.is(r.status, 403);
  t.is(codeOf(r), 'customer_limit_reached');
  t.is((await a.api.get('/v1/me')).body.customers.count, 2);
});

test('concurrent creates never pass the customer ceiling', async (t) => {
  const a = await makeAccount(svc.url);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { max_customers: 3 });
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => a.api.post('/v1/customers', { name: `P${i}` })));
  t.is(results.filter((r) => r.status === 201).length, 3);
  t.is(results.filter((r) => codeOf(r) === 'customer_limit_reached').length, 9);
});

test('GET /v1/coverage answers one country or the list of opened ones', async (t) => {
  const a = await makeAccount(svc.url);
  const gb = await a.api.get('/v1/coverage?country=GB');
  t.is(gb.status, 200);
  t.like(gb.body, { object: 'coverage', country: 'GB', calling_language: 'en-GB', number_route: 'local_rental' });
  const closed = await a.api.get('/v1/coverage?country=BR');
  t.like(closed.body, { status: 'not_opened', sellable: false });
  const list = await a.api.get('/v1/coverage');
  t.deepEqual(list.body.data.map((c: any) => c.country), ['AU', 'CA', 'DE', 'ES', 'FR', 'GB', 'IE', 'NL', 'US']);
  t.is(codeOf(await a.api.get('/v1/coverage?country=G')), 'invalid_parameter');
});
