import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { createAccountRepository } from '../../db/accounts.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { balanceWrites } from '../../db/money/balances.ts';
import { activityWrites } from '../../db/money/activity.ts';

/**
 * How the service uses PostgreSQL connections and row locks.
 *
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

test.serial('a burst of 60 requests is served through at most pool + sender pool + change feed connections', async (t) => {
  const a = await makeAccount(svc.url);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { requests_per_minute: 10_000, burst: 10_000 });
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

/*
 * The entity locks (account, customer, money row) serialise changes of that entity; they must not
 * hold back writes that merely reference it (a foreign-key check takes FOR KEY SHARE), or every
 * event, ledger line and activity record of a busy account would queue behind, say, the creation
 * of one of its customers.
 */
test.serial('a write that references a locked account and customer goes through at once', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const pool = new pg.Pool({ connectionString: svc.databaseUrl });
  const locker = await pool.connect();
  const writer = await pool.connect();
  try {
    await locker.query('BEGIN');
    t.truthy(await createAccountRepository(locker).lock(a.id));
    t.truthy(await createCustomerRepository(locker).lock(c.id));
    t.truthy(await balanceWrites(locker).lock(a.id, 'test'));
    await writer.query(`SET statement_timeout = '2s'`);
    await t.notThrowsAsync(
      activityWrites(writer).logActivity({
        accountId: a.id,
        mode: 'test',
        customerId: c.id,
        kind: 'call_start_refused',
        reason: 'concurrency_limit',
        reference: 'lock-test',
        now: new Date(),
      }),
    );
    // A change of the locked entity itself still waits.
    await t.throwsAsync(writer.query(`UPDATE accounts SET name = name WHERE id = $1`, [a.id]), { message: /statement timeout/ });
  } finally {
    await locker.query('ROLLBACK').catch(() => {});
    locker.release();
    writer.release(true);
    await pool.end();
  }
});
