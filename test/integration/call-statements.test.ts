import test from 'ava';
import pg from 'pg';
import { freshDatabase } from '../helpers/db.ts';
import { CALL_COLUMNS, createCallRepository } from '../../db/calls.ts';

/**
 * The call row's named statements (db/calls.ts): the lock every change of a call takes, its
 * update and its read are parsed once per connection, over an explicit column list, so a
 * migration that adds a column while a process keeps its connections does not break them.
 */

let url: string;
test.before(async () => {
  url = await freshDatabase();
});

async function insertCall(client: pg.Client): Promise<string> {
  const { rows: a } = await client.query(`INSERT INTO accounts (id, name, slug, country, created_at) VALUES (gen_random_uuid(), 'A', 'a-' || md5(random()::text), 'US', now()) RETURNING id`);
  const { rows: c } = await client.query(
    `INSERT INTO customers (account_id, mode, name, country, timezone, created_at) VALUES ($1, 'test', 'c', 'US', 'America/New_York', now()) RETURNING id`,
    [a[0].id],
  );
  const { row } = await createCallRepository(client as never).insertOrFindOpen({
    accountId: a[0].id,
    mode: 'test',
    customerId: c[0].id,
    toE164: '+12025550101',
    toCountry: 'US',
    phoneInput: '+12025550101',
    businessName: null,
    externalRef: null,
    dialBefore: new Date(Date.now() + 86_400_000),
    now: new Date(),
  });
  return row.id;
}

test.serial('CALL_COLUMNS names every column of calls, in the table order (a migration adding one adds it there)', async (t) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'calls' AND table_schema = 'public' ORDER BY ordinal_position`);
    t.deepEqual([...CALL_COLUMNS], rows.map((r) => r.column_name));
    // The lock and the update answer the same row as `SELECT *`.
    const id = await insertCall(client);
    const { rows: all } = await client.query(`SELECT * FROM calls WHERE id = $1`, [id]);
    const calls = createCallRepository(client as never);
    t.deepEqual(await calls.lock(id), all[0]);
    t.deepEqual(await calls.get(id), all[0]);
    const updated = await calls.update(id, { summary: 'changed', transcript: [{ role: 'agent', text: 'Hi', at: '2026-11-28T00:00:00.000Z' }] });
    t.deepEqual(updated, { ...all[0], summary: 'changed', transcript: [{ role: 'agent', text: 'Hi', at: '2026-11-28T00:00:00.000Z' }] });
  } finally {
    await client.end();
  }
});

test.serial('a call is locked, read and updated on the same connection after a migration adds a column to calls', async (t) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const id = await insertCall(client);
    const calls = createCallRepository(client as never);
    // Parsed once on this connection (as a pooled connection keeps them)…
    t.is((await calls.lock(id))?.id, id);
    t.is((await calls.get(id))?.id, id);
    t.is((await calls.update(id, { summary: 'one' })).summary, 'one');
    // … then another process's migration adds a column: with `*` each would now fail with
    // "cached plan must not change result type".
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    await other.query(`ALTER TABLE calls ADD COLUMN added_by_a_later_migration text`);
    await other.end();
    try {
      t.is((await calls.lock(id))?.id, id);
      t.is((await calls.get(id))?.id, id);
      t.is((await calls.update(id, { summary: 'two' })).summary, 'two');
    } finally {
      await client.query(`ALTER TABLE calls DROP COLUMN added_by_a_later_migration`);
    }
  } finally {
    await client.end();
  }
});
