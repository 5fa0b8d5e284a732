import type { Queryable } from './pool.ts';

/** A test clock of an account (migration 028). */
export interface TestClockRow {
  id: string;
  seq: number;
  account_id: string;
  name: string | null;
  frozen_time: Date;
  status: 'ready' | 'advancing';
  created_at: Date;
  deleted_at: Date | null;
}

/** The rows of one test clock's customers, due on its time (null scope: customers on no clock). */
export interface TestClockScope {
  clockId: string;
  time: Date;
}

/** A clock with customers on it: the time their test records' schedules run on. */
export interface ClockTime {
  id: string;
  accountId: string;
  frozenTime: Date;
}

/**
 * Test clocks and which customer is on one. A clock's time is read fresh (never cached): it is
 * mutable, and several processes may advance it.
 */
export function createTestClockRepository(db: Queryable) {
  return {
    async insert(c: { accountId: string; name: string | null; frozenTime: Date; now: Date }): Promise<TestClockRow> {
      const { rows } = await db.query(
        `INSERT INTO test_clocks (account_id, name, frozen_time, created_at) VALUES ($1, $2, $3, $4) RETURNING *`,
        [c.accountId, c.name, c.frozenTime, c.now],
      );
      return rows[0];
    },

    /** The account's clock (not deleted), or null; `lock` takes its row lock (an advance). */
    async find(accountId: string, id: string, lock = false): Promise<TestClockRow | null> {
      const { rows } = await db.query(
        `SELECT * FROM test_clocks WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
        [id, accountId],
      );
      return rows[0] ?? null;
    },

    /** The account's clocks, newest first, `limit` of them before `beforeSeq` (a cursor's seq). */
    async list(accountId: string, limit: number, beforeSeq: number | null): Promise<TestClockRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM test_clocks WHERE account_id = $1 AND deleted_at IS NULL AND ($3::bigint IS NULL OR seq < $3)
          ORDER BY seq DESC LIMIT $2`,
        [accountId, limit, beforeSeq],
      );
      return rows;
    },

    /** How many customers are on each of `ids`. */
    async customerCounts(ids: string[]): Promise<Map<string, number>> {
      const { rows } = await db.query(
        `SELECT test_clock_id AS id, count(*)::int AS n FROM customers WHERE test_clock_id = ANY($1::uuid[]) GROUP BY test_clock_id`,
        [ids],
      );
      return new Map(rows.map((r) => [r.id, r.n]));
    },

    async setTime(id: string, frozenTime: Date, status: 'ready' | 'advancing'): Promise<TestClockRow> {
      const { rows } = await db.query(`UPDATE test_clocks SET frozen_time = $2, status = $3 WHERE id = $1 RETURNING *`, [id, frozenTime, status]);
      return rows[0];
    },

    /** Marks the advance done, unless a later advance (to another time) is still running. */
    async markReady(id: string, frozenTime: Date): Promise<void> {
      await db.query(`UPDATE test_clocks SET status = 'ready' WHERE id = $1 AND frozen_time = $2`, [id, frozenTime]);
    },

    /** Deletes the clock; its customers go back to the process clock. */
    async delete(id: string, now: Date): Promise<TestClockRow> {
      await db.query(`UPDATE customers SET test_clock_id = NULL WHERE test_clock_id = $1`, [id]);
      const { rows } = await db.query(`UPDATE test_clocks SET deleted_at = $2, status = 'ready' WHERE id = $1 RETURNING *`, [id, now]);
      return rows[0];
    },

    /**
     * Puts the account's test customer on `clockId` (null: off any clock). Returns false when the
     * account has no such test customer; the foreign key and CHECK refuse another account's clock
     * and a live customer whatever the caller checked.
     */
    async attach(accountId: string, customerId: string, clockId: string | null): Promise<boolean> {
      const { rowCount } = await db.query(
        `UPDATE customers SET test_clock_id = $3 WHERE id = $1 AND account_id = $2 AND mode = 'test'`,
        [customerId, accountId, clockId],
      );
      return (rowCount ?? 0) > 0;
    },

    /** The mode of the account's customer `customerId`, or null when the account has no such customer. */
    async customerMode(accountId: string, customerId: string): Promise<'test' | 'live' | null> {
      const { rows } = await db.query(`SELECT mode FROM customers WHERE id = $1 AND account_id = $2`, [customerId, accountId]);
      return rows[0]?.mode ?? null;
    },

    /** The clock a customer is on, or null (not on one, or no such customer). */
    async clockOfCustomer(customerId: string): Promise<ClockTime | null> {
      const { rows } = await db.query(
        `SELECT tc.id, tc.account_id, tc.frozen_time FROM customers cu JOIN test_clocks tc ON tc.id = cu.test_clock_id WHERE cu.id = $1`,
        [customerId],
      );
      return rows[0] ? { id: rows[0].id, accountId: rows[0].account_id, frozenTime: rows[0].frozen_time } : null;
    },

    /** Every clock that has a customer on it (the due work of clocks runs for these). */
    async clocksInUse(accountId?: string): Promise<ClockTime[]> {
      const { rows } = await db.query(
        `SELECT tc.id, tc.account_id, tc.frozen_time FROM test_clocks tc
          WHERE tc.deleted_at IS NULL AND ($1::uuid IS NULL OR tc.account_id = $1)
            AND EXISTS (SELECT 1 FROM customers cu WHERE cu.test_clock_id = tc.id)`,
        [accountId ?? null],
      );
      return rows.map((r) => ({ id: r.id, accountId: r.account_id, frozenTime: r.frozen_time }));
    },
  };
}

/**
 * The SQL condition "the customer in column `customerColumn` is on clock `param`" (a parameter
 * holding a clock id, or null for customers on no clock: the process clock's work). Every job that
 * runs on a time (holds, renewals) scopes its rows with it, so a row is due on one time only.
 */
export function onClock(customerColumn: string, param: string): string {
  return `(SELECT cu_clock.test_clock_id FROM customers cu_clock WHERE cu_clock.id = ${customerColumn}) IS NOT DISTINCT FROM ${param}::uuid`;
}
