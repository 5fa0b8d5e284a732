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
  if (topUpCents) await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: topUpCents });
  return a;
};

async function invariantsHold(t: ExecutionContext) {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
}

const ledgerOf = async (api: Client, customerId: string) => (await api.get(`/v1/usage?customer_id=${customerId}`)).body.data as any[];
const eventsOf = async (api: Client, type: string) => (await api.get(`/v1/events?type=${type}`)).body.data as any[];
const build = (a: TestAccount) => a.admin.post('/admin/v1/website_builder/run');
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

const BRIEF = 'Family dental practice in Leeds. Check-ups, hygiene and emergency appointments; evening hours on Thursdays.';

async function sql(text: string, values: unknown[]) {
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    return (await db.query(text, values)).rows;
  } finally {
    await db.end();
  }
}

/** A build's slug (the API shows it only in a live site's url). */
const slugOf = async (id: string): Promise<string> => (await sql('SELECT slug FROM website_builds WHERE id = $1', [id]))[0].slug;

test.serial('test mode: order (202, fee priced not applied), build (ready, preview noindex), publish (live, hosting priced), the site is served only at its preview, with a test banner', async (t) => {
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
  // A test site is served at its preview only: its url is the preview, its slug answers nothing.
  t.is(live.body.url, live.body.preview_url, "a test site's address is its preview");
  t.is(live.body.preview_url, ready.preview_url);
  const site = await call(svc.url, 'GET', pathOf(live.body.url));
  t.is(site.status, 200);
  t.regex(site.text, /noindex/, 'a test site is never indexed');
  t.regex(site.text, /test/i);
  const slug = await slugOf(order.body.id);
  t.is((await call(svc.url, 'GET', `/sites/${slug}/`)).status, 404, 'a test site is not served at /sites/<slug>/');
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

test.serial('revision: one included, rebuilt from the brief (a live site keeps serving), the change never shown as the page\'s words; a second is 409 revision_limit_reached', async (t) => {
  const a = await liveAccount(100_000);
  const c = await makeCustomer(a.liveApi, { name: 'Bright Dental', country: 'GB' });
  const id = (await a.liveApi.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  const early = await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/revision`, { brief: 'Mention free parking.' });
  t.is(early.status, 409, 'still building');
  t.is(early.body.error.code, 'website_not_ready');
  await build(a);
  await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/publish`, {});
  const change = 'Put the opening hours higher up and tell people about the free parking behind the practice.';
  const revised = await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/revision`, { brief: change });
  t.is(revised.status, 200, revised.text);
  t.like(revised.body, { status: 'live', revisions_used: 1 });
  const url = revised.body.url;
  t.is((await call(svc.url, 'GET', pathOf(url))).status, 200, 'served while the revision builds');
  t.is((await build(a)).body.built, 1);
  t.is((await eventsOf(a.liveApi, 'website.ready')).filter((e) => e.data.id === id).length, 2, 'website.ready for the revised page');
  const page = await call(svc.url, 'GET', pathOf(url));
  t.is(page.status, 200);
  t.regex(page.text, /Bright Dental/);
  t.regex(page.text, /evening hours on Thursdays/, 'rewritten from the brief');
  // Without a model nothing can follow the instruction: it never appears as the page's words.
  t.notRegex(page.text, /Change:/);
  t.notRegex(page.text, /opening hours higher up/i);
  t.notRegex(page.text, /tell people about/i);
  const second = await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/revision`, { brief: 'And the car park.' });
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

test.serial('domain: without SWITCHBOARD_SITES_DOMAIN no domain is taken (503 sites_not_configured), never a CNAME to the service\'s own host', async (t) => {
  const a = await liveAccount(100_000);
  const c = await makeCustomer(a.liveApi);
  const id = (await a.liveApi.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  await build(a);
  await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/publish`, {});
  const r = await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/domain`, { domain: 'www.brightdental.com' });
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, 'sites_not_configured');
  t.notRegex(r.text, /localhost|127\.0\.0\.1/);
  t.like((await a.liveApi.get(`/v1/customers/${c.id}/websites/${id}`)).body, { domain: null });
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

test.serial('publish, revision, preview and cancel act only on a build of the customer named in the path: another customer of the same account gets 404 and nothing changes', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await makeCustomer(a.api);
  const other = await makeCustomer(a.api);
  const id = (await a.api.post(`/v1/customers/${owner.id}/websites`, { brief: BRIEF })).body.id;
  await build(a);
  const viaOther = (path: string, body: unknown = {}) => a.api.post(`/v1/customers/${other.id}/websites/${id}${path}`, body);
  for (const [what, answer] of [
    ['publish', await viaOther('/publish')],
    ['revision', await viaOther('/revision', { brief: 'Mention the free parking behind the practice.' })],
    ['preview', await viaOther('/preview')],
    ['cancel', await a.api.delete(`/v1/customers/${other.id}/websites/${id}`)],
  ] as const) {
    t.is(answer.status, 404, `${what}: ${answer.text}`);
    t.is(answer.body.error.code, 'website_not_found', what);
  }
  const untouched = (await a.api.get(`/v1/customers/${owner.id}/websites/${id}`)).body;
  t.like(untouched, { status: 'ready', revisions_used: 0, live_at: null });
  t.deepEqual((await ledgerOf(a.api, owner.id)).map((l) => l.cause), ['website_build'], 'no hosting charged, no refund');
  // The owner's own requests still work.
  t.is((await a.api.post(`/v1/customers/${owner.id}/websites/${id}/publish`, {})).status, 200);
});

test.serial('pages: an unknown slug is a neutral 404; a suspended site an offline page and no preview; nothing names the service', async (t) => {
  const missing = await call(svc.url, 'GET', '/sites/nobody-here/');
  t.is(missing.status, 404);
  t.notRegex(missing.text, /switchboard/i);
  const a = await liveAccount(100_000);
  const c = await makeCustomer(a.liveApi);
  const id = (await a.liveApi.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  await build(a);
  const ready = (await a.liveApi.get(`/v1/customers/${c.id}/websites/${id}`)).body;
  const live = (await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/publish`, {})).body;
  await sql(`UPDATE website_builds SET status = 'suspended' WHERE id = $1`, [id]);
  const offline = await call(svc.url, 'GET', pathOf(live.url));
  t.is(offline.status, 503);
  t.regex(offline.text, /offline/i);
  t.notRegex(offline.text, /switchboard/i);
  const preview = await call(svc.url, 'GET', pathOf(ready.preview_url));
  t.is(preview.status, 404, 'a suspended site is not served at its preview either');
  t.notRegex(preview.text, /Family dental/);
});

test.serial('previews: a live-mode build\'s preview is noindex (header and meta), needs its exact token (a wrong one of the same length is 404), lapses 30 days after the build, can be re-issued (the old address stops), and ends at publish', async (t) => {
  const a = await liveAccount(100_000);
  const c = await makeCustomer(a.liveApi, { name: 'Bright Dental', country: 'GB' });
  const id = (await a.liveApi.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  t.is((await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/preview`, {})).body.error?.code, 'website_not_ready', 'no page, no preview');
  await build(a);
  const ready = (await a.liveApi.get(`/v1/customers/${c.id}/websites/${id}`)).body;
  const path = pathOf(ready.preview_url);
  const page = await call(svc.url, 'GET', path);
  t.is(page.status, 200);
  t.regex(page.headers.get('x-robots-tag') ?? '', /noindex/);
  t.regex(page.text, /<meta name="robots" content="noindex/, 'the page itself says noindex');
  t.regex(page.text, /Bright Dental/);

  // A token of the same length with one character changed is no token.
  const token = path.split('/').pop()!;
  const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
  t.is(flipped.length, token.length);
  t.is((await call(svc.url, 'GET', path.replace(/[^/]+$/, flipped))).status, 404, 'a wrong token of the same length');
  t.is((await call(svc.url, 'GET', path.replace(/[^/]+$/, token.slice(1)))).status, 404, 'a shorter one');

  // Open 30 days from the build.
  const [stored] = await sql('SELECT built_at, preview_expires_at FROM website_builds WHERE id = $1', [id]);
  t.is(stored.preview_expires_at.getTime() - stored.built_at.getTime(), 30 * 24 * 3600 * 1000, '30 days after the build');
  t.is(ready.preview_expires_at, stored.preview_expires_at.toISOString());

  // Re-issued: a new address, open; the old one stops at once.
  const reissued = await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/preview`, {});
  t.is(reissued.status, 200, reissued.text);
  t.truthy(reissued.body.preview_url);
  t.not(reissued.body.preview_url, ready.preview_url);
  t.is((await call(svc.url, 'GET', path)).status, 404, 'the old preview address stops');
  t.is((await call(svc.url, 'GET', pathOf(reissued.body.preview_url))).status, 200);

  // Lapsed: not served, and no preview_url shown.
  await sql(`UPDATE website_builds SET preview_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
  t.is((await call(svc.url, 'GET', pathOf(reissued.body.preview_url))).status, 404, 'a lapsed preview');
  t.like((await a.liveApi.get(`/v1/customers/${c.id}/websites/${id}`)).body, { preview_url: null, preview_expires_at: null });
  const again = (await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/preview`, {})).body;
  t.is((await call(svc.url, 'GET', pathOf(again.preview_url))).status, 200, 're-issued after it lapsed');

  // Published: the site is at its address, the preview ends.
  const live = (await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/publish`, {})).body;
  t.like(live, { status: 'live', preview_url: null });
  t.is((await call(svc.url, 'GET', pathOf(again.preview_url))).status, 404, 'no preview once published');
  t.is((await a.liveApi.post(`/v1/customers/${c.id}/websites/${id}/preview`, {})).body.error?.code, 'website_not_ready');
  t.is((await call(svc.url, 'GET', pathOf(live.url))).status, 200);

  // Cancelled before publishing: its preview stops too.
  const other = (await a.liveApi.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  await build(a);
  const otherPreview = (await a.liveApi.get(`/v1/customers/${c.id}/websites/${other}`)).body.preview_url;
  t.is((await call(svc.url, 'GET', pathOf(otherPreview))).status, 200);
  await a.liveApi.delete(`/v1/customers/${c.id}/websites/${other}`);
  t.is((await call(svc.url, 'GET', pathOf(otherPreview))).status, 404, 'a cancelled build has no preview');
  await invariantsHold(t);
});

test.serial('a test site\'s preview lapses 30 days after its build on the test clock, then its url answers 404', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const id = (await a.api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id;
  await build(a);
  const live = (await a.api.post(`/v1/customers/${c.id}/websites/${id}/publish`, {})).body;
  t.is((await call(svc.url, 'GET', pathOf(live.url))).status, 200);
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 29 * 86_400 });
  t.is((await call(svc.url, 'GET', pathOf(live.url))).status, 200, 'day 29: open');
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 86_400 + 60 });
  t.is((await call(svc.url, 'GET', pathOf(live.url))).status, 404, 'after 30 days: lapsed');
  t.like((await a.api.get(`/v1/customers/${c.id}/websites/${id}`)).body, { status: 'live', preview_url: null, url: null });
  const reissued = (await a.api.post(`/v1/customers/${c.id}/websites/${id}/preview`, {})).body;
  t.is(reissued.url, reissued.preview_url);
  t.is((await call(svc.url, 'GET', pathOf(reissued.url))).status, 200, 'a test site\'s preview can be re-issued once live');
});

test.serial('the site shows the business\'s own phone (customers.phone), never a number rented for calling; without one it shows none', async (t) => {
  const a = await makeAccount(svc.url);
  // Refused: not a number, not valid, or not in the customer's country.
  for (const phone of ['call us', '+44 20 1234', '+1 202 555 0147']) {
    const r = await a.api.post('/v1/customers', { name: 'Bright Dental', country: 'GB', phone });
    t.is(r.status, 400, `${phone}: ${r.text}`);
    t.is(r.body.error.code, 'invalid_phone_number', phone);
  }
  const withPhone = await a.api.post('/v1/customers', { name: 'Bright Dental', country: 'GB', phone: '0113 496 0000' });
  t.is(withPhone.status, 201, withPhone.text);
  t.is(withPhone.body.phone, '+441134960000', 'stored in E.164');
  t.is((await a.api.get(`/v1/customers/${withPhone.body.id}`)).body.phone, '+441134960000');
  const without = await makeCustomer(a.api, { name: 'Harbour Dental', country: 'GB' });
  t.is(without.phone, null);
  // Both have a number rented for calling.
  for (const id of [withPhone.body.id, without.id]) {
    const rented = await a.api.post(`/v1/customers/${id}/numbers`, {});
    t.is(rented.status, 201, rented.text);
  }
  const rentedOf = async (id: string) => ((await a.api.get(`/v1/customers/${id}/numbers`)).body.data as any[]).map((n) => n.phone_number as string);
  const pageOf = async (customerId: string) => {
    const order = (await a.api.post(`/v1/customers/${customerId}/websites`, { brief: BRIEF })).body.id;
    await build(a);
    return (await call(svc.url, 'GET', pathOf((await a.api.get(`/v1/customers/${customerId}/websites/${order}`)).body.preview_url))).text;
  };
  const shown = await pageOf(withPhone.body.id);
  t.regex(shown, /href="tel:\+441134960000"/);
  t.regex(shown, /0113\s496\s0000/, "written as the country writes it");
  for (const n of await rentedOf(withPhone.body.id)) t.false(shown.includes(n), `the calling number ${n} is not the business's`);
  const none = await pageOf(without.id);
  t.notRegex(none, /href="tel:/, 'no number of the business: none shown');
  for (const n of await rentedOf(without.id)) t.false(none.includes(n));
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
