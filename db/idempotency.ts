import type { Client } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/** How long a key replays its first response (spec: 24 hours). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Whether a finished record's write created its resource. A record finished by a process of the
 * previous version (during a rolling restart) has only its status: 201 and 202 count as created,
 * as migration 012 carried them over.
 */
const RESPONSE_CREATED = `COALESCE(response_created, response_status IN (201, 202))`;

export interface IdempotencyClaim {
  accountId: string;
  mode: Mode;
  key: string;
  requestHash: Buffer;
}

export type ClaimResult =
  | { kind: 'claimed' }
  /** A finished record: whether the first request created its resource, and its body. */
  | { kind: 'replay'; created: boolean; body: unknown }
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
    `SELECT request_hash, ${RESPONSE_CREATED} AS created, response_body FROM idempotency_keys WHERE account_id = $1 AND mode = $2 AND key = $3`,
    [c.accountId, c.mode, c.key],
  );
  const row = rows[0];
  if (!row || !Buffer.from(row.request_hash).equals(c.requestHash)) return { kind: 'mismatch' };
  return { kind: 'replay', created: row.created, body: row.response_body };
}

/** Stores the reply of a claimed key (what the write did and its body), in the same transaction as the effect. */
export async function completeIdempotencyKey(client: Client, c: IdempotencyClaim, created: boolean, body: unknown): Promise<void> {
  await client.query(
    `UPDATE idempotency_keys SET response_created = $4, response_body = $5 WHERE account_id = $1 AND mode = $2 AND key = $3`,
    [c.accountId, c.mode, c.key, created, JSON.stringify(body)],
  );
}

/** Looks up a finished record without claiming (fast replay before any work is queued). */
export async function findIdempotencyRecord(
  db: Client | import('./pool.ts').Pool,
  c: IdempotencyClaim,
  now: Date,
): Promise<ClaimResult | null> {
  const { rows } = await db.query(
    `SELECT request_hash, ${RESPONSE_CREATED} AS created, response_body FROM idempotency_keys
      WHERE account_id = $1 AND mode = $2 AND key = $3 AND created_at > $4 AND response_body IS NOT NULL`,
    [c.accountId, c.mode, c.key, new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)],
  );
  const row = rows[0];
  if (!row) return null;
  if (!Buffer.from(row.request_hash).equals(c.requestHash)) return { kind: 'mismatch' };
  return { kind: 'replay', created: row.created, body: row.response_body };
}
