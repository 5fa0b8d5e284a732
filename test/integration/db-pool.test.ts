import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';

/**
 * SWITCHBOARD_DB_POOL_SIZE bounds what one process asks of PostgreSQL's max_connections: the main
 * pool, half as many for the webhook sender and one change-feed connection, however many requests
 * arrive at once.
 */
let svc: TestService;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DB_POOL_SIZE: '2' });
});
test.after.always(async () => {
  await svc?.stop();
});

test('a burst of 60 requests is served through at most pool + sender pool + change feed connections', async (t) => {
  const a = await makeAccount(svc.url);
  await a.console.patch(`/console/v1/accounts/${a.id}/limits`, { requests_per_minute: 10_000, burst: 10_000 });
  const c = await makeCustomer(a.api);
  const watcher = new pg.Client({ connectionString: svc.databaseUrl });
  await watcher.connect();
  let peak = 0;
  let watching = true;
  const watch = (async () => {
    while (watching) {
      const { rows } = await watcher.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      peak = Math.max(peak, rows[0].n);
    }
  })();
  try {
    const answers = await Promise.all(Array.from({ length: 60 }, () => a.api.get(`/v1/customers/${c.id}/readiness`)));
    t.deepEqual([...new Set(answers.map((r) => r.status))], [200]);
  } finally {
    watching = false;
    await watch;
    await watcher.end();
  }
  t.true(peak >= 2, `the pool was used (peak ${peak})`);
  t.true(peak <= 2 + 1 + 1, `peak ${peak} connections`);
});
