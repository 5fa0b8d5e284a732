import { prepared, type Queryable } from '../pool.ts';
import type { Mode } from '../../runtime/types.ts';
import { MONEY_COLUMNS, type MoneyRow } from './balances.ts';

/**
 * Periods of recurring charges (`recurring_charges`): one row per item and period, claimed once
 * by the money writer before it charges the period (money/writer.ts `chargeRecurring`).
 */

/**
 * The money row locked (the lock `balanceWrites.lock` takes) and, only where the live balance
 * less what running calls hold covers `amount` (test mode: always), the period claimed: one
 * statement instead of the lock and then the claim.
 */
const LOCK_AND_CLAIM_PERIOD = prepared(
  'lock_money_claim_recurring_period',
  `WITH m AS (
     SELECT ${MONEY_COLUMNS} FROM account_money WHERE account_id = $4 AND mode = $5 FOR NO KEY UPDATE
   ), claim AS (
     INSERT INTO recurring_charges (item_id, period_start, item, account_id, mode, customer_id, period_end, amount_cents, created_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 FROM m WHERE $5 = 'test' OR m.balance_cents - m.reserved_cents >= $8
     ON CONFLICT DO NOTHING
     RETURNING 1
   )
   SELECT m.*, EXISTS (SELECT 1 FROM claim) AS claimed FROM m`,
);

export function recurringWrites(db: Queryable) {
  return {
    /**
     * Locks the account's money row and claims the period once, if the money covers it. Null
     * without a money row; `claimed` false when the money is short (nothing claimed) or the period was claimed
     * already (by another run or process).
     */
    async lockAndClaimPeriod(p: {
      itemId: string;
      item: string;
      accountId: string;
      mode: Mode;
      customerId: string;
      periodStart: string;
      periodEnd: string;
      amountCents: number;
      now: Date;
    }): Promise<{ row: MoneyRow; claimed: boolean } | null> {
      const { rows } = await db.query(
        LOCK_AND_CLAIM_PERIOD([p.itemId, p.periodStart, p.item, p.accountId, p.mode, p.customerId, p.periodEnd, p.amountCents, p.now]),
      );
      if (!rows[0]) return null;
      const { claimed, ...row } = rows[0];
      return { row, claimed };
    },
  };
}
