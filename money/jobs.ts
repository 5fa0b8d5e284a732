import { withTransaction, type Pool } from '../db/pool.ts';
import { grantReads } from '../db/money/grants.ts';
import { minimumReads } from '../db/money/minimums.ts';
import { createSettingsRepository } from '../db/settings.ts';
import { monthKey } from './rules/pricing.ts';
import { minimumShortfallCents, monthAfter, monthsToClose } from './rules/monthly-minimum.ts';
import type { MoneyWriter } from './writer.ts';
import type { TestClockScope } from '../db/test-clocks.ts';

/**
 * Periodic money jobs. Each is safe to run at any time, twice, or on several processes at once:
 * rows are claimed with SKIP LOCKED or by a unique record, inside the transaction that acts. The
 * jobs find the work and batch it; every write is the writer's.
 */

const BATCH = 100;

/** Releases holds whose call never reported back within 30 minutes (`clock`: of that test clock's customers, on its time). Returns how many. */
export async function releaseExpiredHolds(pool: Pool, money: MoneyWriter, now: Date, clock: TestClockScope | null = null): Promise<number> {
  let total = 0;
  for (;;) {
    const released = await withTransaction(pool, (client) => money.releaseExpiredHolds(client, now, BATCH, clock));
    total += released;
    if (released < BATCH) return total;
  }
}

/**
 * Writes off bonus credit left at its expiry, one ledger line per grant, each account in its own
 * transaction. `now` is real time: bonus credit never expires on a test clock.
 */
export async function expireBonuses(pool: Pool, money: MoneyWriter, now: Date): Promise<number> {
  let total = 0;
  for (const accountId of await grantReads(pool).accountsWithExpiredBonus(now, BATCH)) {
    total += await withTransaction(pool, (client) => money.writeOffExpiredBonus(client, accountId, now));
  }
  return total;
}

/** The first month whose minimums are not all recorded yet, as its month key (settings). */
const MINIMUMS_OPEN_FROM = 'minimums_open_from';

/**
 * After a month closes: each live customer taken live before that month whose call spend in it
 * was under the minimum is charged the difference, once (monthly_minimums records each
 * customer-month, whatever the outcome, so a second run or a second process does nothing).
 * Every closed month not done yet is looked at, however long the service was down at a month's
 * turn; a mark in settings records the first one not done. A customer can only join a month's
 * candidates before that month starts (taken live before it), so a month once done stays done.
 */
export async function closeMonth(pool: Pool, money: MoneyWriter, now: Date): Promise<number> {
  const settings = createSettingsRepository(pool);
  const openFrom = await settings.get(MINIMUMS_OPEN_FROM);
  const earliestTakenLive = openFrom ? null : await minimumReads(pool).earliestTakenLive();
  let charged = 0;
  for (const month of monthsToClose({ openFrom, earliestTakenLive }, now)) charged += await closeOneMonth(pool, money, month, now);
  await settings.raise(MINIMUMS_OPEN_FROM, monthKey(now));
  return charged;
}

async function closeOneMonth(pool: Pool, money: MoneyWriter, monthStart: Date, now: Date): Promise<number> {
  let charged = 0;
  for (const candidate of await minimumReads(pool).minimumCandidates(monthStart, monthAfter(monthStart))) {
    const shortfallCents = minimumShortfallCents(Number(candidate.spent_cents));
    const did = await withTransaction(pool, (client) =>
      money.chargeMonthlyMinimum(client, { accountId: candidate.account_id, customerId: candidate.id, monthStart, shortfallCents, now }),
    );
    if (did) charged++;
  }
  return charged;
}
