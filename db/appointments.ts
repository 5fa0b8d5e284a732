import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

export interface AppointmentRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  customer_id: string;
  call_id: string;
  start_at: Date;
  end_at: Date;
  timezone: string;
  status: 'booked' | 'cancelled';
  attendee_name: string | null;
  notes: string | null;
  created_at: Date;
}

export function createAppointmentRepository(db: Queryable) {
  return {
    async insert(a: Omit<AppointmentRow, 'id' | 'seq' | 'status'>): Promise<AppointmentRow> {
      const { rows } = await db.query(
        `INSERT INTO appointments (account_id, mode, customer_id, call_id, start_at, end_at, timezone, attendee_name, notes, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
        [a.account_id, a.mode, a.customer_id, a.call_id, a.start_at, a.end_at, a.timezone, a.attendee_name, a.notes, a.created_at],
      );
      return rows[0];
    },

    async get(id: string): Promise<AppointmentRow | null> {
      const { rows } = await db.query(`SELECT * FROM appointments WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },

    async findForAccount(accountId: string, mode: Mode, id: string): Promise<AppointmentRow | null> {
      if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
      const { rows } = await db.query(`SELECT * FROM appointments WHERE id = $1 AND account_id = $2 AND mode = $3`, [id, accountId, mode]);
      return rows[0] ?? null;
    },

    /** Newest first; `from`/`to` bound the meeting's start (a billing period). */
    async list(f: { accountId: string; mode: Mode; customerId: string | null; status: string | null; from: Date | null; to: Date | null; limit: number; beforeSeq: number | null }) {
      const { rows } = await db.query(
        `SELECT * FROM appointments WHERE account_id = $1 AND mode = $2 AND ($3::uuid IS NULL OR customer_id = $3)
            AND ($4::text IS NULL OR status = $4) AND ($5::timestamptz IS NULL OR start_at >= $5) AND ($6::timestamptz IS NULL OR start_at < $6)
            AND ($8::bigint IS NULL OR seq < $8)
          ORDER BY seq DESC LIMIT $7`,
        [f.accountId, f.mode, f.customerId, f.status, f.from, f.to, f.limit, f.beforeSeq],
      );
      return rows as AppointmentRow[];
    },
  };
}
