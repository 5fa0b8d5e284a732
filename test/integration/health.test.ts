import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { client, type Reply } from '../helpers/http.ts';
import { buildApp } from '../../http/app.ts';
import { isDraining, markDraining } from '../../http/routes/health.ts';
import { closeGracefully } from '../../http/plugins/graceful-close.ts';
import { destroyRestartableDatabases, startRestartableDatabase, type RestartableDatabase } from '../helpers/restartable-db.ts';

/*
 * Liveness and readiness (docs/api.md, "Health"): `/healthz` answers while the process runs, with
 * no key and no database; `/readyz` answers 200 only while the database answers and the process
 * is not draining, and 503 service_unavailable with Retry-After in the error shape otherwise, so a
 * load balancer takes the process out of rotation. The database is a server of this file's own,
 * stopped and started again as an operator's restart would.
 */
let db: RestartableDatabase;
let svc: TestService;

test.before(async () => {
  db = await startRestartableDatabase();
  svc = await startTestService({ DATABASE_URL: db.url });
});
test.after.always(async () => {
  await svc?.stop();
  await destroyRestartableDatabases();
});

function assertNotReady(t: any, r: Reply, retryAfter = '2') {
  t.is(r.status, 503, r.text);
  t.deepEqual(Object.keys(r.body), ['error']);
  t.like(r.body, { error: { type: 'api_error', code: 'service_unavailable' } });
  t.regex(r.body.error.request_id, /^req_/);
  t.is(r.headers.get('retry-after'), retryAfter);
  t.notRegex(r.text, /postgres|ECONNREFUSED|5432|SELECT/i, 'nothing about the database in the answer');
}

test.serial('readiness is 200 while the database answers, 503 in the error shape while it is stopped, 200 again once it is back; liveness stays 200 throughout', async (t) => {
  const anon = client(svc.url);
  const ready = await anon.get('/readyz');
  t.is(ready.status, 200, ready.text);
  t.deepEqual(ready.body, { ready: true });
  t.deepEqual((await anon.get('/healthz')).body, { ok: true });

  await db.stop('fast');
  try {
    assertNotReady(t, await anon.get('/readyz'));
    assertNotReady(t, await anon.get('/readyz'));
    const live = await anon.get('/healthz');
    t.is(live.status, 200, 'liveness needs no database');
    t.deepEqual(live.body, { ok: true });
  } finally {
    await db.start();
  }
  const back = await anon.get('/readyz');
  t.is(back.status, 200, back.text);
  t.deepEqual(back.body, { ready: true });
});

test.serial('a draining process is not ready: marked, or closing', async (t) => {
  const app = await buildApp(svc.services);
  await app.ready();
  try {
    t.is((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    markDraining(app);
    const r = await app.inject({ method: 'GET', url: '/readyz' });
    t.is(r.statusCode, 503);
    t.is(r.headers['retry-after'], '2');
    t.like(r.json(), { error: { type: 'api_error', code: 'service_unavailable', message: 'This process is shutting down; retry after the number of seconds in Retry-After.' } });
    t.is((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'still alive');
  } finally {
    await app.close();
  }
  // A graceful close (a rolling upgrade's SIGINT) fails readiness from its first moment, while the
  // server still serves other requests during its linger.
  const closing = await buildApp(svc.services);
  await closing.ready();
  const closed = closeGracefully(closing);
  const during = await closing.inject({ method: 'GET', url: '/readyz' });
  t.is(during.statusCode, 503);
  t.like(during.json(), { error: { code: 'service_unavailable' } });
  t.is(during.headers['retry-after'], '2');
  t.is((await closing.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'serving still');
  await closed;
  // Closing marks it too (fastify's preClose), whatever else the shutdown does.
  const other = await buildApp(svc.services);
  await other.ready();
  t.false(isDraining(other));
  await other.close();
  t.true(isDraining(other));
});
