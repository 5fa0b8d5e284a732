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
