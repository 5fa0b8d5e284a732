import type { Client } from '../../db/pool.ts';
import { minimumWrites } from '../../db/money/minimums.ts';
import { MONTHLY_MINIMUM_CENTS } from '../rules/pricing.ts';
import type { Lines } from './lines.ts';

/** The month's close: a customer's monthly minimum, charged once per customer-month. */
export function createMonthClose(lines: Lines) {
  return {
    /**
     * A customer's monthly minimum for the month starting `monthStart`: recorded once whatever it
     * charges (a second run or process finds it recorded: false), charged as a `minimum` line when
     * the customer fell short. True if a line was written.
     */
    async chargeMonthlyMinimum(
      client: Client,
      m: { accountId: string; customerId: string; monthStart: Date; shortfallCents: number; now: Date },
    ): Promise<boolean> {
      if (!(await minimumWrites(client).claimMinimum(m.customerId, m.monthStart, m.shortfallCents))) return false;
      if (m.shortfallCents === 0) return false;
      const label = m.monthStart.toISOString().slice(0, 7);
      await lines.postLine(client, {
        accountId: m.accountId,
        mode: 'live',
        customerId: m.customerId,
        type: 'minimum',
        cause: 'monthly_minimum',
        amountCents: -m.shortfallCents,
        reference: `minimum:${label}`,
        description: `Monthly minimum for ${label}: spend topped up to ${(MONTHLY_MINIMUM_CENTS / 100).toFixed(2)} USD`,
        now: m.now,
      });
      return true;
    },
  };
}
