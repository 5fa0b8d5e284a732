import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';
/** calendars/calendar.ts CalendarKind (db/ imports no room above it). */
type CalendarKind = 'caldav' | 'google' | 'microsoft' | 'simulated';

export interface CalendarConnectionRow {
  customer_id: string;
  account_id: string;
  mode: Mode;
  kind: CalendarKind;
  /** SecretBox.seal(JSON.stringify(CalendarCredentials)). */
  credentials: Buffer;
  label: string;
  status: 'working' | 'failing';
  failure_code: string | null;
  failure_message: string | null;
  connected_at: Date;
  checked_at: Date;
  check_due_at: Date;
  sync_token: string | null;
  synced_at: Date | null;
  updated_at: Date;
  /** Checks in a row that found the calendar unreachable (047). */
  unavailable_checks: number;
}

/** One calendar connection per customer (migration 046). The actors seal and open the credentials. */
export function createCalendarConnectionRepository(db: Queryable) {
  return {
    async get(customerId: string): Promise<CalendarConnectionRow | null> {
      const { rows } = await db.query(`SELECT * FROM calendar_connections WHERE customer_id = $1`, [customerId]);
      return rows[0] ?? null;
    },

    /** The same, row-locked until the transaction ends (one booking or check at a time per customer calendar). */
    async lock(customerId: string): Promise<CalendarConnectionRow | null> {
      const { rows } = await db.query(`SELECT * FROM calendar_connections WHERE customer_id = $1 FOR UPDATE`, [customerId]);
      return rows[0] ?? null;
    },

    /** A new or replacing connection, working, checked now; the sync starts again from `syncToken`. */
    async upsert(c: Pick<CalendarConnectionRow, 'customer_id' | 'account_id' | 'mode' | 'kind' | 'credentials' | 'label' | 'sync_token'> & { now: Date; checkDueAt: Date }): Promise<CalendarConnectionRow> {
      const { rows } = await db.query(
        `INSERT INTO calendar_connections (customer_id, account_id, mode, kind, credentials, label, status, connected_at, checked_at, check_due_at, sync_token, synced_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'working', $7, $7, $8, $9, $7, $7)
         ON CONFLICT (customer_id) DO UPDATE SET kind = EXCLUDED.kind, credentials = EXCLUDED.credentials, label = EXCLUDED.label,
           status = 'working', failure_code = NULL, failure_message = NULL, connected_at = EXCLUDED.connected_at,
           checked_at = EXCLUDED.checked_at, check_due_at = EXCLUDED.check_due_at, sync_token = EXCLUDED.sync_token,
           synced_at = EXCLUDED.synced_at, updated_at = EXCLUDED.updated_at, unavailable_checks = 0
         RETURNING *`,
        [c.customer_id, c.account_id, c.mode, c.kind, c.credentials, c.label, c.now, c.checkDueAt, c.sync_token],
      );
      return rows[0];
    },

    async recordCheck(customerId: string, r: { ok: true; now: Date; checkDueAt: Date } | { ok: false; now: Date; checkDueAt: Date; code: string; message: string }): Promise<CalendarConnectionRow | null> {
      const { rows } = await db.query(
        `UPDATE calendar_connections SET status = $2, failure_code = $3, failure_message = $4, checked_at = $5, check_due_at = $6, updated_at = $5,
                unavailable_checks = 0
          WHERE customer_id = $1 RETURNING *`,
        [customerId, r.ok ? 'working' : 'failing', r.ok ? null : r.code, r.ok ? null : r.message, r.now, r.checkDueAt],
      );
      return rows[0] ?? null;
    },

    /** A check that found the calendar unreachable, below the count that fails it: status kept, the count goes up. */
    async recordUnavailable(customerId: string, now: Date, checkDueAt: Date): Promise<CalendarConnectionRow | null> {
      const { rows } = await db.query(
        `UPDATE calendar_connections SET unavailable_checks = unavailable_checks + 1, checked_at = $2, check_due_at = $3, updated_at = $2
          WHERE customer_id = $1 RETURNING *`,
        [customerId, now, checkDueAt],
      );
      return rows[0] ?? null;
    },

    async updateCredentials(customerId: string, credentials: Buffer, now: Date): Promise<void> {
      await db.query(`UPDATE calendar_connections SET credentials = $2, updated_at = $3 WHERE customer_id = $1`, [customerId, credentials, now]);
    },

    async recordSync(customerId: string, syncToken: string, now: Date): Promise<void> {
      await db.query(`UPDATE calendar_connections SET sync_token = $2, synced_at = $3, updated_at = $3 WHERE customer_id = $1`, [customerId, syncToken, now]);
    },

    /**
     * A sync the calendar refused or did not answer: tried again a minute later, not every round.
     * Refused credentials also bring the health check forward to now: the check decides (at once)
     * that the connection stopped working.
     */
    async recordSyncFailed(customerId: string, now: Date, checkNow: boolean): Promise<void> {
      await db.query(
        `UPDATE calendar_connections SET synced_at = $2, check_due_at = CASE WHEN $3 THEN LEAST(check_due_at, $2) ELSE check_due_at END
          WHERE customer_id = $1`,
        [customerId, now, checkNow],
      );
    },

    async remove(customerId: string): Promise<boolean> {
      const { rowCount } = await db.query(`DELETE FROM calendar_connections WHERE customer_id = $1`, [customerId]);
      return (rowCount ?? 0) > 0;
    },

    /** Connections whose check is due (oldest first). */
    async due(now: Date, limit: number): Promise<CalendarConnectionRow[]> {
      const { rows } = await db.query(`SELECT * FROM calendar_connections WHERE check_due_at <= $1 ORDER BY check_due_at LIMIT $2`, [now, limit]);
      return rows;
    },

    /** Working connections whose sync is older than `before` (oldest first). */
    async syncDue(before: Date, limit: number): Promise<CalendarConnectionRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM calendar_connections WHERE status = 'working' AND (synced_at IS NULL OR synced_at <= $1) ORDER BY synced_at NULLS FIRST LIMIT $2`,
        [before, limit],
      );
      return rows;
    },
  };
}
