/** Migrations that change existing rows, checked from the schema before them. */
import crypto from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
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

/** A pool on an empty database migrated up to (not including) `before`, dropped when the test ends. */
async function migratedBefore(t: ExecutionContext, before: string): Promise<pg.Pool> {
  const db = await emptyDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // An idle connection cut by the database's drop at teardown is no failure of the test.
  pool.on('error', () => {});
  t.teardown(async () => {
    await pool.end();
    await db.drop();
  });
  await migrate(pool, { before });
  return pool;
}

test('016: keys made before the numbers permissions keep what they could do (spec Authentication §5)', async (t) => {
  const pool = await migratedBefore(t, '016');
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

test('036: a password reset link still waiting for the email sender becomes its email, sealed as it was; used or expired ones do not', async (t) => {
  const pool = await migratedBefore(t, '036');
  const account = (await pool.query(`INSERT INTO accounts (slug, name, country, created_at) VALUES ('a', 'Agency', 'US', now()) RETURNING id`)).rows[0].id;
  const user = (
    await pool.query(`INSERT INTO console_users (account_id, email, name, role, password_hash, created_at) VALUES ($1, 'dana@agency.example', 'Dana', 'owner', 'x', now()) RETURNING id`, [account])
  ).rows[0].id;
  const reset = (fields: { sealed: string | null; expires: string; used?: boolean }) =>
    pool
      .query(
        `INSERT INTO console_password_resets (user_id, token_hash, created_at, expires_at, used_at, link_sealed)
         VALUES ($1, $2, now(), now() + $3::interval, $4, $5) RETURNING id`,
        [user, crypto.randomBytes(32), fields.expires, fields.used ? new Date() : null, fields.sealed === null ? null : Buffer.from(fields.sealed)],
      )
      .then((r) => r.rows[0].id as string);
  const waiting = await reset({ sealed: 'sealed link 1', expires: '1 hour' });
  await reset({ sealed: 'sealed link 2', expires: '1 hour', used: true });
  await reset({ sealed: 'sealed link 3', expires: '-1 minute' });
  await reset({ sealed: null, expires: '1 hour' });
  await migrate(pool);
  const { rows } = await pool.query(`SELECT * FROM email_outbox`);
  t.is(rows.length, 1);
  t.like(rows[0], { account_id: account, mode: 'live', kind: 'password_reset', audience: 'person', to_address: 'dana@agency.example', dedupe_key: `password_reset:${waiting}`, status: 'pending' });
  t.is(rows[0].secret_sealed.toString(), 'sealed link 1');
  t.regex(rows[0].data.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const columns = (await pool.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'console_password_resets'`)).rows.map((r) => r.column_name);
  t.false(columns.includes('link_sealed'));
  t.false(columns.includes('delivered_at'));
});
