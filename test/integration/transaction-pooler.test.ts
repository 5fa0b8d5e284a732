import test from 'ava';
import pg from 'pg';
import { freshDatabase } from '../helpers/db.ts';
import { createPool, prepared, sessionTimeZoneUnlessUtc } from '../../db/pool.ts';

/**
 * A pool made for a transaction-mode pooler (SWITCHBOARD_DATABASE_POOLER=transaction; the real
 * PgBouncer walk is test/e2e/pgbouncer.test.ts): statements go unnamed, no startup options are
 * sent, and the session's own time zone is what the start-up check reads.
 */
const READ = prepared('transaction_pooler_probe', 'SELECT $1::int AS n');
/** The settings this session took from its startup packet's options. */
const fromClient = (db: pg.Pool) =>
  db.query(`SELECT name FROM pg_settings WHERE source = 'client' AND name IN ('TimeZone', 'synchronous_commit') ORDER BY name`).then((r) => r.rows.map((x) => x.name as string));
const statementsOf = (db: pg.Pool) => db.query(`SELECT count(*)::int AS n FROM pg_prepared_statements`).then((r) => r.rows[0].n as number);

test('behind a transaction pooler prepared() statements are sent unnamed; directly they are prepared once per connection', async (t) => {
  const url = await freshDatabase();
  const pooled = createPool(url, 1, { pooler: 'transaction' });
  const direct = createPool(url, 1);
  try {
    for (const db of [pooled, direct]) {
      t.is((await db.query(READ([1]))).rows[0].n, 1);
      t.is((await db.query(READ([2]))).rows[0].n, 2);
    }
    t.is(await statementsOf(pooled), 0, 'nothing prepared on the pooled session');
    t.is(await statementsOf(direct), 1, 'the named statement is prepared on the direct one');
  } finally {
    await pooled.end();
    await direct.end();
  }
});

test('behind a transaction pooler no startup options are sent: the session has the role\'s time zone, which the start-up check reads', async (t) => {
  const url = await freshDatabase();
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`ALTER DATABASE "${name}" SET timezone = 'Pacific/Auckland'`);
  const pooled = createPool(url, 1, { pooler: 'transaction', asyncCommit: true });
  const direct = createPool(url, 1, { asyncCommit: true });
  try {
    t.like(await sessionTimeZoneUnlessUtc(pooled), { zone: 'Pacific/Auckland' });
    t.deepEqual(await fromClient(pooled), [], 'no setting came from the startup packet');
    t.is(await sessionTimeZoneUnlessUtc(direct), null, 'the direct pool sets UTC itself');
    t.deepEqual(await fromClient(direct), ['TimeZone', 'synchronous_commit']);
    await admin.query(`ALTER DATABASE "${name}" SET timezone = 'Etc/UTC'`);
    const again = createPool(url, 1, { pooler: 'transaction' });
    t.is(await sessionTimeZoneUnlessUtc(again), null, 'Etc/UTC is UTC');
    await again.end();
  } finally {
    await pooled.end();
    await direct.end();
    await admin.end();
  }
});
