import test from 'ava';
import { cleanUpEverything, makeTempRoot, spawnSwitchboard } from './process-helpers.ts';
import { until } from '../helpers/wait.ts';
import { destroyRestartableDatabases, startRestartableDatabase } from '../helpers/restartable-db.ts';

/*
 * A role started while PostgreSQL is down (issue 25 §0: pm2 restarted it every 1.5 s, each time a
 * raw stack and no JSON line): `switchboard start` waits, trying again 1 s, 2 s, 4 s … up to 30 s
 * apart, one JSON line per try with the wait before the next, and starts once the database is
 * there, without exiting. The database is a server of this test's own on a fixed port, stopped
 * before the process starts and started under it.
 */
test.after.always(async () => {
  await cleanUpEverything();
  await destroyRestartableDatabases();
});

test('a process started without its database waits with backoff, logging one JSON line per try, and starts once it is there', async (t) => {
  const db = await startRestartableDatabase();
  await db.stop('fast');
  const sb = await spawnSwitchboard({
    dataDir: await makeTempRoot('switchboard-nodb-'),
    env: {
      DATABASE_URL: db.url,
      SWITCHBOARD_ROLES: 'api',
      SWITCHBOARD_ADMIN_TOKEN: 'sbc_e2e_nodb_console_token_8Kq2xVw7LpZ3',
      SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
    },
  });
  const waits = () => sb.logs().filter((l) => l.event === 'database_wait');
  // Loading the code takes seconds on a busy machine; from the first try on: tries at about 0 s,
  // 1 s and 3 s, so three lines in 3.5 s, and the process still running.
  await until('a first try', () => waits().length > 0, 60_000);
  await new Promise((r) => setTimeout(r, 3_500));
  t.true(sb.isRunning(), `exited: ${sb.stderr()}`);
  const early = waits();
  t.true(early.length >= 2 && early.length <= 4, `tries in 3.5 s: ${early.length}`);
  t.deepEqual(
    early.map((l) => l.retry_in_ms),
    [1_000, 2_000, 4_000].slice(0, early.length),
    'the wait doubles from 1 s',
  );
  for (const [i, line] of early.entries()) t.like(line, { level: 40, attempt: i + 1, error_code: 'ECONNREFUSED' });
  t.is(sb.stderr().trim(), '', 'no stack on stderr');
  t.false(sb.stdout().split('\n').some((l) => l.trim() && !l.startsWith('{')), 'every stdout line is JSON');

  await db.start();
  await until('the process to start on the database', () => sb.logs().some((l) => l.msg === 'switchboard started'), 15_000);
  t.like(sb.logs().find((l) => l.event === 'database_wait_over'), { level: 30 });
  const health = await fetch(`${sb.url}/readyz`);
  t.is(health.status, 200);
  t.true(sb.isRunning());
  const stopped = await sb.stop('SIGTERM');
  t.is(stopped.code, 0);
});

test('a process signalled while it waits for its database exits at once, cleanly', async (t) => {
  const db = await startRestartableDatabase();
  await db.stop('fast');
  const sb = await spawnSwitchboard({
    dataDir: await makeTempRoot('switchboard-nodb-'),
    env: { DATABASE_URL: db.url, SWITCHBOARD_ROLES: 'dialler', SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64') },
  });
  await until('a first try', () => sb.logs().some((l) => l.event === 'database_wait'), 60_000);
  const stopped = await sb.stop('SIGTERM', 8_000);
  t.is(stopped.code, 0, sb.stderr());
  t.true(stopped.ms < 3_000, `took ${stopped.ms} ms`);
  t.true(sb.logs().some((l) => l.msg === 'stopped while waiting for the database'));
});
