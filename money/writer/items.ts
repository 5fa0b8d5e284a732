import type { Client } from '../../db/pool.ts';
import { balanceWrites } from '../../db/money/balances.ts';
import type { LedgerRow } from '../../db/money/ledger.ts';
import type { Mode } from '../../runtime/types.ts';
import type { Lines } from './lines.ts';

/** One-off charges of a customer's items (a website's build fee) and their refunds when the item is never delivered. */
export function createItemMoney(lines: Lines) {
  return {
    /**
     * A one-off charge of a customer's item (a website's build fee, a researched prospect): a `usage` line whose cause is
     * the item's kind. Live money must cover it (balance less running calls' holds) or nothing is
     * written; test mode prices it with `applied: false`.
     */
    async chargeItem(
      client: Client,
      c: { accountId: string; mode: Mode; customerId: string; cause: 'website_build' | 'prospect'; amountCents: number; reference: string; description: string; now: Date },
    ): Promise<{ outcome: 'charged'; line: LedgerRow } | { outcome: 'insufficient_balance' }> {
      const row = await balanceWrites(client).lock(c.accountId, c.mode);
      if (!row) throw new Error(`no money row for account ${c.accountId} (${c.mode})`);
      if (c.mode === 'live' && row.balance_cents - row.reserved_cents < c.amountCents) return { outcome: 'insufficient_balance' };
      const line = await lines.postLine(
        client,
        { accountId: c.accountId, mode: c.mode, customerId: c.customerId, type: 'usage', cause: c.cause, amountCents: -c.amountCents, reference: c.reference, description: c.description, now: c.now },
        { row },
      );
      return { outcome: 'charged', line: line! };
    },

    /**
     * Money back for an item never delivered (a website build that failed or was cancelled before
     * delivery), as its own `refund` line on the customer in the item's mode (test mode: priced,
     * not applied), referencing the item.
     */
    async refundItem(
      client: Client,
      r: { accountId: string; mode: Mode; customerId: string; amountCents: number; reference: string; description: string; now: Date },
    ): Promise<LedgerRow> {
      return lines.postRefund(client, r);
    },
  };
}
