import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { adminClient, makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { client, type Reply } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import pg from 'pg';
import { createPool, withTransaction } from '../../db/pool.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { destroyRestartableDatabases, startRestartableDatabase, type RestartableDatabase } from '../helpers/restartable-db.ts';

/**
 * Requests while PostgreSQL is down: every one that needs the database is answered 503
 * service_unavailable with Retry-After, never 500, and never 401 for a key that could not be
 * checked; once it is back, the same requests succeed with no restart of the service.
 * Two services share one database of this file's own (it is stopped): one counts request limits
 * in PostgreSQL, the other in memory, so both the counters and the routes behind them meet the
 * outage.
 */
let db: RestartableDatabase;
let shared: TestService;
let local: TestService;
let account: TestAccount;
let unusedKey: string;
let customer: { id: string };

test.before(async () => {
  db = await startRestartableDatabase();
  shared = await startTestService({ DATABASE_URL: db.url, SWITCHBOARD_RATE_LIMIT_STORE: 'postgres' });
  local = await startTestService({ DATABASE_URL: db.url, SWITCHBOARD_RATE_LIMIT_STORE: 'memory' });
  account = await makeAccount(shared.url);
  unusedKey = (await account.admin.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'never used' })).body.secret;
  customer = await makeCustomer(account.api);
  // Warm both services: the key is cached and the customer's actor loaded in each.
  for (const svc of [shared, local]) {
    const api = client(svc.url, account.testKey);
    if ((await api.get(`/v1/customers/${customer.id}`)).status !== 200) throw new Error('warm-up failed');
  }
});
test.after.always(async () => {
  await shared?.stop();
  await local?.stop();
  await destroyRestartableDatabases();
});

function assertUnavailable(t: any, r: Reply, what: string) {
  t.is(r.status, 503, `${what}: ${r.status} ${r.text}`);
  t.like(r.body, { error: { type: 'api_error', code: 'service_unavailable' } }, what);
  t.is(r.headers.get('retry-after'), '2', what);
  t.regex(r.body.error.request_id ?? '', /^req_/, what);
}

test.serial('while the database is down every request that needs it is 503 with Retry-After; after it is back they succeed', async (t) => {
  await db.stop('fast');
  const viaShared = client(shared.url, account.testKey);
  const viaLocal = client(local.url, account.testKey);
  // The request counter in PostgreSQL (the key itself is cached).
  assertUnavailable(t, await viaShared.get('/v1/customers'), 'shared rate-limit store');
  // The authenticator: a key not cached must be looked up, and cannot be; it is not refused.
  assertUnavailable(t, await client(shared.url, unusedKey).get('/v1/customers'), 'authenticator (shared)');
  assertUnavailable(t, await client(local.url, unusedKey).get('/v1/customers'), 'authenticator (local)');
  // Routes: reads, writes, a write that names its own failure code, the console.
  assertUnavailable(t, await viaLocal.get('/v1/customers'), 'list');
  assertUnavailable(t, await viaLocal.post('/v1/customers', { name: 'During Outage', country: 'US' }), 'create');
  assertUnavailable(t, await viaLocal.post(`/v1/customers/${customer.id}/provisioning`, {}), 'provisioning');
  assertUnavailable(t, await viaLocal.get('/v1/balance'), 'balance');
  assertUnavailable(t, await adminClient(local.url).get(`/admin/v1/accounts/${account.id}`), 'console');
  // Nothing that needs no database is affected.
  t.is((await client(local.url).get('/healthz')).status, 200);

  await db.start();
  t.is((await viaShared.get('/v1/customers')).status, 200);
  t.is((await client(shared.url, unusedKey).get('/v1/customers')).status, 200);
  t.is((await viaLocal.post(`/v1/customers/${customer.id}/provisioning`, {})).status, 202);
  t.is((await viaLocal.post('/v1/customers', { name: 'After Outage', country: 'US' })).status, 201);

  for (const svc of [shared, local]) {
    // The change feed finds the database back within its backoff (at most 5 s between tries).
    await until('the service to see the database back', () => svc.logs.lines.some((l) => l.event === 'database_reachable'), 10_000);
    t.deepEqual(svc.logs.lines.filter((l) => (l.level as number) >= 50 && l.event !== 'database_unreachable').map((l) => l.msg), [], 'no error logged but the outage');
    t.is(svc.logs.lines.filter((l) => l.event === 'database_unreachable').length, 1);
    t.is(svc.logs.lines.filter((l) => l.event === 'database_reachable').length, 1);
  }
});

test.serial('a connection cut while checked out of the pool fails its transaction, not the process', async (t) => {
  const pool = createPool(db.url, 2);
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  try {
    const err = await t.throwsAsync(
      withTransaction(pool, async (client) => {
        const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        // The cut reaches the client between two queries: pg emits 'error' on it (with no
        // listener of ours, an uncaught exception that ended the process).
        await new Promise((r) => setTimeout(r, 200));
        await client.query('SELECT 1');
      }),
    );
    t.true(isDatabaseUnreachable(err), String(err));
    t.is((await pool.query('SELECT 1 AS one')).rows[0].one, 1, 'the pool goes on with a new connection');
  } finally {
    await admin.end();
    await pool.end();
  }
});
