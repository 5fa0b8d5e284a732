import { withTransaction, type Pool } from '../../db/pool.ts';
import { createMoneyRepository } from '../../db/money.ts';
import { MONTHLY_MINIMUM_CENTS } from './pricing.ts';
import { balanceMoved, checkLowBalance, postLine, writeOffGrant } from './ledger.ts';

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

/** Writes off bonus credit left at its expiry, one ledger line per grant. */
export async function expireBonuses(pool: Pool, now: Date): Promise<number> {
  return withTransaction(pool, async (client) => {
    const money = createMoneyRepository(client);
    const grants = await money.lockExpiredGrants(now, BATCH);
    for (const grant of grants) await writeOffGrant(client, grant, now);
    return grants.length;
  });
}

/** How many closed months the job looks back at (a service down at a month's turn still charges it). */
const MONTHS_BACK = 3;

/**
 * After a month closes: each live customer taken live before that month whose call spend in it
 * was under the minimum is charged the difference, once (monthly_minimums records each
 * customer-month, whatever the outcome, so a second run or a second process does nothing). The
 * last few closed months are looked at, so a month the job did not run at the turn of is not lost.
 */
export async function closeMonth(pool: Pool, now: Date): Promise<number> {
  let charged = 0;
  for (let back = MONTHS_BACK; back >= 1; back--) {
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
    const nextMonthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back + 1, 1));
    charged += await closeOneMonth(pool, monthStart, nextMonthStart, now);
  }
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
