import crypto from 'node:crypto';
import type { Client } from '../../db/pool.ts';
import { balanceWrites } from '../../db/money/balances.ts';
import type { LedgerRow } from '../../db/money/ledger.ts';
import { grantWrites } from '../../db/money/grants.ts';
import { createCallRepository } from '../../db/calls.ts';
import { BONUS_LIFETIME_MONTHS, dayKey, topUpBonusCents } from '../rules/pricing.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { Lines } from './lines.ts';
import type { MoneyReactions } from './types.ts';

/**
 * Money coming in: the console's card top-ups and the automatic top-up, the bonus credit a top-up
 * grants and its write-off when it expires, and the console's refunds to the live balance.
 *
 * A top-up is live money, and its bonus credit a live fact: the grant is dated and expires on
 * `realTime`, never on the schedule clock (a test clock) that dates the lines.
 */
export function createTopUps(lines: Lines, reactions: MoneyReactions, realTime: Clock) {
  /** The console's card charge: a top-up line with a payment reference, and its bonus credit. */
  async function topUp(
    client: Client,
    t: { accountId: string; amountCents: number; paymentReference: string; description: string; now: Date },
  ): Promise<LedgerRow[]> {
    const money = balanceWrites(client);
    const bonus = topUpBonusCents(t.amountCents);
    const row = await money.lock(t.accountId, 'live');
    if (!row) throw new Error(`no money row for account ${t.accountId}`);
    // The last top-up (with its bonus) is the reference of the low-balance warnings.
    const top = await lines.postLine(
      client,
      { accountId: t.accountId, mode: 'live', customerId: null, type: 'top_up', cause: 'top_up', amountCents: t.amountCents, paymentReference: t.paymentReference, description: t.description, now: t.now },
      { row: { ...row, last_top_up_cents: t.amountCents + bonus } },
    );
    await money.update(t.accountId, 'live', { last_top_up_cents: t.amountCents + bonus });
    // Requests held back for money try again at once rather than at their next retry.
    await createCallRepository(client).wakeWaiting({ accountId: t.accountId, mode: 'live', reasons: ['insufficient_balance'], now: t.now });
    const written = [top!];
    if (bonus > 0) {
      const grantedAt = realTime.now();
      const expiresAt = new Date(grantedAt);
      expiresAt.setUTCMonth(expiresAt.getUTCMonth() + BONUS_LIFETIME_MONTHS);
      await grantWrites(client).insertGrant(t.accountId, bonus, grantedAt, expiresAt);
      const bonusLine = await lines.postLine(client, {
        accountId: t.accountId,
        mode: 'live',
        customerId: null,
        type: 'bonus',
        cause: 'bonus',
        amountCents: bonus,
        reference: top!.id,
        description: `Bonus credit on a top-up of ${(t.amountCents / 100).toFixed(2)} USD (expires ${dayKey(expiresAt)}, not refundable)`,
        now: t.now,
      });
      written.push(bonusLine!);
    }
    // Renewals left unpaid are paid now: the money they waited for has come.
    await reactions.fundsAdded?.(client, t.accountId, t.now);
    return written;
  }

  return {
    topUp,

    /** The automatic top-up's card charge (the account's money row is locked by the caller). */
    async autoTopUp(client: Client, accountId: string, amountCents: number, now: Date): Promise<LedgerRow[]> {
      return topUp(client, { accountId, amountCents, paymentReference: `auto_${crypto.randomUUID()}`, description: 'Automatic top-up (card)', now });
    },

    /** The live balance's automatic top-up: when spendable money falls below the threshold, the amount is charged (null: off). */
    async setAutoTopUp(client: Client, accountId: string, a: { thresholdCents: number | null; amountCents: number | null }): Promise<void> {
      await balanceWrites(client).update(accountId, 'live', { auto_top_up_threshold_cents: a.thresholdCents, auto_top_up_amount_cents: a.amountCents });
    },

    /** The console's refund: money back on the live balance, optionally on a customer's line. */
    async refund(
      client: Client,
      r: { accountId: string; customerId: string | null; amountCents: number; reference: string | null; description: string; now: Date },
    ): Promise<LedgerRow> {
      return lines.postRefund(client, { ...r, mode: 'live' });
    },

    /**
     * Writes off an account's bonus grants expired at `now`, which is real time (the bonus-expiry
     * job runs on it), one line each; returns how many. Locks the
     * account's money row before its grants: the lock order of every money path. (Locking the
     * grants first, as the job once did, deadlocked against a call end on the same account, which
     * holds the money row and then writes off the expired grants it finds.)
     */
    async writeOffExpiredBonus(client: Client, accountId: string, now: Date): Promise<number> {
      await balanceWrites(client).lock(accountId, 'live');
      return lines.writeOffLockedAccountBonus(client, accountId, now);
    },
  };
}
