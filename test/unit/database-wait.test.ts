import test from 'ava';
import type { Pool } from '../../db/pool.ts';
import { startRetryDelayMs, StartAborted, StartRefused, waitForDatabase } from '../../app/database-wait.ts';
import { createLogger } from '../../runtime/logger.ts';
import { LogCapture } from '../helpers/service.ts';

/** A pool whose queries fail with `errors` in turn, then answer. */
function poolFailing(errors: unknown[]): Pool & { tries: number } {
  const pool = {
    tries: 0,
    async query() {
      const err = errors[pool.tries++];
      if (err) throw err;
      return { rows: [{ '?column?': 1 }] };
    },
  };
  return pool as unknown as Pool & { tries: number };
}
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' });

test('the wait at start doubles from 1 s and stops growing at 30 s', (t) => {
  t.deepEqual([1, 2, 3, 4, 5, 6, 7, 50].map(startRetryDelayMs), [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
});

test('an error that waiting does not mend (a wrong password) is thrown at once, with no wait', async (t) => {
  const logs = new LogCapture();
  const pool = poolFailing([Object.assign(new Error('password authentication failed for user "x"'), { code: '28P01' })]);
  await t.throwsAsync(waitForDatabase(pool, createLogger('info', logs)), { message: /password authentication failed/ });
  t.is(pool.tries, 1);
  t.is(logs.lines.length, 0);
});

test('a signal gives the wait up in the middle of a delay', async (t) => {
  const logs = new LogCapture();
  const abort = new AbortController();
  const pool = poolFailing(Array.from({ length: 10 }, refused));
  const started = Date.now();
  const waiting = waitForDatabase(pool, createLogger('info', logs), { signal: abort.signal });
  setTimeout(() => abort.abort(), 200);
  await t.throwsAsync(waiting, { instanceOf: StartAborted });
  t.true(Date.now() - started < 900, 'not after the 1 s wait');
  t.like(logs.lines, [{ event: 'database_wait', attempt: 1, retry_in_ms: 1_000, error_code: 'ECONNREFUSED' }]);
});

test('a pooler refusing the startup options (PgBouncer 1.18, SQLSTATE 08P01) is no database that is down: start-up stops at once saying what to set', async (t) => {
  const logs = new LogCapture();
  const pool = poolFailing([Object.assign(new Error('unsupported startup parameter: options'), { code: '08P01' })]);
  const err = await t.throwsAsync(waitForDatabase(pool, createLogger('info', logs)), { instanceOf: StartRefused });
  t.regex(err!.message, /unsupported startup parameter: options.*SWITCHBOARD_DATABASE_POOLER=transaction and SWITCHBOARD_DIRECT_DATABASE_URL/);
  t.like(err!.fields, { event: 'database_startup_option_refused', error_code: '08P01' });
  t.is(pool.tries, 1);
  t.is(logs.lines.length, 0, 'no "trying again" line');
});
