import crypto from 'node:crypto';
import { withTransaction, isUniqueViolation, type Client, type Pool, type Queryable } from '../db/pool.ts';
import { balanceReads, balanceWrites, type MoneyRow } from '../db/money/balances.ts';
import { holdReads, holdWrites, type HoldRow } from '../db/money/holds.ts';
import { ledgerWrites, type LedgerRow } from '../db/money/ledger.ts';
import { grantWrites } from '../db/money/grants.ts';
import { activityWrites } from '../db/money/activity.ts';
import { minimumWrites } from '../db/money/minimums.ts';
import { recurringWrites } from '../db/money/recurring.ts';
import { recordEvent } from '../db/events.ts';
import { createCallRepository } from '../db/calls.ts';
import type { Mode } from '../runtime/types.ts';
import { Refusal } from '../runtime/refusal.ts';
import {
  BONUS_LIFETIME_MONTHS,
  CALL_TARIFF,
  MONTHLY_MINIMUM_CENTS,
  billableMinutes,
  callReserveCents,
  dayKey,
  minutesUsedNow,
  monthKey,
  priceMinutes,
  topUpBonusCents,
} from './rules/pricing.ts';
import { applyLine, type LineInput } from './rules/apply-line.ts';
import { crossedStages, lowBalanceStage, lowBalanceStageOf, type LowBalanceStage } from './rules/low-balance.ts';
import { holdRefusal, type RefusalReason } from './rules/hold-rules.ts';
import { buildBalance } from './balance-view.ts';

/**
 * The money writer: the one way money moves. Every write of the money tables (money rows, holds,
 * ledger, bonus grants, activity log, monthly minimums) goes through one of its operations, and
 * only this module imports the write halves of db/money/ (test/unit/money-writer.test.ts).
 *
 * Each charge or credit is a line: `postLine` locks the account's money row (or takes the row
 * its caller locked), works out the whole change with the pure `applyLine`, and writes it (money
 * row, customer spend, line, a settled hold's return, the bonus it spends) in one statement, in
 * the caller's transaction. Low-balance warnings and automatic top-up follow from the new values.
 *
 * A call's money has one path each way. Its start takes a hold through `startCall` (the account
 * actor's `start_call`, asked by the dialler). Its end is `settleCall`, inside the transaction that
 * writes the call's outcome (the call actor's `finish`, or call-jobs for a lost call): the charge
 * commits with the outcome or not at all. `endCall` is the same settlement in a transaction of
 * its own, for the console's test facility.
 *
 * What money changes elsewhere is told through `MoneyReactions`, so money/ imports no actor.
 *
 * A recurring charge of a customer's item (a number's rent, a caller ID's fee; a website's hosting
 * next) is `chargeRecurring`: it claims the item's period once in `recurring_charges` (as
 * `monthly_minimums` does for a customer-month), then posts a `usage` line whose cause is the
 * item's kind and whose reference names the item and the period, so a second run or process
 * charges nothing. The renewal calendar is a pure rule (money/rules/renewal.ts); what an unpaid
 * renewal does to the item belongs to the item's own room (actors/numbers/), whose job claims
 * the items due and asks this writer to charge each, one transaction per item.
 */

/** A recurring charge of a customer's item (see above). */
export interface RecurringCharge {
  accountId: string;
  mode: Mode;
  customerId: string;
  /** What recurs: the line's cause. */
  item: 'number' | 'caller_id' | 'website_hosting';
  /** The item's own id (a number's, a website's). */
  itemId: string;
  amountCents: number;
  /** The period paid for: [start, end), UTC days as YYYY-MM-DD. */
  periodStart: string;
  periodEnd: string;
  /** The ledger line's description (what the reseller reads on its statement). */
  description: string;
  now: Date;
}

/**
 * What became of a recurring charge: `charged` (the line written; in test mode priced with
 * `applied: false`), `already_charged` (the period was claimed before: nothing written), or
 * `insufficient_balance` (the live balance, less what running calls hold, cannot cover it:
 * nothing written, nothing claimed).
 */
export type RecurringChargeResult = { outcome: 'charged'; line: LedgerRow } | { outcome: 'already_charged' | 'insufficient_balance' };

/** What other rooms do when money moves, in the same transaction. */
export interface MoneyReactions {
  /**
   * The account's spendable live balance crossed one call's hold (either way): readiness's
   * `balance_loaded` flipped, so its customers are re-assessed (a top-up can make them ready).
   */
  spendableCrossedCallReserve(db: Client, accountId: string, now: Date): Promise<void>;
  /**
   * Money came into the live balance (a top-up): items whose renewal could not be paid are
   * charged now, in the same transaction (the account's money row is locked by then).
   */
  fundsAdded?(db: Client, accountId: string, now: Date): Promise<void>;
}

/** A hold not ended within this long is released by the sweeper (spec: within thirty minutes). */
export const HOLD_LIFETIME_MS = 30 * 60 * 1000;

export type StartCallResult = { ok: true; hold: HoldRow } | { ok: false; reason: RefusalReason };

export interface CallEnd {
  accountId: string;
  reference: string;
  durationSeconds: number;
  now: Date;
}

export interface EndCallResult {
  object: 'call_charge';
  reference: string;
  /** settled: the hold paid for the call; late: the hold had been released, so the call is billed on its own line. */
  outcome: 'settled' | 'late' | 'already_settled';
  minutes: number;
  charged_cents: number;
}

/** A settled hold whose money and call slot go back in the same write as its charge. */
interface ReturnedHold {
  holdId: string;
  customerId: string;
  amountCents: number;
  chargedCents: number;
}

export type MoneyWriter = ReturnType<typeof createMoneyWriter>;

export function createMoneyWriter(reactions: MoneyReactions) {
  /**
   * Applies one line (or, with `noLine`, only a hold's return) on a row already locked by the
   * caller or locked here. Returns the line written, if any.
   */
  async function postLine(client: Client, input: LineInput, opts: { row?: MoneyRow; hold?: ReturnedHold; noLine?: boolean } = {}): Promise<LedgerRow | null> {
    const row = opts.row ?? (await balanceWrites(client).lock(input.accountId, input.mode));
    if (!row) throw new Error(`no money row for account ${input.accountId} (${input.mode})`);
    const live = input.mode === 'live';
    const charge = input.amountCents < 0 && input.type !== 'bonus_expired' ? -input.amountCents : 0;
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
    });
    // Expired credit found on the way is written off right after this line.
    if (written.expiredBonusLeft) await writeOffLockedAccountBonus(client, input.accountId, input.now);
    if (live) {
      await recordLowBalance(client, input.accountId, before, next.low_balance_stage as LowBalanceStage, input.now);
      await balanceMoved(client, input.accountId, row.balance_cents - row.reserved_cents, next, input.now);
      const available = next.balance_cents - next.reserved_cents;
      if (charge > 0 && next.auto_top_up_threshold_cents !== null && next.auto_top_up_amount_cents !== null && available < next.auto_top_up_threshold_cents) {
        await topUp(client, {
          accountId: input.accountId,
          amountCents: next.auto_top_up_amount_cents,
          paymentReference: `auto_${crypto.randomUUID()}`,
          description: 'Automatic top-up (card)',
          now: input.now,
        });
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
    const balance = await buildBalance(client, accountId, 'live', now);
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

  /** Writes off an account's expired bonus grants; returns how many. The caller holds the account's money row lock. */
  async function writeOffLockedAccountBonus(client: Client, accountId: string, now: Date): Promise<number> {
    const grants = await grantWrites(client).lockExpiredGrantsOf(accountId, now);
    for (const grant of grants) await writeOffGrant(client, grant, now);
    return grants.length;
  }

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
    const top = await postLine(
      client,
      { accountId: t.accountId, mode: 'live', customerId: null, type: 'top_up', cause: 'top_up', amountCents: t.amountCents, paymentReference: t.paymentReference, description: t.description, now: t.now },
      { row: { ...row, last_top_up_cents: t.amountCents + bonus } },
    );
    await money.update(t.accountId, 'live', { last_top_up_cents: t.amountCents + bonus });
    // Requests held back for money try again at once rather than at their next retry.
    await createCallRepository(client).wakeWaiting({ accountId: t.accountId, mode: 'live', reasons: ['insufficient_balance'], now: t.now });
    const lines = [top!];
    if (bonus > 0) {
      const expiresAt = new Date(t.now);
      expiresAt.setUTCMonth(expiresAt.getUTCMonth() + BONUS_LIFETIME_MONTHS);
      await grantWrites(client).insertGrant(t.accountId, bonus, t.now, expiresAt);
      const bonusLine = await postLine(client, {
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
      lines.push(bonusLine!);
    }
    // Renewals left unpaid are paid now: the money they waited for has come.
    await reactions.fundsAdded?.(client, t.accountId, t.now);
    return lines;
  }

  /** A call start refused (by the hold statement, or by admission before it), in the activity log. */
  async function recordRefusedStart(
    db: Queryable,
    r: { accountId: string; mode: Mode; customerId: string; reason: string; reference: string; detail?: unknown; now: Date },
  ): Promise<void> {
    await activityWrites(db).logActivity({ ...r, kind: 'call_start_refused' });
  }

  /**
   * Holds the price of the longest call at the month's tier and takes a call slot, or refuses with
   * the spec's reason (recorded in the activity log). One conditional statement decides.
   */
  async function startCall(pool: Pool, c: { accountId: string; mode: Mode; customerId: string; reference: string; now: Date }): Promise<StartCallResult> {
    const day = dayKey(c.now);
    const month = monthKey(c.now);
    let opened;
    try {
      opened = await holdWrites(pool).openHold({ ...c, day, month, expiresAt: new Date(c.now.getTime() + HOLD_LIFETIME_MS), tariff: CALL_TARIFF });
    } catch (err) {
      if (isUniqueViolation(err)) throw new Error(`a hold for ${c.reference} already exists`);
      throw err;
    }
    if (opened && c.mode === 'live') {
      // The hold lowered the spendable balance: a low-balance stage or readiness may have moved.
      const after = opened.money;
      const amountCents = opened.hold.amount_cents;
      const reserve = callReserveCents(minutesUsedNow({ minutesMonth: after.minutes_month, minutesUsed: after.minutes_used }, c.now));
      const stage = lowBalanceStage(after.balance_cents - after.reserved_cents, after.last_top_up_cents, reserve);
      const before = after.balance_cents - after.reserved_cents + amountCents;
      if (stage !== after.low_balance_stage || before >= reserve !== before - amountCents >= reserve) {
        await withTransaction(pool, async (client) => {
          await checkLowBalance(client, c.accountId, c.now);
          await balanceMoved(client, c.accountId, before, after, c.now);
        });
      }
    }
    if (opened) return { ok: true, hold: opened.hold };

    // Refused: name the reason from the facts as they are now, with the hold priced as it was.
    const row = await balanceReads(pool).get(c.accountId, c.mode);
    if (!row) throw new Error(`no money row for account ${c.accountId}`);
    const amountCents = callReserveCents(minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, c.now));
    const f = await holdReads(pool).holdFacts(c.accountId, c.mode, c.customerId, day, month);
    if (!f) throw new Error(`customer ${c.customerId} is not a customer of account ${c.accountId}`);
    const reason =
      holdRefusal({
        mode: c.mode,
        amountCents,
        availableCents: Number(f.available_cents),
        account: {
          reservedCents: f.reserved_cents,
          openCalls: f.open_calls,
          concurrentCalls: f.concurrent_calls,
          daySpendCents: Number(f.day_cents),
          monthSpendCents: Number(f.month_cents),
          dailyCapCents: f.daily_spend_cap_cents,
          monthlyCapCents: f.monthly_spend_cap_cents,
        },
        customer: {
          reservedCents: f.c_reserved_cents,
          openCalls: f.c_open_calls,
          maxConcurrentCalls: f.max_concurrent_calls,
          daySpendCents: Number(f.c_day_cents),
          monthSpendCents: Number(f.c_month_cents),
          dailyCapCents: f.c_daily_cap,
          monthlyCapCents: f.c_monthly_cap,
        },
        // The statement refused, but the facts have moved on since (another call ended):
        // the slot or money was taken a moment ago, which is a concurrency refusal.
      }) ?? 'concurrency_limit';
    await recordRefusedStart(pool, { ...c, reason, detail: { hold_cents: amountCents } });
    return { ok: false, reason };
  }

  /**
   * A call's end, inside the caller's transaction (the call's completion commits with its charge):
   * charges the used minutes, releases the rest of the hold and its slot. A hold resolves once:
   * the end report and the sweeper race on `status = 'open'`, and one wins. An end report after
   * the release is billed as its own line, once.
   */
  async function settleCall(client: Client, e: CallEnd): Promise<EndCallResult> {
    const minutes = billableMinutes(e.durationSeconds);
    const holds = holdWrites(client);
    // Claiming (locking) the hold first makes the end report and the sweeper race on one row: one wins.
    const settled = await holds.settleHold(e.accountId, e.reference);
    const hold = settled?.hold ?? (await holdReads(client).findHold(e.accountId, e.reference));
    if (!hold) throw new Error(`no hold for call ${e.reference}`);
    const result = (outcome: EndCallResult['outcome'], charged: number): EndCallResult => ({
      object: 'call_charge',
      reference: e.reference,
      outcome,
      minutes,
      charged_cents: charged,
    });
    if (!settled && hold.status !== 'released') return result('already_settled', hold.charged_cents ?? 0);

    const row = settled?.money ?? (await balanceWrites(client).lock(e.accountId, hold.mode));
    if (!row) throw new Error(`no money row for account ${e.accountId}`);
    const price = priceMinutes(minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, e.now), minutes);
    // The hold was the price of the longest call at the tier when it started; never charge more.
    const charge = Math.min(price, hold.amount_cents);
    if (!settled && !(await holds.claimLateCharge(hold.id, charge))) return result('already_settled', hold.charged_cents ?? 0);
    await postLine(
      client,
      {
        accountId: e.accountId,
        mode: hold.mode,
        customerId: hold.customer_id,
        type: 'usage',
        cause: 'call',
        amountCents: -charge,
        minutes,
        reference: e.reference,
        description: `Call, ${minutes} min${settled ? '' : ' (ended after its hold was released)'}`,
        now: e.now,
      },
      {
        row,
        noLine: charge === 0,
        hold: settled ? { holdId: hold.id, customerId: hold.customer_id, amountCents: hold.amount_cents, chargedCents: charge } : undefined,
      },
    );
    return result(settled ? 'settled' : 'late', charge);
  }

  return {
    /** Both modes' money rows of a new account, in the transaction that creates it. */
    async openAccount(client: Client, accountId: string): Promise<void> {
      await balanceWrites(client).createRows(accountId);
    },

    startCall,
    settleCall,

    /**
     * `settleCall` in a transaction of its own, for the console's test facility (real calls end in
     * the call's own transaction). Asked for by reference, an unknown hold is the asker's mistake,
     * not a broken invariant as it is for a call ending inside settleCall's callers.
     */
    async endCall(pool: Pool, e: CallEnd): Promise<EndCallResult> {
      return withTransaction(pool, async (client) => {
        if (!(await holdReads(client).findHold(e.accountId, e.reference))) throw new Refusal('hold_not_found');
        return settleCall(client, e);
      });
    },

    /** An answered chat message's price, refused (`insufficient_balance`) unless the live balance covers it under the money lock. */
    async chargeMessage(
      client: Client,
      m: { accountId: string; mode: Mode; customerId: string; priceCents: number; reference: string; description: string; now: Date },
    ): Promise<void> {
      const row = await balanceWrites(client).lock(m.accountId, m.mode);
      if (!row) throw new Error(`no money row for account ${m.accountId} (${m.mode})`);
      if (m.mode === 'live' && row.balance_cents - row.reserved_cents < m.priceCents) throw new Refusal('insufficient_balance');
      await postLine(
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

    topUp,

    /** The console's refund: money back on the live balance, optionally on a customer's line. */
    async refund(
      client: Client,
      r: { accountId: string; customerId: string | null; amountCents: number; reference: string | null; description: string; now: Date },
    ): Promise<LedgerRow> {
      const line = await postLine(client, {
        accountId: r.accountId,
        mode: 'live',
        customerId: r.customerId,
        type: 'refund',
        cause: 'refund',
        amountCents: r.amountCents,
        reference: r.reference,
        description: r.description,
        now: r.now,
      });
      return line!;
    },

    /** The live balance's automatic top-up: when spendable money falls below the threshold, the amount is charged (null: off). */
    async setAutoTopUp(client: Client, accountId: string, a: { thresholdCents: number | null; amountCents: number | null }): Promise<void> {
      await balanceWrites(client).update(accountId, 'live', { auto_top_up_threshold_cents: a.thresholdCents, auto_top_up_amount_cents: a.amountCents });
    },

    recordRefusedStart,

    /**
     * Releases up to `limit` holds whose call never reported back (the sweeper's claim), giving their
     * money and slot back. Returns how many.
     */
    async releaseExpiredHolds(client: Client, now: Date, limit: number): Promise<number> {
      const holds = holdWrites(client);
      const released = await holds.releaseExpired(now, limit);
      for (const hold of released) {
        await holds.returnHold(hold);
        // Money came back: the stage may rise, so a later fall is warned about again; readiness may return.
        if (hold.mode === 'live') {
          await checkLowBalance(client, hold.account_id, now);
          const row = await balanceReads(client).get(hold.account_id, 'live');
          if (row) await balanceMoved(client, hold.account_id, row.balance_cents - row.reserved_cents - hold.amount_cents, row, now);
        }
        await activityWrites(client).logActivity({
          accountId: hold.account_id,
          mode: hold.mode,
          customerId: hold.customer_id,
          kind: 'hold_released',
          reason: 'call_never_reported_back',
          reference: hold.reference,
          detail: { hold_cents: hold.amount_cents },
          now,
        });
      }
      return released.length;
    },

    /**
     * Writes off an account's expired bonus grants, one line each; returns how many. Locks the
     * account's money row before its grants: the lock order of every money path. (Locking the
     * grants first, as the job once did, deadlocked against a call end on the same account, which
     * holds the money row and then writes off the expired grants it finds.)
     */
    async writeOffExpiredBonus(client: Client, accountId: string, now: Date): Promise<number> {
      await balanceWrites(client).lock(accountId, 'live');
      return writeOffLockedAccountBonus(client, accountId, now);
    },

    /**
     * A one-off charge of a customer's item (a website's build fee): a `usage` line whose cause is
     * the item's kind. Live money must cover it (balance less running calls' holds) or nothing is
     * written; test mode prices it with `applied: false`.
     */
    async chargeItem(
      client: Client,
      c: { accountId: string; mode: Mode; customerId: string; cause: 'website_build'; amountCents: number; reference: string; description: string; now: Date },
    ): Promise<{ outcome: 'charged'; line: LedgerRow } | { outcome: 'insufficient_balance' }> {
      const row = await balanceWrites(client).lock(c.accountId, c.mode);
      if (!row) throw new Error(`no money row for account ${c.accountId} (${c.mode})`);
      if (c.mode === 'live' && row.balance_cents - row.reserved_cents < c.amountCents) return { outcome: 'insufficient_balance' };
      const line = await postLine(
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
      const line = await postLine(client, {
        accountId: r.accountId,
        mode: r.mode,
        customerId: r.customerId,
        type: 'refund',
        cause: 'refund',
        amountCents: r.amountCents,
        reference: r.reference,
        description: r.description,
        now: r.now,
      });
      return line!;
    },

    /**
     * One period of a recurring charge (see the top of this file): claimed once, then charged as a
     * `usage` line on the customer. Live money must cover it (balance less running calls' holds)
     * or nothing is written; test mode prices it with `applied: false`.
     */
    async chargeRecurring(client: Client, c: RecurringCharge): Promise<RecurringChargeResult> {
      let row = await balanceWrites(client).lock(c.accountId, c.mode);
      if (!row) throw new Error(`no money row for account ${c.accountId} (${c.mode})`);
      const short = (r: MoneyRow) => c.mode === 'live' && r.balance_cents - r.reserved_cents < c.amountCents;
      // A renewal is what automatic top-up is for: when it is on and the money is short, the card
      // is charged first (once), as it would be after any charge that left the balance low.
      if (short(row) && row.auto_top_up_threshold_cents !== null && row.auto_top_up_amount_cents !== null) {
        await topUp(client, {
          accountId: c.accountId,
          amountCents: row.auto_top_up_amount_cents,
          paymentReference: `auto_${crypto.randomUUID()}`,
          description: 'Automatic top-up (card)',
          now: c.now,
        });
        row = (await balanceWrites(client).lock(c.accountId, c.mode))!;
      }
      if (short(row)) return { outcome: 'insufficient_balance' };
      const claimed = await recurringWrites(client).claimPeriod({
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
      if (!claimed) return { outcome: 'already_charged' };
      const line: LedgerRow | null = await postLine(
        client,
        {
          accountId: c.accountId,
          mode: c.mode,
          customerId: c.customerId,
          type: 'usage',
          cause: c.item,
          amountCents: -c.amountCents,
          reference: `${c.item}:${c.itemId}:${c.periodStart}`,
          description: c.description,
          now: c.now,
        },
        { row },
      );
      return { outcome: 'charged', line: line! };
    },

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
      await postLine(client, {
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
