/** Migrations that change existing rows, checked from the schema before them. */
import crypto from 'node:crypto';
import test from 'ava';
import pg from 'pg';
import { migrate } from '../../db/migrate.ts';

async function emptyDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.SWITCHBOARD_TEST_PG;
  if (!base) throw new Error('run tests with `npm test` (test/run.ts starts the database)');
  const name = `m_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`);
  await admin.end();
  return {
    url: base.replace(/\/postgres$/, `/${name}`),
    drop: async () => {
      const a = new pg.Client({ connectionString: base });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}

test('016: keys made before the numbers permissions keep what they could do (spec Authentication §5)', async (t) => {
  const db = await emptyDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // An idle connection cut by the database's drop at teardown is no failure of the test.
  pool.on('error', () => {});
  t.teardown(async () => {
    await pool.end();
    await db.drop();
  });
  await migrate(pool, { before: '016' });
  const { rows } = await pool.query(
    `INSERT INTO accounts (slug, name, country, created_at) VALUES ('a', 'Agency', 'US', now()) RETURNING id`,
  );
  const key = (scopes: string[]) =>
    pool
      .query(`INSERT INTO api_keys (account_id, mode, label, prefix, last_four, scopes, created_at) VALUES ($1, 'test', 'k', 'svc_test_', 'abcd', $2, now()) RETURNING id`, [rows[0].id, scopes])
      .then((r) => r.rows[0].id as string);
  const reader = await key(['customers:read']);
  const writer = await key(['customers:read', 'customers:write']);
  const calls = await key(['calls:write']);
  const already = await key(['customers:read', 'numbers:read']);
  const applied = await migrate(pool);
  t.true(applied[0].startsWith('016_'), applied.join());
  const scopes = async (id: string) => (await pool.query(`SELECT scopes FROM api_keys WHERE id = $1`, [id])).rows[0].scopes as string[];
  t.deepEqual(await scopes(reader), ['customers:read', 'numbers:read']);
  t.deepEqual(await scopes(writer), ['customers:read', 'customers:write', 'numbers:read', 'numbers:order']);
  t.deepEqual(await scopes(calls), ['calls:write']);
  t.deepEqual(await scopes(already), ['customers:read', 'numbers:read'], 'granted once');
});
