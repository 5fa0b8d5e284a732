import { withTransaction, isUniqueViolation, type Client, type Pool } from '../../db/pool.ts';
import { createMoneyRepository, type HoldRow } from '../../db/money.ts';
import type { Mode } from '../../runtime/types.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { billableMinutes, callReserveCents, dayKey, minutesUsedNow, monthKey, priceMinutes } from './pricing.ts';
import { lowBalanceStage } from './low-balance.ts';
import { holdRefusal, type RefusalReason } from './hold-rules.ts';
import { balanceMoved, checkLowBalance, postLine } from './ledger.ts';

/** A hold not ended within this long is released by the sweeper (spec: within thirty minutes). */
export const HOLD_LIFETIME_MS = 30 * 60 * 1000;

export type StartCallResult =
  | { ok: true; hold: HoldRow }
  | { ok: false; reason: RefusalReason };

/**
 * Holds the price of the longest call at the month's tier and takes a call slot, or refuses with
 * the spec's reason (recorded in the activity log). One conditional statement decides.
 */
export async function startCall(
  pool: Pool,
  c: { accountId: string; mode: Mode; customerId: string; reference: string; now: Date },
): Promise<StartCallResult> {
  const day = dayKey(c.now);
  const month = monthKey(c.now);
  const money = createMoneyRepository(pool);
  let opened;
  try {
    opened = await money.openHold({ ...c, day, month, expiresAt: new Date(c.now.getTime() + HOLD_LIFETIME_MS) });
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
  const row = await money.get(c.accountId, c.mode);
  if (!row) throw new Error(`no money row for account ${c.accountId}`);
  const amountCents = callReserveCents(minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, c.now));
  const f = await money.holdFacts(c.accountId, c.mode, c.customerId, day, month);
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
  await money.logActivity({
    accountId: c.accountId,
    mode: c.mode,
    customerId: c.customerId,
    kind: 'call_start_refused',
    reason,
    reference: c.reference,
    detail: { hold_cents: amountCents },
    now: c.now,
  });
  return { ok: false, reason };
}

export interface EndCallResult {
  object: 'call_charge';
  reference: string;
  /** settled: the hold paid for the call; late: the hold had been released, so the call is billed on its own line. */
  outcome: 'settled' | 'late' | 'already_settled';
  minutes: number;
  charged_cents: number;
}

/**
 * Charges the used minutes of a call, releases the rest of its hold and its slot. A hold resolves
 * once: the end report and the sweeper race on `status = 'open'`, and one wins. An end report
 * after the release is billed as its own line, once.
 */
export async function endCall(pool: Pool, e: CallEnd): Promise<EndCallResult> {
  return withTransaction(pool, async (client) => {
    // Asked for by reference (the console), an unknown hold is the asker's mistake, not a broken
    // invariant as it is for a call ending inside settleCall's callers.
    if (!(await createMoneyRepository(client).findHold(e.accountId, e.reference))) throw new Refusal('hold_not_found');
    return settleCall(client, e);
  });
}

export interface CallEnd {
  accountId: string;
  reference: string;
  durationSeconds: number;
  now: Date;
}

/** `endCall` inside the caller's transaction (the call's completion commits with its charge). */
export async function settleCall(client: Client, e: CallEnd): Promise<EndCallResult> {
  const minutes = billableMinutes(e.durationSeconds);
  const money = createMoneyRepository(client);
  // Claiming (locking) the hold first makes the end report and the sweeper race on one row: one wins.
  const settled = await money.settleHold(e.accountId, e.reference);
  const hold = settled?.hold ?? (await money.findHold(e.accountId, e.reference));
  if (!hold) throw new Error(`no hold for call ${e.reference}`);
  const result = (outcome: EndCallResult['outcome'], charged: number): EndCallResult => ({
    object: 'call_charge',
    reference: e.reference,
    outcome,
    minutes,
    charged_cents: charged,
  });
  if (!settled && hold.status !== 'released') return result('already_settled', hold.charged_cents ?? 0);

  const row = settled?.money ?? (await money.lock(e.accountId, hold.mode));
  if (!row) throw new Error(`no money row for account ${e.accountId}`);
  const price = priceMinutes(minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, e.now), minutes);
  // The hold was the price of the longest call at the tier when it started; never charge more.
  const charge = Math.min(price, hold.amount_cents);
  if (!settled && !(await money.claimLateCharge(hold.id, charge))) return result('already_settled', hold.charged_cents ?? 0);
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
