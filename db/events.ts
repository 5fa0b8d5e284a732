import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';
import { randomHex } from '../runtime/tokens.ts';

export interface EventRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  type: string;
  data: unknown;
  created_at: Date;
}

/**
 * Records an event in the caller's transaction (the outbox): it commits or rolls back with the
 * fact it describes, so no event ever describes something that did not happen.
 */
export async function recordEvent(
  db: Queryable,
  e: { accountId: string; mode: Mode; type: string; data: unknown; now: Date },
): Promise<EventRow> {
  const { rows } = await db.query(
    `INSERT INTO events (id, account_id, mode, type, data, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [`evt_${randomHex(12)}`, e.accountId, e.mode, e.type, JSON.stringify(e.data), e.now],
  );
  return rows[0];
}

export function createEventRepository(db: Queryable) {
  return {
    async listForAccount(accountId: string, type?: string): Promise<EventRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM events WHERE account_id = $1 AND ($2::text IS NULL OR type = $2) ORDER BY seq`,
        [accountId, type ?? null],
      );
      return rows;
    },
  };
}
