import { isUniqueViolation, type Pool } from '../../db/pool.ts';
import { holdBatchWrites } from '../../db/money/hold-batch.ts';
import type { Mode } from '../../runtime/types.ts';
import { CALL_TARIFF, dayKey, monthKey } from '../rules/pricing.ts';
import { holdRefusal } from '../rules/hold-rules.ts';
import { Refusal } from '../../runtime/refusal.ts';
import type { Lines } from './lines.ts';
import type { StartCallResult } from './types.ts';
import { HOLD_LIFETIME_MS, afterHoldsTaken, type createCallMoney } from './calls.ts';

/**
 * The starts of many calls of one account at once (a dialler round's requests of that account):
 * one statement takes every hold that `startCall` would take were the calls asked one after
 * another in the order given (db/money/hold-batch.ts); each call refused there gets the reason
 * `startCall` would have named at its place in the order (`holdRefusal` on the facts the statement
 * locked, plus the holds the batch granted before it), recorded in the activity log as ever; a
 * customer not the account's is `customer_not_found` for that call alone. A statement that fails
 * as a whole (a hold already there, say) leaves nothing taken, and every call is asked alone. Live mode's low-balance stage and readiness are looked at once, after the batch,
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
      let total = 0;
      for (const hold of opened.holds.values()) total += Number(hold.amount_cents);
      await afterHoldsTaken(pool, lines, b.accountId, opened.money, total, b.now);
    }
    const facts = opened.facts;
    if (!facts) return alone(b.calls);
    // Each refusal named at its place in the order: the facts as locked, plus the holds the batch
    // granted before it (what `startCall` asked alone at that point would have read).
    const a = facts.account;
    let accountHolds = 0;
    const customerHolds = new Map<string, number>();
    const results: PromiseSettledResult<StartCallResult>[] = [];
    for (const c of b.calls) {
      const hold = opened.holds.get(c.reference);
      const customer = facts.customers.get(c.customerId);
      if (hold) {
        accountHolds++;
        customerHolds.set(c.customerId, (customerHolds.get(c.customerId) ?? 0) + 1);
        results.push({ status: 'fulfilled', value: { ok: true, hold } });
        continue;
      }
      // Not the account's customer in this mode: refused as startCall refuses it, nothing recorded.
      if (!customer) {
        results.push({ status: 'rejected', reason: new Refusal('customer_not_found') });
        continue;
      }
      const mine = customerHolds.get(c.customerId) ?? 0;
      const reservedCents = a.reservedCents + accountHolds * a.amountCents;
      const reason =
        holdRefusal({
          mode: b.mode,
          amountCents: a.amountCents,
          availableCents: a.balanceCents - reservedCents,
          account: { ...a, reservedCents, openCalls: a.openCalls + accountHolds },
          customer: { ...customer, reservedCents: customer.reservedCents + mine * a.amountCents, openCalls: customer.openCalls + mine },
        }) ?? 'concurrency_limit';
      try {
        await calls.recordRefusedStart(pool, { accountId: b.accountId, mode: b.mode, customerId: c.customerId, reason, reference: c.reference, detail: { hold_cents: a.amountCents }, now: b.now });
        results.push({ status: 'fulfilled', value: { ok: false, reason } });
      } catch (err) {
        results.push({ status: 'rejected', reason: err });
      }
    }
    return results;
  }
  return { startCalls };
}
