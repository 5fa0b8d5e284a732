import test from 'ava';
import pg from 'pg';
import { ChangeFeed } from '../../runtime/change-feed.ts';
import { createLogger } from '../../runtime/logger.ts';
import { TEST_CLOCK_SETTING } from '../../db/settings.ts';
import { freshDatabase } from '../helpers/db.ts';
import { LogCapture, startTestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { until } from '../helpers/wait.ts';
import { destroyRestartableDatabases, startRestartableDatabase } from '../helpers/restartable-db.ts';

/**
 * The change feed against a real PostgreSQL whose connection is cut (pg_terminate_backend, as a
 * restart does to it) and whose server refuses connections for a while: one connection per
 * process, ever; notifications flow again; everything it guards is dropped after each
 * reconnection (notifications sent meanwhile are lost).
 */
test.after.always(destroyRestartableDatabases);

const LISTENERS = `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`;

async function admin(url: string) {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  return c;
}

/** A feed with a probe kind: `got` collects its ids; `resets` counts reset events. */
function probeFeed(url: string) {
  const logs = new LogCapture();
  const feed = new ChangeFeed(url, createLogger('info', logs));
  const got = new Set<string>();
  const stats = { resets: 0 };
  feed.on('probe', (id) => got.add(id));
  feed.onReset(() => stats.resets++);
  return { feed, got, stats, logs };
}

/** Notifies `probe:<id>` until the feed has it: notifications sent while it reconnects are lost. */
async function roundTrip(sql: pg.Client, got: Set<string>, id: string, timeoutMs = 10_000) {
  await until(`notification ${id}`, async () => {
    await sql.query(`SELECT pg_notify('switchboard_changes', $1)`, [`probe:${id}`]);
    await new Promise((r) => setTimeout(r, 20));
    return got.has(id);
  }, timeoutMs, 30);
}

test('a terminated feed connection comes back as exactly one connection, each time, and resets', async (t) => {
  const url = await freshDatabase();
  const sql = await admin(url);
  const { feed, got, stats, logs } = probeFeed(url);
  await feed.start();
  await roundTrip(sql, got, 'first');
  for (let i = 0; i < 5; i++) {
    const { rows } = await sql.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`);
    t.is(rows.length, 1, `one feed connection to terminate (round ${i})`);
    await roundTrip(sql, got, `after-${i}`);
    // Time for a second, doubled connection to appear, if one were coming.
    await new Promise((r) => setTimeout(r, 400));
    t.is((await sql.query(LISTENERS)).rows.length, 1, `one feed connection after reconnection ${i}`);
    t.is(stats.resets, i + 1, `reset after reconnection ${i}`);
  }
  await feed.stop();
  await until('the feed connection to close', async () => (await sql.query(LISTENERS)).rows.length === 0, 5_000);
  t.is(logs.lines.filter((l) => l.msg === 'change feed reconnected; dropping what it guards').length, 5);
  await sql.end();
});

test('a feed whose server refuses connections for seconds keeps retrying and comes back once it is up', async (t) => {
  const db = await startRestartableDatabase();
  const { feed, got, stats, logs } = probeFeed(db.url);
  await feed.start();
  let sql = await admin(db.url);
  await roundTrip(sql, got, 'before');
  await sql.end();

  await db.stop('fast');
  // Several failed reconnections in a row, well past the old one-second give-up.
  await new Promise((r) => setTimeout(r, 3_000));
  await db.start();
  sql = await admin(db.url);
  await roundTrip(sql, got, 'after', 10_000);
  t.is((await sql.query(LISTENERS)).rows.length, 1);
  t.is(stats.resets, 1);
  t.is(logs.lines.filter((l) => l.event === 'database_unreachable').length, 1, 'one line for the outage');
  t.is(logs.lines.filter((l) => l.event === 'database_reachable').length, 1, 'one line for its end');
  // Reconnected by the restart too, in immediate mode (a crash-like stop).
  await sql.end();
  await db.restart('immediate', { downMs: 500 });
  sql = await admin(db.url);
  await roundTrip(sql, got, 'after-immediate', 10_000);
  t.is((await sql.query(LISTENERS)).rows.length, 1);
  t.is(stats.resets, 2);
  await feed.stop();
  await sql.end();
});

test('after the feed reconnects the service drops what it missed: a key revoked meanwhile is refused, the test clock catches up', async (t) => {
  const svc = await startTestService();
  try {
    const a = await makeAccount(svc.url);
    t.is((await a.api.get('/v1/customers')).status, 200, 'the key is now cached');
    const sql = await admin(svc.databaseUrl);
    // Changes whose notifications are lost: written without one, as if sent while the feed was away.
    await sql.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [a.testKeyId]);
    const aheadMs = 3 * 86_400_000;
    await sql.query(`INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [TEST_CLOCK_SETTING, String(aheadMs)]);
    t.is((await a.api.get('/v1/customers')).status, 200, 'still cached: nothing told this process');

    await sql.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`);
    await until('the revoked key to be refused', async () => (await a.api.get('/v1/customers')).status === 401, 5_000);
    t.like((await a.api.get('/v1/customers')).body, { error: { code: 'key_revoked' } });
    await until('the test clock to catch up', () => svc.services.clock.now().getTime() > Date.now() + aheadMs - 60_000, 5_000);
    await sql.end();
  } finally {
    await svc.stop();
  }
});
