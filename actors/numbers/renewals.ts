import { withTransaction, type Client } from '../../db/pool.ts';
import { createNumberRepository, type NumberRow } from '../../db/numbers.ts';
import { recurringDueBy } from '../../db/recurring-due.ts';
import { eachDueInBatches } from '../shared/due-batches.ts';
import { fundableCents } from '../../money/balance-view.ts';
import { addDays, dayOf, inNoticeWindow, reached, releaseDueOn, RENEWAL_NOTICE_DAYS } from '../../money/rules/renewal.ts';
import { CarrierNumberError } from '../../telephony/carrier.ts';
import { BATCH, type NumbersDeps, type NumberTools } from './tools.ts';
import type { TestClockScope } from '../../db/test-clocks.ts';
import type { RecurringCharge } from '../../money/writer.ts';

/**
 * Renewals: each number's monthly rent taken on its day (every period due, for a service that
 * was away), the early warning 3 days ahead when the balance will not cover it, the countdown
 * when it cannot be taken, rent left unpaid taken when money comes, and the release when the
 * countdown ends (unless money came meanwhile).
 */

export function createRenewals(deps: NumbersDeps, tools: NumberTools) {
  const { pool, log } = deps;
  const { money } = deps;
  const { periodCharge, chargePeriod, emit, releaseAtCarrier, markReleased } = tools;

  /**
   * One renewal look at a number (claimed, locked, by the job): the early warning when the notice window
   * has opened and the balance will not cover the rent; at renewal, the rent (every period due,
   * if the service was away), or the countdown when it cannot be taken.
   */
  async function renewOne(client: Client, claimed: NumberRow, today: string, now: Date): Promise<boolean> {
    const repo = createNumberRepository(client);
    let row = claimed;
    if ((row.status !== 'active' && row.status !== 'payment_due') || !row.renews_on) return false;
    if (!reached(today, row.renews_on)) {
      if (!inNoticeWindow(today, row.renews_on) || row.notice_sent_for === row.renews_on) return false;
      // Every rent and hosting of the account falling due by this renewal competes for the same money.
      const due = await recurringDueBy(client, row.account_id, row.mode, row.renews_on);
      const short = (await fundableCents(client, row.account_id, row.mode, { liveProcessor: deps.config.stripe !== null, realNow: deps.realClock.now() })) < Math.max(due, row.monthly_cents);
      row = await repo.update(row.id, { notice_sent_for: row.renews_on }, now);
      if (short) await emit(client, row, 'number.payment_due', now);
      return short;
    }
    let charged = false;
    // Every period due is charged in turn (a service away over a renewal catches up).
    while (row.renews_on && reached(today, row.renews_on)) {
      const { paid, waiting, periodEnd } = await chargePeriod(client, row, row.renews_on, now);
      if (!paid) {
        // The automatic top-up is on its way: the next round charges the rent, without a countdown.
        if (waiting) return charged;
        if (row.status === 'active') {
          // The countdown runs from the renewal, or from today when the service was away past it:
          // a countdown that has already ended would be none.
          const from = today > row.renews_on ? today : row.renews_on;
          row = await repo.update(row.id, { status: 'payment_due', release_due_on: releaseDueOn(from), notice_sent_for: row.renews_on }, now);
          await emit(client, row, 'number.payment_due', now);
          return true;
        }
        return charged;
      }
      row = await repo.renewed(row.id, periodEnd, now);
      charged = true;
    }
    return charged;
  }

  /**
   * A claimed batch renewed at once where it can be: the numbers due for exactly one period, of
   * accounts none of whose numbers in the batch needs more (an early warning, periods to catch
   * up), are charged set-based (money writer `chargeRecurringBatch`) and marked renewed in one
   * statement; what the writer leaves (an account short of money, a low-balance stage crossed, …)
   * and every other number is looked at by `renewOne` as before, after it. Accounts are
   * independent, so only the order within an account matters, and that is kept. Every money row
   * the batch may charge is locked first, in one order (no deadlock between two jobs' batches).
   */
  async function renewBatch(client: Client, rows: NumberRow[], today: string, now: Date): Promise<number> {
    // The period due of each number whose rent is due (its description formatted once: most of this path's own CPU).
    const charges = new Map<string, RecurringCharge>();
    for (const r of rows) {
      if ((r.status === 'active' || r.status === 'payment_due') && r.renews_on && reached(today, r.renews_on)) charges.set(r.id, periodCharge(r, r.renews_on, now));
    }
    const oneDue = (r: NumberRow) => charges.has(r.id) && !reached(today, charges.get(r.id)!.periodEnd);
    const keyOf = (r: NumberRow) => `${r.account_id}|${r.mode}`;
    const others = new Set(rows.filter((r) => !oneDue(r)).map(keyOf));
    const batched = rows.filter((r) => !others.has(keyOf(r)));
    const charging = rows.filter((r) => others.has(keyOf(r)) && charges.has(r.id));
    const outcomes = await money.chargeRecurringBatch(
      client,
      batched.map((r) => charges.get(r.id)!),
      charging.map((r) => ({ accountId: r.account_id, mode: r.mode })),
    );
    const renewed = batched.filter((r) => outcomes.has(r.id));
    await createNumberRepository(client).renewedAll(renewed.map((r) => ({ id: r.id, renewsOn: charges.get(r.id)!.periodEnd })), now);
    let acted = renewed.length;
    for (const row of rows) if (!outcomes.has(row.id) && (await renewOne(client, row, today, now))) acted++;
    return acted;
  }

  /** Releases one number whose countdown ended (claimed; the carrier first); false if it is not due, held, or refused. */
  async function releaseOne(id: string, today: string, now: Date): Promise<boolean> {
    try {
      return await withTransaction(pool, async (client) => {
        const row = await createNumberRepository(client).claim(id);
        if (!row || row.status !== 'payment_due' || !row.release_due_on || !reached(today, row.release_due_on) || !row.renews_on) return false;
        // Money that came while this job held the number (a top-up skips a held number) pays it now.
        const { paid, waiting, periodEnd } = await chargePeriod(client, row, row.renews_on, now);
        if (paid) {
          await createNumberRepository(client).update(row.id, { status: 'active', renews_on: periodEnd, release_due_on: null }, now);
          return false;
        }
        // An automatic top-up is on its way: not released now, looked at again next run.
        if (waiting) return false;
        await releaseAtCarrier(row);
        await markReleased(client, row, now);
        log.info({ number_id: row.id, customer_id: row.customer_id }, 'number released at the end of its rent countdown');
        return true;
      });
    } catch (err) {
      if (!(err instanceof CarrierNumberError)) throw err;
      log.error({ err, number_id: id }, 'the carrier could not release a number whose countdown ended; tried again next run');
      return false;
    }
  }

  return {
    /** Money came into `accountId`'s live balance (money writer reaction): unpaid rent is taken, in that transaction. */
    async fundsAdded(client: Client, accountId: string, now: Date): Promise<void> {
      const repo = createNumberRepository(client);
      for (const row of await repo.claimUnpaidOf(accountId)) {
        if (!row.renews_on) continue;
        const { paid, periodEnd } = await chargePeriod(client, row, row.renews_on, now);
        // One the money does not cover waits; a cheaper one (a caller ID) may still be paid.
        if (paid) await repo.update(row.id, { status: 'active', renews_on: periodEnd, release_due_on: null }, now);
      }
    },

    /**
     * The renewal job: rent of every number due (and early warnings), a batch of numbers claimed
     * and renewed in one transaction, set-based where it can be (`renewBatch`; each number
     * all-or-nothing within it; a batch one number breaks is walked again a number per
     * transaction: eachDueInBatches). Returns how many were charged or warned. `oneByOne` renews
     * each number of a batch in turn (the path before the set-based one; a test compares them).
     */
    async renewDue(now: Date, clock: TestClockScope | null = null, opts: { oneByOne?: boolean } = {}): Promise<number> {
      const today = dayOf(clock?.time ?? now);
      const noticeUntil = addDays(today, RENEWAL_NOTICE_DAYS);
      return eachDueInBatches(
        pool,
        BATCH,
        (client, after) => createNumberRepository(client).claimDueForRenewal(today, noticeUntil, BATCH, after, clock?.clockId ?? null),
        (client, id) => createNumberRepository(client).claim(id),
        (client, row) => renewOne(client, row, today, now),
        opts.oneByOne ? undefined : (client, rows) => renewBatch(client, rows, today, now),
      );
    },

    /** Releases numbers whose countdown ended, batch after batch until none is left. Returns how many. */
    async releaseOverdue(now: Date, clock: TestClockScope | null = null): Promise<number> {
      const today = dayOf(clock?.time ?? now);
      let released = 0;
      // A number the carrier refused (or another process holds) comes back in the next batch: each is tried once a run.
      const tried = new Set<string>();
      for (;;) {
        const ids = (await createNumberRepository(pool).dueForRelease(today, BATCH, clock?.clockId ?? null)).filter((id) => !tried.has(id));
        if (ids.length === 0) return released;
        for (const id of ids) {
          tried.add(id);
          if (await releaseOne(id, today, now)) released++;
        }
      }
    },
  };
}
