/**
 * The DNS check of a customer's domain (actors/websites/dns-check.ts) against a DNS server the
 * test controls (test/helpers/dns-server.ts): a CNAME naming the site's target verifies (case and
 * a trailing dot aside); any other answer that DNS gives for sure is "not verified"; a server
 * that fails or does not answer throws, so the job keeps the domain unverified and asks again.
 */
import test from 'ava';
import { createCnameCheck } from '../../actors/websites/dns-check.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';

let dns: TestDns;
test.before(async () => {
  dns = await startTestDns();
});
test.after.always(async () => {
  await dns?.close();
});

const TARGET = 'bright-dental-a1b2c3.sites.example.net';
// A short timeout: the "no answer" case waits for it (twice: two tries).
const check = () => createCnameCheck([dns.server], 300);

test('a CNAME naming the target verifies, whatever its case and trailing dot, either way round', async (t) => {
  dns.cname('www.bright.example', TARGET);
  t.true(await check()('www.bright.example', TARGET));
  dns.cname('shop.bright.example', `${TARGET.toUpperCase()}.`);
  t.true(await check()('shop.bright.example', TARGET));
  t.true(await check()('SHOP.Bright.Example.', `${TARGET}.`));
  t.true(dns.queries.some((q) => q.name.toLowerCase() === 'shop.bright.example' && q.type === 'CNAME'), 'the test server was the one asked');
});

test('a CNAME naming something else, or a longer name that merely contains the target, does not verify', async (t) => {
  dns.cname('www.other.example', 'somewhere-else.example.org');
  t.false(await check()('www.other.example', TARGET));
  dns.cname('www.sneaky.example', `x${TARGET}`);
  t.false(await check()('www.sneaky.example', TARGET));
  dns.cname('www.sub.example', `${TARGET}.evil.example`);
  t.false(await check()('www.sub.example', TARGET));
});

test('a CNAME whose chain reaches the target only through another name does not verify (the record asked for is the one the customer sets)', async (t) => {
  dns.cname('www.chain.example', 'middle.chain.example');
  dns.cname('middle.chain.example', TARGET);
  t.false(await check()('www.chain.example', TARGET));
});

test('no record at all (NXDOMAIN), an address only (an apex), or NXDOMAIN said outright: not verified', async (t) => {
  t.false(await check()('www.nobody.example', TARGET));
  dns.a('apex.example', '203.0.113.7');
  t.false(await check()('apex.example', TARGET));
  dns.cname('www.gone.example', TARGET);
  dns.fail('www.gone.example', 'nxdomain');
  t.false(await check()('www.gone.example', TARGET));
  dns.clear('www.gone.example');
  t.false(await check()('www.gone.example', TARGET), 'cleared: nothing there');
});

test('SERVFAIL throws: the lookup failed, which is not an answer', async (t) => {
  dns.cname('www.broken.example', TARGET);
  dns.fail('www.broken.example', 'servfail');
  const err = await t.throwsAsync(check()('www.broken.example', TARGET));
  t.is((err as NodeJS.ErrnoException).code, 'ESERVFAIL');
});

test('a server that never answers throws (a timeout), and the check answers again once it does', async (t) => {
  dns.cname('www.silent.example', TARGET);
  dns.fail('www.silent.example', 'timeout');
  const err = await t.throwsAsync(check()('www.silent.example', TARGET));
  t.is((err as NodeJS.ErrnoException).code, 'ETIMEOUT');
  dns.clear('www.silent.example');
  dns.cname('www.silent.example', TARGET);
  t.true(await check()('www.silent.example', TARGET));
});

test('no server listening: throws rather than calling the domain unverified for good', async (t) => {
  const gone = await startTestDns();
  const address = gone.server;
  await gone.close();
  await t.throwsAsync(createCnameCheck([address], 300)('www.bright.example', TARGET));
});
