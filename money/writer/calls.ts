import { withTransaction, isUniqueViolation, type Client, type Pool, type Queryable } from '../../db/pool.ts';
import { balanceReads, balanceWrites, type MoneyRow } from '../../db/money/balances.ts';
import { holdReads, holdWrites, type ClaimedHold } from '../../db/money/holds.ts';
import type { CallRow } from '../../db/calls.ts';
import { activityWrites } from '../../db/money/activity.ts';
import type { Mode } from '../../runtime/types.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { CALL_TARIFF, billableMinutes, callReserveCents, dayKey, minutesUsedNow, monthKey, priceMinutes } from '../rules/pricing.ts';
import { holdMovesStageOrReadiness } from '../rules/low-balance.ts';
import { holdRefusal } from '../rules/hold-rules.ts';
import type { Lines } from './lines.ts';
import type { TestClockScope } from '../../db/test-clocks.ts';
import type { CallEnd, EndCallResult, StartCallResult } from './types.ts';

/**
 * A call's money has one path each way. Its start takes a hold through `startCall` (the account
 * actor's `start_call`, asked by the dialler). Its end is `settleCall`, inside the transaction that
 * writes the call's outcome (the call actor's `finish`, or call-jobs for a lost call): the charge
 * commits with the outcome or not at all. `endCall` is the same settlement in a transaction of
 * its own, for the console's test facility. A hold whose call never reports back is released by
 * the sweeper (`releaseExpiredHolds`).
 */

/** A call locked for its end, with its open hold claimed if it has one (`lockCallForEnd`). */
export interface CallClaim {
  call: CallRow;
  claim: ClaimedHold | null;
}

/** A hold not ended within this long is released by the sweeper (spec: within thirty minutes). */
export const HOLD_LIFETIME_MS = 30 * 60 * 1000;

/**
 * Holds of `heldCents` in all lowered a live account's spendable balance to `after`'s: when a
 * low-balance stage or readiness (the balance crossing one call's reserve) may have moved, both
 * are looked at in a transaction of their own. One hold (`startCall`) or a round's (`startCalls`).
 */
export async function afterHoldsTaken(
  pool: Pool,
  lines: Lines,
  accountId: string,
  after: Pick<MoneyRow, 'balance_cents' | 'reserved_cents' | 'low_balance_stage' | 'last_top_up_cents' | 'minutes_month' | 'minutes_used'>,
  heldCents: number,
  now: Date,
): Promise<void> {
  const reserve = callReserveCents(minutesUsedNow({ minutesMonth: after.minutes_month, minutesUsed: after.minutes_used }, now));
  const spendable = after.balance_cents - after.reserved_cents;
  const before = spendable + heldCents;
  if (holdMovesStageOrReadiness(before, spendable, after.low_balance_stage, after.last_top_up_cents, reserve)) {
    await withTransaction(pool, async (client) => {
      await lines.checkLowBalance(client, accountId, now);
      await lines.balanceMoved(client, accountId, before, after, now);
    });
  }
}

export function createCallMoney(lines: Lines) {
  /** A call start refused (by the hold statement, or by admission before it), in the activity log. */
  async function recordRefusedStart(
    db: Queryable,
    r: { accountId: string; mode: Mode; customerId: string; reason: string; reference: string; detail?: unknown; now: Date },
  ): Promise<void> {
    await activityWrites(db).logActivity({ ...r, kind: 'call_start_refused' });
  }

  /**
   * Holds the price of the longest call at the month's tier and takes a call slot, or refuses with
   * the spec's reason (recorded in the activity log). One conditional statement decides; a
   * customer not of this account and mode is refused as `customer_not_found` (a Refusal).
   */
  async function startCall(
    pool: Pool,
    c: { accountId: string; mode: Mode; customerId: string; reference: string; now: Date; scheduleNow?: Date },
  ): Promise<StartCallResult> {
    const day = dayKey(c.now);
    const month = monthKey(c.now);
    // A customer on a test clock has its hold expire 30 minutes after on that clock (its spend
    // days stay the account's, on `now`).
    const expiresAt = new Date((c.scheduleNow ?? c.now).getTime() + HOLD_LIFETIME_MS);
    let opened;
    try {
      opened = await holdWrites(pool).openHold({ ...c, day, month, expiresAt, tariff: CALL_TARIFF });
    } catch (err) {
      if (isUniqueViolation(err)) throw new Error(`a hold for ${c.reference} already exists`);
      throw err;
    }
    if (opened && c.mode === 'live') {
      // The hold lowered the spendable balance: a low-balance stage or readiness may have moved.
      await afterHoldsTaken(pool, lines, c.accountId, opened.money, opened.hold.amount_cents, c.now);
    }
    if (opened) return { ok: true, hold: opened.hold };

    // Refused. A customer of another account or mode takes no hold (the statement finds no
    // customer row): it is not found, and nothing is recorded, as for a refund. Checked here, on
    // the refused path only, rather than by a read before every start.
    const f = await holdReads(pool).holdFacts(c.accountId, c.mode, c.customerId, day, month);
    if (!f) throw new Refusal('customer_not_found');
    // Name the reason from the facts as they are now, with the hold priced as it was.
    const row = await balanceReads(pool).get(c.accountId, c.mode);
    if (!row) throw new Error(`no money row for account ${c.accountId}`);
    const amountCents = callReserveCents(minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, c.now));
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
  async function settleCall(client: Client, e: CallEnd, claimed?: CallClaim): Promise<EndCallResult> {
    const minutes = billableMinutes(e.durationSeconds);
    const holds = holdWrites(client);
    // Claiming (locking) the hold first makes the end report and the sweeper race on one row: one wins.
    // A hold claimed with its call's lock in this transaction (`lockCallForEnd`) is still open and
    // locked; without one, it is claimed here (a released or settled hold is looked up below).
    const pre = claimed && claimed.claim && claimed.claim.hold.account_id === e.accountId && claimed.claim.hold.reference === e.reference ? claimed.claim : null;
    const settled = pre ?? (await holds.settleHold(e.accountId, e.reference));
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
    await lines.postLine(
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

  /**
   * Locks a call that is ending and, in the same statement, claims its open hold (reference: the
   * call's id) with the hold's money row, as `settleCall` would: one round trip fewer for the call
   * actor's `finish`, which hands the claim to `settleCall`. Null if there is no such call. The
   * locks are the order every money path takes (the call, then the hold, then the money row); a
   * call that turns out not to be settled only held them until its transaction ends.
   */
  async function lockCallForEnd(client: Client, callId: string): Promise<CallClaim | null> {
    return holdWrites(client).lockCallAndClaimHold(callId);
  }

  return {
    startCall,
    settleCall,
    lockCallForEnd,

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

    recordRefusedStart,

    /**
     * Releases up to `limit` holds whose call never reported back (the sweeper's claim), giving their
     * money and slot back. Returns how many. `clock`: only the holds of that test clock's customers,
     * expired on its time (null: those of customers on no clock, on `now`); dated `now` either way.
     */
    async releaseExpiredHolds(client: Client, now: Date, limit: number, clock: TestClockScope | null = null): Promise<number> {
      const holds = holdWrites(client);
      const released = await holds.releaseExpired(now, limit, clock);
      for (const hold of released) {
        await holds.returnHold(hold);
        // Money came back: the stage may rise, so a later fall is warned about again; readiness may return.
        if (hold.mode === 'live') {
          await lines.checkLowBalance(client, hold.account_id, now);
          const row = await balanceReads(client).get(hold.account_id, 'live');
          if (row) await lines.balanceMoved(client, hold.account_id, row.balance_cents - row.reserved_cents - hold.amount_cents, row, now);
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
  };
}
