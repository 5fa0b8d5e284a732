import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

export interface OnboardingLinkRow {
  id: string;
  seq: number;
  account_id: string;
  customer_id: string;
  mode: Mode;
  prefix: string;
  status: 'active' | 'completed' | 'replaced';
  expires_at: Date;
  completed_at: Date | null;
  accepted_by: string | null;
  replaced_at: Date | null;
  /** The address the link was emailed to on the reseller's behalf (036), or null. */
  emailed_to: string | null;
  created_at: Date;
}

export function createOnboardingLinkRepository(db: Queryable) {
  return {
    /** Marks every active link of the customer replaced (minting a new one revokes the old). */
    async replaceActive(customerId: string, now: Date): Promise<number> {
      const { rowCount } = await db.query(
        `UPDATE onboarding_links SET status = 'replaced', replaced_at = $2 WHERE customer_id = $1 AND status = 'active'`,
        [customerId, now],
      );
      return rowCount ?? 0;
    },

    async insert(l: { accountId: string; customerId: string; mode: Mode; tokenHash: Buffer; prefix: string; expiresAt: Date; emailedTo?: string | null; now: Date }) {
      const { rows } = await db.query(
        `INSERT INTO onboarding_links (account_id, customer_id, mode, token_hash, prefix, expires_at, created_at, emailed_to)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [l.accountId, l.customerId, l.mode, l.tokenHash, l.prefix, l.expiresAt, l.now, l.emailedTo ?? null],
      );
      return rows[0] as OnboardingLinkRow;
    },

    async listForCustomer(customerId: string, limit: number, beforeSeq: number | null): Promise<OnboardingLinkRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM onboarding_links WHERE customer_id = $1 AND ($3::bigint IS NULL OR seq < $3) ORDER BY seq DESC LIMIT $2`,
        [customerId, limit, beforeSeq],
      );
      return rows;
    },

    async findByTokenHash(hash: Buffer): Promise<OnboardingLinkRow | null> {
      const { rows } = await db.query(`SELECT * FROM onboarding_links WHERE token_hash = $1`, [hash]);
      return rows[0] ?? null;
    },

    /** Completes an active, unexpired link; null when it was not (already used, replaced or expired). */
    async complete(id: string, acceptedBy: string, now: Date): Promise<OnboardingLinkRow | null> {
      const { rows } = await db.query(
        `UPDATE onboarding_links SET status = 'completed', completed_at = $3, accepted_by = $2
          WHERE id = $1 AND status = 'active' AND expires_at > $3 RETURNING *`,
        [id, acceptedBy, now],
      );
      return rows[0] ?? null;
    },
  };
}
