import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool, type Pool } from './pool.ts';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
/** Arbitrary constant: the advisory lock that lets one process migrate while others wait. */
const LOCK_ID = 7_421_001;

/**
 * Applies every numbered `.sql` file not yet applied, in order, each in its own transaction.
 * `before` stops at the first file whose name sorts at or after it (tests of one migration's data
 * changes start from the schema before it).
 */
export async function migrate(pool: Pool, opts: { before?: string } = {}): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_ID]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await client.query('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
    const files = (await fs.readdir(DIR)).filter((f) => /^\d+_.*\.sql$/.test(f)).sort();
    for (const file of files) {
      if (opts.before !== undefined && file >= opts.before) break;
      if (done.has(file)) continue;
      const sql = await fs.readFile(path.join(DIR, file), 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file} failed: ${(err as Error).message}`);
      }
      applied.push(file);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_ID]).catch(() => {});
    client.release();
  }
  return applied;
}

/**
 * `migrate` on a connection of its own to `url`, closed after. The lock is a session's, so `url`
 * is PostgreSQL itself (SWITCHBOARD_DIRECT_DATABASE_URL), never a transaction-mode pooler: there
 * the lock, each file and the unlock could each land on another server connection.
 */
export async function migrateAt(url: string, opts: { before?: string; waitFor?: (pool: Pool) => Promise<void> } = {}): Promise<string[]> {
  const pool = createPool(url, 1);
  try {
    // `start` waits there for a database that is not up yet, as it does on its main pool.
    await opts.waitFor?.(pool);
    return await migrate(pool, opts);
  } finally {
    await pool.end().catch(() => {});
  }
}
