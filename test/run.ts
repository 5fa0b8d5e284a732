/**
 * `npm test`: starts one embedded PostgreSQL for the whole run, migrates a template database,
 * and runs ava with its address. Each test file then clones the template into a database of its
 * own (test/helpers/db.ts), so files run in parallel without seeing each other's rows.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedDatabase } from '../runtime/embedded-db.ts';
import { createLogger } from '../runtime/logger.ts';
import { createPool } from '../db/pool.ts';
import { migrate } from '../db/migrate.ts';

const TEMPLATE = 'switchboard_template';

async function main(): Promise<number> {
  const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchboard-test-'));
  const db = await startEmbeddedDatabase(dir, log, { fast: true }).catch(async (err) => {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  });
  try {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${TEMPLATE}`);
    await admin.end();
    const pool = createPool(db.url.replace(/\/postgres$/, `/${TEMPLATE}`));
    await migrate(pool);
    await pool.end();

    const ava = path.join('node_modules', 'ava', 'entrypoints', 'cli.mjs');
    const child = spawn(process.execPath, [ava, ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, SWITCHBOARD_TEST_PG: db.url, SWITCHBOARD_TEST_TEMPLATE: TEMPLATE },
    });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    return await new Promise<number>((resolve) => {
      child.on('error', (err) => {
        process.stderr.write(`npm test: cannot run ava (${err.message})\n`);
        resolve(1);
      });
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  } finally {
    await db.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    // The machine cannot run the embedded database: one line saying what to do, not a stack.
    process.stderr.write(err?.name === 'EmbeddedDatabaseError' ? `npm test: ${err.message}\n` : `${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
