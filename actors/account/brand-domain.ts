import type { Deps } from '../../runtime/deps.ts';
import { withTransaction } from '../../db/pool.ts';
import { createAccountRepository } from '../../db/accounts.ts';
import { createBrandDomainRepository } from '../../db/brand-domains.ts';
import { hashToken } from '../../runtime/tokens.ts';
import { isUuid } from '../../db/customers.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { normaliseDomain } from '../websites/domain-names.ts';
import type { CnameCheck } from '../websites/room.ts';
import { afterLook, brandCnameTarget, brandDomainView, PENDING_RECHECK_MS, SETTLED_RECHECK_MS } from './brand-domain-rules.ts';

/** Domains one job run looks at, and how many lookups it has in flight at once. */
const BATCH = 100;
const CHECKS_AT_ONCE = 10;

/**
 * The brand domain beyond its PATCH (the account actor writes the claim): the DNS looks (on
 * set, on demand and by the check_brand_domains job), and what the HTTP layer asks of a
 * request's host: whose verified brand domain it is, whether a customer-facing token there is
 * that account's, and whether Caddy may get a certificate for it.
 */
export function createBrandDomains(deps: Pick<Deps, 'pool' | 'clock' | 'log' | 'config'>, cnameCheck: CnameCheck) {
  const { pool, clock, log, config } = deps;
  const repo = createBrandDomainRepository(pool);

  /** One DNS look at an account's domain, recorded; the account's domain state after it, and whether the look moved it. */
  async function lookAt(accountId: string, now: Date): Promise<{ view: ReturnType<typeof brandDomainView>; changed: boolean }> {
    const before = await createAccountRepository(pool).get(accountId);
    if (!before) throw new Refusal('account_not_found');
    const target = brandCnameTarget(before.slug, config.sitesDomain);
    if (!before.domain || !target) return { view: brandDomainView(before, config.sitesDomain), changed: false };
    const domain = before.domain;
    let points: boolean | null = null;
    try {
      points = await cnameCheck(domain, target);
    } catch (err) {
      log.warn({ err, account_id: accountId, domain }, 'a brand domain could not be looked up; checked again later');
    }
    const after = await withTransaction(pool, async (client) => {
      const accounts = createAccountRepository(client);
      const row = await accounts.lock(accountId);
      // The domain changed while DNS was asked: this look was of a name no longer claimed.
      if (!row || row.domain !== domain) return row;
      const fields = afterLook(row, points, now);
      if (fields.domain_status === 'verified' && row.domain_status !== 'verified') {
        const failed = await createBrandDomainRepository(client).failOtherClaims(accountId, domain);
        if (failed.length) log.info({ account_id: accountId, domain, failed }, "a brand domain verified by DNS; other accounts' claims of it failed");
      }
      const updated = await accounts.update(accountId, fields);
      if (updated && updated.domain_status !== row.domain_status) {
        log.info({ account_id: accountId, domain, from: row.domain_status, to: updated.domain_status }, 'a brand domain changed state');
      }
      return updated;
    });
    const row = after ?? before;
    return { view: brandDomainView(row, config.sitesDomain), changed: row.domain_status !== before.domain_status };
  }

  return {
    /** The account's domain state, without a look. */
    async status(accountId: string) {
      const row = await createAccountRepository(pool).get(accountId);
      if (!row) throw new Refusal('account_not_found');
      return brandDomainView(row, config.sitesDomain);
    },

    /** A DNS look now (on set and on demand): the state after it. */
    async check(accountId: string) {
      return (await lookAt(accountId, clock.now())).view;
    },

    /** The job: domains due a look (pending every 10 minutes, the others every 6 hours), a few at a time; how many changed state. */
    async checkDue(now: Date): Promise<number> {
      // Without a sites domain there is no target to point at: nothing can be verified.
      if (!config.sitesDomain) return 0;
      const due = await repo.dueForCheck(new Date(now.getTime() - PENDING_RECHECK_MS), new Date(now.getTime() - SETTLED_RECHECK_MS), BATCH);
      let changed = 0;
      for (let i = 0; i < due.length; i += CHECKS_AT_ONCE) {
        const looks = await Promise.all(due.slice(i, i + CHECKS_AT_ONCE).map((id) => lookAt(id, now)));
        changed += looks.filter((l) => l.changed).length;
      }
      return changed;
    },

    /** The account whose verified brand domain `host` is (lower-cased, without port), or null. */
    async accountAt(host: string): Promise<string | null> {
      const name = normaliseDomain(host);
      return name ? repo.accountAtVerified(name) : null;
    },

    /** Caddy's on-demand TLS asks: yes for a verified brand domain. */
    async allowsCertificate(host: string): Promise<boolean> {
      return (await this.accountAt(host)) !== null;
    },

    /** The account of the onboarding link behind `token`, or null. */
    onboardingAccount(token: string): Promise<string | null> {
      return repo.onboardingLinkAccount(hashToken(token));
    },

    /** The account of the calendar link a calendar page address names, or null. */
    calendarAccount(token: string): Promise<string | null> {
      return repo.calendarLinkAccount(hashToken(token));
    },

    /** The account of the website build a preview address names, or null. */
    async previewAccount(buildId: string): Promise<string | null> {
      return isUuid(buildId) ? repo.websiteBuildAccount(buildId) : null;
    },

    /** The account of the chat session an `Authorization: Bearer <token>` names, or null. */
    async chatAccount(authorization: string | undefined): Promise<string | null> {
      const token = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : '';
      return token ? repo.chatSessionAccount(hashToken(token)) : null;
    },
  };
}

export type BrandDomains = ReturnType<typeof createBrandDomains>;
