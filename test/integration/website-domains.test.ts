/**
 * Customers' own domains (issues 15 and 20) checked against a DNS server the test controls
 * (test/helpers/dns-server.ts, given to the service as SWITCHBOARD_DNS_SERVERS): unverified while
 * the CNAME is missing or the lookup fails (no certificate, not served by Host), verified by the
 * check_domains job once the CNAME points at the site and the 10-minute recheck has come (on the
 * test clock), then served by Host and allowed a certificate by Caddy's `ask`. Domains need
 * SWITCHBOARD_SITES_DOMAIN (each site's CNAME names its own `<slug>.<sites domain>`, which is what
 * proves a claim); a service without it refuses them. An unverified claim blocks nobody, lapses
 * after 7 days, and a claim DNS verifies drops the others. Test sites are served only at their
 * preview. Serial: the test clock and the builder are shared by every test of a service.
 */
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { call, type Client } from '../helpers/http.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';

const SITES_DOMAIN = 'sites.switchboard-test.example';
const BRIEF = 'Family dental practice in Leeds. Check-ups, hygiene and emergency appointments; evening hours on Thursdays.';

let dns: TestDns;
let svc: TestService;
let sites: TestService;
test.before(async () => {
  dns = await startTestDns();
  const env = { SWITCHBOARD_JOB_INTERVAL_MS: '3600000', SWITCHBOARD_BUILDER_POLL_MS: '3600000', SWITCHBOARD_DNS_SERVERS: dns.server };
  [svc, sites] = await Promise.all([startTestService(env), startTestService({ ...env, SWITCHBOARD_SITES_DOMAIN: SITES_DOMAIN })]);
});
test.after.always(async () => {
  await svc?.stop();
  await sites?.stop();
  await dns?.close();
});

const runJob = async (a: TestAccount, name: string) => (await a.admin.post(`/admin/v1/jobs/${name}/run`)).body.processed as number;
const advance = (a: TestAccount, seconds: number) => a.admin.post('/admin/v1/test_clock/advance', { seconds });
const ask = (s: TestService, domain: string) => call(s.url, 'GET', `/sites/tls-ask?domain=${encodeURIComponent(domain)}`);
/** A request as a browser at `host` sends it (fetch will not send another Host). */
const byHost = async (s: TestService, host: string, target = '/') => {
  const r = await rawRequest(s.port, { method: 'GET', target, headers: { host, connection: 'close' } });
  // (the raw reader keeps bytes as latin1 characters)
  return { ...r, body: Buffer.from(r.body, 'latin1').toString('utf8') };
};
/** A name no other test uses, under a real top-level domain (the test's DNS server answers it). */
const unique = (label: string, id: string, tld = 'com') => `www.${label}-${id.slice(0, 8)}.${tld}`;

/**
 * A customer's site, built and published on `s`: live mode (an account with money) unless
 * `mode` is 'test'. `api` is the key of that mode.
 */
async function liveSite(s: TestService, name = 'Bright Dental', mode: 'live' | 'test' = 'live') {
  const a = await makeAccount(s.url, mode === 'live' ? { live: true } : {});
  if (mode === 'live') await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 100_000 });
  const api: Client = mode === 'live' ? a.liveApi! : a.api;
  const c = await makeCustomer(api, { name, country: 'GB' });
  const id = (await api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id as string;
  await a.admin.post('/admin/v1/website_builder/run');
  const live = await api.post(`/v1/customers/${c.id}/websites/${id}/publish`, {});
  if (live.status !== 200) throw new Error(`publish: ${live.status} ${live.text}`);
  const slug = await slugOf(s, id);
  return {
    a,
    api,
    c,
    id,
    slug,
    site: live.body,
    host: `${slug}.${SITES_DOMAIN}`,
    get: async () => (await api.get(`/v1/customers/${c.id}/websites/${id}`)).body,
    setDomain: (body: Record<string, unknown>) => api.post(`/v1/customers/${c.id}/websites/${id}/domain`, body),
  };
}

async function invariantsHold(t: ExecutionContext, s: TestService) {
  t.deepEqual(await checkMoneyInvariants(s.databaseUrl), []);
}

test.serial('a domain stays unverified without its CNAME; once the CNAME points at the site, the recheck verifies it; then it is served by Host and allowed a certificate', async (t) => {
  const { a, id, host, slug, setDomain, get } = await liveSite(sites);
  const domain = unique('bright', id);
  const record = (await setDomain({ domain })).body;
  t.like(record, { object: 'dns_record', type: 'CNAME', name: domain });
  // The CNAME names the site's own host under the sites domain.
  t.is(record.value, host);

  // No record yet: the job looks (at the test's server), and the domain stays unverified.
  const asked = dns.queries.length;
  t.is(await runJob(a, 'check_domains'), 0);
  t.true(dns.queries.slice(asked).some((q) => q.name.toLowerCase() === domain && q.type === 'CNAME'), 'the service asked the test DNS server');
  t.like(await get(), { domain, domain_verified: false });
  t.is((await ask(sites, domain)).status, 404);
  const notYet = await byHost(sites, domain);
  t.not(notYet.status, 200, 'an unverified domain is not served');
  t.notRegex(notYet.body, /Bright Dental/);

  // The customer sets the CNAME; it is not looked at again before the 10 minutes are up.
  dns.cname(domain, `${record.value.toUpperCase()}.`);
  const before = dns.queries.length;
  t.is(await runJob(a, 'check_domains'), 0);
  t.is(dns.queries.length, before, 'checked a moment ago: not asked again yet');
  t.false((await get()).domain_verified);

  await advance(a, 10 * 60 + 1);
  t.is(await runJob(a, 'check_domains'), 1);
  t.like(await get(), { domain, domain_verified: true });
  t.is((await ask(sites, domain)).status, 200);
  t.is((await ask(sites, domain.toUpperCase())).status, 200, 'the ask ignores case');
  t.is((await ask(sites, `${domain}.`)).status, 200, 'and a trailing dot');

  const page = (await call(sites.url, 'GET', `/sites/${slug}/`)).text;
  t.regex(page, /Bright Dental/);
  for (const h of [domain, domain.toUpperCase(), `${domain}:443`, `${domain}.`]) {
    const served = await byHost(sites, h);
    t.is(served.status, 200, h);
    t.is(served.body, page, `the site itself at Host ${h}`);
    t.regex(served.headers['content-security-policy'] ?? '', /default-src 'none'/);
  }
  t.is((await byHost(sites, domain, '/anything/else')).body, page, 'every path of the domain is the page');
  // The API is not reachable through a customer's domain as a page.
  t.not((await byHost(sites, domain, '/healthz')).body, page);
  const questionsSoFar = dns.queries.length;
  t.is(await runJob(a, 'check_domains'), 0);
  t.is(dns.queries.length, questionsSoFar, 'a verified domain is not looked up again within hours');

  // Hours later DNS is looked at again: a lookup that fails changes nothing…
  dns.fail(domain, 'servfail');
  await advance(a, 6 * 3600 + 60);
  t.is(await runJob(a, 'check_domains'), 0);
  t.true((await get()).domain_verified, 'a failed lookup does not unverify');
  // …and a CNAME taken away unverifies it: no longer served there, no certificate.
  dns.clear(domain);
  await advance(a, 6 * 3600 + 60);
  t.is(await runJob(a, 'check_domains'), 1);
  t.false((await get()).domain_verified);
  t.is((await ask(sites, domain)).status, 404);
  t.not((await byHost(sites, domain)).body, page);
  await invariantsHold(t, sites);
});

test.serial('a lookup that fails (SERVFAIL) keeps the domain unverified and it is checked again later; a CNAME to another site never verifies', async (t) => {
  const { a, id, setDomain, get } = await liveSite(sites);
  const domain = unique('flaky', id);
  const record = (await setDomain({ domain })).body;
  dns.cname(domain, record.value);
  dns.fail(domain, 'servfail');
  t.is(await runJob(a, 'check_domains'), 0);
  t.false((await get()).domain_verified);
  t.true(sites.logs.lines.some((l) => l.domain === domain && /checked again later/.test(String(l.msg))), 'the failure is logged');
  t.is((await ask(sites, domain)).status, 404);

  dns.clear(domain);
  dns.cname(domain, record.value);
  await advance(a, 10 * 60 + 1);
  t.is(await runJob(a, 'check_domains'), 1);
  t.true((await get()).domain_verified);

  // Another customer's domain pointed somewhere else: looked at, never verified.
  const other = await liveSite(sites, 'Harbour Cafe');
  const elsewhere = unique('harbour', other.id);
  await other.setDomain({ domain: elsewhere });
  dns.cname(elsewhere, 'somewhere-else.example.org');
  t.is(await runJob(a, 'check_domains'), 0);
  t.false((await other.get()).domain_verified);
  t.is((await ask(sites, elsewhere)).status, 404);
});

test.serial('tls-ask: 404 for a cancelled site\'s domain, an unknown name and garbage; never a 5xx', async (t) => {
  const { a, c, id, api, setDomain, get } = await liveSite(sites);
  const domain = unique('gone', id);
  const record = (await setDomain({ domain })).body;
  dns.cname(domain, record.value);
  await advance(a, 10 * 60 + 1);
  await runJob(a, 'check_domains');
  t.true((await get()).domain_verified);
  t.is((await ask(sites, domain)).status, 200);
  t.is((await api.delete(`/v1/customers/${c.id}/websites/${id}`)).status, 200);
  t.is((await ask(sites, domain)).status, 404, 'a taken-down site gets no certificate');
  t.is((await byHost(sites, domain)).status, 404, 'nor is it served');

  for (const garbage of ['www.nobody.example', 'localhost', '127.0.0.1', '::1', '-x.example', 'a..b.example', 'exa mple.com', '<script>', 'x'.repeat(253), `${domain}/path`, 'é.example']) {
    const r = await ask(sites, garbage);
    t.is(r.status, 404, JSON.stringify(garbage));
  }
  // No name at all, or one longer than a DNS name can be: the request itself is refused, in the API's error shape.
  for (const query of ['', '?domain=', '?domain=%00', `?domain=${'x'.repeat(254)}`]) {
    const r = await call(sites.url, 'GET', `/sites/tls-ask${query}`);
    t.is(r.status, 400, query);
    t.truthy(r.body.error?.code, query);
  }
  await invariantsHold(t, sites);
});

test.serial('with SWITCHBOARD_SITES_DOMAIN: a live site is at https://<slug>.<sites domain>/, served by that Host, allowed a certificate only while live; a customer\'s CNAME names that host', async (t) => {
  const { a, c, api, id, site, slug, host, setDomain, get } = await liveSite(sites);
  t.is(site.url, `https://${slug}.${SITES_DOMAIN}/`);
  t.regex(slug, /^bright-dental-[0-9a-f]{6}$/);

  const page = (await call(sites.url, 'GET', `/sites/${slug}/`)).text;
  t.regex(page, /Bright Dental/);
  for (const h of [host, host.toUpperCase(), `${host}:443`]) {
    const served = await byHost(sites, h);
    t.is(served.status, 200, h);
    t.is(served.body, page);
  }
  t.is((await ask(sites, host)).status, 200);
  t.is((await ask(sites, `nobody-123456.${SITES_DOMAIN}`)).status, 404);
  t.is((await byHost(sites, `nobody-123456.${SITES_DOMAIN}`)).status, 404);
  t.is((await ask(sites, `a.b.${SITES_DOMAIN}`)).status, 404);
  t.is((await ask(sites, SITES_DOMAIN)).status, 404);

  // An order not live yet has a slug but no site: no certificate.
  const waiting = (await api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body;
  const waitingSlug = await slugOf(sites, waiting.id);
  t.is((await ask(sites, `${waitingSlug}.${SITES_DOMAIN}`)).status, 404, 'a site still building gets no certificate');

  // The customer's domain points at <slug>.<sites domain>.
  const domain = unique('bright', id);
  const record = (await setDomain({ domain })).body;
  t.is(record.value, host);
  t.is((await setDomain({ domain: `shop.${SITES_DOMAIN}`, replace: true })).body.error?.code, 'invalid_domain', 'the service\'s own names are not a customer\'s');
  // (the refused name left the domain as it was)
  dns.cname(domain, host);
  t.is(await runJob(a, 'check_domains'), 1);
  t.true((await get()).domain_verified);
  t.is((await byHost(sites, domain)).body, page);
  t.is((await ask(sites, domain)).status, 200);

  // Taken down: neither its own host nor the customer's domain gets a certificate or the page.
  await api.delete(`/v1/customers/${c.id}/websites/${id}`);
  t.is((await ask(sites, host)).status, 404, 'a cancelled site\'s own host gets no certificate');
  t.is((await ask(sites, domain)).status, 404);
  t.is((await byHost(sites, host)).status, 404);
  await invariantsHold(t, sites);
});

test.serial('test sites are served only at their preview: not at <slug>.<sites domain>, not at /sites/<slug>/, not at a verified domain, and never given a certificate', async (t) => {
  const { a, id, slug, host, site, setDomain, get } = await liveSite(sites, 'Test Dental', 'test');
  t.is(site.status, 'live');
  t.is(site.url, site.preview_url, 'its address is its preview');
  t.is((await call(sites.url, 'GET', new URL(site.url).pathname)).status, 200, 'the preview serves it');
  t.is((await byHost(sites, host)).status, 404, 'not at its slug host');
  t.is((await call(sites.url, 'GET', `/sites/${slug}/`)).status, 404, 'not at its slug path');
  t.is((await ask(sites, host)).status, 404, 'no certificate for its slug host');

  // Even a testing name DNS verifies is neither served nor certified.
  const domain = `www.test-${id.slice(0, 8)}.test`;
  const record = (await setDomain({ domain })).body;
  t.is(record.value, host);
  dns.cname(domain, host);
  await advance(a, 10 * 60 + 1);
  await runJob(a, 'check_domains');
  t.true((await get()).domain_verified);
  t.is((await ask(sites, domain)).status, 404);
  t.is((await byHost(sites, domain)).status, 404);
});

test.serial('domain names: apex, special-use and IP names are 400 invalid_domain; a test site takes only testing names (400 test_mode_domain); a service without a sites domain is 503', async (t) => {
  const live = await liveSite(sites);
  for (const domain of ['brightdental.com', 'brightdental.co.uk', 'foo.localhost', 'shop.local', 'www.bright.test', 'www.bright.example', 'www.example.com', 'printer.internal', 'www.bright.invalid', 'x.onion', '127.0.0.1', '[::1]', 'localhost']) {
    const r = await live.setDomain({ domain });
    t.is(r.status, 400, `${domain}: ${r.text}`);
    t.is(r.body.error.code, 'invalid_domain', domain);
  }
  t.regex((await live.setDomain({ domain: 'brightdental.com' })).body.error.message, /apex/i);
  t.is((await live.setDomain({ domain: 'www.brightdental.co.uk' })).status, 200, 'a name under a country\'s registrable domain');

  const test = await liveSite(sites, 'Test Dental', 'test');
  const real = await test.setDomain({ domain: 'www.brightdental.com' });
  t.is(real.status, 400, real.text);
  t.is(real.body.error.code, 'test_mode_domain', 'a free test build claims no real domain');
  t.is((await test.setDomain({ domain: 'foo.localhost' })).body.error.code, 'invalid_domain');
  t.is((await test.setDomain({ domain: 'bright.test' })).body.error.code, 'invalid_domain', 'an apex, even for testing');
  t.is((await test.setDomain({ domain: 'www.bright.test' })).status, 200);

  const none = await liveSite(svc);
  const r = await none.setDomain({ domain: 'www.brightdental.com' });
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, 'sites_not_configured');
});

test.serial('replacing a domain is explicit: another name is 409 domain_already_set unless replace is true; the same name again answers the record', async (t) => {
  const { id, setDomain, get } = await liveSite(sites);
  const first = unique('first', id);
  const second = unique('second', id);
  t.is((await setDomain({ domain: first })).status, 200);
  t.is((await setDomain({ domain: first })).status, 200, 'the same name: as it is');
  const refused = await setDomain({ domain: second });
  t.is(refused.status, 409, refused.text);
  t.is(refused.body.error.code, 'domain_already_set');
  t.like(await get(), { domain: first });
  const replaced = await setDomain({ domain: second, replace: true });
  t.is(replaced.status, 200, replaced.text);
  t.like(await get(), { domain: second, domain_verified: false });
});

test.serial('squatting: an unverified claim blocks nobody; the claim DNS verifies takes the domain and the other claims are dropped; an unverified claim lapses after 7 days', async (t) => {
  const squatter = await liveSite(sites, 'Squatter');
  const owner = await liveSite(sites, 'Owner Dental');
  const domain = unique('owner', owner.id);
  t.is((await squatter.setDomain({ domain })).status, 200, 'the squatter claims first');
  const claimed = await owner.setDomain({ domain });
  t.is(claimed.status, 200, `the owner is not blocked: ${claimed.text}`);
  t.is(claimed.body.value, owner.host);

  // The owner points the name at its own site: DNS proves it, and the squatter's claim goes.
  dns.cname(domain, owner.host);
  await advance(owner.a, 10 * 60 + 1);
  await runJob(owner.a, 'check_domains');
  t.like(await owner.get(), { domain, domain_verified: true });
  t.like(await squatter.get(), { domain: null, domain_verified: false });
  t.is((await byHost(sites, domain)).body, (await call(sites.url, 'GET', `/sites/${owner.slug}/`)).text);

  // A claim DNS never verifies lapses 7 days after it was made (a test-mode claim, on the test clock).
  const idle = await liveSite(sites, 'Idle Dental', 'test');
  const name = `www.idle-${idle.id.slice(0, 8)}.test`;
  t.is((await idle.setDomain({ domain: name })).status, 200);
  await advance(idle.a, 6 * 86_400);
  await runJob(idle.a, 'check_domains');
  t.like(await idle.get(), { domain: name }, 'day 6: still claimed');
  await advance(idle.a, 86_400 + 60);
  await runJob(idle.a, 'check_domains');
  t.like(await idle.get(), { domain: null }, 'after 7 days: lapsed');
  await invariantsHold(t, sites);
});

/** A build's slug, which the API shows only once the site is live. */
async function slugOf(s: TestService, id: string): Promise<string> {
  const db = new pg.Client({ connectionString: s.databaseUrl });
  await db.connect();
  try {
    return (await db.query('SELECT slug FROM website_builds WHERE id = $1', [id])).rows[0].slug;
  } finally {
    await db.end();
  }
}
