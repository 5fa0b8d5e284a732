import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import pg from 'pg';
import { freshDatabase } from '../helpers/db.ts';
import { CALL_TIERS, MAX_CALL_MINUTES, priceMinutes } from '../../money/rules/pricing.ts';
import { priceMinutesSql } from '../../db/money/price-sql.ts';

/*
 * A call's hold is priced inside PostgreSQL, at the position of the money row the statement
 * locks (db/money/holds.ts, open_hold), with SQL built from the same rate table. The two must agree
 * everywhere, tier boundaries above all.
 */

let pool: pg.Pool;
test.before(async () => {
  pool = new pg.Pool({ connectionString: await freshDatabase(), max: 2 });
});
test.after.always(async () => {
  await pool?.end();
});

test('the SQL price of minutes equals priceMinutes at every position, across every tier boundary', async (t) => {
  const boundaries = CALL_TIERS.map((tier) => tier.from_minutes);
  const position = fc.oneof(
    fc.integer({ min: 0, max: 200_000 }),
    fc.constantFrom(...boundaries).chain((b) => fc.integer({ min: Math.max(0, b - 25), max: b + 25 })),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(position, fc.integer({ min: 0, max: MAX_CALL_MINUTES })), { minLength: 1, maxLength: 50 }), async (pairs) => {
      const { rows } = await pool.query(
        `SELECT ${priceMinutesSql(CALL_TIERS, 'p', 'n')} AS cents FROM unnest($1::int[], $2::int[]) WITH ORDINALITY AS x(p, n, i) ORDER BY i`,
        [pairs.map(([p]) => p), pairs.map(([, n]) => n)],
      );
      assert.deepEqual(
        rows.map((r) => r.cents),
        pairs.map(([p, n]) => priceMinutes(p, n)),
      );
    }),
    { numRuns: 60 },
  );
  t.pass();
});

test('a hold is the longest call priced at the locked row’s position, on either side of a tier boundary', async (t) => {
  // 4,990 minutes used: ten minutes at 20 cents, ten at 18. At 5,000: all twenty at 18.
  const { rows } = await pool.query(`SELECT ${priceMinutesSql(CALL_TIERS, '4990', String(MAX_CALL_MINUTES))} AS across, ${priceMinutesSql(CALL_TIERS, '5000', String(MAX_CALL_MINUTES))} AS after`);
  t.deepEqual(rows[0], { across: 10 * 20 + 10 * 18, after: 20 * 18 });
});
