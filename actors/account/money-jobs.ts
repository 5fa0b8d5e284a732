import { withTransaction, type Pool } from '../../db/pool.ts';
import { createMoneyRepository } from '../../db/money.ts';
import { MONTHLY_MINIMUM_CENTS, monthKey } from './pricing.ts';
import { createSettingsRepository } from '../../db/settings.ts';
import { balanceMoved, checkLowBalance, postLine, writeOffExpiredBonus } from './ledger.ts';

/**
 * Periodic money jobs. Each is safe to run at any time, twice, or on several processes at once:
 * rows are claimed with SKIP LOCKED or by a unique record, inside the transaction that acts.
 */

const BATCH = 100;

/** Releases holds whose call never reported back within 30 minutes. Returns how many. */
export async function releaseExpiredHolds(pool: Pool, now: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const released = await withTransaction(pool, async (client) => {
      const money = createMoneyRepository(client);
      const holds = await money.releaseExpired(now, BATCH);
      for (const hold of holds) {
        await money.returnHold(hold);
        // Money came back: the stage may rise, so a later fall is warned about again; readiness may return.
        if (hold.mode === 'live') {
          await checkLowBalance(client, hold.account_id, now);
          const row = await money.get(hold.account_id, 'live');
          if (row) await balanceMoved(client, hold.account_id, row.balance_cents - row.reserved_cents - hold.amount_cents, row, now);
        }
        await money.logActivity({
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
      return holds.length;
    });
    total += released;
    if (released < BATCH) return total;
  }
}

/**
 * Writes off bonus credit left at its expiry, one ledger line per grant. Each account in its own
 * transaction that locks the account's money row before its grants: the lock order of every money
 * path. (Locking the grants first, as this job once did, deadlocked against a call end on the same
 * account, which holds the money row and then writes off the expired grants it finds.)
 */
export async function expireBonuses(pool: Pool, now: Date): Promise<number> {
  let total = 0;
  for (const accountId of await createMoneyRepository(pool).accountsWithExpiredBonus(now, BATCH)) {
    total += await withTransaction(pool, async (client) => {
      await createMoneyRepository(client).lock(accountId, 'live');
      return writeOffExpiredBonus(client, accountId, now);
    });
  }
  return total;
}

/** The first month whose minimums are not all recorded yet, as its month key (settings). */
const MINIMUMS_OPEN_FROM = 'minimums_open_from';

/** The instant a month key ('2027-03-01') starts, UTC. */
const startOfMonth = (key: string) => new Date(`${key}T00:00:00Z`);
const monthAfter = (month: Date) => new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));

/**
 * After a month closes: each live customer taken live before that month whose call spend in it
 * was under the minimum is charged the difference, once (monthly_minimums records each
 * customer-month, whatever the outcome, so a second run or a second process does nothing).
 * Every closed month not done yet is looked at, however long the service was down at a month's
 * turn; a mark in settings records the first one not done. A customer can only join a month's
 * candidates before that month starts (taken live before it), so a month once done stays done.
 */
export async function closeMonth(pool: Pool, now: Date): Promise<number> {
  const current = startOfMonth(monthKey(now));
  const settings = createSettingsRepository(pool);
  const openFrom = await settings.get(MINIMUMS_OPEN_FROM);
  let from = current;
  if (openFrom) {
    from = startOfMonth(openFrom);
  } else {
    // Never run: from the month after the first customer was taken live (its first month is free).
    const earliest = await createMoneyRepository(pool).earliestTakenLive();
    if (earliest) from = monthAfter(startOfMonth(monthKey(earliest)));
  }
  let charged = 0;
  for (let month = from; month < current; month = monthAfter(month)) charged += await closeOneMonth(pool, month, monthAfter(month), now);
  await settings.raise(MINIMUMS_OPEN_FROM, monthKey(current));
  return charged;
}

async function closeOneMonth(pool: Pool, monthStart: Date, nextMonthStart: Date, now: Date): Promise<number> {
  const label = monthStart.toISOString().slice(0, 7);
  let charged = 0;
  for (const candidate of await createMoneyRepository(pool).minimumCandidates(monthStart, nextMonthStart)) {
    const shortfall = Math.max(0, MONTHLY_MINIMUM_CENTS - Number(candidate.spent_cents));
    const did = await withTransaction(pool, async (client) => {
      if (!(await createMoneyRepository(client).claimMinimum(candidate.id, monthStart, shortfall))) return false;
      if (shortfall === 0) return false;
      await postLine(client, {
        accountId: candidate.account_id,
        mode: 'live',
        customerId: candidate.id,
        type: 'minimum',
        cause: 'monthly_minimum',
        amountCents: -shortfall,
        reference: `minimum:${label}`,
        description: `Monthly minimum for ${label}: spend topped up to ${(MONTHLY_MINIMUM_CENTS / 100).toFixed(2)} USD`,
        now,
      });
      return true;
    });
    if (did) charged++;
  }
  return charged;
}
