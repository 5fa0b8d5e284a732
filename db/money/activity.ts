import type { Queryable } from '../pool.ts';
import type { Mode } from '../../runtime/types.ts';

/** The activity log (`activity_log`): refused call starts and released holds. Written by money/writer.ts alone. */

export function activityReads(db: Queryable) {
  return {
    /** Newest first; `mode` narrows it to one mode, `beforeSeq` starts after a cursor. */
    async listActivity(accountId: string, limit: number, opts: { mode?: Mode; beforeSeq?: number | null } = {}) {
      const { rows } = await db.query(
        `SELECT * FROM activity_log WHERE account_id = $1 AND ($3::text IS NULL OR mode = $3) AND ($4::bigint IS NULL OR seq < $4)
          ORDER BY seq DESC LIMIT $2`,
        [accountId, limit, opts.mode ?? null, opts.beforeSeq ?? null],
      );
      return rows as { id: string; mode: Mode; customer_id: string | null; kind: string; reason: string | null; reference: string | null; detail: unknown; created_at: Date }[];
    },
  };
}

export function activityWrites(db: Queryable) {
  return {
    async logActivity(a: { accountId: string; mode: Mode; customerId: string | null; kind: string; reason: string | null; reference: string | null; detail?: unknown; now: Date }) {
      await db.query(
        `INSERT INTO activity_log (account_id, mode, customer_id, kind, reason, reference, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [a.accountId, a.mode, a.customerId, a.kind, a.reason, a.reference, a.detail === undefined ? null : JSON.stringify(a.detail), a.now],
      );
    },
  };
}
