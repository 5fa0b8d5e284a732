import type { Queryable } from './pool.ts';

/** A jurisdiction an operator has closed to calling (migration 013). */
export interface EmergencyClosureRow {
  jurisdiction: string;
  reason: string;
  closed_at: Date;
}

/** The operator switch of emergency closures; the dialler reads the table in db/admission.ts. */
export function createEmergencyClosureRepository(db: Queryable) {
  return {
    /** Closes `jurisdiction` (or updates the reason of a closure already in place; its first closed_at is kept). */
    async close(c: { jurisdiction: string; reason: string; now: Date }): Promise<EmergencyClosureRow> {
      const { rows } = await db.query(
        `INSERT INTO emergency_closures (jurisdiction, reason, closed_at) VALUES ($1, $2, $3)
         ON CONFLICT (jurisdiction) DO UPDATE SET reason = EXCLUDED.reason RETURNING *`,
        [c.jurisdiction, c.reason, c.now],
      );
      return rows[0];
    },

    /** Reopens `jurisdiction`; false if it was not closed. */
    async reopen(jurisdiction: string): Promise<boolean> {
      const { rowCount } = await db.query(`DELETE FROM emergency_closures WHERE jurisdiction = $1`, [jurisdiction]);
      return (rowCount ?? 0) > 0;
    },

    async list(): Promise<EmergencyClosureRow[]> {
      const { rows } = await db.query(`SELECT * FROM emergency_closures ORDER BY jurisdiction`);
      return rows;
    },
  };
}

export type EmergencyClosureRepository = ReturnType<typeof createEmergencyClosureRepository>;
