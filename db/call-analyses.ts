import type { Queryable } from './pool.ts';

/** What a call's transcript says (migration 044, table call_analyses). */
export interface CallAnalysisRow {
  call_id: string;
  callback_at: Date | null;
  objection: 'price' | 'timing' | 'has_provider' | 'not_interested' | 'other' | null;
  source: 'model' | 'rules';
  created_at: Date;
}

export function createCallAnalysisRepository(db: Queryable) {
  return {
    async get(callId: string): Promise<CallAnalysisRow | null> {
      const { rows } = await db.query(`SELECT * FROM call_analyses WHERE call_id = $1`, [callId]);
      return rows[0] ?? null;
    },

    /** Writes the call's analysis once; the first written stays. Returns the stored one. */
    async insert(a: Omit<CallAnalysisRow, 'created_at'>, now: Date): Promise<CallAnalysisRow> {
      const { rows } = await db.query(
        `INSERT INTO call_analyses (call_id, callback_at, objection, source, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (call_id) DO NOTHING RETURNING *`,
        [a.call_id, a.callback_at, a.objection, a.source, now],
      );
      return rows[0] ?? (await this.get(a.call_id))!;
    },
  };
}
