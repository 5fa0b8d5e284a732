import type { Client } from '../../db/pool.ts';
import type { MoneyRow } from '../../db/money/balances.ts';
import type { LedgerRow } from '../../db/money/ledger.ts';
import { recurringWrites } from '../../db/money/recurring.ts';
import type { Lines } from './lines.ts';
import type { LineInput } from '../rules/apply-line.ts';
import type { MoneyReactions, RecurringCharge, RecurringChargeResult } from './types.ts';

/**
 * A recurring charge of a customer's item (a number's rent, a caller ID's fee, a website's
 * hosting) is `chargeRecurring`: it claims the item's period once in `recurring_charges` (as
 * `monthly_minimums` does for a customer-month), then posts a `usage` line whose cause is the
 * item's kind and whose reference names the item and the period, so a second run or process
 * charges nothing. The renewal calendar is a pure rule (money/rules/renewal.ts); what an unpaid
 * renewal does to the item belongs to the item's own room (actors/numbers/, actors/websites/),
 * whose job claims the items due and asks the writer to charge each, one transaction per item.
 */
/** The line of one period of a recurring charge: a `usage` line whose cause is the item's kind and whose reference names the item and the period. */
export function recurringLine(c: RecurringCharge): LineInput {
  return {
    accountId: c.accountId,
    mode: c.mode,
    customerId: c.customerId,
    type: 'usage',
    cause: c.item,
    amountCents: -c.amountCents,
    reference: `${c.item}:${c.itemId}:${c.periodStart}`,
    description: c.description,
    now: c.now,
  };
}

export function createRecurringMoney(lines: Lines, reactions: MoneyReactions) {
  return {
    /**
     * One period of a recurring charge: claimed once, then charged as a `usage` line on the
     * customer. Live money must cover it (balance less running calls' holds) or nothing is
     * written; test mode prices it with `applied: false`.
     */
    async chargeRecurring(client: Client, c: RecurringCharge): Promise<RecurringChargeResult> {
      // The money row's lock and the period's claim are one statement, which claims only where
      // the money covers the charge (the same test as `short`, on the row it locked).
      const locked = await recurringWrites(client).lockAndClaimPeriod({
        itemId: c.itemId,
        item: c.item,
        accountId: c.accountId,
        mode: c.mode,
        customerId: c.customerId,
        periodStart: c.periodStart,
        periodEnd: c.periodEnd,
        amountCents: c.amountCents,
        now: c.now,
      });
      if (!locked) throw new Error(`no money row for account ${c.accountId} (${c.mode})`);
      const { row, claimed } = locked;
      const short = (r: MoneyRow) => c.mode === 'live' && r.balance_cents - r.reserved_cents < c.amountCents;
      if (short(row)) {
        // A renewal is what automatic top-up is for: when it is on and working, the card is
        // charged (by the payments room, outside this transaction) and the renewal waits for it.
        // (The payments room decides whether one works: a live processor, on, a saved card, not failing.)
        const coming = (await reactions.autoTopUpWanted?.(client, c.accountId, c.now)) ?? false;
        return { outcome: coming ? 'awaiting_top_up' : 'insufficient_balance' };
      }
      if (!claimed) return { outcome: 'already_charged' };
      const line: LedgerRow | null = await lines.postLine(client, recurringLine(c), { row });
      return { outcome: 'charged', line: line! };
    },
  };
}
