import { withTransaction, type Client, type Pool } from '../../db/pool.ts';
import { claimIdempotencyKey, completeIdempotencyKey, type IdempotencyClaim } from '../../db/idempotency.ts';
import { Refusal } from '../../runtime/refusal.ts';

/**
 * The reply of a write: what it did and the resource as it now stands. The route that asked
 * turns `created` into its status (http/write-status.ts); the domain names no status.
 */
export interface Written<T = unknown> {
  /** True when the write made a new resource; false when it found one that already existed, or changed one. */
  created: boolean;
  body: T;
  /** True when this is the stored reply of a repeated Idempotency-Key, replayed. */
  replayed?: boolean;
}

/**
 * Runs a write in one transaction together with its Idempotency-Key record (when the request
 * carried one): the effect and the record commit together or not at all, so a crash between
 * commit and response cannot run the request twice, and a refused request stores nothing.
 */
export async function writeTransaction<T>(
  pool: Pool,
  idempotency: IdempotencyClaim | undefined,
  now: Date,
  fn: (client: Client) => Promise<Written<T>>,
): Promise<Written<T>> {
  return withTransaction(pool, async (client) => {
    if (idempotency) {
      const claim = await claimIdempotencyKey(client, idempotency, now);
      if (claim.kind === 'mismatch') throw new Refusal('idempotency_key_reused');
      if (claim.kind === 'replay') return { created: claim.created, body: claim.body as T, replayed: true };
    }
    const written = await fn(client);
    if (idempotency) await completeIdempotencyKey(client, idempotency, written.created, written.body);
    return written;
  });
}
