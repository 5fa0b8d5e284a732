import test from 'ava';
import net from 'node:net';
import { createPool } from '../../db/pool.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { cstring, int16, int32, message, readyForQuery } from '../fakes/postgres-wire.ts';

/*
 * A DATABASE_URL listing several hosts with target_session_attrs (runtime/database-hosts.ts):
 * after connecting, the session is checked as libpq checks it. A server from PostgreSQL 14 on
 * reports `in_hot_standby` and `default_transaction_read_only` in its start-up ParameterStatus
 * messages, so no statement is needed; an older one does not, and is asked
 * `SHOW transaction_read_only` (read-write) or `pg_is_in_recovery()` (primary). CI's servers are
 * all 14 or later, so the older servers' path is played here by servers that speak the protocol's
 * start-up and simple queries (PostgreSQL docs, "Message Flow", "Message Formats"), each set to
 * report its parameters or not and to answer the checks as a primary or a standby would.
 */

const TEXT = 25;
const BOOL = 16;
const INT4 = 23;

/** One column, one row, as a simple query's answer: RowDescription, DataRow, CommandComplete, ReadyForQuery. */
function oneValue(column: string, typeOid: number, value: string, tag: string): Buffer {
  const field = Buffer.concat([cstring(column), int32(0), int16(0), int32(typeOid), int16(-1), int32(-1), int16(0)]);
  const v = Buffer.from(value, 'utf8');
  return Buffer.concat([
    message('T', Buffer.concat([int16(1), field])),
    message('D', Buffer.concat([int16(1), int32(v.length), v])),
    message('C', cstring(tag)),
    readyForQuery(),
  ]);
}

interface FakeServer {
  port: number;
  /** The simple queries each session sent, in order, one list per session. */
  sessions: string[][];
  close(): void;
}

/**
 * A server that accepts any start-up (AuthenticationOk), reports `parameters`, and answers the
 * session checks as a standby (`standby: true`) or a primary would, and `SELECT 1`.
 */
async function fakeServer(o: { standby: boolean; parameters: Record<string, string> }): Promise<FakeServer> {
  const sessions: string[][] = [];
  const server = net.createServer((socket) => {
    const queries: string[] = [];
    sessions.push(queries);
    let got = Buffer.alloc(0);
    let started = false;
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      got = Buffer.concat([got, chunk]);
      for (;;) {
        if (!started) {
          // The StartupMessage: Int32 length, then the protocol version and parameters.
          if (got.length < 4 || got.length < got.readInt32BE(0)) return;
          got = got.subarray(got.readInt32BE(0));
          started = true;
          const params = Object.entries(o.parameters).map(([name, value]) => message('S', Buffer.concat([cstring(name), cstring(value)])));
          socket.write(Buffer.concat([message('R', int32(0)), ...params, message('K', Buffer.concat([int32(4242), int32(7)])), readyForQuery()]));
          continue;
        }
        if (got.length < 5 || got.length < 1 + got.readInt32BE(1)) return;
        const type = String.fromCharCode(got[0]);
        const body = got.subarray(5, 1 + got.readInt32BE(1));
        got = got.subarray(1 + got.readInt32BE(1));
        if (type === 'X') return void socket.end();
        if (type !== 'Q') return void socket.destroy();
        const sql = body.subarray(0, body.length - 1).toString('utf8');
        queries.push(sql);
        if (/transaction_read_only/i.test(sql)) socket.write(oneValue('transaction_read_only', TEXT, o.standby ? 'on' : 'off', 'SHOW'));
        else if (/pg_is_in_recovery/i.test(sql)) socket.write(oneValue('standby', BOOL, o.standby ? 't' : 'f', 'SELECT 1'));
        else socket.write(oneValue('one', INT4, '1', 'SELECT 1'));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, sessions, close: () => server.close() };
}

/** What a PostgreSQL 14 or later server reports at start-up for the session checks. */
const reportsOf = (standby: boolean) => ({ in_hot_standby: standby ? 'on' : 'off', default_transaction_read_only: standby ? 'on' : 'off' });

/**
 * A pool over [standby, primary] with `attrs`: the first query meets the standby (refused, as the
 * database being away: 503 with Retry-After), the next goes to the primary. Returns each server's sessions.
 */
async function failOver(t: import('ava').ExecutionContext, attrs: 'read-write' | 'primary', reports: boolean) {
  const standby = await fakeServer({ standby: true, parameters: reports ? reportsOf(true) : {} });
  const primary = await fakeServer({ standby: false, parameters: reports ? reportsOf(false) : {} });
  const pool = createPool(`postgres://switchboard@127.0.0.1:${standby.port},127.0.0.1:${primary.port}/switchboard?target_session_attrs=${attrs}`, 1);
  try {
    const refused = await t.throwsAsync(pool.query('SELECT 1'));
    t.regex(String(refused?.message), attrs === 'read-write' ? /read-only/ : /hot standby/);
    t.true(isDatabaseUnreachable(refused), 'answered as the database being away, never a 500');
    t.deepEqual((await pool.query('SELECT 1')).rows, [{ one: 1 }], 'the next connection went to the primary');
    t.deepEqual((await pool.query('SELECT 1')).rows, [{ one: 1 }], 'and stays there');
  } finally {
    await pool.end().catch(() => {});
    standby.close();
    primary.close();
  }
  return { standby: standby.sessions, primary: primary.sessions };
}

test('a server older than PostgreSQL 14 (no in_hot_standby reported) is asked SHOW transaction_read_only for read-write, and a read-only one is left', async (t) => {
  const { standby, primary } = await failOver(t, 'read-write', false);
  t.deepEqual(standby, [['SHOW transaction_read_only']], 'the standby was asked, once, and given nothing else');
  t.deepEqual(primary, [['SHOW transaction_read_only', 'SELECT 1', 'SELECT 1']], 'the primary was asked once, then used');
});

test('a server older than PostgreSQL 14 is asked pg_is_in_recovery() for primary, and a standby is left', async (t) => {
  const { standby, primary } = await failOver(t, 'primary', false);
  t.deepEqual(standby, [['SELECT pg_catalog.pg_is_in_recovery() AS standby']]);
  t.deepEqual(primary, [['SELECT pg_catalog.pg_is_in_recovery() AS standby', 'SELECT 1', 'SELECT 1']]);
});

test('a server from PostgreSQL 14 on is judged on what it reports at start-up: no statement is sent for the check', async (t) => {
  for (const attrs of ['read-write', 'primary'] as const) {
    const { standby, primary } = await failOver(t, attrs, true);
    t.deepEqual(standby, [[]], `${attrs}: the standby was sent nothing`);
    t.deepEqual(primary, [['SELECT 1', 'SELECT 1']], `${attrs}: the primary was sent only the queries`);
  }
});

test('a read-write check on a server that reports only in_hot_standby (not default_transaction_read_only) asks, as libpq does', async (t) => {
  // A primary whose default_transaction_read_only is on (set by an operator fencing it) is read-only
  // although not a standby; a server reporting only one of the two is asked.
  const server = await fakeServer({ standby: false, parameters: { in_hot_standby: 'off' } });
  const pool = createPool(`postgres://switchboard@127.0.0.1:${server.port},127.0.0.1:1/switchboard?target_session_attrs=read-write`, 1);
  try {
    t.deepEqual((await pool.query('SELECT 1')).rows, [{ one: 1 }]);
    t.deepEqual(server.sessions, [['SHOW transaction_read_only', 'SELECT 1']]);
  } finally {
    await pool.end().catch(() => {});
    server.close();
  }
});
