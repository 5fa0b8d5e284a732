import type { Client } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/** How long a key replays its first response (spec: 24 hours). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyClaim {
  accountId: string;
  mode: Mode;
  key: string;
  requestHash: Buffer;
}

export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'mismatch' };

/**
 * Claims an Idempotency-Key inside the transaction that will carry out the request. The row
 * insert takes the key's unique-index lock, so a concurrent request with the same key waits here
 * until the first commits (then replays its response) or rolls back (then runs itself).
 */
export async function claimIdempotencyKey(client: Client, c: IdempotencyClaim, now: Date): Promise<ClaimResult> {
  // A record past its window is forgotten: the key may be used afresh.
  await client.query(
    `DELETE FROM idempotency_keys WHERE account_id = $1 AND mode = $2 AND key = $3 AND created_at <= $4`,
    [c.accountId, c.mode, c.key, new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)],
  );
  const inserted = await client.query(
    `INSERT INTO idempotency_keys (account_id, mode, key, request_hash, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING`,
    [c.accountId, c.mode, c.key, c.requestHash, now],
  );
  if (inserted.rowCount === 1) return { kind: 'claimed' };
  const { rows } = await client.query(
    `SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE account_id = $1 AND mode = $2 AND key = $3`,
    [c.accountId, c.mode, c.key],
  );
  const row = rows[0];
  if (!row || !Buffer.from(row.request_hash).equals(c.requestHash)) return { kind: 'mismatch' };
  return { kind: 'replay', status: row.response_status, body: row.response_body };
}

/** Stores the response of a claimed key, in the same transaction as the effect. */
export async function completeIdempotencyKey(client: Client, c: IdempotencyClaim, status: number, body: unknown): Promise<void> {
  await client.query(
    `UPDATE idempotency_keys SET response_status = $4, response_body = $5 WHERE account_id = $1 AND mode = $2 AND key = $3`,
    [c.accountId, c.mode, c.key, status, JSON.stringify(body)],
  );
}

/** Looks up a finished record without claiming (fast replay before any work is queued). */
export async function findIdempotencyRecord(
  db: Client | import('./pool.ts').Pool,
  c: IdempotencyClaim,
  now: Date,
): Promise<ClaimResult | null> {
  const { rows } = await db.query(
    `SELECT request_hash, response_status, response_body FROM idempotency_keys
      WHERE account_id = $1 AND mode = $2 AND key = $3 AND created_at > $4 AND response_status IS NOT NULL`,
    [c.accountId, c.mode, c.key, new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)],
  );
  const row = rows[0];
  if (!row) return null;
  if (!Buffer.from(row.request_hash).equals(c.requestHash)) return { kind: 'mismatch' };
  return { kind: 'replay', status: row.response_status, body: row.response_body };
}
