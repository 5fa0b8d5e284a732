import type { Queryable } from './pool.ts';

export interface DncRow {
  account_id: string;
  e164: string;
  source: 'api' | 'callee_request' | 'console';
  reason: string | null;
  call_id: string | null;
  created_at: Date;
  seq: number;
}

export function createDncRepository(db: Queryable) {
  return {
    /** Adds a number (kept as it was if already listed). */
    async add(d: { accountId: string; e164: string; source: DncRow['source']; reason: string | null; callId: string | null; now: Date }): Promise<{ row: DncRow; created: boolean }> {
      const { rows } = await db.query(
        `INSERT INTO dnc_numbers (account_id, e164, source, reason, call_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING RETURNING *`,
        [d.accountId, d.e164, d.source, d.reason, d.callId, d.now],
      );
      if (rows[0]) return { row: rows[0], created: true };
      const existing = await db.query(`SELECT * FROM dnc_numbers WHERE account_id = $1 AND e164 = $2`, [d.accountId, d.e164]);
      return { row: existing.rows[0], created: false };
    },

    async get(accountId: string, e164: string): Promise<DncRow | null> {
      const { rows } = await db.query(`SELECT * FROM dnc_numbers WHERE account_id = $1 AND e164 = $2`, [accountId, e164]);
      return rows[0] ?? null;
    },

    /**
     * Removes a number unless a callee asked for it, in one statement: a read then a delete could
     * remove a callee's request that replaced the row in between.
     */
    async removeUnlessCalleeRequest(accountId: string, e164: string): Promise<boolean> {
      const { rowCount } = await db.query(`DELETE FROM dnc_numbers WHERE account_id = $1 AND e164 = $2 AND source <> 'callee_request'`, [accountId, e164]);
      return (rowCount ?? 0) > 0;
    },

    async list(accountId: string, limit: number, beforeSeq: number | null): Promise<DncRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM dnc_numbers WHERE account_id = $1 AND ($3::bigint IS NULL OR seq < $3) ORDER BY seq DESC LIMIT $2`,
        [accountId, limit, beforeSeq],
      );
      return rows;
    },

    /** Imports registry numbers; returns how many were new. */
    async importRegistry(numbers: string[], country: string, source: string, now: Date): Promise<number> {
      const { rowCount } = await db.query(
        `INSERT INTO dnc_registry (e164, country, source, imported_at) SELECT unnest($1::text[]), $2, $3, $4 ON CONFLICT DO NOTHING`,
        [numbers, country, source, now],
      );
      return rowCount ?? 0;
    },
  };
}
