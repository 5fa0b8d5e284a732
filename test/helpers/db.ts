import crypto from 'node:crypto';
import pg from 'pg';

/**
 * A database of its own for one test file: a clone of the migrated template on the run's
 * embedded server (test/run.ts). Returns its URL.
 */
export async function freshDatabase(): Promise<string> {
  const base = process.env.SWITCHBOARD_TEST_PG;
  const template = process.env.SWITCHBOARD_TEST_TEMPLATE;
  if (!base || !template) throw new Error('run tests with `npm test` (test/run.ts starts the database)');
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    // CREATE DATABASE ... TEMPLATE needs the template to have no other sessions; retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        break;
      } catch (err) {
        if (attempt > 50 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await admin.end();
  }
  return base.replace(/\/postgres$/, `/${name}`);
}

/** The `n` one counting query answers, on a connection of its own. */
export async function countRows(databaseUrl: string, sql: string, params: unknown[]): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query(sql, params);
    return Number(rows[0].n);
  } finally {
    await db.end();
  }
}

/**
 * Every table's row count and a checksum of its rows, for asserting that a refused request
 * wrote nothing. `exclude` names tables that something other than the request writes.
 */
export async function tableFingerprint(db: pg.Client | pg.Pool, exclude: readonly string[] = []): Promise<Record<string, string>> {
  const { rows: tables } = await db.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
  const parts = tables
    .map((t) => t.name)
    .filter((name) => !exclude.includes(name))
    .map((name) => `SELECT '${name}' AS name, count(*) || ':' || md5(coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')) AS fingerprint FROM "${name}" r`);
  const { rows } = await db.query<{ name: string; fingerprint: string }>(parts.join(' UNION ALL '));
  return Object.fromEntries(rows.map((r) => [r.name, r.fingerprint]));
}

/**
 * Makes the database refuse row changes as a fault would: a BEFORE trigger on `table` raises
 * `message` for rows matching `condition` (SQL over NEW and OLD), every time or only the first time
 * (`once`: a sequence counts, and a sequence is not rolled back with the refused transaction),
 * with SQLSTATE `sqlstate` when given (P0001 otherwise): '53100' is what a full disk answers.
 * Returns what removes it again.
 */
export async function refuseRowChange(
  db: pg.Pool,
  r: { name: string; table: string; event: 'INSERT' | 'UPDATE'; condition: string; message: string; once?: boolean; sqlstate?: string },
): Promise<() => Promise<void>> {
  const when = r.once ? `(${r.condition}) AND nextval('${r.name}_count') = 1` : r.condition;
  if (r.once) await db.query(`CREATE SEQUENCE ${r.name}_count`);
  await db.query(`
    CREATE OR REPLACE FUNCTION ${r.name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${when} THEN RAISE EXCEPTION '${r.message}'${r.sqlstate ? ` USING ERRCODE = '${r.sqlstate}'` : ''}; END IF;
      RETURN NEW;
    END $$`);
  await db.query(`CREATE TRIGGER ${r.name} BEFORE ${r.event} ON ${r.table} FOR EACH ROW EXECUTE FUNCTION ${r.name}()`);
  return async () => {
    await db.query(`DROP TRIGGER IF EXISTS ${r.name} ON ${r.table}`);
    await db.query(`DROP FUNCTION IF EXISTS ${r.name}()`);
    await db.query(`DROP SEQUENCE IF EXISTS ${r.name}_count`);
  };
}
