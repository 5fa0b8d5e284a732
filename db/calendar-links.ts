import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

export interface CalendarLinkRow {
  id: string;
  account_id: string;
  customer_id: string;
  mode: Mode;
  prefix: string;
  status: 'active' | 'replaced';
  expires_at: Date;
  emailed_to: string | null;
  oauth_nonce_hash: Buffer | null;
  oauth_kind: 'google' | 'microsoft' | null;
  replaced_at: Date | null;
  created_at: Date;
}

/** The links behind /calendar/{token} (migration 047); only the token's hash is kept. */
export function createCalendarLinkRepository(db: Queryable) {
  return {
    /** Marks every active link of the customer replaced (minting a new one revokes the old). */
    async replaceActive(customerId: string, now: Date): Promise<number> {
      const { rowCount } = await db.query(
        `UPDATE calendar_links SET status = 'replaced', replaced_at = $2, oauth_nonce_hash = NULL WHERE customer_id = $1 AND status = 'active'`,
        [customerId, now],
      );
      return rowCount ?? 0;
    },

    async insert(l: { accountId: string; customerId: string; mode: Mode; tokenHash: Buffer; prefix: string; expiresAt: Date; emailedTo: string | null; now: Date }): Promise<CalendarLinkRow> {
      const { rows } = await db.query(
        `INSERT INTO calendar_links (account_id, customer_id, mode, token_hash, prefix, expires_at, emailed_to, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [l.accountId, l.customerId, l.mode, l.tokenHash, l.prefix, l.expiresAt, l.emailedTo, l.now],
      );
      return rows[0];
    },

    async findByTokenHash(hash: Buffer): Promise<CalendarLinkRow | null> {
      const { rows } = await db.query(`SELECT * FROM calendar_links WHERE token_hash = $1`, [hash]);
      return rows[0] ?? null;
    },

    async get(id: string): Promise<CalendarLinkRow | null> {
      const { rows } = await db.query(`SELECT * FROM calendar_links WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },

    /** An OAuth start: the state nonce's hash, replacing any earlier start of this link. */
    async startOAuth(id: string, kind: 'google' | 'microsoft', nonceHash: Buffer): Promise<void> {
      await db.query(`UPDATE calendar_links SET oauth_nonce_hash = $2, oauth_kind = $3 WHERE id = $1`, [id, nonceHash, kind]);
    },

    /**
     * Uses an OAuth state once: clears the nonce when it matches an active, unexpired link and
     * answers the link; null when it was used, replaced, expired or never issued.
     */
    async takeOAuth(id: string, nonceHash: Buffer, now: Date): Promise<CalendarLinkRow | null> {
      const { rows } = await db.query(
        `UPDATE calendar_links SET oauth_nonce_hash = NULL
          WHERE id = $1 AND oauth_nonce_hash = $2 AND status = 'active' AND expires_at > $3 RETURNING *`,
        [id, nonceHash, now],
      );
      return rows[0] ?? null;
    },
  };
}
