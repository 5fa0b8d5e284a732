import { afterCommit, type Client } from '../../db/pool.ts';
import { balanceWrites, type MoneyRow } from '../../db/money/balances.ts';
import { ledgerWrites, type LedgerRow } from '../../db/money/ledger.ts';
import { grantWrites } from '../../db/money/grants.ts';
import { recordEvent } from '../../db/events.ts';
import { callReserveCents, minutesUsedNow } from '../rules/pricing.ts';
import { applyLine, type LineInput } from '../rules/apply-line.ts';
import { crossedStages, lowBalanceStageOf, type LowBalanceStage } from '../rules/low-balance.ts';
import { buildBalance } from '../balance-view.ts';
import type { Clock } from '../../runtime/clock.ts';
import { countLedgerLine } from '../../runtime/metrics.ts';
import type { MoneyReactions } from './types.ts';

/**
 * The writer's one way to post a line, which every cause uses: `postLine` locks the account's
 * money row (or takes the row its caller locked), works out the whole change with the pure
 * `applyLine`, and writes it (money row, customer spend, line, a settled hold's return, the bonus
 * it spends) in one statement, in the caller's transaction. What follows from the new values is
 * here too: low-balance warnings, readiness's reaction, the request of an automatic top-up, and the write-off of
 * expired bonus credit found on the way.
 *
 * Bonus credit is a live fact: its grants expire on `realTime`, never on the schedule clock that
 * dates the lines (docs/decisions.md, "Real time and the test clock").
 */

/** A settled hold whose money and call slot go back in the same write as its charge. */
export interface ReturnedHold {
  holdId: string;
  customerId: string;
  amountCents: number;
  chargedCents: number;
}

export type Lines = ReturnType<typeof createLines>;

export function createLines(reactions: MoneyReactions, realTime: Clock) {
  /**
   * Applies one line (or, with `noLine`, only a hold's return) on a row already locked by the
   * caller or locked here. Returns the line written, if any.
   */
  async function postLine(client: Client, input: LineInput, opts: { row?: MoneyRow; hold?: ReturnedHold; noLine?: boolean } = {}): Promise<LedgerRow | null> {
    const row = opts.row ?? (await balanceWrites(client).lock(input.accountId, input.mode));
    if (!row) throw new Error(`no money row for account ${input.accountId} (${input.mode})`);
    const live = input.mode === 'live';
    // Money spent: bonus credit may pay it and it may set off the automatic top-up. Not a bonus
    // write-off, nor a refund of a top-up (cash going back to the card).
    const charge = input.amountCents < 0 && input.type !== 'bonus_expired' && input.type !== 'top_up_refund' ? -input.amountCents : 0;
    // The line is worked out as if cash paid it all; the money change itself then pays what it can
    // from unexpired bonus credit, earliest expiry first (bonus before cash: see MoneyChange).
    const { next, line, spendCents } = opts.noLine ? { next: { ...row }, line: null, spendCents: 0 } : applyLine(row, input);
    if (opts.hold) {
      next.reserved_cents -= opts.hold.amountCents;
      next.open_calls -= 1;
    }
    const before = row.low_balance_stage as LowBalanceStage;
    if (live) next.low_balance_stage = lowBalanceStageOf(next, input.now);
    const customerId = opts.hold?.customerId ?? input.customerId;
    const written = await ledgerWrites(client).apply({
      next,
      customer: customerId
        ? { id: customerId, reservedReleasedCents: opts.hold?.amountCents ?? 0, callsEnded: opts.hold ? 1 : 0, spendCents }
        : null,
      holdCharge: opts.hold ? { holdId: opts.hold.holdId, chargedCents: opts.hold.chargedCents } : null,
      line,
      bonusEligibleCents: live && line && row.bonus_cents > 0 ? charge : 0,
      now: input.now,
      realNow: realTime.now(),
    });
    // Counted for the operator's metrics once the money transaction has committed, never before.
    if (written.line) afterCommit(client, () => countLedgerLine(input.cause, input.mode));
    // Expired credit found on the way is written off right after this line, at the real time it is found.
    if (written.expiredBonusLeft) await writeOffLockedAccountBonus(client, input.accountId, realTime.now());
    if (live) {
      await recordLowBalance(client, input.accountId, before, next.low_balance_stage as LowBalanceStage, input.now);
      await balanceMoved(client, input.accountId, row.balance_cents - row.reserved_cents, next, input.now);
      const available = next.balance_cents - next.reserved_cents;
      if (charge > 0 && next.auto_top_up_threshold_cents !== null && next.auto_top_up_amount_cents !== null && available < next.auto_top_up_threshold_cents) {
        // The card is charged outside this transaction, by the payments room's worker.
        await reactions.autoTopUpWanted?.(client, input.accountId, input.now);
      }
    }
    return written.line;
  }

  /**
   * Readiness's `balance_loaded` flips where the spendable balance crosses one call's reserve:
   * then the account's customers are re-assessed (a top-up can make them ready: customer.ready).
   */
  async function balanceMoved(
    client: Client,
    accountId: string,
    availableBefore: number,
    after: Pick<MoneyRow, 'balance_cents' | 'reserved_cents' | 'minutes_month' | 'minutes_used'>,
    now: Date,
  ): Promise<void> {
    const reserve = callReserveCents(minutesUsedNow({ minutesMonth: after.minutes_month, minutesUsed: after.minutes_used }, now));
    const availableAfter = after.balance_cents - after.reserved_cents;
    if (availableBefore >= reserve !== availableAfter >= reserve) await reactions.spendableCrossedCallReserve(client, accountId, now);
  }

  /** One `balance.low` per threshold crossed downwards between two stages (the stage itself is already written). */
  async function recordLowBalance(client: Client, accountId: string, from: LowBalanceStage, to: LowBalanceStage, now: Date): Promise<void> {
    const crossed = crossedStages(from, to);
    if (crossed.length === 0) return;
    const balance = await buildBalance(client, accountId, 'live', now, realTime.now());
    for (const stage of crossed) {
      await recordEvent(client, { accountId, mode: 'live', type: 'balance.low', data: { ...balance, low_balance: stage }, now });
    }
  }

  /** Re-evaluates the low-balance stage after a change made outside postLine (a hold taken or released). */
  async function checkLowBalance(client: Client, accountId: string, now: Date): Promise<void> {
    const row = await balanceWrites(client).lock(accountId, 'live');
    if (!row) return;
    const stage = lowBalanceStageOf(row, now);
    if (stage === row.low_balance_stage) return;
    await balanceWrites(client).update(accountId, 'live', { low_balance_stage: stage });
    await recordLowBalance(client, accountId, row.low_balance_stage as LowBalanceStage, stage, now);
  }

  /** Writes off what is left of an expired grant: the grant emptied and a `bonus_expired` line. */
  async function writeOffGrant(client: Client, grant: { id: string; account_id: string; remaining_cents: number }, now: Date): Promise<void> {
    await grantWrites(client).clearGrant(grant.id);
    await postLine(client, {
      accountId: grant.account_id,
      mode: 'live',
      customerId: null,
      type: 'bonus_expired',
      cause: 'bonus_expiry',
      amountCents: -grant.remaining_cents,
      reference: grant.id,
      description: 'Bonus credit expired (twelve months after grant)',
      now,
    });
  }

  /**
   * Writes off an account's grants expired at `realNow` (real time: the write-off lines are dated
   * then); returns how many. The caller holds the account's money row lock.
   */
  async function writeOffLockedAccountBonus(client: Client, accountId: string, realNow: Date): Promise<number> {
    const grants = await grantWrites(client).lockExpiredGrantsOf(accountId, realNow);
    for (const grant of grants) await writeOffGrant(client, grant, realNow);
    return grants.length;
  }

  /** Money given back as its own `refund` line (test mode: priced, not applied). */
  async function postRefund(
    client: Client,
    r: { accountId: string; mode: LineInput['mode']; customerId: string | null; amountCents: number; reference: string | null; description: string; now: Date },
  ): Promise<LedgerRow> {
    const { accountId, mode, customerId, amountCents, reference, description, now } = r;
    const line = await postLine(client, { accountId, mode, customerId, type: 'refund', cause: 'refund', amountCents, reference, description, now });
    return line!;
  }

  return { postLine, postRefund, balanceMoved, checkLowBalance, writeOffLockedAccountBonus };
}
