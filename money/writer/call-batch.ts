import { isUniqueViolation, withTransaction, type Pool } from '../../db/pool.ts';
import { holdBatchWrites } from '../../db/money/hold-batch.ts';
import type { Mode } from '../../runtime/types.ts';
import { CALL_TARIFF, callReserveCents, dayKey, minutesUsedNow, monthKey } from '../rules/pricing.ts';
import { lowBalanceStage } from '../rules/low-balance.ts';
import type { Lines } from './lines.ts';
import type { StartCallResult } from './types.ts';
import { HOLD_LIFETIME_MS, type createCallMoney } from './calls.ts';

/**
 * The starts of many calls of one account at once (a dialler round's requests of that account):
 * one statement takes every hold that `startCall` would take were the calls asked one after
 * another in the order given (db/money/hold-batch.ts); each call refused there is then asked
 * alone through `startCall`, in order, which refuses it with its reason (recorded in the activity
 * log as ever) or, when a slot was freed meanwhile, takes its hold as a later start would. A
 * statement that fails as a whole (a hold already there, say) leaves nothing taken, and every call
 * is asked alone. Live mode's low-balance stage and readiness are looked at once, after the batch,
 * across the balance it moved (a threshold crossed by any of its holds is crossed by all of them).
 */
export function createCallBatchMoney(lines: Lines, calls: ReturnType<typeof createCallMoney>) {
  async function startCalls(
    pool: Pool,
    b: { accountId: string; mode: Mode; now: Date; calls: readonly { customerId: string; reference: string; scheduleNow?: Date }[] },
  ): Promise<PromiseSettledResult<StartCallResult>[]> {
    const one = (c: (typeof b.calls)[number]) => calls.startCall(pool, { accountId: b.accountId, mode: b.mode, customerId: c.customerId, reference: c.reference, now: b.now, scheduleNow: c.scheduleNow });
    // Each call asked alone, in order; what one throws (a customer of another account: a Refusal) is its own.
    const alone = async (list: readonly (typeof b.calls)[number][]): Promise<PromiseSettledResult<StartCallResult>[]> => {
      const results: PromiseSettledResult<StartCallResult>[] = [];
      for (const c of list) results.push(await one(c).then((value) => ({ status: 'fulfilled' as const, value }), (reason) => ({ status: 'rejected' as const, reason })));
      return results;
    };
    if (b.calls.length <= 1) return alone(b.calls);
    let opened;
    try {
      opened = await holdBatchWrites(pool).openHolds({
        accountId: b.accountId,
        mode: b.mode,
        day: dayKey(b.now),
        month: monthKey(b.now),
        now: b.now,
        // A customer on a test clock has its hold expire 30 minutes after on that clock (startCall).
        calls: b.calls.map((c) => ({ customerId: c.customerId, reference: c.reference, expiresAt: new Date((c.scheduleNow ?? b.now).getTime() + HOLD_LIFETIME_MS) })),
        tariff: CALL_TARIFF,
      });
    } catch (err) {
      // A hold already there for one of them: nothing was taken (one statement), so each is asked alone.
      if (isUniqueViolation(err)) return alone(b.calls);
      throw err;
    }
    if (opened.money && b.mode === 'live') {
      const after = opened.money;
      let total = 0;
      for (const hold of opened.holds.values()) total += Number(hold.amount_cents);
      const reserve = callReserveCents(minutesUsedNow({ minutesMonth: after.minutes_month, minutesUsed: after.minutes_used }, b.now));
      const stage = lowBalanceStage(after.balance_cents - after.reserved_cents, after.last_top_up_cents, reserve);
      const before = after.balance_cents - after.reserved_cents + total;
      if (stage !== after.low_balance_stage || before >= reserve !== before - total >= reserve) {
        await withTransaction(pool, async (client) => {
          await lines.checkLowBalance(client, b.accountId, b.now);
          await lines.balanceMoved(client, b.accountId, before, after, b.now);
        });
      }
    }
    const refused = b.calls.filter((c) => !opened.holds.has(c.reference));
    const again = await alone(refused);
    return b.calls.map((c) => {
      const hold = opened.holds.get(c.reference);
      return hold ? { status: 'fulfilled' as const, value: { ok: true as const, hold } } : again[refused.indexOf(c)];
    });
  }
  return { startCalls };
}
