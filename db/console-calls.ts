import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';
import type { CallRow } from './calls.ts';
import type { AppointmentRow } from './appointments.ts';
import type { HoldRow } from './money/holds.ts';

/** Which calls the console's list asks for; `from`/`to` bound when the request was made. */
export interface ConsoleCallFilter {
  accountId: string;
  mode: Mode;
  customerId: string | null;
  status: string | null;
  outcome: string | null;
  from: Date | null;
  to: Date | null;
  limit: number;
  beforeSeq: number | null;
}

/** A refused start of a call, as the activity log has it. */
export interface RefusedStartRow {
  reason: string | null;
  detail: { hold_cents?: number } | null;
  created_at: Date;
}

/**
 * The console's reads of calls (issue 21): the list with its filters, appointments with their
 * customer, and what a call's compliance trail adds to its record (refused starts, the hold).
 */
export function createConsoleCallReads(db: Queryable) {
  return {
    /**
     * Every request of the account and mode (queued ones too), newest first. The account's rows
     * are walked on calls_account (account_id, mode, seq DESC); a customer's on calls_customer.
     */
    async listCalls(f: ConsoleCallFilter): Promise<CallRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM calls WHERE account_id = $1 AND mode = $2 AND ($3::uuid IS NULL OR customer_id = $3)
            AND ($4::text IS NULL OR status = $4) AND ($5::text IS NULL OR outcome = $5)
            AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)
            AND ($9::bigint IS NULL OR seq < $9)
          ORDER BY seq DESC LIMIT $8`,
        [f.accountId, f.mode, f.customerId, f.status, f.outcome, f.from, f.to, f.limit, f.beforeSeq],
      );
      return rows;
    },

    /** Appointments newest first with their customer's name and time zone; `from`/`to` bound the meeting's start. */
    async listAppointments(f: { accountId: string; mode: Mode; customerId: string | null; from: Date | null; to: Date | null; limit: number; beforeSeq: number | null }) {
      const { rows } = await db.query(
        `SELECT a.*, c.name AS customer_name, c.timezone AS customer_timezone
           FROM appointments a JOIN customers c ON c.id = a.customer_id
          WHERE a.account_id = $1 AND a.mode = $2 AND ($3::uuid IS NULL OR a.customer_id = $3)
            AND ($4::timestamptz IS NULL OR a.start_at >= $4) AND ($5::timestamptz IS NULL OR a.start_at < $5)
            AND ($7::bigint IS NULL OR a.seq < $7)
          ORDER BY a.seq DESC LIMIT $6`,
        [f.accountId, f.mode, f.customerId, f.from, f.to, f.limit, f.beforeSeq],
      );
      return rows as (AppointmentRow & { customer_name: string; customer_timezone: string })[];
    },

    /** The refused starts of the account's call `callId`, oldest first. */
    async refusedStarts(accountId: string, callId: string): Promise<RefusedStartRow[]> {
      const { rows } = await db.query(
        `SELECT reason, detail, created_at FROM activity_log WHERE account_id = $1 AND reference = $2 AND kind = 'call_start_refused' ORDER BY seq`,
        [accountId, callId],
      );
      return rows;
    },

    /** The hold of the account's call `callId`, if its start took one. */
    async holdOf(accountId: string, callId: string): Promise<HoldRow | null> {
      const { rows } = await db.query(`SELECT * FROM holds WHERE account_id = $1 AND reference = $2`, [accountId, callId]);
      return rows[0] ?? null;
    },
  };
}
