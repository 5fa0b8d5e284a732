import type { Queryable } from './pool.ts';

/**
 * The brands' domains (accounts.domain and its DNS state, migration 029): which account a
 * verified domain serves, who else holds a name, the domains due a DNS look, and the owners of
 * the customer-facing pages a brand's host may serve (onboarding links, chat sessions, website previews).
 */
export function createBrandDomainRepository(db: Queryable) {
  return {
    /** The account whose brand domain `host` is, verified; null for any other name. */
    async accountAtVerified(host: string): Promise<string | null> {
      const { rows } = await db.query(`SELECT id FROM accounts WHERE lower(domain) = lower($1) AND domain_status = 'verified'`, [host]);
      return rows[0]?.id ?? null;
    },

    /**
     * Who already holds `name` (other than account `accountId`): another account's brand domain
     * DNS has verified, or a customer's website domain DNS has verified (on a site still held).
     */
    async heldElsewhere(name: string, accountId: string): Promise<'brand' | 'website' | null> {
      const { rows } = await db.query(
        `SELECT 'brand' AS holder FROM accounts WHERE lower(domain) = lower($1) AND domain_status = 'verified' AND id <> $2
         UNION ALL
         SELECT 'website' FROM website_builds WHERE lower(domain) = lower($1) AND domain_verified_at IS NOT NULL AND status NOT IN ('cancelled', 'purged', 'failed')
         LIMIT 1`,
        [name, accountId],
      );
      return rows[0]?.holder ?? null;
    },

    /**
     * Domains due a DNS look: never looked at; pending and not looked at since `pendingBefore`;
     * verified or failed and not looked at since `settledBefore`.
     */
    async dueForCheck(pendingBefore: Date, settledBefore: Date, limit: number): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT id FROM accounts
          WHERE domain IS NOT NULL
            AND (domain_checked_at IS NULL
                 OR (domain_status = 'pending' AND domain_checked_at <= $1)
                 OR (domain_status IN ('verified', 'failed') AND domain_checked_at <= $2))
          ORDER BY domain_checked_at NULLS FIRST LIMIT $3`,
        [pendingBefore, settledBefore, limit],
      );
      return rows.map((r: { id: string }) => r.id);
    },

    /**
     * Every other account's claim of `name` fails: DNS has just shown the CNAME names `accountId`'s
     * target, so no other can be pointed (one verified before is so no longer). Returns their ids.
     */
    async failOtherClaims(accountId: string, name: string): Promise<string[]> {
      const { rows } = await db.query(
        `UPDATE accounts SET domain_status = 'failed' WHERE lower(domain) = lower($2) AND id <> $1 AND domain_status IN ('pending', 'verified') RETURNING id`,
        [accountId, name],
      );
      return rows.map((r: { id: string }) => r.id);
    },

    /** The account of the onboarding link a token's hash names, or null. */
    async onboardingLinkAccount(tokenHash: Buffer): Promise<string | null> {
      const { rows } = await db.query(`SELECT account_id FROM onboarding_links WHERE token_hash = $1`, [tokenHash]);
      return rows[0]?.account_id ?? null;
    },

    /** The account of the calendar link whose token hashes to `tokenHash` (issue 24), or null. */
    async calendarLinkAccount(tokenHash: Buffer): Promise<string | null> {
      const { rows } = await db.query(`SELECT account_id FROM calendar_links WHERE token_hash = $1`, [tokenHash]);
      return rows[0]?.account_id ?? null;
    },

    /** The account of website build `id` (a uuid), or null. */
    async websiteBuildAccount(id: string): Promise<string | null> {
      const { rows } = await db.query(`SELECT account_id FROM website_builds WHERE id = $1`, [id]);
      return rows[0]?.account_id ?? null;
    },

    /** The account of the chat session a token's hash names, or null. */
    async chatSessionAccount(tokenHash: Buffer): Promise<string | null> {
      const { rows } = await db.query(`SELECT account_id FROM chat_sessions WHERE token_hash = $1`, [tokenHash]);
      return rows[0]?.account_id ?? null;
    },
  };
}
