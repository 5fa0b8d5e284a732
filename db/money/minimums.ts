import type { Queryable } from '../pool.ts';

/** Monthly minimums (`monthly_minimums`): one record per customer and closed month, whatever it charged. */

export function minimumReads(db: Queryable) {
  return {
    /** Live customers taken live before `monthStart` and what each spent in [monthStart, nextMonthStart). */
    async minimumCandidates(monthStart: Date, nextMonthStart: Date) {
      const { rows } = await db.query(
        `SELECT c.id, c.account_id,
                COALESCE((SELECT sum(-l.amount_cents) FROM ledger_entries l
                           WHERE l.customer_id = c.id AND l.type = 'usage' AND l.created_at >= $1 AND l.created_at < $2), 0)::bigint AS spent_cents
           FROM customers c
          WHERE c.mode = 'live' AND c.first_ready_at IS NOT NULL AND c.first_ready_at < $1
            AND NOT EXISTS (SELECT 1 FROM monthly_minimums mm WHERE mm.customer_id = c.id AND mm.month = $1::date)`,
        [monthStart, nextMonthStart],
      );
      return rows as { id: string; account_id: string; spent_cents: number }[];
    },

    /** When the first live customer was taken live (null while none has been). */
    async earliestTakenLive(): Promise<Date | null> {
      const { rows } = await db.query(`SELECT min(first_ready_at) AS at FROM customers WHERE mode = 'live'`);
      return rows[0]?.at ?? null;
    },
  };
}

export function minimumWrites(db: Queryable) {
  return {
    /** Records the month's minimum for a customer; false if it was already recorded (by any process). */
    async claimMinimum(customerId: string, monthStart: Date, cents: number): Promise<boolean> {
      const { rowCount } = await db.query(
        `INSERT INTO monthly_minimums (customer_id, month, charged_cents) VALUES ($1, $2::date, $3) ON CONFLICT DO NOTHING`,
        [customerId, monthStart, cents],
      );
      return rowCount === 1;
    },
  };
}
