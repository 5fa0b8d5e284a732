import test from 'ava';
import { startTestService, ADMIN_TOKEN, type TestService } from '../helpers/service.ts';
import { call, client } from '../helpers/http.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { rawRequest } from '../helpers/raw-http.ts';

/**
 * Issue 20 §2 and §3, the raw HTTP surface: bodies nested too deep, integers beyond their columns
 * or beyond what a JSON number holds exactly, two Host headers, a URL too long, control
 * characters in fields that become mail headers, and validation messages written for people.
 */

let svc: TestService;
let a: TestAccount;
let customerId: string;
test.before(async () => {
  svc = await startTestService();
  a = await makeAccount(svc.url);
  customerId = (await makeCustomer(a.api)).id;
});
test.after.always(async () => {
  await svc?.stop();
});

const errorLines = () => svc.logs.lines.filter((l) => Number(l.level) >= 50);
const arrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const objects = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
/** A body whose field `name` holds arrays nested so the whole body is `levels` deep. */
const inField = (name: string, levels: number) => `{"${name}":${arrays(levels - 1)}}`;

test.serial('a body nested deeper than 64 levels is 400 invalid_json on every kind of route, with or without a key; no stack is logged', async (t) => {
  const before = errorLines().length;
  const withKey: [string, string, string][] = [
    ['POST', '/v1/customers', a.testKey],
    ['PATCH', `/v1/customers/${customerId}/limits`, a.testKey],
    ['PATCH', '/v1/brand', a.testKey],
    ['POST', '/v1/calls', a.testKey],
    ['POST', `/v1/customers/${customerId}/sessions`, a.testKey],
    ['DELETE', `/v1/customers/${customerId}/sessions`, a.testKey],
    ['POST', '/admin/v1/accounts', ADMIN_TOKEN],
    ['PATCH', `/admin/v1/accounts/${a.id}/limits`, ADMIN_TOKEN],
  ];
  // Routes that take no key, and a path that is no route: the body is read before anything else answers.
  const withoutKey: [string, string][] = [
    ['POST', '/nowhere'],
    ['POST', '/v1/nowhere'],
    ['POST', '/healthz'],
  ];
  const bodies = { '65 arrays': arrays(65), '65 objects': objects(65), '10,000 arrays (20 KB)': arrays(10_000), '10,000 objects': objects(10_000), '5,000 in a field': inField('name', 5_000) };
  for (const [what, body] of Object.entries(bodies)) {
    for (const [method, path, key] of [...withKey, ...withoutKey.map(([m, p]) => [m, p, undefined] as const)]) {
      const r = await call(svc.url, method, path, { key, rawBody: body });
      t.is(r.status, 400, `${method} ${path} ${what}: ${r.text.slice(0, 200)}`);
      t.is(r.body.error?.code, 'invalid_json', `${method} ${path} ${what}`);
      t.regex(r.body.error?.message ?? '', /deeper than 64 levels/, `${method} ${path} ${what}`);
    }
    // The onboarding page answers people with a page, 400 all the same.
    const page = await call(svc.url, 'POST', '/onboarding/ob_nothing', { rawBody: body });
    t.is(page.status, 400, `onboarding page ${what}`);
    t.regex(page.text, /could not be read/);
    // An API route without a key: the key is refused first (before the body is read), never a 5xx.
    for (const [method, path] of withKey.map(([m, p]) => [m, p])) {
      const r = await call(svc.url, method, path, { rawBody: body });
      t.is(r.status, 401, `${method} ${path} ${what} without a key`);
    }
  }
  // Exactly 64 levels parses: what answers is the route's own validation, not the parser.
  for (const [method, path, key] of withKey) {
    const r = await call(svc.url, method, path, { key, rawBody: inField('name', 64) });
    t.true(r.status >= 400 && r.status < 500, `${method} ${path} at 64 levels: ${r.status}`);
    t.not(r.body.error?.code, 'invalid_json', `${method} ${path} at 64 levels: ${r.text.slice(0, 200)}`);
  }
  // The chat history sent as a string is a body of its own, bounded the same way.
  const customer = a.api;
  const session = await customer.post(`/v1/customers/${customerId}/sessions`, { end_user_ref: 'rep-1' });
  const deep = await call(svc.url, 'POST', '/v1/chat', { key: session.body.token, body: { message: 'hi', history: arrays(10_000) } });
  t.is(deep.status, 400, deep.text.slice(0, 200));
  t.is(deep.body.error?.code, 'invalid_json');
  t.deepEqual(errorLines().slice(before), [], 'nothing a client sent is logged as an error');
});

test.serial('integers beyond their column or beyond an exact JSON number are 400 with the route\'s code, never 500 and never rounded', async (t) => {
  const before = errorLines().length;
  const limits = `/v1/customers/${customerId}/limits`;
  const limitCases: [string, number | string][] = [
    ['max_concurrent_calls', 2147483648],
    ['max_concurrent_calls', '9007199254740993'],
    ['daily_spend_cap_cents', 1e20],
    ['monthly_spend_cap_cents', '9007199254740993'],
    ['monthly_spend_cap_cents', '1e400'],
    ['daily_spend_cap_cents', 1_000_000_000_001],
  ];
  for (const [field, value] of limitCases) {
    const r = await call(svc.url, 'PATCH', limits, { key: a.testKey, rawBody: `{"${field}": ${value}}` });
    t.is(r.status, 400, `${field} ${value}: ${r.text}`);
    t.is(r.body.error?.code, 'invalid_limit', `${field} ${value}`);
    t.regex(r.body.error?.message ?? '', new RegExp(`"${field}"`), 'the message names the field');
  }
  // The largest values each column holds are taken as sent.
  const max = await a.api.patch(limits, { max_concurrent_calls: 2147483647, daily_spend_cap_cents: 1_000_000_000_000 });
  t.is(max.status, 200, max.text);
  t.is(max.body.max_concurrent_calls, 2147483647);
  t.is(max.body.daily_spend_cap_cents, 1_000_000_000_000);

  const con = client(svc.url, ADMIN_TOKEN);
  const adminCases: [string, string, string, string][] = [
    ['PATCH', `/admin/v1/accounts/${a.id}/limits`, '{"concurrent_calls": 2147483648}', 'invalid_limit'],
    ['PATCH', `/admin/v1/accounts/${a.id}/limits`, '{"requests_per_minute": 9007199254740993}', 'invalid_limit'],
    ['PATCH', `/admin/v1/accounts/${a.id}/limits`, '{"max_customers": 2147483648}', 'invalid_limit'],
    ['PATCH', `/admin/v1/accounts/${a.id}/limits`, '{"daily_spend_cap_cents": 1e20}', 'invalid_limit'],
    ['POST', `/admin/v1/accounts/${a.id}/top_ups`, '{"amount_cents": 1e20}', 'invalid_parameter'],
    ['POST', `/admin/v1/accounts/${a.id}/top_ups`, '{"amount_cents": 9007199254740993}', 'invalid_parameter'],
    ['POST', `/admin/v1/accounts/${a.id}/refunds`, '{"amount_cents": 1e20}', 'invalid_parameter'],
    ['PUT', `/admin/v1/accounts/${a.id}/auto_top_up`, '{"threshold_cents": 1e20, "amount_cents": 5000}', 'invalid_parameter'],
    ['PUT', `/admin/v1/accounts/${a.id}/auto_top_up`, '{"threshold_cents": 0, "amount_cents": 9007199254740993}', 'invalid_parameter'],
    ['POST', '/admin/v1/test_clock/advance', '{"seconds": 1e20}', 'invalid_parameter'],
  ];
  for (const [method, path, body, code] of adminCases) {
    const r = await call(svc.url, method, path, { key: ADMIN_TOKEN, rawBody: body });
    t.is(r.status, 400, `${method} ${path} ${body}: ${r.text}`);
    t.is(r.body.error?.code, code, `${method} ${path} ${body}`);
  }
  // A top-up still says what it needs at least.
  t.is((await con.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 100 })).body.error?.code, 'top_up_too_small');

  // Query-string integers: refused, never clamped or rounded.
  for (const limit of ['1e20', '9007199254740993', '2147483648', '201']) {
    const r = await a.api.get(`/v1/customers?limit=${limit}`);
    t.is(r.status, 400, `limit=${limit}`);
    t.is(r.body.error?.code, 'invalid_parameter', `limit=${limit}`);
  }
  t.deepEqual(errorLines().slice(before), []);
});

test.serial('two Host headers are 400 malformed_request before authentication; a URL over 8,192 characters is 414 uri_too_long', async (t) => {
  for (const target of ['/v1/me', '/v1/customers', '/healthz', '/nowhere', `/admin/v1/accounts/${a.id}`]) {
    const r = await rawRequest(svc.port, { method: 'GET', target, headers: { host: `127.0.0.1:${svc.port}`, Host: 'evil.example', authorization: `Bearer ${a.testKey}` } });
    t.is(r.status, 400, target);
    t.is(JSON.parse(r.body).error.code, 'malformed_request', target);
    const one = await rawRequest(svc.port, { method: 'GET', target: '/healthz' });
    t.is(one.status, 200);
  }
  for (const [target, key] of [[`/v1/me?x=${'a'.repeat(8_200)}`, a.testKey], [`/v1/customers?starting_after=${'a'.repeat(9_000)}`, undefined], [`/nowhere/${'a'.repeat(9_000)}`, undefined]] as const) {
    const r = await call(svc.url, 'GET', target, { key });
    t.is(r.status, 414, target.slice(0, 40));
    t.is(r.body.error?.code, 'uri_too_long');
    t.false(r.text.includes('aaaaaaaaaa'), 'the URL is not echoed');
  }
  t.is((await call(svc.url, 'GET', `/v1/me?x=${'a'.repeat(8_000)}`, { key: a.testKey })).body.error?.code, 'unknown_parameter', 'a long URL under the bound is routed');
});

test.serial('fields that become mail headers refuse control characters: brand fields are 400 invalid_brand_field, the account name 400 invalid_parameter', async (t) => {
  for (const field of ['display_name', 'email_from_name', 'support_email', 'domain', 'logo_url']) {
    for (const bad of ['\r\n', '\n', '\r', '\t', '\u0085', '\u2028', '\u007f']) {
      const value = field === 'support_email' ? `help@example.com${bad}Bcc: all@example.com` : field === 'logo_url' ? `https://example.com/${bad}x.png` : field === 'domain' ? `calls.example.com${bad}` : `Northwind${bad}Bcc: all@example.com`;
      const r = await a.api.patch('/v1/brand', { [field]: value });
      t.is(r.status, 400, `${field} ${JSON.stringify(bad)}: ${r.text}`);
      t.is(r.body.error?.code, 'invalid_brand_field', `${field} ${JSON.stringify(bad)}`);
      t.regex(r.body.error?.message ?? '', new RegExp(field), 'the message names the field');
    }
  }
  const brand = await a.api.get('/v1/brand');
  t.is(brand.body.email_from_name, null, 'nothing was stored');
  t.is((await a.api.patch('/v1/brand', { email_from_name: 'Northwind Calls — Ünïcode 📞', display_name: 'Northwind' })).status, 200);

  const con = client(svc.url, ADMIN_TOKEN);
  const r = await con.post('/admin/v1/accounts', { name: 'Agency\r\nBcc: all@example.com', country: 'US' });
  t.is(r.status, 400, r.text);
  t.is(r.body.error?.code, 'invalid_parameter');
  t.regex(r.body.error.message, /"name"/);
  t.is((await con.post('/admin/v1/accounts', { name: '   ', country: 'US' })).body.error?.code, 'parameter_missing', 'a blank name is still a missing one');
});

test.serial('validation messages say what is wrong in words and name the field, never the validator keyword', async (t) => {
  const con = client(svc.url, ADMIN_TOKEN);
  const cases: [Promise<{ status: number; body: any }>, string, RegExp][] = [
    [a.api.post('/v1/customers', { name: ' ' }), 'name_required', /^A customer needs a non-blank name\. "name" must not be blank\.$/],
    [a.api.patch(`/v1/customers/${customerId}/limits`, { monthly_spend_cap_cents: 'ten' }), 'invalid_limit', /"monthly_spend_cap_cents" must be a whole number or null\./],
    [a.api.patch(`/v1/customers/${customerId}/limits`, { monthly_spend_cap_cents: -1 }), 'invalid_limit', /"monthly_spend_cap_cents" must be 0 or more\./],
    [a.api.patch(`/v1/customers/${customerId}/limits`, { max_concurrent_calls: 2147483648 }), 'invalid_limit', /"max_concurrent_calls" must be 2147483647 or less\./],
    [a.api.post('/v1/customers', { name: 'A', colour: 'blue' }), 'unknown_parameter', /^"colour" is not a field this endpoint takes\.$/],
    [a.api.post('/v1/customers', {}), 'name_required', /"name" is required\./],
    [a.api.post('/v1/customers', { name: 'x'.repeat(201) }), 'field_too_long', /^"name" must be at most 200 characters long\.$/],
    [a.api.post('/v1/customers', { name: 'A', external_ref: '' }), 'invalid_parameter', /^"external_ref" must not be empty\.$/],
    [a.api.get('/v1/customers?limit=0'), 'invalid_parameter', /^Query parameter "limit" must be 1 or more\.$/],
    [a.api.get('/v1/customers?limit=many'), 'invalid_parameter', /^Query parameter "limit" must be a whole number\.$/],
    [a.api.get('/v1/customers?zz=1'), 'unknown_parameter', /^Query parameter "zz" is not a parameter this endpoint takes\.$/],
    [a.api.post('/v1/calls', { customer_id: customerId }), 'parameter_missing', /^"phone" is required\.$/],
    [a.api.post(`/v1/customers/${customerId}/provisioning`, { steps: ['number', 'number', 'number', 'number', 'number'] }), 'field_too_long', /"steps" must hold at most 4 items\./],
    [con.get(`/admin/v1/accounts/not-a-uuid`), 'invalid_parameter', /^Path parameter "id" must be an id in UUID form\.$/],
    [con.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'staging', label: 'x' }), 'invalid_parameter', /^"mode" must be one of test, live\.$/],
    [a.api.post('/v1/customers', ['a']), 'invalid_parameter', /^The body must be an object\.$/],
  ];
  for (const [pending, code, message] of cases) {
    const r = await pending;
    t.is(r.body.error?.code, code, JSON.stringify(r.body));
    t.regex(r.body.error?.message ?? '', message);
    t.notRegex(r.body.error?.message ?? '', /must match|pattern|must NOT|must have required|additional|integer|\\S|minLength|maxLength|anyOf|format "/, 'no validator words');
  }
});

test.serial("found by the fuzzer: a console hold for another account's customer is 404 customer_not_found, not a 500", async (t) => {
  const other = await makeAccount(svc.url);
  const before = errorLines().length;
  const r = await call(svc.url, 'POST', `/admin/v1/accounts/${other.id}/holds`, { key: ADMIN_TOKEN, body: { mode: 'test', customer_id: customerId, reference: 'ref-1' } });
  t.is(r.status, 404, r.text);
  t.is(r.body.error?.code, 'customer_not_found');
  const liveMode = await call(svc.url, 'POST', `/admin/v1/accounts/${a.id}/holds`, { key: ADMIN_TOKEN, body: { mode: 'live', customer_id: customerId, reference: 'ref-2' } });
  t.is(liveMode.body.error?.code, 'customer_not_found', 'a test customer is not found in live mode');
  t.is((await call(svc.url, 'POST', `/admin/v1/accounts/${a.id}/holds`, { key: ADMIN_TOKEN, body: { mode: 'test', customer_id: customerId, reference: 'ref-3' } })).status, 200);
  t.deepEqual(errorLines().slice(before), []);
});
