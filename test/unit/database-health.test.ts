import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseOutOfResources, isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { DatabaseHealth, RETRY_CAP_MS, retryDelayMs } from '../../runtime/database-health.ts';
import { pollLoop } from '../../runtime/poll-loop.ts';
import { createLogger } from '../../runtime/logger.ts';
import { LogCapture } from '../helpers/service.ts';

/** An error as pg or Node's net module makes it. */
const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });
const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, syscall: 'connect', errno: -111 });
const refused = () => socketError('ECONNREFUSED');

test('errors that mean the database cannot be reached right now', (t) => {
  const unreachable = [
    refused(),
    socketError('ECONNRESET'),
    socketError('ETIMEDOUT'),
    Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' }),
    pgError('57P01', 'terminating connection due to administrator command'),
    pgError('57P02', 'terminating connection because of crash of another server process'),
    pgError('57P03', 'the database system is starting up'),
    pgError('53300', 'sorry, too many clients already'),
    // Class 53, insufficient resources: the server refuses work until space or memory is back.
    pgError('53000', 'insufficient resources'),
    pgError('53100', 'could not extend file "base/16384/16385": No space left on device'),
    pgError('53200', 'out of memory'),
    pgError('53400', 'configuration limit exceeded'),
    // A write reaching a standby while a failover is under way (docs/decisions.md, "Failover").
    pgError('25006', 'cannot execute INSERT in a read-only transaction'),
    pgError('08006', 'connection failure'),
    pgError('08001'),
    pgError('08P01'),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated'),
    new Error('Connection terminated due to connection timeout', { cause: new Error('timeout expired') }),
    new Error('timeout exceeded when trying to connect'),
    new Error('Client has encountered a connection error and is not queryable'),
    new Error('Client was closed and is not queryable'),
    Object.assign(new AggregateError([refused(), refused()], ''), { code: 'ECONNREFUSED' }),
    new AggregateError([refused()], 'connect failed'),
  ];
  for (const err of unreachable) t.true(isDatabaseUnreachable(err), `${(err as any).code} ${err.message}`);
});

test('errors of a query, of the data or of another service are not', (t) => {
  const others = [
    pgError('23505', 'duplicate key value violates unique constraint'),
    pgError('40001', 'could not serialize access'),
    pgError('42P01', 'relation does not exist'),
    pgError('57014', 'canceling statement due to statement timeout'),
    pgError('28P01', 'password authentication failed'),
    // An HTTP client's refused connection (fetch, axios) names another service: no syscall.
    Object.assign(new TypeError('fetch failed'), { cause: refused() }),
    Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', isAxiosError: true }),
    new Error('Cannot use a pool after calling end on the pool'),
    new TypeError('boom'),
    null,
    undefined,
    'ECONNREFUSED',
    { code: 42 },
  ];
  for (const err of others) t.false(isDatabaseUnreachable(err), String((err as any)?.message ?? err));
});

test('retry delays double from the interval up to the cap; a slower loop keeps its interval', (t) => {
  t.deepEqual([0, 1, 2, 3, 4, 5, 6, 20].map((f) => retryDelayMs(1_000, f)), [1_000, 1_000, 2_000, 4_000, RETRY_CAP_MS, RETRY_CAP_MS, RETRY_CAP_MS, RETRY_CAP_MS]);
  t.deepEqual([1, 2, 3].map((f) => retryDelayMs(250, f)), [250, 500, 1_000]);
  t.is(retryDelayMs(30_000, 5), 30_000);
  t.true(RETRY_CAP_MS >= 5_000 && RETRY_CAP_MS <= 10_000);
});

function captured() {
  const logs = new LogCapture();
  const log = createLogger('info', logs);
  const lines = (event: string) => logs.lines.filter((l) => l.event === event);
  return { logs, log, lines };
}

test('one line when the database becomes unreachable and one when it is back, however many report', (t) => {
  const { log, lines, logs } = captured();
  const health = new DatabaseHealth(log);
  for (let i = 0; i < 50; i++) t.true(health.failed(refused(), i % 2 ? 'dialler' : 'jobs'));
  t.false(health.reachable);
  for (let i = 0; i < 50; i++) health.succeeded('dialler');
  t.true(health.reachable);
  t.is(lines('database_unreachable').length, 1);
  t.like(lines('database_unreachable')[0], { level: 50, source: 'jobs', error_code: 'ECONNREFUSED' });
  t.is(lines('database_reachable').length, 1);
  t.is(typeof lines('database_reachable')[0].down_ms, 'number');
  // Any other error is the caller's to log; health stays as it was.
  t.false(health.failed(pgError('23505'), 'jobs'));
  t.true(health.reachable);
  t.is(logs.lines.length, 2);
});

test('a database out of resources (53100 disk full): one line per source for its streak, one when that source succeeds again', (t) => {
  const { log, lines } = captured();
  const health = new DatabaseHealth(log);
  const diskFull = () => pgError('53100', 'could not extend file: No space left on device');
  t.true(isDatabaseOutOfResources(diskFull()));
  t.false(isDatabaseOutOfResources(refused()));
  t.false(isDatabaseOutOfResources(pgError('23505')));
  for (let i = 0; i < 30; i++) {
    t.true(health.failed(diskFull(), 'dialler'));
    // A reader of another source succeeding does not end the dialler's streak.
    health.succeeded('call keeper');
  }
  t.true(health.failed(pgError('53200', 'out of memory'), 'webhook sender'));
  t.like(lines('database_out_of_resources'), [
    { level: 50, source: 'dialler', error_code: '53100' },
    { level: 50, source: 'webhook sender', error_code: '53200' },
  ]);
  t.true(health.reachable, 'the server answers: not an outage of the whole process');
  t.is(lines('database_unreachable').length, 0);
  health.succeeded('dialler');
  health.succeeded('dialler');
  t.like(lines('database_resources_back'), [{ level: 30, source: 'dialler' }]);
  t.is(typeof lines('database_resources_back')[0].down_ms, 'number');
  // 53300 (too many connections) is a connection that cannot be had: the process-wide outage.
  t.true(health.failed(pgError('53300', 'sorry, too many clients already'), 'jobs'));
  t.is(lines('database_unreachable').length, 1);
});

test('one health per process log', (t) => {
  const { log } = captured();
  t.is(DatabaseHealth.of(log), DatabaseHealth.of(log));
  t.not(DatabaseHealth.of(log), DatabaseHealth.of(captured().log));
});

test('a poll loop backs off quietly while the database is unreachable and logs other failures each round', async (t) => {
  const { log, lines, logs } = captured();
  const health = new DatabaseHealth(log);
  const at: number[] = [];
  let outcome: 'unreachable' | 'ok' | 'bug' = 'unreachable';
  const t0 = Date.now();
  const stop = pollLoop(
    async () => {
      at.push(Date.now() - t0);
      if (outcome === 'unreachable') throw refused();
      if (outcome === 'bug') throw new TypeError('a bug');
    },
    20,
    log,
    'test loop',
    health,
  );
  await sleep(700);
  // 20, 40, 80, 160, 320 ms apart: about 6 rounds in 700 ms, not 35.
  const down = at.length;
  t.true(down >= 4 && down <= 7, `rounds while down: ${down} at ${at.join(',')}`);
  const gaps = at.slice(1).map((v, i) => v - at[i]);
  t.true(gaps.at(-1)! >= 150, `the last wait had grown: ${gaps.join(',')}`);
  t.is(lines('database_unreachable').length, 1);
  t.is(logs.lines.length, 1, 'nothing else is logged while down');

  outcome = 'ok';
  await sleep(700); // the wait in progress (up to 640 ms) runs out first
  t.is(lines('database_reachable').length, 1);
  const up = at.length;
  await sleep(300);
  const upRounds = at.length - up;
  t.true(upRounds >= 8, `back to its interval once the database answers: ${upRounds} rounds in 300 ms`);

  outcome = 'bug';
  const before = at.length;
  await sleep(200);
  const bugRounds = at.length - before;
  t.true(bugRounds >= 4, `no backoff for other failures: ${bugRounds} rounds`);
  t.is(logs.lines.filter((l) => l.msg === 'test loop round failed; the next round retries').length, bugRounds);
  await stop();
  const stoppedAt = at.length;
  await sleep(100);
  t.is(at.length, stoppedAt, 'no round after stop');
});

test('stopping a poll loop waits for the round in progress', async (t) => {
  const { log } = captured();
  let finished = false;
  const stop = pollLoop(
    async () => {
      await sleep(150);
      finished = true;
    },
    1,
    log,
    'slow loop',
  );
  await sleep(30);
  await stop();
  t.true(finished);
});
