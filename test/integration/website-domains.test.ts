/**
 * Customers' own domains (issue 15) checked against a DNS server the test controls
 * (test/helpers/dns-server.ts, given to the service as SWITCHBOARD_DNS_SERVERS): unverified while
 * the CNAME is missing or the lookup fails (no certificate, not served by Host), verified by the
 * check_domains job once the CNAME points at the site and the 10-minute recheck has come (on the
 * test clock), then served by Host and allowed a certificate by Caddy's `ask`. A second service
 * with SWITCHBOARD_SITES_DOMAIN serves sites at `<slug>.<sites domain>`. Serial: the test clock
 * and the builder are shared by every test of a service.
 */
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { call } from '../helpers/http.ts';
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

const pathOf = (url: string) => new URL(url).pathname;
const runJob = async (a: TestAccount, name: string) => (await a.console.post(`/console/v1/jobs/${name}/run`)).body.processed as number;
const advance = (a: TestAccount, seconds: number) => a.console.post('/console/v1/test_clock/advance', { seconds });
const ask = (s: TestService, domain: string) => call(s.url, 'GET', `/sites/tls-ask?domain=${encodeURIComponent(domain)}`);
/** A request as a browser at `host` sends it (fetch will not send another Host). */
const byHost = async (s: TestService, host: string, target = '/') => {
  const r = await rawRequest(s.port, { method: 'GET', target, headers: { host, connection: 'close' } });
  // (the raw reader keeps bytes as latin1 characters)
  return { ...r, body: Buffer.from(r.body, 'latin1').toString('utf8') };
};

/** A test-mode customer's site, built and live on `s`. */
async function liveSite(s: TestService, name = 'Bright Dental') {
  const a = await makeAccount(s.url);
  const c = await makeCustomer(a.api, { name, country: 'GB' });
  const id = (await a.api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body.id as string;
  await a.console.post('/console/v1/website_builder/run');
  const live = await a.api.post(`/v1/customers/${c.id}/websites/${id}/publish`, {});
  if (live.status !== 200) throw new Error(`publish: ${live.status} ${live.text}`);
  return { a, c, id, site: live.body, get: async () => (await a.api.get(`/v1/customers/${c.id}/websites/${id}`)).body };
}

async function invariantsHold(t: ExecutionContext, s: TestService) {
  t.deepEqual(await checkMoneyInvariants(s.databaseUrl), []);
}

test.serial('a domain stays unverified without its CNAME; once the CNAME points at the site, the recheck verifies it; then it is served by Host and allowed a certificate', async (t) => {
  const { a, c, id, site, get } = await liveSite(svc);
  const domain = `www.bright-${id.slice(0, 8)}.example`;
  const record = (await a.api.post(`/v1/customers/${c.id}/websites/${id}/domain`, { domain })).body;
  t.like(record, { object: 'dns_record', type: 'CNAME', name: domain });
  // Without a sites domain the CNAME names the service's own host.
  t.is(record.value, new URL(svc.url).hostname);

  // No record yet: the job looks (at the test's server), and the domain stays unverified.
  const asked = dns.queries.length;
  t.is(await runJob(a, 'check_domains'), 0);
  t.true(dns.queries.slice(asked).some((q) => q.name.toLowerCase() === domain && q.type === 'CNAME'), 'the service asked the test DNS server');
  t.like(await get(), { domain, domain_verified: false });
  t.is((await ask(svc, domain)).status, 404);
  const notYet = await byHost(svc, domain);
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
  t.is((await ask(svc, domain)).status, 200);
  t.is((await ask(svc, domain.toUpperCase())).status, 200, 'the ask ignores case');
  t.is((await ask(svc, `${domain}.`)).status, 200, 'and a trailing dot');

  const page = (await call(svc.url, 'GET', pathOf(site.url))).text;
  for (const host of [domain, domain.toUpperCase(), `${domain}:443`, `${domain}.`]) {
    const served = await byHost(svc, host);
    t.is(served.status, 200, host);
    t.is(served.body, page, `the site itself at Host ${host}`);
    t.regex(served.headers['content-security-policy'] ?? '', /default-src 'none'/);
  }
  t.is((await byHost(svc, domain, '/anything/else')).body, page, 'every path of the domain is the page');
  // The API is not reachable through a customer's domain as a page.
  t.not((await byHost(svc, domain, '/healthz')).body, page);
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
  t.is((await ask(svc, domain)).status, 404);
  t.not((await byHost(svc, domain)).body, page);
  await invariantsHold(t, svc);
});

test.serial('a lookup that fails (SERVFAIL) keeps the domain unverified and it is checked again later; a CNAME to another site never verifies', async (t) => {
  const { a, c, id, get } = await liveSite(svc);
  const domain = `shop.flaky-${id.slice(0, 8)}.example`;
  const record = (await a.api.post(`/v1/customers/${c.id}/websites/${id}/domain`, { domain })).body;
  dns.cname(domain, record.value);
  dns.fail(domain, 'servfail');
  t.is(await runJob(a, 'check_domains'), 0);
  t.false((await get()).domain_verified);
  t.true(svc.logs.lines.some((l) => l.domain === domain && /checked again later/.test(String(l.msg))), 'the failure is logged');
  t.is((await ask(svc, domain)).status, 404);

  dns.clear(domain);
  dns.cname(domain, record.value);
  await advance(a, 10 * 60 + 1);
  t.is(await runJob(a, 'check_domains'), 1);
  t.true((await get()).domain_verified);

  // Another customer's domain pointed somewhere else: looked at, never verified.
  const other = await liveSite(svc, 'Harbour Cafe');
  const elsewhere = `www.harbour-${other.id.slice(0, 8)}.example`;
  await other.a.api.post(`/v1/customers/${other.c.id}/websites/${other.id}/domain`, { domain: elsewhere });
  dns.cname(elsewhere, 'somewhere-else.example.org');
  t.is(await runJob(a, 'check_domains'), 0);
  t.false((await other.get()).domain_verified);
  t.is((await ask(svc, elsewhere)).status, 404);
});

test.serial('tls-ask: 404 for a cancelled site\'s domain, an unknown name and garbage; never a 5xx', async (t) => {
  const { a, c, id, get } = await liveSite(svc);
  const domain = `www.gone-${id.slice(0, 8)}.example`;
  const record = (await a.api.post(`/v1/customers/${c.id}/websites/${id}/domain`, { domain })).body;
  dns.cname(domain, record.value);
  await runJob(a, 'check_domains');
  t.true((await get()).domain_verified);
  t.is((await ask(svc, domain)).status, 200);
  t.is((await a.api.delete(`/v1/customers/${c.id}/websites/${id}`)).status, 200);
  t.is((await ask(svc, domain)).status, 404, 'a taken-down site gets no certificate');
  t.is((await byHost(svc, domain)).status, 404, 'nor is it served');

  for (const garbage of ['www.nobody.example', 'localhost', '127.0.0.1', '::1', '-x.example', 'a..b.example', 'exa mple.com', '<script>', 'x'.repeat(253), `${domain}/path`, 'é.example']) {
    const r = await ask(svc, garbage);
    t.is(r.status, 404, JSON.stringify(garbage));
  }
  // No name at all, or one longer than a DNS name can be: the request itself is refused, in the API's error shape.
  for (const query of ['', '?domain=', '?domain=%00', `?domain=${'x'.repeat(254)}`]) {
    const r = await call(svc.url, 'GET', `/sites/tls-ask${query}`);
    t.is(r.status, 400, query);
    t.truthy(r.body.error?.code, query);
  }
  await invariantsHold(t, svc);
});

test.serial('with SWITCHBOARD_SITES_DOMAIN: a live site is at https://<slug>.<sites domain>/, served by that Host, allowed a certificate only while live; a customer\'s CNAME names that host', async (t) => {
  const { a, c, id, site, get } = await liveSite(sites);
  const slug = /^https:\/\/([a-z0-9-]+)\./.exec(site.url)?.[1] ?? '';
  t.is(site.url, `https://${slug}.${SITES_DOMAIN}/`);
  t.regex(slug, /^bright-dental-[0-9a-f]{6}$/);
  const host = `${slug}.${SITES_DOMAIN}`;

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
  const waiting = (await a.api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF })).body;
  const waitingSlug = await slugOf(sites, waiting.id);
  t.is((await ask(sites, `${waitingSlug}.${SITES_DOMAIN}`)).status, 404, 'a site still building gets no certificate');

  // The customer's domain points at <slug>.<sites domain>.
  const domain = `www.bright-${id.slice(0, 8)}.example`;
  const record = (await a.api.post(`/v1/customers/${c.id}/websites/${id}/domain`, { domain })).body;
  t.is(record.value, host);
  t.is((await a.api.post(`/v1/customers/${c.id}/websites/${id}/domain`, { domain: `shop.${SITES_DOMAIN}` })).body.error?.code, 'invalid_domain', 'the service\'s own names are not a customer\'s');
  // (the refused name left the domain as it was)
  dns.cname(domain, host);
  t.is(await runJob(a, 'check_domains'), 1);
  t.true((await get()).domain_verified);
  t.is((await byHost(sites, domain)).body, page);
  t.is((await ask(sites, domain)).status, 200);

  // Taken down: neither its own host nor the customer's domain gets a certificate or the page.
  await a.api.delete(`/v1/customers/${c.id}/websites/${id}`);
  t.is((await ask(sites, host)).status, 404, 'a cancelled site\'s own host gets no certificate');
  t.is((await ask(sites, domain)).status, 404);
  t.is((await byHost(sites, host)).status, 404);
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
