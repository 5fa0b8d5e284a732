import type { Queryable } from '../pool.ts';

/**
 * Bonus credit (`bonus_grants`): granted with a top-up, spent before cash by the money change
 * (db/money/ledger.ts), written off at expiry. Reads are anyone's; the writes and the lock are
 * money/writer.ts's alone.
 */

export function grantReads(db: Queryable) {
  return {
    /** Accounts with grants past expiry and credit left (not locked: the write-off locks in money-row order). */
    async accountsWithExpiredBonus(now: Date, limit: number): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT DISTINCT account_id FROM bonus_grants WHERE remaining_cents > 0 AND expires_at <= $1 LIMIT $2`,
        [now, limit],
      );
      return rows.map((r) => r.account_id);
    },

    async earliestBonusExpiry(accountId: string, now: Date): Promise<Date | null> {
      const { rows } = await db.query(
        `SELECT min(expires_at) AS at FROM bonus_grants WHERE account_id = $1 AND remaining_cents > 0 AND expires_at > $2`,
        [accountId, now],
      );
      return rows[0]?.at ?? null;
    },
  };
}

export function grantWrites(db: Queryable) {
  return {
    /** A top-up's bonus credit; `paymentReference` names the card payment that earned it (a refund forfeits from it). */
    async insertGrant(accountId: string, cents: number, now: Date, expiresAt: Date, paymentReference: string | null = null): Promise<void> {
      await db.query(
        `INSERT INTO bonus_grants (account_id, granted_cents, remaining_cents, granted_at, expires_at, payment_reference) VALUES ($1, $2, $2, $3, $4, $5)`,
        [accountId, cents, now, expiresAt, paymentReference],
      );
    },

    /** The grant a payment earned, locked (the caller holds the account's money row). */
    async lockGrantOfPayment(accountId: string, paymentReference: string): Promise<{ id: string; granted_cents: number; remaining_cents: number; expires_at: Date } | null> {
      const { rows } = await db.query(
        `SELECT id, granted_cents::int AS granted_cents, remaining_cents::int AS remaining_cents, expires_at FROM bonus_grants
          WHERE account_id = $1 AND payment_reference = $2 ORDER BY granted_at LIMIT 1 FOR NO KEY UPDATE`,
        [accountId, paymentReference],
      );
      return rows[0] ?? null;
    },

    /** Takes `cents` of a grant's credit away (a refund's forfeit). */
    async takeFromGrant(id: string, cents: number): Promise<void> {
      await db.query(`UPDATE bonus_grants SET remaining_cents = remaining_cents - $2 WHERE id = $1`, [id, cents]);
    },

    /** Writes a grant off (its expiry). */
    async clearGrant(id: string): Promise<void> {
      await db.query(`UPDATE bonus_grants SET remaining_cents = 0 WHERE id = $1`, [id]);
    },

    /** One account's grants past expiry with credit left, locked (the caller holds its money row). */
    async lockExpiredGrantsOf(accountId: string, now: Date): Promise<{ id: string; account_id: string; remaining_cents: number }[]> {
      const { rows } = await db.query(
        `SELECT id, account_id, remaining_cents FROM bonus_grants WHERE account_id = $1 AND remaining_cents > 0 AND expires_at <= $2 FOR NO KEY UPDATE`,
        [accountId, now],
      );
      return rows;
    },
  };
}
