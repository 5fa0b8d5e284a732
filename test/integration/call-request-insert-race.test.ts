import crypto from 'node:crypto';
import test from 'ava';
import { freshDatabase } from '../helpers/db.ts';
import { createCallRepository } from '../../db/calls.ts';
import { createPool, type Queryable } from '../../db/pool.ts';

/*
 * A request for a number that has an open request conflicts on insert; when that open request
 * ends between the conflicting insert and the read that should find it, the new request is
 * queued instead of answering 500 ("conflicted but no open request was found").
 */
test('a request whose conflicting open request ends before it is read back is queued, not an error', async (t) => {
  const url = await freshDatabase();
  const db = createPool(url, 2);
  t.teardown(() => db.end());
  const { rows } = await db.query(`INSERT INTO accounts (slug, name, country, created_at) VALUES ($1, 'Agency', 'US', now()) RETURNING id`, [`r-${crypto.randomUUID()}`]);
  const accountId: string = rows[0].id;
  const customer = await db.query(`INSERT INTO customers (account_id, mode, name, country, timezone, created_at) VALUES ($1, 'test', 'Dental Co', 'US', 'America/New_York', now()) RETURNING id`, [accountId]);
  const request = (externalRef: string | null) => ({
    accountId,
    mode: 'test' as const,
    customerId: customer.rows[0].id as string,
    toE164: '+12025550143',
    toCountry: 'US',
    phoneInput: '+12025550143',
    businessName: null,
    externalRef,
    dialBefore: new Date(Date.now() + 86_400_000),
    now: new Date(),
  });
  const first = await createCallRepository(db).insertOrFindOpen(request(null));
  t.true(first.created);

  // The open request finishes right after the second request's insert conflicted on it.
  let finishedIt = false;
  const racing = {
    async query(text: string, params?: unknown[]) {
      const result = await db.query(text, params);
      if (!finishedIt && /^\s*INSERT INTO calls/.test(text) && result.rowCount === 0) {
        finishedIt = true;
        await db.query(`UPDATE calls SET status = 'completed' WHERE id = $1`, [first.row.id]);
      }
      return result;
    },
  } as unknown as Queryable;
  const second = await createCallRepository(racing).insertOrFindOpen(request(null));
  t.true(finishedIt, 'the race was played');
  t.true(second.created, 'a new request is queued');
  t.not(second.row.id, first.row.id);
});
