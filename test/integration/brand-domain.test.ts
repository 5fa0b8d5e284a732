/**
 * The brand's domain (issue 21): a reseller points `domain` at the service with a CNAME naming
 * its account's own target (`<account slug>-brand.<sites domain>`), checked against a DNS server
 * the test controls (test/helpers/dns-server.ts, given as SWITCHBOARD_DNS_SERVERS) on set, by
 * the check_brand_domains job and on demand. Pending until DNS shows the CNAME, verified after;
 * only then do onboarding links and chat page URLs use https://<domain>, does that host serve the
 * account's customers' pages (and nothing else), and does Caddy's ask say yes. Serial: the test
 * clock is shared by every test of a service.
 */
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { call } from '../helpers/http.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { consoleAs } from '../helpers/console.ts';

const SITES_DOMAIN = 'sites.switchboard-test.example';

let dns: TestDns;
let svc: TestService;
test.before(async () => {
  dns = await startTestDns();
  svc = await startTestService({
    SWITCHBOARD_JOB_INTERVAL_MS: '3600000',
    SWITCHBOARD_BUILDER_POLL_MS: '3600000',
    SWITCHBOARD_DNS_SERVERS: dns.server,
    SWITCHBOARD_SITES_DOMAIN: SITES_DOMAIN,
  });
});
test.after.always(async () => {
  await svc?.stop();
  await dns?.close();
});

const runJob = async (a: TestAccount) => (await a.admin.post('/admin/v1/jobs/check_brand_domains/run')).body.processed as number;
const advance = (a: TestAccount, seconds: number) => a.admin.post('/admin/v1/test_clock/advance', { seconds });
const ask = (domain: string) => call(svc.url, 'GET', `/sites/tls-ask?domain=${encodeURIComponent(domain)}`);
/** A request as a browser at `host` sends it (fetch will not send another Host). */
const byHost = async (host: string, method: string, target: string, headers: Record<string, string> = {}, body?: string) => {
  const r = await rawRequest(svc.port, { method, target, headers: { host, connection: 'close', ...headers }, body });
  return { ...r, body: Buffer.from(r.body, 'latin1').toString('utf8') };
};
/** A name no other test uses, under a real top-level domain (the test's DNS server answers it). */
const nameFor = (label: string, a: TestAccount) => `calls.${label}-${a.id.slice(0, 8)}.com`;
const brandOf = async (a: TestAccount) => (await a.api.get('/v1/brand')).body;
/** The console's on-demand DNS look, as the account's owner. */
const consoleCheck = async (a: TestAccount) => (await (await consoleAs(svc.url, a.id, 'owner')).post('/console/api/brand/domain/check')).body;
const mintLink = async (a: TestAccount, customerId: string) => {
  const r = await a.api.post(`/v1/customers/${customerId}/onboarding_link`, {});
  if (r.status !== 201) throw new Error(`mint: ${r.status} ${r.text}`);
  return r.body.url as string;
};

/** An account whose brand domain DNS has verified (the CNAME pointed before the PATCH: checked on set). */
async function verifiedAccount(label: string) {
  const a = await makeAccount(svc.url, { name: `${label} Agency` });
  const domain = nameFor(label, a);
  const target = (await a.api.patch('/v1/brand', { domain })).body.domain_status.cname_target as string;
  dns.cname(domain, target);
  const checked = await a.api.patch('/v1/brand', { domain: null }).then(() => a.api.patch('/v1/brand', { domain }));
  if (checked.body.domain_status.status !== 'verified') throw new Error(`not verified: ${checked.text}`);
  return { a, domain, target };
}

test.serial('pending until the CNAME names the account target, verified by the job after; onboarding links use the domain only once verified', async (t) => {
  const a = await makeAccount(svc.url, { name: 'Northwind Agency' });
  const domain = nameFor('northwind', a);
  const c = await makeCustomer(a.api);

  const set = await a.api.patch('/v1/brand', { domain: domain.toUpperCase() });
  t.is(set.status, 200, set.text);
  t.is(set.body.domain, domain, 'stored lower-case');
  const status = set.body.domain_status;
  t.is(status.object, 'brand_domain');
  t.is(status.status, 'pending');
  t.regex(status.cname_target, new RegExp(`^northwind-agency[a-z0-9-]*-brand\\.${SITES_DOMAIN.replace(/\./g, '\\.')}$`));
  t.not(status.checked_at, null, 'looked up on set');
  t.is(status.verified_at, null);
  t.true(dns.queries.some((q) => q.name.toLowerCase() === domain && q.type === 'CNAME'), 'the DNS server was asked');

  t.true((await mintLink(a, c.id)).startsWith(`${svc.url}/onboarding/ob_`), 'pending: the public URL');
  t.is((await ask(domain)).status, 404, 'no certificate while pending');

  // Pointed at the service's public host, or at another target, is not pointed at the account's.
  dns.cname(domain, SITES_DOMAIN);
  await advance(a, 601);
  await runJob(a);
  t.is((await brandOf(a)).domain_status.status, 'pending');

  dns.cname(domain, status.cname_target);
  t.is(await runJob(a), 0, 'looked at again only 10 minutes after the last look');
  t.is((await brandOf(a)).domain_status.status, 'pending');
  await advance(a, 601);
  t.true((await runJob(a)) >= 1);
  const verified = (await brandOf(a)).domain_status;
  t.is(verified.status, 'verified');
  t.not(verified.verified_at, null);

  const url = await mintLink(a, c.id);
  t.regex(url, new RegExp(`^https://${domain.replace(/\./g, '\\.')}/onboarding/ob_[A-Za-z0-9]+$`));
  t.is((await ask(domain)).status, 200, 'Caddy may get a certificate for a verified brand domain');
  t.is((await ask(domain.toUpperCase() + '.')).status, 200, 'the ask compares names without case or a trailing dot');
});

test.serial("the calendar link is minted at the brand domain and its page answers there (GET, POST); another reseller's calendar link there is 404", async (t) => {
  const { a, domain } = await verifiedAccount('calendar');
  const c = await makeCustomer(a.api);
  const minted = await a.api.post(`/v1/customers/${c.id}/calendar_link`, {});
  t.is(minted.status, 201, minted.text);
  t.regex(minted.body.url, new RegExp(`^https://${domain.replace(/\./g, '\\.')}/calendar/`));
  const path = new URL(minted.body.url).pathname;

  const page = await byHost(domain, 'GET', path);
  t.is(page.status, 200, page.body.slice(0, 300));
  t.regex(page.body, /<form method="post"/);
  t.notRegex(page.body, /switchboard/i, 'nothing names the service');
  const posted = await byHost(domain, 'POST', path, { 'content-type': 'application/x-www-form-urlencoded' }, 'connect=test');
  t.is(posted.status, 303, posted.body.slice(0, 300));
  t.is((await a.api.get(`/v1/customers/${c.id}/calendar`)).body.status, 'working');

  const other = await makeAccount(svc.url);
  const otherLink = await other.api.post(`/v1/customers/${(await makeCustomer(other.api)).id}/calendar_link`, {});
  const otherPath = new URL(otherLink.body.url).pathname;
  t.is((await byHost(domain, 'GET', otherPath)).status, 404);
  t.is((await byHost(domain, 'POST', otherPath, { 'content-type': 'application/x-www-form-urlencoded' }, 'connect=test')).status, 404);
  t.is((await call(svc.url, 'GET', otherPath)).status, 200, 'on its own (public) host it works');
});

test.serial("the brand host serves its own customers' onboarding and chat pages; /v1, /admin, /console and another reseller's token answer 404", async (t) => {
  const { a, domain } = await verifiedAccount('serving');
  const c = await makeCustomer(a.api);
  const url = await mintLink(a, c.id);
  const path = new URL(url).pathname;

  const page = await byHost(domain, 'GET', path);
  t.is(page.status, 200, page.body);
  t.regex(page.body, /<form method="post">/);
  t.notRegex(page.body, /switchboard/i, 'nothing names the service');
  // The public host still serves the same link (links minted before the domain keep working).
  t.is((await call(svc.url, 'GET', path)).status, 200);

  // Another reseller's link, on this reseller's host: 404; on its own (public) host it works.
  const other = await makeAccount(svc.url);
  const otherPath = new URL(await mintLink(other, (await makeCustomer(other.api)).id)).pathname;
  const foreign = await byHost(domain, 'GET', otherPath);
  t.is(foreign.status, 404);
  t.notRegex(foreign.body, /<form/);
  t.is((await byHost(domain, 'POST', otherPath, { 'content-type': 'application/x-www-form-urlencoded' }, 'accepted_by=Mallory&agree=yes')).status, 404);
  t.is((await call(svc.url, 'GET', otherPath)).status, 200);

  // The chat page and the routes its script calls, with this account's session; another's is 404.
  const session = await a.api.post(`/v1/customers/${c.id}/sessions`, { end_user_ref: 'rep-1' });
  t.is(session.status, 201, session.text);
  t.is(session.body.url, `https://${domain}/chat#token=${session.body.token}`, 'the chat page URL is at the brand domain');
  t.is((await byHost(domain, 'GET', '/chat')).status, 200);
  const context = await byHost(domain, 'GET', '/v1/chat/session', { authorization: `Bearer ${session.body.token}` });
  t.is(context.status, 200, context.body);
  t.is(JSON.parse(context.body).object, 'chat_context');
  const otherSession = await other.api.post(`/v1/customers/${(await makeCustomer(other.api)).id}/sessions`, { end_user_ref: 'rep-2' });
  t.is(otherSession.body.url, `${svc.url}/chat#token=${otherSession.body.token}`, 'an account without a verified domain: the public URL');
  t.is((await byHost(domain, 'GET', '/v1/chat/session', { authorization: `Bearer ${otherSession.body.token}` })).status, 404);

  // Nothing else answers on this host: the API (even with a valid key), the operator's and the console's surfaces, sites.
  for (const [method, target, headers] of [
    ['GET', '/v1/me', { authorization: `Bearer ${a.testKey}` }],
    ['GET', '/v1/customers', { authorization: `Bearer ${a.testKey}` }],
    ['POST', '/v1/customers', { authorization: `Bearer ${a.testKey}`, 'content-type': 'application/json' }],
    ['GET', '/%76%31/me', { authorization: `Bearer ${a.testKey}` }],
    ['GET', '/admin/v1/accounts', { authorization: 'Bearer sbc_test_console_token_for_tests_only' }],
    ['GET', '/console', {}],
    ['GET', '/console/api/session', {}],
    ['GET', '/v1/openapi.json', {}],
    ['GET', '/healthz', {}],
    ['GET', '/', {}],
    ['GET', '/sites/tls-ask?domain=x.com', {}],
  ] as [string, string, Record<string, string>][]) {
    const r = await byHost(domain, method, target, headers, method === 'POST' ? '{"name":"X"}' : undefined);
    t.is(r.status, 404, `${method} ${target}: ${r.body.slice(0, 200)}`);
  }
  const api = await byHost(domain, 'GET', '/v1/me', { authorization: `Bearer ${a.testKey}` });
  t.is(JSON.parse(api.body).error.code, 'route_not_found');

  // A pending (unverified) domain of another account serves nothing of its own on its host.
  const pending = await makeAccount(svc.url);
  const pendingName = nameFor('pending', pending);
  await pending.api.patch('/v1/brand', { domain: pendingName });
  const pendingPath = new URL(await mintLink(pending, (await makeCustomer(pending.api)).id)).pathname;
  t.true((await mintLink(pending, (await makeCustomer(pending.api)).id)).startsWith(svc.url));
  t.is((await byHost(pendingName, 'GET', '/v1/me', { authorization: `Bearer ${pending.testKey}` })).status, 200, 'a host that is no verified brand domain is not treated as one');
  t.is((await byHost(pendingName, 'GET', pendingPath)).status, 200);
});

test.serial("a website build's preview is at the brand domain once verified, and served there for that account's builds only", async (t) => {
  const testSite = async (a: TestAccount) => {
    const c = await makeCustomer(a.api, { name: 'Bright Dental', country: 'GB' });
    const id = (await a.api.post(`/v1/customers/${c.id}/websites`, { brief: 'Family dental practice in Leeds. Check-ups and hygiene.' })).body.id as string;
    await a.admin.post('/admin/v1/website_builder/run');
    return { get: async () => (await a.api.get(`/v1/customers/${c.id}/websites/${id}`)).body, list: async () => (await a.api.get(`/v1/customers/${c.id}/websites`)).body.data };
  };
  const pending = await makeAccount(svc.url);
  await pending.api.patch('/v1/brand', { domain: nameFor('previewpending', pending) });
  const before = await (await testSite(pending)).get();
  t.true(before.preview_url.startsWith(`${svc.url}/sites/preview/`), 'not verified: the public URL');

  const { a, domain } = await verifiedAccount('preview');
  const site = await testSite(a);
  const built = await site.get();
  t.is(built.status, 'ready', JSON.stringify(built));
  t.regex(built.preview_url, new RegExp(`^https://${domain.replace(/\./g, '\\.')}/sites/preview/[0-9a-f-]{36}/`));
  t.is((await site.list())[0].preview_url, built.preview_url, 'the list shows the same address');
  const path = new URL(built.preview_url).pathname;
  const served = await byHost(domain, 'GET', path);
  t.is(served.status, 200);
  t.is((await call(svc.url, 'GET', path)).status, 200, 'the public host serves it too');
  // Another account's preview is not served on this reseller's host.
  const otherPath = new URL(before.preview_url).pathname;
  t.is((await call(svc.url, 'GET', otherPath)).status, 200);
  t.is((await byHost(domain, 'GET', otherPath)).status, 404);
  t.is((await byHost(domain, 'GET', '/sites/preview/not-a-uuid/x')).status, 404);
});

test.serial("a domain verified by another account's brand is refused with 409 brand_domain_taken; a pending claim blocks nobody", async (t) => {
  const { domain, target } = await verifiedAccount('taken');
  const b = await makeAccount(svc.url);
  const refused = await b.api.patch('/v1/brand', { domain, display_name: 'B Calls' });
  t.is(refused.status, 409, refused.text);
  t.is(refused.body.error.code, 'brand_domain_taken');
  t.is(refused.body.error.type, 'conflict_error');
  t.is((await brandOf(b)).display_name, null, 'nothing of the request was applied');
  t.is((await b.api.patch('/v1/brand', { domain: domain.toUpperCase() })).status, 409, 'compared without case');

  // A claim that DNS has not verified holds nothing: two accounts may claim one name, and the
  // one whose own target DNS names is verified; the other's claim fails.
  const c1 = await makeAccount(svc.url);
  const c2 = await makeAccount(svc.url);
  const shared = nameFor('shared', c1);
  const one = (await c1.api.patch('/v1/brand', { domain: shared })).body.domain_status;
  const two = (await c2.api.patch('/v1/brand', { domain: shared })).body.domain_status;
  t.is(one.status, 'pending');
  t.is(two.status, 'pending');
  t.not(one.cname_target, two.cname_target, 'each account has a target of its own');
  t.not(one.cname_target, target);
  dns.cname(shared, two.cname_target);
  await advance(c1, 601);
  await runJob(c1);
  t.is((await brandOf(c2)).domain_status.status, 'verified');
  t.is((await brandOf(c1)).domain_status.status, 'failed');
  t.is((await c1.api.patch('/v1/brand', { domain: shared })).status, 200, 'the same name again changes nothing');
  t.is((await brandOf(c1)).domain_status.status, 'failed');
});

test.serial("a domain a customer's website holds (verified by DNS) is refused with 409 brand_domain_taken, whoever's customer it is", async (t) => {
  const owner = await makeAccount(svc.url, { live: true });
  await owner.admin.post(`/admin/v1/accounts/${owner.id}/top_ups`, { amount_cents: 100_000 });
  const c = await makeCustomer(owner.liveApi!, { name: 'Bright Dental', country: 'GB' });
  const id = (await owner.liveApi!.post(`/v1/customers/${c.id}/websites`, { brief: 'Family dental practice in Leeds. Check-ups and hygiene.' })).body.id as string;
  await owner.admin.post('/admin/v1/website_builder/run');
  t.is((await owner.liveApi!.post(`/v1/customers/${c.id}/websites/${id}/publish`, {})).status, 200);
  const domain = `www.bright-${owner.id.slice(0, 8)}.com`;
  const record = await owner.liveApi!.post(`/v1/customers/${c.id}/websites/${id}/domain`, { domain });
  t.is(record.status, 200, record.text);

  // Claimed but not verified: it blocks nobody (as a website claim blocks no other site).
  const early = await makeAccount(svc.url);
  t.is((await early.api.patch('/v1/brand', { domain })).status, 200);
  t.is((await early.api.patch('/v1/brand', { domain: null })).status, 200);

  dns.cname(domain, record.body.value);
  await advance(owner, 601);
  await owner.admin.post('/admin/v1/jobs/check_domains/run');
  t.true((await owner.liveApi!.get(`/v1/customers/${c.id}/websites/${id}`)).body.domain_verified);
  for (const a of [owner, await makeAccount(svc.url)]) {
    const r = await a.api.patch('/v1/brand', { domain });
    t.is(r.status, 409, r.text);
    t.is(r.body.error.code, 'brand_domain_taken');
    t.regex(r.body.error.message, /customer's website/);
  }
});

test.serial('a name DNS moves from one account to another goes with it: the new holder is verified at its look and the old one fails', async (t) => {
  const first = await makeAccount(svc.url);
  const second = await makeAccount(svc.url);
  const domain = nameFor('moved', first);
  const firstTarget = (await first.api.patch('/v1/brand', { domain })).body.domain_status.cname_target;
  const secondTarget = (await second.api.patch('/v1/brand', { domain })).body.domain_status.cname_target;
  dns.cname(domain, firstTarget);
  t.is((await consoleCheck(first)).status, 'verified');
  t.is((await brandOf(second)).domain_status.status, 'failed', "the other account's claim failed when DNS named the first's target");

  // The name changes hands in DNS: the second account's claim (failed, kept) is checked on demand.
  dns.cname(domain, secondTarget);
  const moved = await consoleCheck(second);
  t.is(moved.status, 'verified', JSON.stringify(moved));
  t.is((await brandOf(first)).domain_status.status, 'failed', 'the old holder is not pointed any more');
  t.true((await mintLink(first, (await makeCustomer(first.api)).id)).startsWith(svc.url));
  t.true((await mintLink(second, (await makeCustomer(second.api)).id)).startsWith(`https://${domain}/`));
});

test.serial('changing the domain resets verification; clearing it makes it none; URLs go back to the public URL', async (t) => {
  const { a, domain } = await verifiedAccount('reset');
  const c = await makeCustomer(a.api);
  t.true((await mintLink(a, c.id)).startsWith(`https://${domain}/`));

  const next = `www.${domain.slice('calls.'.length)}`;
  const changed = await a.api.patch('/v1/brand', { domain: next });
  t.is(changed.status, 200, changed.text);
  t.is(changed.body.domain_status.status, 'pending');
  t.is(changed.body.domain_status.verified_at, null);
  t.true((await mintLink(a, c.id)).startsWith(`${svc.url}/onboarding/`), 'a changed domain is not used until verified');
  t.is((await ask(domain)).status, 404, 'the old name gets no certificate');
  t.is((await byHost(domain, 'GET', '/chat')).status, 200, 'the old host is nobody\'s: the page of the service');

  // Another field changed alone leaves the domain and its state as they are.
  t.is((await a.api.patch('/v1/brand', { display_name: 'Reset Calls' })).body.domain_status.status, 'pending');

  const cleared = await a.api.patch('/v1/brand', { domain: null });
  t.is(cleared.body.domain, null);
  t.deepEqual(cleared.body.domain_status, { object: 'brand_domain', domain: null, status: 'none', cname_target: null, checked_at: null, verified_at: null });
});

test.serial('a verified domain whose CNAME is taken away fails at its next look (6 hours on); pointed again, it is verified', async (t) => {
  const { a, domain, target } = await verifiedAccount('lost');
  dns.clear(domain);
  await advance(a, 601);
  await runJob(a);
  t.is((await brandOf(a)).domain_status.status, 'verified', 'a verified domain is looked at every 6 hours, not every 10 minutes');
  await advance(a, 6 * 3600);
  await runJob(a);
  t.is((await brandOf(a)).domain_status.status, 'failed');
  const c = await makeCustomer(a.api);
  t.true((await mintLink(a, c.id)).startsWith(svc.url));
  t.is((await ask(domain)).status, 404);

  // A lookup that fails changes nothing.
  dns.fail(domain, 'servfail');
  await advance(a, 6 * 3600 + 1);
  await runJob(a);
  t.is((await brandOf(a)).domain_status.status, 'failed');
  dns.clear(domain);
  dns.cname(domain, target);
  await advance(a, 6 * 3600 + 1);
  await runJob(a);
  t.is((await brandOf(a)).domain_status.status, 'verified');
});

test.serial('a pending claim fails 7 days after it was set', async (t) => {
  const a = await makeAccount(svc.url);
  const domain = nameFor('late', a);
  t.is((await a.api.patch('/v1/brand', { domain })).body.domain_status.status, 'pending');
  await advance(a, 6 * 86_400);
  await runJob(a);
  t.is((await brandOf(a)).domain_status.status, 'pending');
  await advance(a, 86_400);
  await runJob(a);
  t.is((await brandOf(a)).domain_status.status, 'failed');
});

test.serial("names a brand cannot take are 400 invalid_brand_field, as a website's domain: apex, special-use, the service's own", async (t) => {
  const a = await makeAccount(svc.url);
  for (const [domain, words] of [
    ['northwind.com', /apex/],
    ['northwind.co.uk', /apex/],
    ['calls.localhost', /special-use/],
    ['calls.northwind.internal', /special-use/],
    [`x.${SITES_DOMAIN}`, /service's own/],
    ['127.0.0.1', /domain name/],
    ['https://calls.northwind.com', /domain name/],
    [' calls.northwind.com', /domain name/],
  ] as [string, RegExp][]) {
    const r = await a.api.patch('/v1/brand', { domain });
    t.is(r.status, 400, domain);
    t.is(r.body.error.code, 'invalid_brand_field', domain);
    t.regex(r.body.error.message, words, domain);
  }
  t.is((await brandOf(a)).domain, null);
  // A name reserved for testing is taken (it never resolves in public DNS).
  t.is((await a.api.patch('/v1/brand', { domain: 'calls.northwind.test' })).status, 200);
});

test.serial('console: GET /console/api/brand (any role) has the domain status; PATCH (account:write) takes the /v1 body and rules; the check is on demand', async (t) => {
  const a = await makeAccount(svc.url, { name: 'Console Agency' });
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const empty = await owner.get('/console/api/brand');
  t.is(empty.status, 200, empty.text);
  t.is(empty.body.object, 'brand');
  t.is(empty.body.domain_status.status, 'none');

  const domain = nameFor('console', a);
  const set = await owner.patch('/console/api/brand', { display_name: 'Console Calls', domain });
  t.is(set.status, 200, set.text);
  t.is(set.body.display_name, 'Console Calls');
  t.is(set.body.domain_status.status, 'pending');
  t.deepEqual((await a.api.get('/v1/brand')).body, (await owner.get('/console/api/brand')).body, 'one brand, seen alike by the API and the console');

  // On demand: looked up now, without waiting for the job's 10 minutes.
  dns.cname(domain, set.body.domain_status.cname_target);
  const checked = await owner.post('/console/api/brand/domain/check');
  t.is(checked.status, 200, checked.text);
  t.is(checked.body.object, 'brand_domain');
  t.is(checked.body.status, 'verified');
  t.is(checked.body.domain, domain);
  t.is((await owner.get('/console/api/brand')).body.domain_status.status, 'verified');

  // The same rules and answers as /v1/brand.
  const bad = await owner.patch('/console/api/brand', { domain: 'northwind.com' });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_brand_field');
  t.is((await owner.patch('/console/api/brand', { primary_color: 'red' })).body.error.code, 'invalid_brand_field');
  t.is((await owner.patch('/console/api/brand', { account_id: a.id })).body.error.code, 'unknown_parameter');
  const other = await makeAccount(svc.url);
  const otherOwner = await consoleAs(svc.url, other.id, 'owner');
  const taken = await otherOwner.patch('/console/api/brand', { domain });
  t.is(taken.status, 409);
  t.is(taken.body.error.code, 'brand_domain_taken');

  // Without a CSRF token a write is refused.
  const noCsrf = await call(svc.url, 'PATCH', '/console/api/brand', { body: { display_name: 'X' }, headers: { cookie: owner.cookie } });
  t.is(noCsrf.status, 403);
  t.is(noCsrf.body.error.code, 'csrf_failed');
  // Without a session, nothing.
  t.is((await call(svc.url, 'GET', '/console/api/brand')).body.error.code, 'console_session_required');
});

test.serial("console: another account's people never see or check this brand; viewer, developer and billing cannot change it or check it", async (t) => {
  const { a, domain } = await verifiedAccount('roles');
  const other = await makeAccount(svc.url);
  const otherOwner = await consoleAs(svc.url, other.id, 'owner');
  const seen = await otherOwner.get('/console/api/brand');
  t.is(seen.status, 200);
  t.is(seen.body.domain, null, "the other account's own brand, never this one's");
  t.notRegex(seen.text, new RegExp(domain.replace(/\./g, '\\.')));
  const checked = await otherOwner.post('/console/api/brand/domain/check');
  t.is(checked.status, 200);
  t.deepEqual(checked.body, { object: 'brand_domain', domain: null, status: 'none', cname_target: null, checked_at: null, verified_at: null });
  t.is((await otherOwner.patch('/console/api/brand', { display_name: 'Other' })).status, 200);
  t.is((await a.api.get('/v1/brand')).body.display_name, null, "a PATCH changes only the session's own account");

  for (const role of ['viewer', 'developer', 'billing']) {
    const person = await consoleAs(svc.url, a.id, role);
    const read = await person.get('/console/api/brand');
    t.is(read.status, 200, `${role} reads`);
    t.is(read.body.domain, domain);
    const write = await person.patch('/console/api/brand', { display_name: 'Nope' });
    t.is(write.status, 403, role);
    t.is(write.body.error.code, 'role_forbidden', role);
    const check = await person.post('/console/api/brand/domain/check');
    t.is(check.status, 403, role);
    t.is(check.body.error.code, 'role_forbidden', role);
  }
  const admin = await consoleAs(svc.url, a.id, 'admin');
  t.is((await admin.patch('/console/api/brand', { display_name: 'Roles Calls' })).status, 200, 'an admin may');
  t.is((await a.api.get('/v1/brand')).body.display_name, 'Roles Calls');
});
