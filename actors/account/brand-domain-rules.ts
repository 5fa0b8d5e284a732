import type { AccountRow } from '../../db/accounts.ts';
import { isApex, isSpecialUse, isTestingName, normaliseDomain } from '../websites/domain-names.ts';
import { iso } from '../../runtime/types.ts';

/**
 * The brand domain's rules (pure): which names a brand may take (as customers' website domains:
 * a DNS name below its registrable domain, never a special-use one), the CNAME target that
 * proves a claim (the account's own name under the sites domain), how a DNS look moves the
 * state, and how often a domain is looked at.
 */

export type BrandDomainStatus = AccountRow['domain_status'];

/** A pending domain is looked at again this long after its last look (as a website domain). */
export const PENDING_RECHECK_MS = 10 * 60_000;
/** A verified or failed domain is looked at again this long after its last look. */
export const SETTLED_RECHECK_MS = 6 * 60 * 60_000;
/** A claim DNS has not verified fails this long after it was made. */
export const CLAIM_FAILS_AFTER_MS = 7 * 86_400_000;

/**
 * Why `name` (as sent) cannot be a brand domain: a sentence starting with the field's name
 * (the `invalid_brand_field` message), or null when it can. Names reserved for testing
 * (`calls.northwind.test`) are taken, as a test site takes them: they never resolve in public DNS.
 */
export function brandDomainRefusal(value: string): string | null {
  const name = normaliseDomain(value);
  if (!name || value.trim() !== value) return 'domain must be a domain name such as calls.example.com';
  if (isSpecialUse(name) && !isTestingName(name)) return `domain ${name} is a special-use or reserved name, not a domain of the reseller`;
  if (isApex(name)) return `domain ${name} is an apex domain, which cannot carry a CNAME; use a name under it, such as calls.${name}`;
  return null;
}

/** Whether `name` is one of the service's own hosts (its public host, the sites domain or a name under it). */
export function isServiceName(name: string, own: { publicHost: string; sitesDomain: string | undefined }): boolean {
  if (name === own.publicHost.toLowerCase()) return true;
  return own.sitesDomain !== undefined && (name === own.sitesDomain || name.endsWith(`.${own.sitesDomain}`));
}

/**
 * What an account's brand domain must be a CNAME of: `<account slug>-brand.<sites domain>`
 * (the sites domain's wildcard record points it at the service). Its own per account, so a
 * reseller that claims another's domain can never be verified by the other pointing it; a
 * site's slug always ends in six hex digits, so the label is never a site's. Null without a
 * sites domain: a domain can then be saved but not verified.
 */
export function brandCnameTarget(slug: string, sitesDomain: string | undefined): string | null {
  return sitesDomain ? `${slug}-brand.${sitesDomain}` : null;
}

/** What setting the domain to `name` (normalised, or null to clear) writes; nothing when it is the same name. */
export function domainChange(current: Pick<AccountRow, 'domain'>, name: string | null, now: Date): Partial<AccountRow> | null {
  if ((current.domain ?? null) === name) return null;
  return name === null
    ? { domain: null, domain_status: 'none', domain_claimed_at: null, domain_checked_at: null, domain_verified_at: null }
    : { domain: name, domain_status: 'pending', domain_claimed_at: now, domain_checked_at: null, domain_verified_at: null };
}

/**
 * A DNS look's outcome, recorded: `points` true when the CNAME names the target, false when
 * DNS says it does not, null when the lookup failed (nothing moves but the time of the look).
 * Pointed: verified (the time it was first seen kept). Not pointed: a verified domain fails at
 * once (its pages stop being served there); a pending one stays pending until 7 days after it
 * was claimed, then fails. A failed one is verified as soon as it points.
 */
export function afterLook(row: Pick<AccountRow, 'domain_status' | 'domain_claimed_at' | 'domain_verified_at'>, points: boolean | null, now: Date): Partial<AccountRow> {
  const checked = { domain_checked_at: now };
  if (points === null) return checked;
  if (points) return { ...checked, domain_status: 'verified', domain_verified_at: row.domain_status === 'verified' ? row.domain_verified_at : now };
  if (row.domain_status === 'verified') return { ...checked, domain_status: 'failed' };
  if (row.domain_status === 'pending' && row.domain_claimed_at && now.getTime() - row.domain_claimed_at.getTime() >= CLAIM_FAILS_AFTER_MS) {
    return { ...checked, domain_status: 'failed' };
  }
  return checked;
}

/** The brand domain's state as resellers see it (`brand_domain`). */
export function brandDomainView(a: Pick<AccountRow, 'slug' | 'domain' | 'domain_status' | 'domain_checked_at' | 'domain_verified_at'>, sitesDomain: string | undefined) {
  return {
    object: 'brand_domain' as const,
    domain: a.domain,
    status: a.domain_status,
    cname_target: a.domain ? brandCnameTarget(a.slug, sitesDomain) : null,
    checked_at: iso(a.domain_checked_at),
    verified_at: a.domain_status === 'verified' ? iso(a.domain_verified_at) : null,
  };
}
