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
  /** Issue 24 (migration 046): the calendar the meeting was written to (null: no calendar connected), its event there and that event's version. */
  calendar_kind: string | null;
  calendar_event_id: string | null;
  calendar_etag: string | null;
  updated_at: Date | null;
  cancelled_at: Date | null;
}

/** What an insert takes: the calendar fields and the id are optional (a booking without a calendar has none). */
export type AppointmentInsert = Omit<AppointmentRow, 'id' | 'seq' | 'status' | 'calendar_kind' | 'calendar_event_id' | 'calendar_etag' | 'updated_at' | 'cancelled_at'> &
  Partial<Pick<AppointmentRow, 'id' | 'calendar_kind' | 'calendar_event_id' | 'calendar_etag'>>;

export function createAppointmentRepository(db: Queryable) {
  return {
    async insert(a: AppointmentInsert): Promise<AppointmentRow> {
      const { rows } = await db.query(
        `INSERT INTO appointments (id, account_id, mode, customer_id, call_id, start_at, end_at, timezone, attendee_name, notes, created_at,
                                   calendar_kind, calendar_event_id, calendar_etag, updated_at)
         VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $11) RETURNING *`,
        [a.id ?? null, a.account_id, a.mode, a.customer_id, a.call_id, a.start_at, a.end_at, a.timezone, a.attendee_name, a.notes, a.created_at, a.calendar_kind ?? null, a.calendar_event_id ?? null, a.calendar_etag ?? null],
      );
      return rows[0];
    },

    /**
     * Takes the customer's booking lock until the transaction ends, for a customer without a
     * calendar (with one, its calendar_connections row is the lock): one booking at a time per
     * customer, in every process.
     */
    async lockCustomerBookings(customerId: string): Promise<void> {
      await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('booking:' || $1::text, 0))`, [customerId]);
    },

    /** The customer's booked meetings overlapping [from, to). */
    async bookedBetween(customerId: string, from: Date, to: Date): Promise<AppointmentRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM appointments WHERE customer_id = $1 AND status = 'booked' AND start_at < $3 AND end_at > $2 ORDER BY start_at`,
        [customerId, from, to],
      );
      return rows;
    },

    /** The appointment of a calendar event, locked until the transaction ends; null when the event is not one of ours. */
    async lockByEvent(customerId: string, eventId: string): Promise<AppointmentRow | null> {
      const { rows } = await db.query(`SELECT * FROM appointments WHERE customer_id = $1 AND calendar_event_id = $2 FOR UPDATE`, [customerId, eventId]);
      return rows[0] ?? null;
    },

    /** The event moved: its new times and version. */
    async moved(id: string, f: { start: Date; end: Date; etag: string | null; now: Date }): Promise<AppointmentRow> {
      const { rows } = await db.query(
        `UPDATE appointments SET start_at = $2, end_at = $3, calendar_etag = $4, updated_at = $5 WHERE id = $1 RETURNING *`,
        [id, f.start, f.end, f.etag, f.now],
      );
      return rows[0];
    },

    /** Only the event's version changed (a title or a note edited): nothing the API shows. */
    async recordEtag(id: string, etag: string | null): Promise<void> {
      await db.query(`UPDATE appointments SET calendar_etag = $2 WHERE id = $1`, [id, etag]);
    },

    /** The event was deleted or cancelled in the calendar. */
    async cancel(id: string, now: Date): Promise<AppointmentRow> {
      const { rows } = await db.query(
        `UPDATE appointments SET status = 'cancelled', cancelled_at = $2, updated_at = $2 WHERE id = $1 RETURNING *`,
        [id, now],
      );
      return rows[0];
    },

    /** The event was written after the booking (the calendar was away when it was made). */
    async recordEvent(id: string, ref: { id: string; etag: string | null }, now: Date): Promise<void> {
      await db.query(`UPDATE appointments SET calendar_event_id = $2, calendar_etag = $3, updated_at = $4 WHERE id = $1`, [id, ref.id, ref.etag, now]);
    },

    /** Booked meetings still to come that are on the customer's calendar (the sync's check after an expired token). */
    async upcomingOnCalendar(customerId: string, now: Date, limit: number): Promise<AppointmentRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM appointments WHERE customer_id = $1 AND status = 'booked' AND calendar_event_id IS NOT NULL AND end_at > $2 ORDER BY start_at LIMIT $3`,
        [customerId, now, limit],
      );
      return rows;
    },

    /** Booked meetings still to come whose event could not be written when they were booked. */
    async awaitingEvent(customerId: string, now: Date, limit: number): Promise<AppointmentRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM appointments WHERE customer_id = $1 AND status = 'booked' AND calendar_kind IS NOT NULL AND calendar_event_id IS NULL AND end_at > $2 ORDER BY start_at LIMIT $3`,
        [customerId, now, limit],
      );
      return rows;
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
