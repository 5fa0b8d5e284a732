import { withTransaction, type Client, type Pool } from '../../db/pool.ts';
import { claimIdempotencyKey, completeIdempotencyKey, type IdempotencyClaim } from '../../db/idempotency.ts';
import { ApiError } from '../../http/errors.ts';

/** The reply of a write: the HTTP status and body it answers with. */
export interface Outcome<T = unknown> {
  status: number;
  body: T;
  /** True when the body is a stored response replayed for a repeated Idempotency-Key. */
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
  fn: (client: Client) => Promise<Outcome<T>>,
): Promise<Outcome<T>> {
  return withTransaction(pool, async (client) => {
    if (idempotency) {
      const claim = await claimIdempotencyKey(client, idempotency, now);
      if (claim.kind === 'mismatch') throw new ApiError('idempotency_key_reused');
      if (claim.kind === 'replay') return { status: claim.status, body: claim.body as T, replayed: true };
    }
    const outcome = await fn(client);
    if (idempotency) await completeIdempotencyKey(client, idempotency, outcome.status, outcome.body);
    return outcome;
  });
}
