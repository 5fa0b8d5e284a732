import { withTransaction, isUniqueViolation, type Pool } from '../../db/pool.ts';
import { createMoneyRepository, type HoldRow } from '../../db/money.ts';
import type { Mode } from '../../runtime/types.ts';
import { billableMinutes, callReserveCents, dayKey, minutesUsedNow, monthKey, priceMinutes } from './pricing.ts';
import { holdRefusal, type RefusalReason } from './hold-rules.ts';
import { checkLowBalance, postLine } from './ledger.ts';

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
  const money = createMoneyRepository(pool);
  const row = await money.get(c.accountId, c.mode);
  if (!row) throw new Error(`no money row for account ${c.accountId}`);
  // Tiers only get cheaper within a month, so a position read a moment ago never under-holds.
  const amountCents = callReserveCents(minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, c.now));
  const day = dayKey(c.now);
  const month = monthKey(c.now);
  const opened = await withTransaction(pool, async (client) => {
    let result;
    try {
      result = await createMoneyRepository(client).openHold({
        ...c,
        amountCents,
        day,
        month,
        expiresAt: new Date(c.now.getTime() + HOLD_LIFETIME_MS),
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new Error(`a hold for ${c.reference} already exists`);
      throw err;
    }
    if (result && c.mode === 'live') await checkLowBalance(client, c.accountId, c.now);
    return result;
  });
  if (opened) return { ok: true, hold: opened.hold };

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
export async function endCall(pool: Pool, e: { accountId: string; reference: string; durationSeconds: number; now: Date }): Promise<EndCallResult> {
  const minutes = billableMinutes(e.durationSeconds);
  return withTransaction(pool, async (client) => {
    const money = createMoneyRepository(client);
    const hold = (await money.lockOpenHold(e.accountId, e.reference)) ?? (await money.findHold(e.accountId, e.reference));
    if (!hold) throw new Error(`no hold for call ${e.reference}`);
    const alreadySettled = (): EndCallResult => ({
      object: 'call_charge',
      reference: e.reference,
      outcome: 'already_settled',
      minutes,
      charged_cents: hold.charged_cents ?? 0,
    });
    if (hold.status === 'settled') return alreadySettled();

    const row = (await money.lock(e.accountId, hold.mode))!;
    const price = priceMinutes(minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, e.now), minutes);
    // The hold was the price of the longest call at the tier when it started; never charge more.
    const charge = Math.min(price, hold.amount_cents);
    if (hold.status === 'open') {
      await money.settleHold(e.accountId, e.reference, charge, e.now);
      await money.returnHold(hold);
    } else if (!(await money.claimLateCharge(hold.id, charge))) {
      return alreadySettled();
    }
    if (charge > 0) {
      await postLine(client, {
        accountId: e.accountId,
        mode: hold.mode,
        customerId: hold.customer_id,
        type: 'usage',
        cause: 'call',
        amountCents: -charge,
        minutes,
        reference: e.reference,
        description: `Call, ${minutes} min${hold.status === 'released' ? ' (ended after its hold was released)' : ''}`,
        now: e.now,
      });
    } else if (hold.mode === 'live') {
      await checkLowBalance(client, e.accountId, e.now);
    }
    return { object: 'call_charge', reference: e.reference, outcome: hold.status === 'open' ? 'settled' : 'late', minutes, charged_cents: charge };
  });
}
