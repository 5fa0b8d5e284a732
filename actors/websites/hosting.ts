import { withTransaction, type Client } from '../../db/pool.ts';
import { createWebsiteRepository } from '../../db/websites.ts';
import { recurringDueBy } from '../../db/recurring-due.ts';
import { eachDueInOwnTransaction } from '../shared/due-batches.ts';
import { fundableCents } from '../../money/balance-view.ts';
import { addDays, dayOf, inNoticeWindow, reached, RELEASE_COUNTDOWN_DAYS, RENEWAL_NOTICE_DAYS } from '../../money/rules/renewal.ts';
import { BATCH, type Room } from './room.ts';
import type { TestClockScope } from '../../db/test-clocks.ts';

/**
 * Hosting a live site month by month: the renewal and its early warning, the 14-day countdown
 * when it cannot be paid, the suspension when the countdown ends, the purge 90 days later, and
 * the return of a site when money comes in.
 */

/** A suspended site stays recoverable this long before its page is purged (spec: 90 days). */
export const PURGE_AFTER_DAYS = 90;

export function createWebsiteHosting(room: Room) {
  const { pool, log } = room.deps;

  /** One hosting look at a live site (claimed by the job): notice, renewal, or the countdown. */
  async function renewOne(client: Client, id: string, today: string, now: Date): Promise<boolean> {
    const repo = createWebsiteRepository(client);
    let row = await repo.claim(id);
    if (!row || (row.status !== 'live' && row.status !== 'hosting_due') || !row.hosting_renews_on) return false;
    if (!reached(today, row.hosting_renews_on)) {
      if (!inNoticeWindow(today, row.hosting_renews_on) || row.notice_sent_for === row.hosting_renews_on) return false;
      // Every hosting and rent of the account falling due by this renewal competes for the same money.
      const due = await recurringDueBy(client, row.account_id, row.mode, row.hosting_renews_on);
      const short = (await fundableCents(client, row.account_id, row.mode, { liveProcessor: room.deps.config.stripe !== null, realNow: room.deps.realClock.now() })) < Math.max(due, row.hosting_cents_per_month);
      row = await repo.update(
        row.id,
        short
          ? { notice_sent_for: row.hosting_renews_on, status: 'hosting_due', suspend_due_on: addDays(row.hosting_renews_on, RELEASE_COUNTDOWN_DAYS) }
          : { notice_sent_for: row.hosting_renews_on },
        now,
      );
      if (short) await room.emit(client, row, 'website.hosting_due', now);
      return short;
    }
    let changed = false;
    while (row.hosting_renews_on && reached(today, row.hosting_renews_on)) {
      const { paid, waiting, periodEnd } = await room.chargeHosting(client, row, row.hosting_renews_on, now);
      if (!paid) {
        // The automatic top-up is on its way: the next round charges the hosting, without a countdown.
        if (waiting) return changed;
        if (row.status === 'live') {
          row = await repo.update(
            row.id,
            // Never a countdown shorter than 14 days, if the service was away past the renewal.
            { status: 'hosting_due', suspend_due_on: addDays(today > row.hosting_renews_on ? today : row.hosting_renews_on, RELEASE_COUNTDOWN_DAYS), notice_sent_for: row.hosting_renews_on },
            now,
          );
          await room.emit(client, row, 'website.hosting_due', now);
          return true;
        }
        return changed;
      }
      row = await repo.update(row.id, { status: 'live', hosting_renews_on: periodEnd, suspend_due_on: null }, now);
      changed = true;
    }
    return changed;
  }

  return {
    /** The hosting job: renewals due and early warnings, each site in its own transaction. */
    async renewHosting(now: Date, clock: TestClockScope | null = null): Promise<number> {
      const today = dayOf(clock?.time ?? now);
      const noticeUntil = addDays(today, RENEWAL_NOTICE_DAYS);
      return eachDueInOwnTransaction(
        pool,
        BATCH,
        (after) => createWebsiteRepository(pool).dueForHosting(today, noticeUntil, BATCH, after, clock?.clockId ?? null),
        (client, id) => renewOne(client, id, today, now),
      );
    },

    /** Sites whose countdown ended go offline (nothing deleted) with `website.suspended`. */
    async suspendOverdue(now: Date, clock: TestClockScope | null = null): Promise<number> {
      const today = dayOf(clock?.time ?? now);
      let done = 0;
      for (const id of await createWebsiteRepository(pool).dueForSuspension(today, BATCH, clock?.clockId ?? null)) {
        const did = await withTransaction(pool, async (client) => {
          const row = await createWebsiteRepository(client).claim(id);
          if (!row || row.status !== 'hosting_due' || !row.suspend_due_on || !reached(today, row.suspend_due_on) || !row.hosting_renews_on) return false;
          // Money that came while a job held the site (a top-up skips a held site) pays it now.
          const { paid, waiting, periodEnd } = await room.chargeHosting(client, row, row.hosting_renews_on, now);
          if (paid) {
            await createWebsiteRepository(client).update(row.id, { status: 'live', hosting_renews_on: periodEnd, suspend_due_on: null }, now);
            return false;
          }
          // An automatic top-up is on its way: not suspended now, looked at again next run.
          if (waiting) return false;
          const suspended = await createWebsiteRepository(client).update(row.id, { status: 'suspended', suspended_at: now, purge_due_on: addDays(today, PURGE_AFTER_DAYS) }, now);
          await room.emit(client, suspended, 'website.suspended', now);
          return true;
        });
        if (did) done++;
      }
      return done;
    },

    /** Suspended sites past their 90 days: the page is deleted for good. */
    async purgeOverdue(now: Date, clock: TestClockScope | null = null): Promise<number> {
      const today = dayOf(clock?.time ?? now);
      let done = 0;
      for (const id of await createWebsiteRepository(pool).dueForPurge(today, BATCH, clock?.clockId ?? null)) {
        const did = await withTransaction(pool, async (client) => {
          const row = await createWebsiteRepository(client).claim(id);
          if (!row || row.status !== 'suspended' || !row.purge_due_on || !reached(today, row.purge_due_on)) return false;
          await createWebsiteRepository(client).update(row.id, { status: 'purged', purged_at: now, html: null, hosting_renews_on: null, build_wanted: false }, now);
          log.info({ website_id: row.id }, 'a suspended website was purged after 90 days');
          return true;
        });
        if (did) done++;
      }
      return done;
    },

    /** Money came in (money writer reaction): unpaid hosting is taken and the site returns at its address. */
    async fundsAdded(client: Client, accountId: string, now: Date): Promise<void> {
      const repo = createWebsiteRepository(client);
      for (const row of await repo.claimUnpaidOf(accountId)) {
        if (!row.hosting_renews_on) continue;
        // In the countdown the period that went unpaid (or, after a notice, the one coming) is
        // paid; a suspended site starts a fresh month today (the offline months are not billed).
        const today = dayOf(now);
        const periodStart = row.status === 'suspended' ? today : row.hosting_renews_on;
        const anchored = row.status === 'suspended' ? await repo.update(row.id, { anchor_day: Number(today.slice(8, 10)) }, now) : row;
        const { paid, periodEnd } = await room.chargeHosting(client, anchored, periodStart, now);
        if (!paid) continue;
        await repo.update(row.id, { status: 'live', hosting_renews_on: periodEnd, suspend_due_on: null, purge_due_on: null, suspended_at: null }, now);
      }
    },
  };
}
