import { afterCommit, type Client } from '../../db/pool.ts';
import type { MoneyRow } from '../../db/money/balances.ts';
import type { NewLedgerLine } from '../../db/money/ledger.ts';
import { recurringBatchWrites, type PeriodClaim, type RecurringBatchWrite } from '../../db/money/recurring.ts';
import { applyLine } from '../rules/apply-line.ts';
import { lowBalanceStageOf } from '../rules/low-balance.ts';
import { callReserveCents, dayKey, minutesUsedNow, monthKey } from '../rules/pricing.ts';
import type { Clock } from '../../runtime/clock.ts';
import { countLedgerLine } from '../../runtime/metrics.ts';
import type { RecurringCharge } from './types.ts';
import { recurringLine } from './recurring.ts';

/**
 * Recurring charges of many items at once, set-based: the same charges `chargeRecurring` makes
 * one by one (money/writer/recurring.ts), for a renewal batch, in four statements however many
 * items: the batch's money rows locked in one order, the grants and claims read under those locks,
 * and one statement that writes every period's claim, every line, each money row's final values,
 * each customer's spend and the bonus taken.
 *
 * Each account's charges are worked out in the order given, one after another, with the very
 * rules `postLine` uses (`applyLine`, the bonus split earliest expiry first, the low-balance
 * stage), so the lines are the lines the one-by-one path writes. An account is left to the
 * one-by-one path (not charged here, its items returned as `left`) wherever that path would do
 * more than write the line: the money short at one of its charges (the countdown, an automatic
 * top-up asked), a low-balance stage crossed (a `balance.low` event), the spendable balance
 * crossing one call's hold (readiness re-assessed), the balance falling under the automatic
 * top-up's threshold, or expired bonus credit to write off. Those accounts' rows are locked here
 * too (in the same order), so what the caller then charges one by one takes no new money lock.
 */
export function createRecurringBatchMoney(realTime: Clock) {
  return {
    /**
     * Charges `charges` (grouped by account, each account's in the order given) where the set
     * path may; `alsoLock` are accounts the caller will charge one by one in this transaction.
     * Returns the outcome of each item charged here (`charged` or `already_charged`); the items
     * of every other account are left to `chargeRecurring`.
     */
    async chargeRecurringBatch(
      client: Client,
      charges: RecurringCharge[],
      alsoLock: { accountId: string; mode: RecurringCharge['mode'] }[] = [],
    ): Promise<Map<string, 'charged' | 'already_charged'>> {
      const outcomes = new Map<string, 'charged' | 'already_charged'>();
      const db = recurringBatchWrites(client);
      const keyOf = (k: { accountId: string; mode: string }) => `${k.accountId}|${k.mode}`;
      const keys = new Map<string, { accountId: string; mode: RecurringCharge['mode'] }>();
      for (const k of [...charges, ...alsoLock]) keys.set(keyOf(k), { accountId: k.accountId, mode: k.mode });
      const locked = await db.lockInOrder([...keys.values()]);
      if (charges.length === 0) return outcomes;
      const rows = new Map(locked.map((r) => [keyOf({ accountId: r.account_id, mode: r.mode }), r]));
      const realNow = realTime.now();
      const accountIds = [...new Set(charges.map((c) => c.accountId))];
      const facts = await db.facts(accountIds, charges.map((c) => ({ itemId: c.itemId, periodStart: c.periodStart })), realNow);

      const groups = new Map<string, RecurringCharge[]>();
      for (const c of charges) {
        const k = keyOf(c);
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k)!.push(c);
      }
      const write: RecurringBatchWrite = { claims: [], lines: [], rows: [], spend: [], spendDay: '', spendMonth: '', takes: [] };
      const spend = new Map<string, number>();
      const takes = new Map<string, number>();
      for (const [k, group] of groups) {
        const start = rows.get(k);
        if (!start) continue; // No money row: the one-by-one path says so.
        const plan = planAccount(start, group, facts);
        if (!plan) continue;
        for (const c of group) outcomes.set(c.itemId, plan.claimed.has(c.itemId) ? 'charged' : 'already_charged');
        write.claims.push(...plan.claims);
        write.lines.push(...plan.lines);
        if (plan.lines.length > 0) write.rows.push(plan.row);
        for (const [id, cents] of plan.spend) spend.set(id, (spend.get(id) ?? 0) + cents);
        for (const [id, cents] of plan.takes) takes.set(id, (takes.get(id) ?? 0) + cents);
      }
      if (write.claims.length === 0) return outcomes;
      const now = write.claims[0].now;
      write.spendDay = dayKey(now);
      write.spendMonth = monthKey(now);
      write.spend = [...spend].map(([customerId, cents]) => ({ customerId, cents }));
      write.takes = [...takes].map(([grantId, cents]) => ({ grantId, cents }));
      const written = await db.apply(write);
      // Each item's lock is held, so nobody else can have claimed its period meanwhile; if one was,
      // nothing of the batch may stand (its transaction is rolled back and walked item by item).
      if (written.claimed !== write.claims.length || written.lines !== write.lines.length) {
        throw new Error(`a renewal batch claimed ${written.claimed} of ${write.claims.length} periods`);
      }
      for (const line of write.lines) afterCommit(client, () => countLedgerLine(line.cause, line.mode));
      return outcomes;
    },
  };
}

/**
 * One account's charges worked out in order on its locked row, or null where the one-by-one path
 * must take them (see `createRecurringBatchMoney`).
 */
function planAccount(
  start: MoneyRow,
  group: RecurringCharge[],
  facts: { grants: { id: string; account_id: string; remaining_cents: number; unexpired: boolean }[]; claimed: Set<string> },
) {
  const live = start.mode === 'live';
  const ownGrants = facts.grants.filter((g) => g.account_id === start.account_id);
  // Expired credit is written off by the one-by-one path when a charge finds it.
  if (live && ownGrants.some((g) => !g.unexpired)) return null;
  const grants = ownGrants.map((g) => ({ id: g.id, remaining: g.remaining_cents }));
  let row: MoneyRow = { ...start };
  const claims: PeriodClaim[] = [];
  const lines: NewLedgerLine[] = [];
  const claimed = new Set<string>();
  const spend = new Map<string, number>();
  const takes = new Map<string, number>();
  for (const c of group) {
    // The one-by-one path's order: short first (even for a period claimed before), then claimed.
    if (live && row.balance_cents - row.reserved_cents < c.amountCents) return null;
    if (facts.claimed.has(c.itemId)) continue;
    const { next, line, spendCents } = applyLine(row, recurringLine(c));
    const charge = c.amountCents;
    if (live) {
      next.low_balance_stage = lowBalanceStageOf(next, c.now);
      if (next.low_balance_stage !== row.low_balance_stage) return null;
      const reserve = callReserveCents(minutesUsedNow({ minutesMonth: next.minutes_month, minutesUsed: next.minutes_used }, c.now));
      if (row.balance_cents - row.reserved_cents >= reserve !== next.balance_cents - next.reserved_cents >= reserve) return null;
      if (charge > 0 && next.auto_top_up_threshold_cents !== null && next.auto_top_up_amount_cents !== null && next.balance_cents - next.reserved_cents < next.auto_top_up_threshold_cents) return null;
      // Bonus before cash, earliest expiry first: what the money change's split takes.
      let eligible = row.bonus_cents > 0 ? charge : 0;
      let taken = 0;
      for (const g of grants) {
        if (eligible <= 0) break;
        const take = Math.min(g.remaining, eligible);
        if (take <= 0) continue;
        g.remaining -= take;
        eligible -= take;
        taken += take;
        takes.set(g.id, (takes.get(g.id) ?? 0) + take);
      }
      next.paid_cents += taken;
      next.bonus_cents -= taken;
      line.cash_cents += taken;
      line.bonus_cents -= taken;
    }
    if (spendCents > 0) spend.set(c.customerId, (spend.get(c.customerId) ?? 0) + spendCents);
    claims.push({ itemId: c.itemId, periodStart: c.periodStart, item: c.item, accountId: c.accountId, mode: c.mode, customerId: c.customerId, periodEnd: c.periodEnd, amountCents: c.amountCents, now: c.now });
    lines.push(line);
    claimed.add(c.itemId);
    row = next;
  }
  return { row, claims, lines, claimed, spend, takes };
}
