import test from 'ava';
import pg from 'pg';
import { freshDatabase } from '../helpers/db.ts';
import { createPool, prepared, withTransaction } from '../../db/pool.ts';
import { CUSTOMER_COLUMNS, createCustomerRepository } from '../../db/customers.ts';
import { NUMBER_COLUMNS } from '../../db/numbers.ts';
import { isDatabaseUnreachable, isStaleNamedStatement } from '../../runtime/database-errors.ts';

/**
 * Named statements (db/pool.ts `prepared`) are parsed once per connection. A migration run by a
 * new process of a rolling upgrade that adds a column must not break the old processes' hot
 * statements: they name their columns (CALL_COLUMNS is checked in call-statements.test.ts), and
 * one that still answered with `*` would be refused by PostgreSQL ("cached plan must not change
 * result type"): that connection is dropped and the request answered 503, never 500 for good.
 */

let url: string;
let admin: pg.Client;
test.before(async () => {
  url = await freshDatabase();
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
});
test.after.always(() => admin?.end());

const columnsOf = async (table: string) =>
  (await admin.query(`SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND table_schema = 'public' ORDER BY ordinal_position`, [table])).rows.map(
    (r) => r.column_name,
  );

test.serial('CUSTOMER_COLUMNS and NUMBER_COLUMNS name every column of their tables, in the table order (a migration adding one adds it there)', async (t) => {
  t.deepEqual([...CUSTOMER_COLUMNS], await columnsOf('customers'));
  t.deepEqual([...NUMBER_COLUMNS], await columnsOf('phone_numbers'));
});

test.serial('a customer is read on the same connection before and after a migration adds a column to customers', async (t) => {
  const pool = createPool(url, 1);
  t.teardown(() => pool.end());
  const { rows: a } = await admin.query(`INSERT INTO accounts (id, name, slug, country, created_at) VALUES (gen_random_uuid(), 'A', 'a-' || md5(random()::text), 'US', now()) RETURNING id`);
  const { rows: c } = await admin.query(
    `INSERT INTO customers (account_id, mode, name, country, timezone, created_at) VALUES ($1, 'test', 'Acme', 'US', 'America/New_York', now()) RETURNING id`,
    [a[0].id],
  );
  const customers = createCustomerRepository(pool);
  const before = await customers.get(c[0].id);
  const { rows: backend } = await pool.query('SELECT pg_backend_pid() AS pid');
  await admin.query(`ALTER TABLE customers ADD COLUMN added_by_a_newer_release text`);
  t.teardown(() => admin.query(`ALTER TABLE customers DROP COLUMN added_by_a_newer_release`));
  const after = await customers.get(c[0].id);
  t.deepEqual(after, before);
  t.is((await pool.query('SELECT pg_backend_pid() AS pid')).rows[0].pid, backend[0].pid, 'the same connection');
});

test.serial('a named statement a migration made stale fails once as the database being away, and its connection is dropped so the next one works', async (t) => {
  await admin.query(`CREATE TABLE stale_statement_probe (id int PRIMARY KEY)`);
  await admin.query(`INSERT INTO stale_statement_probe VALUES (1)`);
  const pool = createPool(url, 1);
  t.teardown(() => pool.end());
  const probe = prepared('stale_statement_probe_all', `SELECT * FROM stale_statement_probe WHERE id = $1`);
  const read = () => withTransaction(pool, async (db) => (await db.query(probe([1]))).rows[0]);
  t.deepEqual(await read(), { id: 1 });
  await admin.query(`ALTER TABLE stale_statement_probe ADD COLUMN note text`);
  const err = await t.throwsAsync(read());
  t.is((err as { code?: string }).code, '0A000');
  t.true(isStaleNamedStatement(err));
  t.true(isDatabaseUnreachable(err), 'answered 503 with Retry-After, not 500');
  t.deepEqual(await read(), { id: 1, note: null }, 'a new connection parses it afresh');
  t.false(isStaleNamedStatement({ code: '0A000', routine: 'something_else' }), 'another feature_not_supported is a fault of the query');
});
