import test from 'ava';
import net from 'node:net';
import pg from 'pg';
import { createPool, withTransaction } from '../../db/pool.ts';
import { ChangeFeed } from '../../runtime/change-feed.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { DatabaseHosts, WrongSessionError, type HostMove } from '../../runtime/database-hosts.ts';
import { createLogger } from '../../runtime/logger.ts';
import { freshDatabase } from '../helpers/db.ts';

/**
 * A DATABASE_URL listing several hosts, against the run's one PostgreSQL (runtime/database-hosts.ts):
 * a host that refuses, or whose sessions are read-only, fails that one connection as the database
 * being away (503 with Retry-After) and the next goes to the next host; a write refused as
 * read-only drops its pooled connection. test/e2e/replica-failover.test.ts does it with a real
 * primary and standby.
 */
let url: string;
let port: number;
let database: string;
test.before(async () => {
  url = await freshDatabase();
  const u = new URL(url);
  port = Number(u.port);
  database = u.pathname.slice(1);
});

/** A port nothing listens on (connections to it are refused). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port: p } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return p;
}

/** `url` with its host replaced by the list `hosts`, and `query` appended. */
const listing = (hosts: string, query = '') => url.replace(/@[^/]+\//, `@${hosts}/`) + query;

test('the first host refuses: that connection fails as the database being away, the next one goes to the second host (pool and change feed)', async (t) => {
  const closed = await closedPort();
  const multi = listing(`127.0.0.1:${closed},127.0.0.1:${port}`);
  const pool = createPool(multi, 2);
  t.teardown(() => pool.end());
  const moves: HostMove[] = [];
  t.teardown(DatabaseHosts.of(multi).onMove((m) => moves.push(m)));
  const first = await t.throwsAsync(pool.query('SELECT 1'));
  t.deepEqual(moves, [{ from: `127.0.0.1:${closed}`, to: `127.0.0.1:${port}`, reason: 'unreachable' }]);
  t.true(isDatabaseUnreachable(first), `answered 503, not 500: ${first?.message}`);
  t.is(DatabaseHosts.of(multi).currentHost, `127.0.0.1:${port}`);
  const { rows } = await pool.query('SELECT inet_server_port() AS port, current_database() AS db');
  t.deepEqual(rows[0], { port, db: database });

  // The change feed's own connection follows the same list (a list of its own here, so that it starts at host 1).
  const feedUrl = listing(`127.0.0.1:${await closedPort()},127.0.0.1:${port}`);
  const feed = new ChangeFeed(feedUrl, createLogger('silent'));
  t.teardown(() => feed.stop());
  const refused = await t.throwsAsync(feed.start());
  t.true(isDatabaseUnreachable(refused));
  await feed.start();
  const heard = new Promise<string>((resolve) => feed.on('probe', resolve));
  await pool.query(`SELECT pg_notify('switchboard_changes', 'probe:42')`);
  t.is(await heard, '42', 'the feed listens on the second host');
});

test.serial('read-write: a host whose sessions are read-only is passed over, and the list goes round until one takes writes', async (t) => {
  const admin = new pg.Client({ connectionString: process.env.SWITCHBOARD_TEST_PG });
  await admin.connect();
  t.teardown(() => admin.end());
  await admin.query(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
  // Both entries are the same server: what matters is that each is tried in turn.
  const multi = listing(`127.0.0.1:${port},127.0.0.1:${port}`, '?target_session_attrs=read-write&application_name=hosts-test');
  const hosts = DatabaseHosts.of(multi);
  const pool = createPool(multi, 2);
  t.teardown(() => pool.end());
  const moves: HostMove[] = [];
  t.teardown(hosts.onMove((m) => moves.push(m)));
  try {
    const err = await t.throwsAsync(pool.query('SELECT 1'), { instanceOf: WrongSessionError });
    t.is(err?.message, `127.0.0.1:${port} does not take writes (the session is read-only; target_session_attrs=read-write): the next connection tries 127.0.0.1:${port}`);
    t.true(isDatabaseUnreachable(err), 'answered 503 with Retry-After');
    t.is(hosts.pick().index, 1);
    await t.throwsAsync(pool.query('SELECT 1'), { instanceOf: WrongSessionError });
    t.is(hosts.pick().index, 0, 'around the list');
    t.deepEqual(moves.map((m) => m.reason), ['read_only', 'read_only']);
    t.is(pool.totalCount, 0, 'no read-only connection is kept');
  } finally {
    await admin.query(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
  }
  const { rows } = await pool.query(`SELECT current_setting('application_name') AS app`);
  t.is(rows[0].app, 'hosts-test', 'the query options reach every host');
  // any: the read-only host is taken (reads go on there), as libpq does.
  t.is(DatabaseHosts.of(listing(`127.0.0.1:${port},127.0.0.1:${port}`, '?target_session_attrs=any')).target.targetSessionAttrs, 'any');
});

test('a write refused as read-only (SQLSTATE 25006) in a transaction drops its pooled connection and moves the list to the next host', async (t) => {
  const multi = listing(`127.0.0.1:${port},127.0.0.1:${port}`, '?application_name=fenced');
  const hosts = DatabaseHosts.of(multi);
  const pool = createPool(multi, 1);
  t.teardown(() => pool.end());
  // A session turned read-only after it was checked, as a primary fenced by its failover manager
  // (default_transaction_read_only reloaded) or demoted under it.
  const moves: HostMove[] = [];
  t.teardown(hosts.onMove((m) => moves.push(m)));
  const client = await pool.connect();
  await client.query('SET default_transaction_read_only = on');
  client.release();
  t.is(hosts.pick().index, 0);
  const err = await t.throwsAsync(withTransaction(pool, (db) => db.query('CREATE TABLE written_on_a_standby (id int)')));
  t.is((err as { code?: string }).code, '25006');
  t.true(isDatabaseUnreachable(err), 'answered 503 with Retry-After');
  t.is(hosts.pick().index, 1, 'new connections go to the next host');
  t.deepEqual(moves, [{ from: `127.0.0.1:${port}`, to: `127.0.0.1:${port}`, reason: 'write_refused' }]);
  const { rows } = await pool.query('SHOW transaction_read_only');
  t.is(rows[0].transaction_read_only, 'off', 'the read-only connection was dropped, a new one made');
});
