import type { Queryable } from './pool.ts';

/** Start of the UTC day and of the UTC calendar month that contain `now`. */
export function utcPeriodStarts(now: Date): { day: Date; month: Date } {
  return {
    day: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())),
    month: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
  };
}

/**
 * What a customer has spent this UTC day and month: every charge line attributed to it (priced
 * test lines included, so caps behave the same in test mode) plus the holds of its running calls.
 */
export async function customerSpend(db: Queryable, customerId: string, now: Date): Promise<{ today_cents: number; month_cents: number }> {
  const { day, month } = utcPeriodStarts(now);
  const { rows } = await db.query(
    `SELECT
       COALESCE((SELECT sum(-amount_cents) FILTER (WHERE created_at >= $2) FROM ledger_entries
                  WHERE customer_id = $1 AND amount_cents < 0 AND type IN ('usage', 'minimum') AND created_at >= $3 AND created_at <= $4), 0)
       + COALESCE((SELECT sum(amount_cents) FROM holds WHERE customer_id = $1 AND status = 'open' AND created_at >= $2), 0) AS today_cents,
       COALESCE((SELECT sum(-amount_cents) FROM ledger_entries
                  WHERE customer_id = $1 AND amount_cents < 0 AND type IN ('usage', 'minimum') AND created_at >= $3 AND created_at <= $4), 0)
       + COALESCE((SELECT sum(amount_cents) FROM holds WHERE customer_id = $1 AND status = 'open' AND created_at >= $3), 0) AS month_cents`,
    [customerId, day, month, now],
  );
  return { today_cents: Number(rows[0].today_cents), month_cents: Number(rows[0].month_cents) };
}
