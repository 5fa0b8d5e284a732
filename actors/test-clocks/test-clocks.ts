import type { Deps } from '../../runtime/deps.ts';
import { isUuid } from '../../db/customers.ts';
import type { Mode } from '../../runtime/types.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { withTransaction } from '../../db/pool.ts';
import { createTestClockRepository, type ClockTime, type TestClockRow } from '../../db/test-clocks.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import { advanceTarget, startTime } from './clock-rules.ts';

/**
 * Test clocks (issue 21), as Stripe's: an account's clocks for its test customers. A customer on
 * a clock has the schedules of its records run on the clock's frozen time (the dialler, holds,
 * renewals: see docs/decisions.md, "Test clocks of an account"); advancing a clock runs the work
 * that fell due (`dueWork`, supplied by app/) before it answers. A plain module: the clock's row
 * lock serialises advances, attachments and deletion.
 */


export interface TestClockView {
  object: 'test_clock';
  id: string;
  name: string | null;
  frozen_time: string;
  status: 'ready' | 'advancing';
  customer_count: number;
  created_at: string;
}

function view(row: TestClockRow, customers: number): TestClockView {
  return {
    object: 'test_clock',
    id: row.id,
    name: row.name,
    frozen_time: row.frozen_time.toISOString(),
    status: row.status,
    customer_count: customers,
    created_at: row.created_at.toISOString(),
  };
}

export function createTestClocks(deps: Pick<Deps, 'pool' | 'clock' | 'log'>, dueWork: (clock: ClockTime) => Promise<void>) {
  const { pool, clock, log } = deps;
  const repo = () => createTestClockRepository(pool);

  async function found(accountId: string, id: string): Promise<TestClockRow> {
    const row = isUuid(id) ? await repo().find(accountId, id) : null;
    if (!row) throw new Refusal('test_clock_not_found');
    return row;
  }
  const withCount = async (row: TestClockRow) => view(row, (await repo().customerCounts([row.id])).get(row.id) ?? 0);

  /**
   * Refuses a clock a customer of `mode` could not be put on: another account's or an unknown
   * one (404), or any clock for a live customer (test mode only). Call before creating the customer.
   */
  async function checkAttachable(accountId: string, mode: Mode, clockId: string): Promise<void> {
    if (mode !== 'test') throw new Refusal('test_clock_live_customer');
    await found(accountId, clockId);
  }

  return {
    async create(accountId: string, c: { name?: string; frozen_time?: string }): Promise<TestClockView> {
      const now = clock.now();
      return view(await repo().insert({ accountId, name: c.name ?? null, frozenTime: startTime(c.frozen_time, now), now }), 0);
    },

    async list(accountId: string, page: Page) {
      const before = await pageStart(pool, page, { table: 'test_clocks', accountId });
      const rows = await repo().list(accountId, page.limit + 1, before);
      const counts = await repo().customerCounts(rows.map((r) => r.id));
      return toList(rows, page.limit, (r) => view(r, counts.get(r.id) ?? 0));
    },

    async get(accountId: string, id: string): Promise<TestClockView> {
      return withCount(await found(accountId, id));
    },

    /**
     * Moves the clock forward (its row locked, so two advances take turns), then runs the work
     * its customers' records have due by the new time, and only then answers (`status` is
     * `advancing` meanwhile, `ready` after).
     */
    async advance(accountId: string, id: string, by: { to?: string; seconds?: number }): Promise<TestClockView> {
      await found(accountId, id);
      const row = await withTransaction(pool, async (client) => {
        const r = createTestClockRepository(client);
        const locked = await r.find(accountId, id, true);
        if (!locked) throw new Refusal('test_clock_not_found');
        return r.setTime(id, advanceTarget(locked.frozen_time, by), 'advancing');
      });
      try {
        await dueWork({ id: row.id, accountId, frozenTime: row.frozen_time });
      } catch (err) {
        // What did not run now runs in the service's own rounds (the dialler, the jobs).
        log.error({ err, test_clock_id: id }, 'the work due on an advanced test clock failed; the regular rounds take it over');
      } finally {
        await repo().markReady(row.id, row.frozen_time);
      }
      return withCount(await found(accountId, id));
    },

    /** Deletes the clock; its customers go back to the process clock. */
    async remove(accountId: string, id: string): Promise<{ object: 'test_clock'; id: string; deleted: true }> {
      await found(accountId, id);
      await withTransaction(pool, async (client) => {
        const r = createTestClockRepository(client);
        if (!(await r.find(accountId, id, true))) throw new Refusal('test_clock_not_found');
        await r.delete(id, clock.now());
      });
      return { object: 'test_clock', id, deleted: true };
    },

    checkAttachable,

    /** Puts the account's test customer on the clock `clockId`, or off any clock (null). */
    async attach(accountId: string, customerId: string, clockId: string | null): Promise<{ object: 'customer_test_clock'; customer_id: string; test_clock: string | null }> {
      const mode = isUuid(customerId) ? await repo().customerMode(accountId, customerId) : null;
      if (!mode) throw new Refusal('customer_not_found');
      if (clockId !== null) await checkAttachable(accountId, mode, clockId);
      await withTransaction(pool, async (client) => {
        const r = createTestClockRepository(client);
        // The clock's lock: a clock deleted meanwhile takes no customer.
        if (clockId !== null && !(await r.find(accountId, clockId, true))) throw new Refusal('test_clock_not_found');
        if (!(await r.attach(accountId, customerId, clockId))) throw new Refusal('test_clock_live_customer');
      });
      return { object: 'customer_test_clock', customer_id: customerId, test_clock: clockId };
    },

    /** The clock a customer of the account is on, or null when it is on none (the console's customer page). */
    async clockOf(accountId: string, customerId: string): Promise<TestClockView | null> {
      const on = isUuid(customerId) ? await repo().clockOfCustomer(customerId) : null;
      const row = on && on.accountId === accountId ? await repo().find(accountId, on.id) : null;
      return row ? withCount(row) : null;
    },

    /** The frozen time of the clock the customer is on, or null when it is on none. */
    async timeOf(customerId: string): Promise<Date | null> {
      return isUuid(customerId) ? ((await repo().clockOfCustomer(customerId))?.frozenTime ?? null) : null;
    },
  };
}

export type TestClocks = ReturnType<typeof createTestClocks>;
