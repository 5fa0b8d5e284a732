import { prepared, type Queryable } from '../pool.ts';
import type { Mode } from '../../runtime/types.ts';

/**
 * Periods of recurring charges (`recurring_charges`): one row per item and period, claimed once
 * by the money writer before it charges the period (money/writer.ts `chargeRecurring`).
 */

const CLAIM_PERIOD = prepared(
  'claim_recurring_period',
  `INSERT INTO recurring_charges (item_id, period_start, item, account_id, mode, customer_id, period_end, amount_cents, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
);

export function recurringWrites(db: Queryable) {
  return {
    /** Claims a period; false when it was claimed already (by another run or process). */
    async claimPeriod(p: {
      itemId: string;
      item: string;
      accountId: string;
      mode: Mode;
      customerId: string;
      periodStart: string;
      periodEnd: string;
      amountCents: number;
      now: Date;
    }): Promise<boolean> {
      const { rowCount } = await db.query(CLAIM_PERIOD([p.itemId, p.periodStart, p.item, p.accountId, p.mode, p.customerId, p.periodEnd, p.amountCents, p.now]));
      return (rowCount ?? 0) > 0;
    },
  };
}
