import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';
import { randomHex } from '../runtime/tokens.ts';
import { realClock } from '../runtime/clock.ts';
import { enqueueEmail } from './email-outbox.ts';
import type { EmailKind } from '../runtime/types.ts';

/**
 * Events the account's billing people are also emailed about (issue 22), live mode only: test
 * mode has no money, so its balance, rent and hosting never run short of anything real. The
 * email is the event's data and id, written with the event (same transaction, deduped on it).
 */
export const EMAILED_EVENTS: ReadonlyMap<string, EmailKind> = new Map([
  ['balance.low', 'balance_low'],
  ['number.payment_due', 'number_payment_due'],
  ['website.hosting_due', 'website_hosting_due'],
]);

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
  e: {
    accountId: string;
    mode: Mode;
    type: string;
    data: unknown;
    now: Date;
    /** A test event for one endpoint (the console's "send a test event"): delivered there only, whatever types it chose. */
    onlyEndpointId?: string;
  },
): Promise<EventRow> {
  const { rows } = await db.query(
    `INSERT INTO events (id, account_id, mode, type, data, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [`evt_${randomHex(12)}`, e.accountId, e.mode, e.type, JSON.stringify(e.data), e.now],
  );
  // Fan-out in the same transaction: one delivery per matching endpoint of the event's mode, due
  // at once on real time (the sender's clock), whatever clock dated the event.
  const fanned = await db.query(
    `INSERT INTO webhook_deliveries (event_id, endpoint_id, account_id, next_attempt_at, created_at, updated_at)
     SELECT $1, w.id, w.account_id, $5, $5, $5 FROM webhook_endpoints w
      WHERE w.account_id = $2 AND w.mode = $3 AND w.deleted_at IS NULL
        AND CASE WHEN $6::uuid IS NULL THEN w.enabled AND (cardinality(w.event_types) = 0 OR $4 = ANY (w.event_types)) ELSE w.id = $6 END`,
    [rows[0].id, e.accountId, e.mode, e.type, realClock.now(), e.onlyEndpointId ?? null],
  );
  // Wakes the senders after commit (a notification is delivered only if the transaction commits).
  if ((fanned.rowCount ?? 0) > 0) await db.query(`SELECT pg_notify('switchboard_changes', 'delivery:' || $1)`, [rows[0].id]);
  // The billing people's email of the same fact (a test event for one endpoint is not a fact).
  const kind = EMAILED_EVENTS.get(e.type);
  if (kind && e.mode === 'live' && !e.onlyEndpointId) {
    await enqueueEmail(db, {
      accountId: e.accountId,
      mode: e.mode,
      kind,
      audience: 'billing',
      dedupeKey: `event:${rows[0].id}`,
      data: { ...(e.data as Record<string, unknown>), event_id: rows[0].id },
      now: e.now,
    });
  }
  return rows[0];
}

export function createEventRepository(db: Queryable) {
  return {
    async get(accountId: string, mode: Mode, id: string): Promise<EventRow | null> {
      const { rows } = await db.query(`SELECT * FROM events WHERE id = $1 AND account_id = $2 AND mode = $3`, [id, accountId, mode]);
      return rows[0] ?? null;
    },

    /** A page of events: newest first (desc) or oldest first after a cursor (asc, for catching up). */
    async list(f: { accountId: string; mode: Mode; type: string | null; order: 'asc' | 'desc'; afterSeq: number | null; limit: number }): Promise<EventRow[]> {
      const cmp = f.order === 'asc' ? '>' : '<';
      const { rows } = await db.query(
        `SELECT * FROM events WHERE account_id = $1 AND mode = $2 AND ($3::text IS NULL OR type = $3)
            AND ($4::bigint IS NULL OR seq ${cmp} $4) ORDER BY seq ${f.order === 'asc' ? 'ASC' : 'DESC'} LIMIT $5`,
        [f.accountId, f.mode, f.type, f.afterSeq, f.limit],
      );
      return rows;
    },

    async listForAccount(accountId: string, type?: string): Promise<EventRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM events WHERE account_id = $1 AND ($2::text IS NULL OR type = $2) ORDER BY seq`,
        [accountId, type ?? null],
      );
      return rows;
    },
  };
}
