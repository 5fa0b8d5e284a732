import type { Queryable } from './pool.ts';

export interface SimulatedEventRow {
  calendar_id: string;
  id: string;
  uid: string;
  summary: string;
  description: string;
  start_at: Date;
  end_at: Date;
  deleted: boolean;
  etag: string;
  version: string;
}

/**
 * The simulated calendar's events (test mode): every change takes the next value of one sequence,
 * so "what changed since version N" is a plain range read, as a CalDAV sync-token or a Google
 * syncToken would give.
 */
export function createSimulatedCalendarRepository(db: Queryable) {
  return {
    async busy(calendarId: string, from: Date, to: Date): Promise<{ start_at: Date; end_at: Date }[]> {
      const { rows } = await db.query(
        `SELECT start_at, end_at FROM simulated_calendar_events
          WHERE calendar_id = $1 AND NOT deleted AND start_at < $3 AND end_at > $2 ORDER BY start_at`,
        [calendarId, from, to],
      );
      return rows;
    },

    /** Inserts or replaces (moves) an event; returns it with its new etag and version. */
    async put(e: { calendarId: string; id: string; uid: string; summary: string; description: string; start: Date; end: Date }): Promise<SimulatedEventRow> {
      const { rows } = await db.query(
        `WITH v AS (SELECT nextval('simulated_calendar_version') AS version)
         INSERT INTO simulated_calendar_events (calendar_id, id, uid, summary, description, start_at, end_at, deleted, etag, version)
         SELECT $1, $2, $3, $4, $5, $6, $7, false, 'v' || v.version, v.version FROM v
         ON CONFLICT (calendar_id, id) DO UPDATE SET summary = EXCLUDED.summary, description = EXCLUDED.description,
           start_at = EXCLUDED.start_at, end_at = EXCLUDED.end_at, deleted = false, etag = EXCLUDED.etag, version = EXCLUDED.version
         RETURNING *`,
        [e.calendarId, e.id, e.uid, e.summary, e.description, e.start, e.end],
      );
      return rows[0];
    },

    /** Moves an existing event (as the business would in its calendar app); null when there is none. */
    async move(calendarId: string, id: string, start: Date, end: Date): Promise<SimulatedEventRow | null> {
      const { rows } = await db.query(
        // nextval once in a CTE: currval in the same SET fails on a connection that never called nextval.
        `WITH v AS (SELECT nextval('simulated_calendar_version') AS version)
         UPDATE simulated_calendar_events e SET start_at = $3, end_at = $4, version = v.version, etag = 'v' || v.version
           FROM v WHERE e.calendar_id = $1 AND e.id = $2 AND NOT e.deleted RETURNING e.*`,
        [calendarId, id, start, end],
      );
      return rows[0] ?? null;
    },

    /** Marks an event deleted (kept as a tombstone so a sync reports it); false when there was none. */
    async remove(calendarId: string, id: string): Promise<boolean> {
      const { rowCount } = await db.query(
        `WITH v AS (SELECT nextval('simulated_calendar_version') AS version)
         UPDATE simulated_calendar_events e SET deleted = true, version = v.version, etag = 'v' || v.version
           FROM v WHERE e.calendar_id = $1 AND e.id = $2 AND NOT e.deleted`,
        [calendarId, id],
      );
      return (rowCount ?? 0) > 0;
    },

    async get(calendarId: string, id: string): Promise<SimulatedEventRow | null> {
      const { rows } = await db.query(`SELECT * FROM simulated_calendar_events WHERE calendar_id = $1 AND id = $2`, [calendarId, id]);
      return rows[0] ?? null;
    },

    /** Events changed after `version` (tombstones included), oldest change first, and the latest version of the calendar. */
    async changedSince(calendarId: string, version: bigint): Promise<{ rows: SimulatedEventRow[]; latest: bigint }> {
      const { rows } = await db.query(
        `SELECT * FROM simulated_calendar_events WHERE calendar_id = $1 AND version > $2 ORDER BY version`,
        [calendarId, version.toString()],
      );
      return { rows, latest: await this.latest(calendarId, version) };
    },

    /** The highest version of the calendar, at least `floor`. */
    async latest(calendarId: string, floor = 0n): Promise<bigint> {
      const { rows } = await db.query(`SELECT max(version) AS v FROM simulated_calendar_events WHERE calendar_id = $1`, [calendarId]);
      const v = rows[0]?.v == null ? 0n : BigInt(rows[0].v);
      return v > floor ? v : floor;
    },
  };
}
