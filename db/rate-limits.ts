import { prepared, type Queryable } from './pool.ts';

const HIT = prepared(
  'rate_limit_hit',
  `INSERT INTO rate_limit_windows AS w (key, window_start, count) VALUES ($1, $2, 1)
   ON CONFLICT (key, window_start) DO UPDATE SET count = w.count + 1
   RETURNING count`,
);

/** Request counters in fixed windows, shared by every process on the database. */
export function createRateLimitRepository(db: Queryable) {
  return {
    /** Counts one request in the window of `key` that starts at `windowStart`; returns the count so far. */
    async hit(key: string, windowStart: Date): Promise<number> {
      const { rows } = await db.query(HIT([key, windowStart]));
      return rows[0].count;
    },

    /** Forgets windows that ended before `before`; returns how many. */
    async purgeBefore(before: Date): Promise<number> {
      const { rowCount } = await db.query(`DELETE FROM rate_limit_windows WHERE window_start < $1`, [before]);
      return rowCount ?? 0;
    },
  };
}
