import { isUniqueViolation, withTransaction, type Pool } from '../../db/pool.ts';
import { holdBatchWrites, type BatchMoney } from '../../db/money/hold-batch.ts';
import type { HoldRow } from '../../db/money/holds.ts';
import type { Mode } from '../../runtime/types.ts';
import { CALL_TARIFF, callReserveCents, dayKey, minutesUsedNow, monthKey } from '../rules/pricing.ts';
import { holdMovesStageOrReadiness } from '../rules/low-balance.ts';
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
 * as a whole (a hold already there, say) leaves nothing taken, and every call is asked alone.
 *
 * Live mode's low-balance stage and readiness are looked at once, after the batch's last hold, as
 * `startCall` looks after each: the same only where no hold before the last moves them. A
 * `balance.low` event carries the balance as it is when written, so a stage crossed by an earlier
 * hold of the round must be told with the balance after THAT hold, as the calls asked one by one
 * tell it. A live round's holds are therefore taken in a transaction that is rolled back where a
 * hold before its last moves the stage or crosses one call's reserve; the round is then taken in
 * two, up to that hold and after it, each looked at after its own last hold.
 */

/** A live round to be taken in two: up to and including the call at `at`, and after it. */
class SplitAt {
  constructor(readonly at: number) {}
}

/**
 * The place in the round of the first granted hold, before the last, after which the live
 * account's low-balance stage would be other than the one recorded, or its spendable balance on
 * the other side of one call's reserve than before the round (what `afterHoldsTaken` after that
 * hold would act on); null when only the round's last hold can move them.
 */
function movedBeforeLast(holds: Map<number, HoldRow>, money: BatchMoney, now: Date): number | null {
  const granted = [...holds.keys()].sort((x, y) => x - y);
  const reserve = callReserveCents(minutesUsedNow({ minutesMonth: money.minutes_month, minutesUsed: money.minutes_used }, now));
  let available = money.balance_cents - money.reserved_cents;
  for (const at of granted) available += Number(holds.get(at)!.amount_cents);
  for (const at of granted.slice(0, -1)) {
    const before = available;
    available -= Number(holds.get(at)!.amount_cents);
    if (holdMovesStageOrReadiness(before, available, money.low_balance_stage, money.last_top_up_cents, reserve)) return at;
  }
  return null;
}

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
    const round = {
      accountId: b.accountId,
      mode: b.mode,
      day: dayKey(b.now),
      month: monthKey(b.now),
      now: b.now,
      // A customer on a test clock has its hold expire 30 minutes after on that clock (startCall).
      calls: b.calls.map((c) => ({ customerId: c.customerId, reference: c.reference, expiresAt: new Date((c.scheduleNow ?? b.now).getTime() + HOLD_LIFETIME_MS) })),
      tariff: CALL_TARIFF,
    };
    let opened;
    try {
      opened =
        b.mode === 'live'
          ? await withTransaction(pool, async (client) => {
              const taken = await holdBatchWrites(client).openHolds(round);
              const at = taken.money && movedBeforeLast(taken.holds, taken.money, b.now);
              if (at !== null) throw new SplitAt(at);
              return taken;
            })
          : await holdBatchWrites(pool).openHolds(round);
    } catch (err) {
      // An earlier hold than the last moves the stage or readiness: nothing was taken; the round in two.
      // Each part's failure is its own calls' (the first part's holds stand whatever the second meets).
      if (err instanceof SplitAt) {
        const part = (calls: typeof b.calls) =>
          startCalls(pool, { ...b, calls }).catch((failure: unknown) => calls.map((): PromiseSettledResult<StartCallResult> => ({ status: 'rejected', reason: failure })));
        const first = await part(b.calls.slice(0, err.at + 1));
        return [...first, ...(await part(b.calls.slice(err.at + 1)))];
      }
      // A hold already there for one of them: nothing was taken (one statement), so each is asked alone.
      if (isUniqueViolation(err)) return alone(b.calls);
      throw err;
    }
    // What looking after the holds threw is the last granted call's alone (only its hold can have
    // moved the stage or readiness: see movedBeforeLast): `startCall` would have thrown it for that
    // call, its hold taken, after the earlier calls had theirs and before the later were asked.
    let lookFailed: { at: number; err: unknown } | undefined;
    if (opened.money && b.mode === 'live') {
      let total = 0;
      for (const hold of opened.holds.values()) total += Number(hold.amount_cents);
      try {
        await afterHoldsTaken(pool, lines, b.accountId, opened.money, total, b.now);
      } catch (err) {
        lookFailed = { at: Math.max(...opened.holds.keys()), err };
      }
    }
    const facts = opened.facts;
    if (!facts) return alone(b.calls);
    // Each refusal named at its place in the order: the facts as locked, plus the holds the batch
    // granted before it (what `startCall` asked alone at that point would have read).
    const a = facts.account;
    let accountHolds = 0;
    const customerHolds = new Map<string, number>();
    const results: PromiseSettledResult<StartCallResult>[] = [];
    for (const [i, c] of b.calls.entries()) {
      // The hold granted to this call at its place (a reference that comes twice names one call's hold, not both).
      const hold = opened.holds.get(i);
      const customer = facts.customers.get(c.customerId);
      if (hold) {
        accountHolds++;
        customerHolds.set(c.customerId, (customerHolds.get(c.customerId) ?? 0) + 1);
        results.push(lookFailed?.at === i ? { status: 'rejected', reason: lookFailed.err } : { status: 'fulfilled', value: { ok: true, hold } });
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
