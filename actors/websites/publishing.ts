import { Refusal } from '../../runtime/refusal.ts';
import { withTransaction, isUniqueViolation } from '../../db/pool.ts';
import { createWebsiteRepository } from '../../db/websites.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { dayOf } from '../../money/rules/renewal.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { normaliseDomain } from './domain-names.ts';
import { BATCH, type Room, type WebsiteOwner } from './room.ts';
import type { WebsiteView } from './views.ts';

/**
 * Taking a site live and putting it on the customer's own domain: publishing (the first month of
 * hosting charged), the domain's CNAME record, and the DNS checks that verify it.
 */

/** An unverified domain is checked again after this long. */
export const DOMAIN_RECHECK_MS = 10 * 60_000;
/** A verified domain is looked at again after this long (its CNAME may have been taken away). */
export const DOMAIN_REVERIFY_MS = 6 * 60 * 60_000;
/** DNS lookups made at once by one run (each can take seconds when a server does not answer). */
const DOMAIN_CHECKS_AT_ONCE = 10;

/** The DNS record that points a customer's domain at its site. */
export interface DnsRecord {
  object: 'dns_record';
  type: 'CNAME';
  name: string;
  value: string;
}

export function createWebsitePublishing(room: Room) {
  const { pool, clock, log, config, cnameCheck } = room.deps;
  const { view, addresses } = room;

  /** One domain's DNS look, recorded; true when its verification changed. */
  async function checkOneDomain(site: { id: string; domain: string; slug: string; verified: boolean }, now: Date): Promise<boolean> {
    let points: boolean | null = null;
    try {
      points = await cnameCheck(site.domain, addresses.cnameTarget(site.slug));
    } catch (err) {
      log.warn({ err, website_id: site.id, domain: site.domain }, 'a domain could not be looked up; checked again later');
    }
    return withTransaction(pool, async (client) => {
      const repo = createWebsiteRepository(client);
      const row = await repo.lock(site.id);
      if (!row || row.domain !== site.domain) return false;
      const verifiedNow = points === null ? row.domain_verified_at !== null : points;
      const change = verifiedNow !== (row.domain_verified_at !== null);
      await repo.update(row.id, { domain_checked_at: now, ...(change ? { domain_verified_at: verifiedNow ? now : null } : {}) }, now);
      if (change) log.info({ website_id: row.id, domain: row.domain, verified: verifiedNow }, verifiedNow ? 'a domain now points at its site' : 'a domain no longer points at its site; it is not served there any more');
      return change;
    });
  }

  return {
    /** POST …/publish: a ready site goes live at its address; the first month of hosting is charged now. */
    async publish(owner: WebsiteOwner, buildId: string, idempotency?: IdempotencyClaim): Promise<Written<WebsiteView>> {
      const now = clock.now();
      return writeTransaction(pool, idempotency, now, async (client) => {
        let row = await room.lockOwn(client, owner, buildId);
        if (row.status === 'live' || row.status === 'hosting_due') return { created: false, body: view(row) };
        if (row.status !== 'ready') throw new Refusal('website_not_ready', row.status === 'building' ? 'The site is still being built; publish it once it is ready.' : `A ${row.status} site cannot go live.`);
        const today = dayOf(now);
        row = await createWebsiteRepository(client).update(row.id, { anchor_day: Number(today.slice(8, 10)) }, now);
        const { paid, periodEnd } = await room.chargeHosting(client, row, today, now);
        if (!paid) throw new Refusal('insufficient_balance', `The balance cannot cover the first month of hosting (${row.hosting_cents_per_month} cents); the site stays ready.`);
        row = await createWebsiteRepository(client).update(row.id, { status: 'live', live_at: now, hosting_renews_on: periodEnd }, now);
        await room.emit(client, row, 'website.live', now);
        return { created: false, body: view(row) };
      });
    },

    /** POST …/domain: the customer's own domain, and the CNAME that points it at the site. */
    async setDomain(owner: WebsiteOwner, buildId: string, text: string, idempotency?: IdempotencyClaim): Promise<Written<DnsRecord>> {
      const now = clock.now();
      const domain = normaliseDomain(text);
      if (!domain) throw new Refusal('invalid_domain');
      if (config.sitesDomain && (domain === config.sitesDomain || domain.endsWith(`.${config.sitesDomain}`))) throw new Refusal('invalid_domain', 'That name is the service\'s own; use a domain of the customer.');
      return writeTransaction(pool, idempotency, now, async (client) => {
        const row = await room.lockOwn(client, owner, buildId);
        if (['cancelled', 'failed', 'purged'].includes(row.status)) throw new Refusal('website_not_ready', `A ${row.status} site takes no domain.`);
        if (row.domain !== domain) {
          await client.query('SAVEPOINT website_domain');
          try {
            await createWebsiteRepository(client).update(row.id, { domain, domain_verified_at: null, domain_checked_at: null }, now);
            await client.query('RELEASE SAVEPOINT website_domain');
          } catch (err) {
            if (!isUniqueViolation(err, 'website_builds_domain')) throw err;
            await client.query('ROLLBACK TO SAVEPOINT website_domain');
            throw new Refusal('domain_taken');
          }
        }
        return { created: false, body: { object: 'dns_record' as const, type: 'CNAME' as const, name: domain, value: addresses.cnameTarget(row.slug) } };
      });
    },

    /**
     * Customers' domains checked against DNS, a few at a time: an unverified one is verified once
     * its CNAME points at the site; a verified one is looked at again every few hours and
     * unverified if DNS now says it points elsewhere (a lookup that fails changes nothing).
     * Returns how many changed.
     */
    async checkDomains(now: Date): Promise<number> {
      const due = await createWebsiteRepository(pool).domainsToCheck(new Date(now.getTime() - DOMAIN_RECHECK_MS), new Date(now.getTime() - DOMAIN_REVERIFY_MS), BATCH);
      let changed = 0;
      for (let i = 0; i < due.length; i += DOMAIN_CHECKS_AT_ONCE) {
        const outcomes = await Promise.all(due.slice(i, i + DOMAIN_CHECKS_AT_ONCE).map((site) => checkOneDomain(site, now)));
        changed += outcomes.filter(Boolean).length;
      }
      return changed;
    },
  };
}
