import type { Client } from '../../db/pool.ts';
import { balanceWrites } from '../../db/money/balances.ts';
import { ledgerReads, type LedgerRow } from '../../db/money/ledger.ts';
import { grantWrites } from '../../db/money/grants.ts';
import { activityWrites } from '../../db/money/activity.ts';
import { createCallRepository } from '../../db/calls.ts';
import { Refusal } from '../../runtime/refusal.ts';
import type { Mode } from '../../runtime/types.ts';
import { BONUS_LIFETIME_MONTHS, dayKey, topUpBonusCents } from '../rules/pricing.ts';
import { forfeitedBonusCents } from '../rules/top-up-refund.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { Lines } from './lines.ts';
import type { MoneyReactions } from './types.ts';

/**
 * Money coming in and going back: card top-ups (a checkout, an automatic top-up, the operator's
 * top-up command), the bonus credit a top-up grants and its write-off when it expires, refunds
 * of a top-up to its card, and the console's refunds to the live balance.
 *
 * A top-up is written once per payment: its payment reference (the processor's payment intent)
 * is unique among an account's top-up lines, and a second top-up with the same reference writes
 * nothing. In test mode a top-up is priced, never applied (`applied: false` lines, no grant).
 *
 * Bonus credit is a live fact: the grant is dated and expires on `realTime`, never on the
 * schedule clock (a test clock) that dates the lines.
 */
export function createTopUps(lines: Lines, reactions: MoneyReactions, realTime: Clock) {
  /**
   * A top-up: a top-up line with its payment reference, and its bonus credit. Answers the lines
   * written, none when a top-up with this reference was written before (`already: true`).
   */
  async function topUp(
    client: Client,
    t: { accountId: string; mode?: Mode; amountCents: number; paymentReference: string; description: string; now: Date },
  ): Promise<LedgerRow[] & { already?: boolean }> {
    const mode = t.mode ?? 'live';
    const live = mode === 'live';
    const money = balanceWrites(client);
    const bonus = topUpBonusCents(t.amountCents);
    const row = await money.lock(t.accountId, mode);
    if (!row) throw new Error(`no money row for account ${t.accountId} (${mode})`);
    // Under the money row's lock: the same payment credited by two processes writes once.
    if (await ledgerReads(client).topUpLine(t.accountId, t.paymentReference)) return Object.assign([] as LedgerRow[], { already: true });
    // The last top-up (with its bonus) is the reference of the low-balance warnings.
    const top = await lines.postLine(
      client,
      { accountId: t.accountId, mode, customerId: null, type: 'top_up', cause: 'top_up', amountCents: t.amountCents, paymentReference: t.paymentReference, description: t.description, now: t.now },
      { row: live ? { ...row, last_top_up_cents: t.amountCents + bonus } : row },
    );
    if (live) {
      await money.update(t.accountId, 'live', { last_top_up_cents: t.amountCents + bonus });
      // Requests held back for money try again at once rather than at their next retry.
      await createCallRepository(client).wakeWaiting({ accountId: t.accountId, mode: 'live', reasons: ['insufficient_balance'], now: t.now });
    }
    const written = [top!];
    if (bonus > 0) {
      const grantedAt = realTime.now();
      const expiresAt = new Date(grantedAt);
      expiresAt.setUTCMonth(expiresAt.getUTCMonth() + BONUS_LIFETIME_MONTHS);
      // Test money has no credit to grant: its bonus line is priced like the top-up.
      if (live) await grantWrites(client).insertGrant(t.accountId, bonus, grantedAt, expiresAt, t.paymentReference);
      const bonusLine = await lines.postLine(client, {
        accountId: t.accountId,
        mode,
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
    if (live) await reactions.fundsAdded?.(client, t.accountId, t.now);
    return written;
  }

  return {
    topUp,

    /**
     * Gives back part or all of a live card top-up: a `top_up_refund` line (negative, cash only:
     * bonus credit never pays it), and the unspent bonus the refunded part had earned forfeited
     * as its own `bonus_expired` line (cause `bonus_forfeited`). Refused (`refund_too_large`)
     * beyond the live cash balance less what running calls hold. `refundedBeforeCents` and
     * `forfeitedBeforeCents` are the payment's earlier refunds and forfeits.
     */
    async refundTopUp(
      client: Client,
      r: {
        accountId: string;
        paymentReference: string;
        paymentCents: number;
        refundedBeforeCents: number;
        forfeitedBeforeCents: number;
        amountCents: number;
        reference: string;
        description: string;
        now: Date;
      },
    ): Promise<{ line: LedgerRow; forfeitLine: LedgerRow | null; forfeitedCents: number }> {
      const row = await balanceWrites(client).lock(r.accountId, 'live');
      if (!row) throw new Error(`no money row for account ${r.accountId}`);
      if (r.amountCents <= 0) throw new Refusal('invalid_parameter', 'amount_cents must be positive.');
      if (r.refundedBeforeCents + r.amountCents > r.paymentCents) {
        throw new Refusal('refund_too_large', `At most ${r.paymentCents - r.refundedBeforeCents} cents of this payment are left to refund.`);
      }
      const cashFree = row.paid_cents - row.reserved_cents;
      if (r.amountCents > cashFree) {
        throw new Refusal('refund_too_large', `The live cash balance less running calls' holds is ${Math.max(0, cashFree)} cents; a refund cannot take more.`);
      }
      const line = await lines.postLine(
        client,
        { accountId: r.accountId, mode: 'live', customerId: null, type: 'top_up_refund', cause: 'top_up_refund', amountCents: -r.amountCents, reference: r.reference, paymentReference: r.paymentReference, description: r.description, now: r.now },
        { row },
      );
      const grant = await grantWrites(client).lockGrantOfPayment(r.accountId, r.paymentReference);
      const live = grant && grant.expires_at > realTime.now() ? grant.remaining_cents : 0;
      const forfeit = forfeitedBonusCents({
        paymentCents: r.paymentCents,
        bonusCents: grant?.granted_cents ?? 0,
        refundedCents: r.refundedBeforeCents + r.amountCents,
        forfeitedBeforeCents: r.forfeitedBeforeCents,
        unspentCents: live,
      });
      let forfeitLine: LedgerRow | null = null;
      if (forfeit > 0 && grant) {
        await grantWrites(client).takeFromGrant(grant.id, forfeit);
        forfeitLine = await lines.postLine(client, {
          accountId: r.accountId,
          mode: 'live',
          customerId: null,
          type: 'bonus_expired',
          cause: 'bonus_forfeited',
          amountCents: -forfeit,
          reference: r.reference,
          description: 'Bonus credit forfeited: the top-up that earned it was refunded',
          now: r.now,
        });
      }
      return { line: line!, forfeitLine, forfeitedCents: forfeit };
    },

    /** The live balance's automatic top-up: when spendable money falls below the threshold, the amount is charged (null: off). */
    async setAutoTopUp(client: Client, accountId: string, a: { thresholdCents: number | null; amountCents: number | null }): Promise<void> {
      await balanceWrites(client).lock(accountId, 'live');
      await balanceWrites(client).update(accountId, 'live', { auto_top_up_threshold_cents: a.thresholdCents, auto_top_up_amount_cents: a.amountCents });
    },

    /** An automatic top-up the card refused: its line in the activity log (kind `auto_top_up_failed`, reason the processor's code). */
    async recordAutoTopUpFailure(client: Client, f: { accountId: string; cardPaymentId: string; code: string; detail: unknown; now: Date }): Promise<void> {
      await activityWrites(client).logActivity({ accountId: f.accountId, mode: 'live', customerId: null, kind: 'auto_top_up_failed', reason: f.code, reference: f.cardPaymentId, detail: f.detail, now: f.now });
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
