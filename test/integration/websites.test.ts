/**
 * Websites (issue 15) through the API: order (fee charged, 402), the build (ready with a preview,
 * failed with the fee back), publish (hosting's first month, website.live), revision (one
 * included), domain (the CNAME, verified by DNS), cancel (refund before delivery, none after),
 * lists, errors, the pages served, and the money invariants after each. Serial: a builder run
 * builds every waiting order, whichever test placed it.
 */
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { call, type Client } from '../helpers/http.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';

let svc: TestService;
let dns: TestDns;
test.before(async () => {
  // Customers' domains are checked against this DNS server (test/helpers/dns-server.ts), not the internet's.
  dns = await startTestDns();
  svc = await startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: '3600000', SWITCHBOARD_BUILDER_POLL_MS: '3600000', SWITCHBOARD_DNS_SERVERS: dns.server });
});
test.after.always(async () => {
  await svc?.stop();
  await dns?.close();
});

type Live = TestAccount & { liveApi: Client };
const liveAccount = async (topUpCents = 0): Promise<Live> => {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  if (topUpCents) await a.console.post(`/console/v1/accounts/${a.id}/top_ups`, { amount_cents: topUpCents });
  return a;
};

async function invariantsHold(t: ExecutionContext) {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
}

const ledgerOf = async (api: Client, customerId: string) => (await api.get(`/v1/usage?customer_id=${customerId}`)).body.data as any[];
const eventsOf = async (api: Client, type: string) => (await api.get(`/v1/events?type=${type}`)).body.data as any[];
const build = (a: TestAccount) => a.console.post('/console/v1/website_builder/run');
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

const BRIEF = 'Family dental practice in Leeds. Check-ups, hygiene and emergency appointments; evening hours on Thursdays.';

test.serial('test mode: order (202, fee priced not applied), build (ready, preview noindex), publish (live, hosting priced), the site is served with a test banner', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { name: 'Bright Dental', country: 'GB' });
  const order = await a.api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF });
  t.is(order.status, 202, order.text);
  t.like(order.body, { object: 'website_build', customer_id: c.id, status: 'building', preview_url: null, url: null, revisions_included: 1, revisions_used: 0, build_fee_cents: 35_000, hosting_cents_per_month: 2_000, mode: 'test' });
  t.like((await ledgerOf(a.api, c.id))[0], { type: 'usage', cause: 'website_build', amount_cents: -35_000, applied: false });

  t.is((await build(a)).body.built, 1);
  const ready = (await a.api.get(`/v1/customers/${c.id}/websites/${order.body.id}`)).body;
  t.is(ready.status, 'ready');
  t.truthy(ready.preview_url);
  t.like((await eventsOf(a.api, 'website.ready'))[0].data, { id: order.body.id, status: 'ready' });
  const preview = await call(svc.url, 'GET', pathOf(ready.preview_url));
  t.is(preview.status, 200);
  t.regex(preview.headers.get('x-robots-tag') ?? '', /noindex/);
  t.regex(preview.text, /Bright Dental/);
  t.notRegex(preview.text, /switchboard|twilio|openai/i);
  t.is((await call(svc.url, 'GET', pathOf(ready.preview_url).replace(/[^/]+$/, 'wrong'))).status, 404, 'the preview needs its token');

  const live = await a.api.post(`/v1/customers/${c.id}/websites/${order.body.id}/publish`, {});
  t.is(live.status, 200, live.text);
  t.like(live.body, { status: 'live' });
  t.truthy(live.body.url);
  t.truthy(live.body.hosting_renews_on);
  const [liveEvent] = await eventsOf(a.api, 'website.live');
  t.is(liveEvent.data.url, live.body.url, 'website.live carries the address');
  t.like((await ledgerOf(a.api, c.id))[0], { cause: 'website_hosting', amount_cents: -2_000, applied: false });
  const site = await call(svc.url, 'GET', pathOf(live.body.url));
  t.is(site.status, 200);
  t.regex(site.text, /noindex/, 'a test site is never indexed');
  t.regex(site.text, /test/i);
  // Publishing again answers the live site as it is.
  const again = await a.api.post(`/v1/customers/${c.id}/websites/${order.body.id}/publish`, {});
  t.like(again.body, { status: 'live', live_at: live.body.live_at });
  t.is((await ledgerOf(a.api, c.id)).length, 2);
  await invariantsHold(t);
});

test.serial('live: the fee is charged at the order; an order the balance cannot cover is 402 and nothing is ordered', async (t) => {
  const poor = await liveAccount(10_000);
  const pc = await makeCustomer(poor.liveApi);
  const refused = await poor.liveApi.post(`/v1/customers/${pc.id}/websites`, { brief: BRIEF });
  t.is(refused.status, 402, refused.text);
  t.is(refused.body.error.code, 'insufficient_balance');
  t.is((await poor.liveApi.get(`/v1/customers/${pc.id}/websites`)).body.data.length, 0);

  // 45,000: under the 50,000 that earns bonus credit, so the balance is what was paid.
  const a = await liveAccount(45_000);
  const c = await makeCustomer(a.liveApi);
  const order = await a.liveApi.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF });
  t.is(order.status, 202);
  t.like((await ledgerOf(a.liveApi, c.id))[0], { cause: 'website_build', amount_cents: -35_000, applied: true });
  await build(a);
  const published = await a.liveApi.post(`/v1/customers/${c.id}/websites/${order.body.id}/publish`, {});
  t.is(published.status, 200);
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, 45_000 - 35_000 - 2_000);
  await invariantsHold(t);
});

test.serial('a build that cannot complete ends failed with the fee refunded as its own line and website.failed', async (t) => {
  const a = await liveAccount(45_000);
  // Nothing to build from: no brief, no website to read, nothing but a name.
  const c = await makeCustomer(a.liveApi, { name: 'X' });
  const order = await a.liveApi.post(`/v1/customers/${c.id}/websites`, {});
  await build(a);
  const failed = (await a.liveApi.get(`/v1/customers/${c.id}/websites/${order.body.id}`)).body;
  t.like(failed, { status: 'failed', preview_url: null, url: null });
  t.truthy(failed.failure_reason);
  const lines = await ledgerOf(a.liveApi, c.id);
  t.deepEqual(lines.map((l) => [l.type, l.amount_cents]), [['refund', 35_000], ['usage', -35_000]]);
  t.is((await eventsOf(a.liveApi, 'website.failed')).filter((e) => e.data.id === order.body.id).length, 1);
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, 45_000);
  await invariantsHold(t);
});

test.serial('revision: one included, rebuilt (a live site keeps serving), a second is 409 revision_limit_reached', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const id = (await a.api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  const early = await a.api.post(`/v1/customers/${c.id}/websites/${id}/revision`, { brief: 'Mention free parking.' });
  t.is(early.status, 409, 'still building');
  t.is(early.body.error.code, 'website_not_ready');
  await build(a);
  await a.api.post(`/v1/customers/${c.id}/websites/${id}/publish`, {});
  const revised = await a.api.post(`/v1/customers/${c.id}/websites/${id}/revision`, { brief: 'Mention free parking behind the practice.' });
  t.is(revised.status, 200, revised.text);
  t.like(revised.body, { status: 'live', revisions_used: 1 });
  const url = revised.body.url;
  t.is((await call(svc.url, 'GET', pathOf(url))).status, 200, 'served while the revision builds');
  await build(a);
  t.regex((await call(svc.url, 'GET', pathOf(url))).text, /parking/i, 'the revised page is served');
  const second = await a.api.post(`/v1/customers/${c.id}/websites/${id}/revision`, { brief: 'And the car park.' });
  t.is(second.status, 409);
  t.is(second.body.error.code, 'revision_limit_reached');
});

test.serial('cancel: before delivery cancelled with a full refund line; once live taken down with no refund and hosting stopped', async (t) => {
  const a = await liveAccount(100_000);
  const c = await makeCustomer(a.liveApi);
  const first = (await a.liveApi.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  const cancelled = await a.liveApi.delete(`/v1/customers/${c.id}/websites/${first}`);
  t.is(cancelled.status, 200, cancelled.text);
  t.like(cancelled.body, { status: 'cancelled' });
  t.like((await ledgerOf(a.liveApi, c.id))[0], { type: 'refund', amount_cents: 35_000 });
  t.is((await build(a)).body.built, 0, 'a cancelled order is not built');

  const second = (await a.liveApi.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  await build(a);
  const live = (await a.liveApi.post(`/v1/customers/${c.id}/websites/${second}/publish`, {})).body;
  const down = await a.liveApi.delete(`/v1/customers/${c.id}/websites/${second}`);
  t.like(down.body, { status: 'cancelled', hosting_renews_on: null });
  t.is((await ledgerOf(a.liveApi, c.id)).filter((l) => l.type === 'refund').length, 1, 'no refund once delivered');
  t.is((await call(svc.url, 'GET', pathOf(live.url))).status, 404, 'taken down');
  t.is((await a.liveApi.delete(`/v1/customers/${c.id}/websites/${second}`)).status, 200, 'again: as it is');
  await invariantsHold(t);
});

test.serial('domain: the CNAME record; invalid and taken domains refused; verified by the DNS check, then served by Host and allowed a certificate', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const id = (await a.api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  await build(a);
  const live = (await a.api.post(`/v1/customers/${c.id}/websites/${id}/publish`, {})).body;
  const domain = `www.bright-${id.slice(0, 8)}.example`;
  const r = await a.api.post(`/v1/customers/${c.id}/websites/${id}/domain`, { domain: domain.toUpperCase() });
  t.is(r.status, 200, r.text);
  t.like(r.body, { object: 'dns_record', type: 'CNAME', name: domain });
  t.truthy(r.body.value);
  for (const bad of ['not a domain', 'localhost', '127.0.0.1', '-x.example']) {
    const refused = await a.api.post(`/v1/customers/${c.id}/websites/${id}/domain`, { domain: bad });
    t.is(refused.body.error?.code, 'invalid_domain', bad);
  }
  const c2 = await makeCustomer(a.api);
  const other = (await a.api.post(`/v1/customers/${c2.id}/websites`, { brief: BRIEF })).body.id;
  t.is((await a.api.post(`/v1/customers/${c2.id}/websites/${other}/domain`, { domain })).body.error.code, 'domain_taken');

  // Not verified yet: neither served by Host nor allowed a certificate.
  t.is((await call(svc.url, 'GET', `/sites/tls-ask?domain=${domain}`)).status, 404);
  t.false((await a.api.get(`/v1/customers/${c.id}/websites/${id}`)).body.domain_verified);
  // The customer points the CNAME at the site on the test's DNS server; the service's check finds it.
  t.is((await a.console.post('/console/v1/jobs/check_domains/run')).body.processed, 0, 'no record yet');
  t.false((await a.api.get(`/v1/customers/${c.id}/websites/${id}`)).body.domain_verified);
  dns.cname(domain, r.body.value);
  await a.console.post('/console/v1/test_clock/advance', { seconds: 10 * 60 + 1 });
  t.is((await a.console.post('/console/v1/jobs/check_domains/run')).body.processed, 1);
  t.true((await a.api.get(`/v1/customers/${c.id}/websites/${id}`)).body.domain_verified);
  t.is((await call(svc.url, 'GET', `/sites/tls-ask?domain=${domain}`)).status, 200);
  // fetch will not send another Host: a raw request, as a browser at the customer's domain sends it.
  const byHost = await rawRequest(svc.port, { method: 'GET', target: '/', headers: { host: domain, connection: 'close' } });
  t.is(byHost.status, 200);
  // (the raw reader keeps bytes as latin1 characters)
  t.is(Buffer.from(byHost.body, 'latin1').toString('utf8'), (await call(svc.url, 'GET', pathOf(live.url))).text);
  const otherHost = await rawRequest(svc.port, { method: 'GET', target: '/', headers: { host: 'www.nobody.example', connection: 'close' } });
  t.not(otherHost.status, 200, 'an unknown host is no site');
});

test.serial('errors: unknown build, another customer or mode, long brief, unknown field, scopes', async (t) => {
  const a = await makeAccount(svc.url, { scopes: ['sites:read', 'customers:write'] });
  const c = await makeCustomer(a.api);
  t.is((await a.api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.error.code, 'scope_missing');
  t.is((await a.api.get(`/v1/customers/${c.id}/websites`)).status, 200);
  const b = await makeAccount(svc.url);
  const cb = await makeCustomer(b.api);
  const id = (await b.api.post(`/v1/customers/${cb.id}/websites`, { brief: BRIEF })).body.id;
  const cb2 = await makeCustomer(b.api);
  t.is((await b.api.get(`/v1/customers/${cb2.id}/websites/${id}`)).body.error.code, 'website_not_found');
  t.is((await a.api.get(`/v1/customers/${c.id}/websites/${id}`)).body.error.code, 'website_not_found');
  t.is((await b.api.get(`/v1/customers/${cb.id}/websites/nothing`)).body.error.code, 'website_not_found');
  t.is((await b.api.post(`/v1/customers/${cb.id}/websites`, { brief: 'x'.repeat(4001) })).body.error.code, 'field_too_long');
  t.is((await b.api.post(`/v1/customers/${cb.id}/websites`, { colour: 'red' })).body.error.code, 'unknown_parameter');
  t.is((await b.api.post(`/v1/customers/${cb.id}/websites/${id}/revision`, {})).body.error.code, 'parameter_missing');
  t.is((await b.api.post(`/v1/customers/${cb.id}/websites/${id}/publish`, {})).body.error.code, 'website_not_ready');
});

test.serial('pages: an unknown slug is a neutral 404; a suspended site an offline page; nothing names the service', async (t) => {
  const missing = await call(svc.url, 'GET', '/sites/nobody-here/');
  t.is(missing.status, 404);
  t.notRegex(missing.text, /switchboard/i);
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const id = (await a.api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  await build(a);
  const live = (await a.api.post(`/v1/customers/${c.id}/websites/${id}/publish`, {})).body;
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  t.teardown(() => db.end());
  await db.query(`UPDATE website_builds SET status = 'suspended' WHERE id = $1`, [id]);
  const offline = await call(svc.url, 'GET', pathOf(live.url));
  t.is(offline.status, 503);
  t.regex(offline.text, /offline/i);
  t.notRegex(offline.text, /switchboard/i);
});

test.serial('test mode: a failed build and a cancelled order refund as lines priced with applied:false, with website.failed; no money moves', async (t) => {
  const a = await makeAccount(svc.url);
  const bare = await makeCustomer(a.api, { name: 'Y' });
  const failing = (await a.api.post(`/v1/customers/${bare.id}/websites`, {})).body.id;
  await build(a);
  t.like((await a.api.get(`/v1/customers/${bare.id}/websites/${failing}`)).body, { status: 'failed', mode: 'test' });
  t.deepEqual((await ledgerOf(a.api, bare.id)).map((l) => [l.type, l.amount_cents, l.applied]), [['refund', 35_000, false], ['usage', -35_000, false]]);
  t.is((await eventsOf(a.api, 'website.failed')).filter((e) => e.data.id === failing && e.mode === 'test').length, 1);

  const c = await makeCustomer(a.api);
  const cancelled = (await a.api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  t.like((await a.api.delete(`/v1/customers/${c.id}/websites/${cancelled}`)).body, { status: 'cancelled' });
  t.deepEqual((await ledgerOf(a.api, c.id)).map((l) => [l.type, l.amount_cents, l.applied]), [['refund', 35_000, false], ['usage', -35_000, false]]);
  t.is((await a.api.get('/v1/balance')).body.balance_cents, 0);
  await invariantsHold(t);
});
