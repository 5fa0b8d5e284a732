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

test('customer limits: GET shows caps and spend; PATCH changes only what is sent; null clears', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { external_ref: 'lim' });
  const first = await a.api.get('/v1/customers/lim/limits');
  t.deepEqual(first.body, {
    object: 'customer_limits',
    customer_id: c.id,
    external_ref: 'lim',
    daily_spend_cap_cents: null,
    monthly_spend_cap_cents: null,
    max_concurrent_calls: null,
    spend: { today_cents: 0, month_cents: 0 },
  });
  const set = await a.api.patch('/v1/customers/lim/limits', { daily_spend_cap_cents: 5000, max_concurrent_calls: 2 });
  t.is(set.status, 200);
  t.like(set.body, { daily_spend_cap_cents: 5000, monthly_spend_cap_cents: null, max_concurrent_calls: 2 });
  t.is(set.body.spend, undefined, 'spend only on GET');
  const more = await a.api.patch('/v1/customers/lim/limits', { monthly_spend_cap_cents: 90000 });
  t.like(more.body, { daily_spend_cap_cents: 5000, monthly_spend_cap_cents: 90000, max_concurrent_calls: 2 });
  const cleared = await a.api.patch('/v1/customers/lim/limits', { daily_spend_cap_cents: null });
  t.like(cleared.body, { daily_spend_cap_cents: null, monthly_spend_cap_cents: 90000, max_concurrent_calls: 2 });
  const empty = await a.api.patch('/v1/customers/lim/limits');
  t.is(empty.status, 200);
  t.like(empty.body, { monthly_spend_cap_cents: 90000 });
  t.like((await a.api.get('/v1/customers/lim/limits')).body, { daily_spend_cap_cents: null, monthly_spend_cap_cents: 90000, max_concurrent_calls: 2 });
});

test('a negative, fractional or non-numeric limit is invalid_limit and changes nothing', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  await a.api.patch(`/v1/customers/${c.id}/limits`, { max_concurrent_calls: 3 });
  for (const value of [-1, 1.5, '100', 'abc', true, {}, []]) {
    for (const field of ['daily_spend_cap_cents', 'monthly_spend_cap_cents', 'max_concurrent_calls']) {
      const r = await a.api.patch(`/v1/customers/${c.id}/limits`, { max_concurrent_calls: 7, [field]: value });
      t.is(r.status, 400, `${field}=${JSON.stringify(value)}`);
      t.is(r.body.error.code, 'invalid_limit', `${field}=${JSON.stringify(value)}`);
      t.regex(r.body.error.message, new RegExp(field === 'max_concurrent_calls' ? 'max_concurrent_calls' : field));
    }
  }
  t.is((await a.api.get(`/v1/customers/${c.id}/limits`)).body.max_concurrent_calls, 3);
  t.is((await a.api.patch(`/v1/customers/${c.id}/limits`, { max_calls: 1 })).body.error.code, 'unknown_parameter');
});

test('brand: GET starts empty; PATCH sets, keeps, and clears with null', async (t) => {
  const a = await makeAccount(svc.url);
  const empty = await a.api.get('/v1/brand');
  t.deepEqual(empty.body, {
    object: 'brand',
    display_name: null,
    logo_url: null,
    primary_color: null,
    accent_color: null,
    email_from_name: null,
    support_email: null,
    domain: null,
    domain_status: { object: 'brand_domain', domain: null, status: 'none', cname_target: null, checked_at: null, verified_at: null },
  });
  const set = await a.api.patch('/v1/brand', {
    display_name: 'Northwind Calls',
    logo_url: 'https://cdn.northwind.example/logo.svg',
    primary_color: '#0A2540',
    accent_color: '#635bff',
    email_from_name: 'Northwind',
    support_email: 'help@northwind.example',
    domain: 'calls.northwind.example',
  });
  t.is(set.status, 200);
  t.is(set.body.primary_color, '#0A2540');
  const partial = await a.api.patch('/v1/brand', { accent_color: null });
  t.is(partial.body.accent_color, null);
  t.is(partial.body.display_name, 'Northwind Calls');
});

test('brand: a colour that is not hex or a URL that is not https is invalid_brand_field; nothing changes', async (t) => {
  const a = await makeAccount(svc.url);
  await a.api.patch('/v1/brand', { primary_color: '#111111' });
  const bad: Record<string, unknown>[] = [
    { primary_color: 'red' },
    { primary_color: '#12345' },
    { accent_color: 'rgb(1,2,3)' },
    { logo_url: 'http://insecure.example/logo.png' },
    { logo_url: 'not a url' },
    { logo_url: 5 },
    { support_email: 'nobody' },
    { domain: 'not a domain' },
    { display_name: '   ' },
  ];
  for (const body of bad) {
    const r = await call(svc.url, 'PATCH', '/v1/brand', { key: a.testKey, body: { display_name: 'Changed', ...body } });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_brand_field', JSON.stringify(body));
  }
  const now = await a.api.get('/v1/brand');
  t.is(now.body.primary_color, '#111111');
  t.is(now.body.display_name, null);
  t.is((await a.api.patch('/v1/brand', { display_name: 'x'.repeat(201) })).body.error.code, 'field_too_long');
});
