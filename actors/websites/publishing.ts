import crypto from 'node:crypto';
import { Refusal } from '../../runtime/refusal.ts';
import { withTransaction } from '../../db/pool.ts';
import { createWebsiteRepository } from '../../db/websites.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { dayOf } from '../../money/rules/renewal.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { domainRefusal, normaliseDomain } from './domain-names.ts';
import { BATCH, type Room, type WebsiteOwner } from './room.ts';
import { previewOpen, PREVIEW_DAYS, type WebsiteView } from './views.ts';

/**
 * Reviewing a site, taking it live and putting it on the customer's own domain: the preview's
 * re-issue, publishing (the first month of hosting charged), the domain's CNAME record, and the
 * DNS checks that verify a claim (and drop the others) or let it lapse.
 */

/** An unverified domain is checked again after this long. */
export const DOMAIN_RECHECK_MS = 10 * 60_000;
/** A verified domain is looked at again after this long (its CNAME may have been taken away). */
export const DOMAIN_REVERIFY_MS = 6 * 60 * 60_000;
/** A claim DNS has not verified lapses this long after it was made (or lost its verification). */
export const DOMAIN_CLAIM_LAPSE_MS = 7 * 86_400_000;
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
      // DNS names this site's own target: it holds the name, and every other claim of it is dropped.
      if (change && verifiedNow) {
        const dropped = await repo.dropOtherClaims(row.id, site.domain, now);
        if (dropped.length) log.info({ website_id: row.id, domain: site.domain, dropped }, 'a domain verified by DNS; other sites\' claims of it were dropped');
      }
      await repo.update(
        row.id,
        // A claim that loses its verification has 7 days again to be pointed back before it lapses.
        { domain_checked_at: now, ...(change ? { domain_verified_at: verifiedNow ? now : null, ...(verifiedNow ? {} : { domain_claimed_at: now }) } : {}) },
        now,
      );
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
        if (row.status === 'live' || row.status === 'hosting_due') return { created: false, body: await view(client, row) };
        if (row.status !== 'ready') throw new Refusal('website_not_ready', row.status === 'building' ? 'The site is still being built; publish it once it is ready.' : `A ${row.status} site cannot go live.`);
        const today = dayOf(now);
        row = await createWebsiteRepository(client).update(row.id, { anchor_day: Number(today.slice(8, 10)) }, now);
        const { paid, periodEnd } = await room.chargeHosting(client, row, today, now);
        if (!paid) throw new Refusal('insufficient_balance', `The balance cannot cover the first month of hosting (${row.hosting_cents_per_month} cents); the site stays ready.`);
        // A live-mode site's preview ends here (its address is the site); a test site's is its only address.
        row = await createWebsiteRepository(client).update(
          row.id,
          { status: 'live', live_at: now, hosting_renews_on: periodEnd, ...(row.mode === 'live' ? { preview_expires_at: now } : {}) },
          now,
        );
        await room.emit(client, row, 'website.live', now);
        return { created: false, body: await view(client, row) };
      });
    },

    /**
     * POST …/domain: the customer's own domain, and the CNAME that points it at the site. A claim
     * holds nothing until DNS verifies it (then other claims of the name are dropped); a site
     * with a domain changes it only when asked to replace it.
     */
    async setDomain(owner: WebsiteOwner, buildId: string, input: { domain: string; replace?: boolean }, idempotency?: IdempotencyClaim): Promise<Written<DnsRecord>> {
      const now = clock.now();
      const domain = normaliseDomain(input.domain);
      if (!domain) throw new Refusal('invalid_domain');
      if (config.sitesDomain && (domain === config.sitesDomain || domain.endsWith(`.${config.sitesDomain}`))) throw new Refusal('invalid_domain', 'That name is the service\'s own; use a domain of the customer.');
      const refused = domainRefusal(domain, owner.mode);
      if (refused) throw new Refusal(refused.code, refused.message);
      return writeTransaction(pool, idempotency, now, async (client) => {
        const row = await room.lockOwn(client, owner, buildId);
        if (['cancelled', 'failed', 'purged'].includes(row.status)) throw new Refusal('website_not_ready', `A ${row.status} site takes no domain.`);
        // Bad input is answered first (400, 404, 409); a well-formed request here cannot be served.
        if (!config.sitesDomain) throw new Refusal('sites_not_configured');
        if (row.domain !== domain) {
          if (row.domain && input.replace !== true) {
            throw new Refusal('domain_already_set', `This site already has the domain ${row.domain}; send "replace": true to put ${domain} in its place.`);
          }
          await createWebsiteRepository(client).update(row.id, { domain, domain_verified_at: null, domain_checked_at: null, domain_claimed_at: now }, now);
          if (row.domain) log.info({ website_id: row.id, from: row.domain, to: domain }, 'a site\'s domain was replaced');
        }
        return { created: false, body: { object: 'dns_record' as const, type: 'CNAME' as const, name: domain, value: addresses.cnameTarget(row.slug) } };
      });
    },

    /**
     * POST …/preview: a new preview address for a built site whose preview can be open (before
     * publishing; a test site also once live), open 30 days from now; the old address stops.
     */
    async reissuePreview(owner: WebsiteOwner, buildId: string, idempotency?: IdempotencyClaim): Promise<Written<WebsiteView>> {
      const now = clock.now();
      return writeTransaction(pool, idempotency, now, async (client) => {
        const row = await room.lockOwn(client, owner, buildId);
        const reissued = { ...row, preview_expires_at: new Date(now.getTime() + PREVIEW_DAYS * 86_400_000) };
        if (!previewOpen(reissued, now)) {
          throw new Refusal('website_not_ready', row.built_at === null ? 'The site has no page yet; its preview comes with website.ready.' : `A ${row.status} site has no preview.`);
        }
        const updated = await createWebsiteRepository(client).update(row.id, { preview_nonce: crypto.randomBytes(16).toString('hex'), preview_expires_at: reissued.preview_expires_at }, now);
        log.info({ website_id: row.id }, 'a website preview was re-issued; the old address no longer answers');
        return { created: false, body: await view(client, updated) };
      });
    },

    /**
     * Customers' domains checked against DNS, a few at a time: an unverified one is verified once
     * its CNAME points at the site; a verified one is looked at again every few hours and
     * unverified if DNS now says it points elsewhere (a lookup that fails changes nothing).
     * Returns how many changed.
     */
    async checkDomains(now: Date): Promise<number> {
      // Claims DNS never verified lapse after 7 days: the name is no longer looked up for them.
      const lapsed = await withTransaction(pool, (client) => createWebsiteRepository(client).lapseUnverifiedClaims(new Date(now.getTime() - DOMAIN_CLAIM_LAPSE_MS), now));
      for (const l of lapsed) log.info({ website_id: l.id, domain: l.domain }, 'an unverified domain claim lapsed after 7 days');
      const due = await createWebsiteRepository(pool).domainsToCheck(new Date(now.getTime() - DOMAIN_RECHECK_MS), new Date(now.getTime() - DOMAIN_REVERIFY_MS), BATCH);
      let changed = 0;
      for (let i = 0; i < due.length; i += DOMAIN_CHECKS_AT_ONCE) {
        const outcomes = await Promise.all(due.slice(i, i + DOMAIN_CHECKS_AT_ONCE).map((site) => checkOneDomain(site, now)));
        changed += outcomes.filter(Boolean).length;
      }
      return changed + lapsed.length;
    },
  };
}
