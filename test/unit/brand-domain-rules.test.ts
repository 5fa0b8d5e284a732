/**
 * The brand domain's rules (actors/account/brand-domain-rules.ts, pure): the target that proves a
 * claim, what setting a domain writes, and how a DNS look moves the state.
 */
import test from 'ava';
import { afterLook, brandCnameTarget, brandDomainView, CLAIM_FAILS_AFTER_MS, domainChange, isServiceName } from '../../actors/account/brand-domain-rules.ts';
import { customerOrigin } from '../../actors/shared/brand-origin.ts';

const NOW = new Date('2026-11-27T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);

test("the CNAME target is the account's own name under the sites domain, never a site's; none without a sites domain", (t) => {
  t.is(brandCnameTarget('northwind', 'sites.example.net'), 'northwind-brand.sites.example.net');
  t.is(brandCnameTarget('northwind', undefined), null);
  // A site's slug always ends in a dash and six hex digits; "-brand" never does.
  t.notRegex(brandCnameTarget('bright-dental-a1b2c3', 'sites.example.net')!.split('.')[0], /-[0-9a-f]{6}$/);
});

test('setting a domain starts a pending claim; the same name changes nothing; null clears to none', (t) => {
  t.deepEqual(domainChange({ domain: null }, 'calls.northwind.com', NOW), {
    domain: 'calls.northwind.com', domain_status: 'pending', domain_claimed_at: NOW, domain_checked_at: null, domain_verified_at: null,
  });
  t.is(domainChange({ domain: 'calls.northwind.com' }, 'calls.northwind.com', NOW), null);
  t.deepEqual(domainChange({ domain: 'calls.northwind.com' }, null, NOW), {
    domain: null, domain_status: 'none', domain_claimed_at: null, domain_checked_at: null, domain_verified_at: null,
  });
  t.is(domainChange({ domain: null }, null, NOW), null);
});

test('a look: pointed verifies (keeping the first time); not pointed fails a verified one at once, a pending one after 7 days; a failed lookup moves nothing', (t) => {
  const pending = { domain_status: 'pending' as const, domain_claimed_at: ago(60_000), domain_verified_at: null };
  t.deepEqual(afterLook(pending, true, NOW), { domain_checked_at: NOW, domain_status: 'verified', domain_verified_at: NOW });
  t.deepEqual(afterLook(pending, false, NOW), { domain_checked_at: NOW });
  t.deepEqual(afterLook(pending, null, NOW), { domain_checked_at: NOW });
  t.deepEqual(afterLook({ ...pending, domain_claimed_at: ago(CLAIM_FAILS_AFTER_MS - 1) }, false, NOW), { domain_checked_at: NOW });
  t.deepEqual(afterLook({ ...pending, domain_claimed_at: ago(CLAIM_FAILS_AFTER_MS) }, false, NOW), { domain_checked_at: NOW, domain_status: 'failed' });
  const verified = { domain_status: 'verified' as const, domain_claimed_at: ago(CLAIM_FAILS_AFTER_MS * 9), domain_verified_at: ago(86_400_000) };
  t.deepEqual(afterLook(verified, true, NOW), { domain_checked_at: NOW, domain_status: 'verified', domain_verified_at: ago(86_400_000) });
  t.deepEqual(afterLook(verified, false, NOW), { domain_checked_at: NOW, domain_status: 'failed' });
  t.deepEqual(afterLook(verified, null, NOW), { domain_checked_at: NOW });
  const failed = { domain_status: 'failed' as const, domain_claimed_at: ago(CLAIM_FAILS_AFTER_MS * 2), domain_verified_at: ago(86_400_000) };
  t.deepEqual(afterLook(failed, true, NOW), { domain_checked_at: NOW, domain_status: 'verified', domain_verified_at: NOW });
  t.deepEqual(afterLook(failed, false, NOW), { domain_checked_at: NOW });
});

test("the service's own names: its public host, the sites domain and names under it", (t) => {
  const own = { publicHost: 'api.switchboard.example', sitesDomain: 'sites.example.net' };
  for (const name of ['api.switchboard.example', 'sites.example.net', 'x.sites.example.net']) t.true(isServiceName(name, own), name);
  for (const name of ['calls.northwind.com', 'notsites.example.net']) t.false(isServiceName(name, own), name);
});

test('customers are sent to https://<domain> only while it is verified', (t) => {
  const publicUrl = 'https://api.switchboard.example';
  t.is(customerOrigin({ domain: 'calls.northwind.com', domain_status: 'verified' }, publicUrl), 'https://calls.northwind.com');
  for (const status of ['pending', 'failed', 'none']) t.is(customerOrigin({ domain: 'calls.northwind.com', domain_status: status }, publicUrl), publicUrl, status);
  t.is(customerOrigin({ domain: null, domain_status: 'none' }, publicUrl), publicUrl);
  const view = brandDomainView({ slug: 'northwind', domain: 'calls.northwind.com', domain_status: 'failed', domain_checked_at: NOW, domain_verified_at: ago(1000) }, 'sites.example.net');
  t.deepEqual(view, { object: 'brand_domain', domain: 'calls.northwind.com', status: 'failed', cname_target: 'northwind-brand.sites.example.net', checked_at: NOW.toISOString(), verified_at: null });
});
