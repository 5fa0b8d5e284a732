import { prepared, type Queryable } from './pool.ts';

const HIT = prepared(
  'rate_limit_hit',
  `INSERT INTO rate_limit_windows AS w (key, window_start, count) VALUES ($1, $2, 1)
   ON CONFLICT (key, window_start) DO UPDATE SET count = w.count + 1
   RETURNING count`,
);

const HIT_BOTH = prepared(
  'rate_limit_hit_both',
  `INSERT INTO rate_limit_windows AS w (key, window_start, count) VALUES ($1, $2, 1), ($3, $4, 1)
   ON CONFLICT (key, window_start) DO UPDATE SET count = w.count + 1
   RETURNING key, count`,
);

/** Request counters in fixed windows, shared by every process on the database. */
export function createRateLimitRepository(db: Queryable) {
  return {
    /** Counts one request in the window of `key` that starts at `windowStart`; returns the count so far. */
    async hit(key: string, windowStart: Date): Promise<number> {
      const { rows } = await db.query(HIT([key, windowStart]));
      return rows[0].count;
    },

    /**
     * Counts one request in two windows at once (two keys, each with its window's start): one
     * statement, one round trip. The rows are taken in the order given, the same in every caller,
     * so two requests counting the same pair never wait on each other crosswise.
     */
    async hitBoth(first: { key: string; windowStart: Date }, second: { key: string; windowStart: Date }): Promise<[number, number]> {
      const { rows } = await db.query(HIT_BOTH([first.key, first.windowStart, second.key, second.windowStart]));
      const countOf = (key: string) => (rows as { key: string; count: number }[]).find((r) => r.key === key)!.count;
      return [countOf(first.key), countOf(second.key)];
    },

    /** Forgets windows that ended before `before`; returns how many. */
    async purgeBefore(before: Date): Promise<number> {
      const { rowCount } = await db.query(`DELETE FROM rate_limit_windows WHERE window_start < $1`, [before]);
      return rowCount ?? 0;
    },
  };
}
