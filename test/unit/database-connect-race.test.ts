import test from 'ava';
import net from 'node:net';
import { createPool } from '../../db/pool.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { cstring, message, readyForQuery } from '../fakes/postgres-wire.ts';

/*
 * A PostgreSQL server shutting down (`pg_ctl stop -m fast`, a failover) while a pool connection
 * is being made can answer the start-up with ReadyForQuery and, in the same packet, FATAL 57P01.
 * pg resolves `connect` on the ReadyForQuery and the pool starts listening for the connection's
 * errors a few microtasks later, after the FATAL was already emitted: the process crashed with an
 * uncaught "terminating connection due to administrator command" (seen in
 * test/integration/health.test.ts about once in twelve runs). The server here speaks the
 * protocol's start-up (PostgreSQL docs, "Message Flow", "Message Formats") and does exactly that.
 */

/** AuthenticationOk, ReadyForQuery (idle) and ErrorResponse FATAL 57P01, in one write; then closes. */
function readyThenTerminated(): Buffer {
  const authOk = message('R', Buffer.from([0, 0, 0, 0]));
  const ready = readyForQuery();
  const fatal = message(
    'E',
    Buffer.concat([
      Buffer.from('S'),
      cstring('FATAL'),
      Buffer.from('V'),
      cstring('FATAL'),
      Buffer.from('C'),
      cstring('57P01'),
      Buffer.from('M'),
      cstring('terminating connection due to administrator command'),
      Buffer.from([0]),
    ]),
  );
  return Buffer.concat([authOk, ready, fatal]);
}

test('a server that says ready and terminates the session in the same packet fails that connection cleanly (503-class), without crashing the process', async (t) => {
  let startups = 0;
  const server = net.createServer((socket) => {
    let got = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      got = Buffer.concat([got, chunk]);
      // The StartupMessage: Int32 length, then the protocol version and parameters.
      if (got.length >= 4 && got.length >= got.readInt32BE(0)) {
        startups++;
        socket.end(readyThenTerminated());
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const pool = createPool(`postgres://switchboard@127.0.0.1:${port}/switchboard`, 2);
  const crashes: unknown[] = [];
  const onUncaught = (err: unknown) => crashes.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    for (let i = 0; i < 3; i++) {
      const err = await t.throwsAsync(pool.query('SELECT 1'));
      t.regex(String(err?.message), /terminating connection due to administrator command/);
      t.is((err as { code?: string }).code, '57P01');
      t.true(isDatabaseUnreachable(err), 'answered as the database being away (503 with Retry-After), not a 500');
    }
    // A turn of the event loop for anything emitted late.
    await new Promise((r) => setTimeout(r, 50));
    t.deepEqual(crashes, [], 'no uncaught exception');
    t.is(startups, 3, 'each query tried a new connection: the dead one was not lent again');
  } finally {
    process.off('uncaughtException', onUncaught);
    await pool.end().catch(() => {});
    server.close();
  }
});
