import type { Client } from '../../db/pool.ts';
import { balanceWrites } from '../../db/money/balances.ts';
import type { Mode } from '../../runtime/types.ts';
import { Refusal } from '../../runtime/refusal.ts';
import type { Lines } from './lines.ts';

/** The price of an answered chat message. */
export function createChatMoney(lines: Lines) {
  return {
    /** An answered chat message's price, refused (`insufficient_balance`) unless the live balance covers it under the money lock. */
    async chargeMessage(
      client: Client,
      m: { accountId: string; mode: Mode; customerId: string; priceCents: number; reference: string; description: string; now: Date },
    ): Promise<void> {
      const row = await balanceWrites(client).lock(m.accountId, m.mode);
      if (!row) throw new Error(`no money row for account ${m.accountId} (${m.mode})`);
      if (m.mode === 'live' && row.balance_cents - row.reserved_cents < m.priceCents) throw new Refusal('insufficient_balance');
      await lines.postLine(
        client,
        {
          accountId: m.accountId,
          mode: m.mode,
          customerId: m.customerId,
          type: 'usage',
          cause: 'chat_message',
          amountCents: -m.priceCents,
          reference: m.reference,
          description: m.description,
          now: m.now,
        },
        { row },
      );
    },
  };
}
