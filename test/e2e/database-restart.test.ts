import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { cleanUpEverything, makeTempRoot, startSwitchboard, type Instance } from './process-helpers.ts';
import { client, type Client } from '../helpers/http.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { until } from '../helpers/wait.ts';
import { destroyRestartableDatabases, startRestartableDatabase, type RestartableDatabase, type ShutdownMode } from '../helpers/restartable-db.ts';

/**
 * The roles as pm2 runs them (ecosystem.config.cjs: api, dialler and sender as separate
 * processes) against a PostgreSQL of their own, which is restarted or loses a process under a
 * bounded request load: requests get 2xx or 503 with Retry-After, never a 500; every role keeps
 * running and logs the outage once; the change feed, webhook deliveries and the API work again
 * without restarting anything.
 */
const TOKEN = 'sbc_e2e_restart_console_token_3unwVspRSIcD';
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString('base64');

/** What a failed test leaves running (load, receivers), stopped before the processes and databases. */
const leftovers: (() => Promise<unknown>)[] = [];
test.after.always(async () => {
  for (const stop of leftovers) await stop().catch(() => {});
  await cleanUpEverything();
  await destroyRestartableDatabases();
});

async function startRole(db: RestartableDatabase, roles: string): Promise<Instance> {
  return startSwitchboard({
    dataDir: await makeTempRoot(`switchboard-${roles}-`),
    readyWhen: roles.includes('api') ? 'healthz' : 'started',
    env: {
      DATABASE_URL: db.url,
      SWITCHBOARD_ROLES: roles,
      SWITCHBOARD_ADMIN_TOKEN: TOKEN,
      SWITCHBOARD_ENCRYPTION_KEY: ENCRYPTION_KEY,
      SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '1',
      SWITCHBOARD_SENDER_POLL_MS: '200',
      SWITCHBOARD_DB_POOL_SIZE: '5',
      // As in production with several API processes (ecosystem.config.cjs): every request counts in PostgreSQL.
      SWITCHBOARD_RATE_LIMIT_STORE: 'postgres',
    },
  });
}

interface Outcome {
  status: number;
  code?: string;
  retryAfter: string | null;
  error?: string;
}

/**
 * Requests from `concurrency` workers to an API on 127.0.0.1 (reads, and a customer created every
 * fourth request) until stopped, `maxRequests` are done or `maxMs` have passed.
 */
function startLoad(baseUrl: string, key: string, { concurrency = 4, maxRequests = 4_000, maxMs = 40_000 } = {}) {
  if (!baseUrl.startsWith('http://127.0.0.1:')) throw new Error('load goes to loopback only');
  const outcomes: Outcome[] = [];
  const t0 = Date.now();
  let stopped = false;
  const more = () => !stopped && outcomes.length < maxRequests && Date.now() - t0 < maxMs;
  const worker = async (w: number) => {
    for (let i = 0; more(); i++) {
      const write = (i + w) % 4 === 0;
      try {
        const res = await fetch(`${baseUrl}/v1/customers${write ? '' : '?limit=3'}`, {
          method: write ? 'POST' : 'GET',
          headers: { authorization: `Bearer ${key}`, ...(write ? { 'content-type': 'application/json' } : {}) },
          body: write ? JSON.stringify({ name: `Load ${w}-${i}`, country: 'US' }) : undefined,
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        let code: string | undefined;
        try {
          code = JSON.parse(text)?.error?.code;
        } catch {
          /* not JSON */
        }
        outcomes.push({ status: res.status, code, retryAfter: res.headers.get('retry-after') });
      } catch (err) {
        outcomes.push({ status: 0, retryAfter: null, error: String((err as Error).cause ?? err) });
      }
    }
  };
  const done = Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const stop = async () => {
    stopped = true;
    await done;
    return outcomes;
  };
  leftovers.push(stop);
  return { outcomes, stop };
}

/** Only 2xx, or 503 service_unavailable with Retry-After; and the outage did show. */
function assertNoServerErrors(t: ExecutionContext, outcomes: Outcome[], expectUnavailable: boolean) {
  const bad = outcomes.filter((o) => !(o.status >= 200 && o.status < 300) && !(o.status === 503 && o.code === 'service_unavailable' && o.retryAfter));
  t.deepEqual(bad.slice(0, 5), [], `${bad.length} of ${outcomes.length} responses were neither 2xx nor 503 with Retry-After`);
  const unavailable = outcomes.filter((o) => o.status === 503).length;
  t.log(`${outcomes.length} requests: ${outcomes.length - unavailable} 2xx, ${unavailable} 503`);
  if (expectUnavailable) t.true(unavailable > 0, 'the load met the outage');
  t.true(outcomes.length - unavailable > 50, 'the load was served around it');
}

const logEvents = (p: Instance, event: string) => p.logs().filter((l) => l.event === event);
/** A process's log without its request lines, and its stderr (for failure messages). */
const notRequests = (p: Instance) => `${p.stdout().split('\n').filter((l) => !l.includes('"msg":"request"')).join('\n')}\n--- stderr ---\n${p.stderr()}`;

/** An account with a test key, a second key, and a webhook endpoint on a local receiver. */
async function setUp(api: Instance) {
  const con = client(api.url, TOKEN);
  const account = (await con.post('/admin/v1/accounts', { name: 'Restart Agency', country: 'US' })).body;
  await con.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 1_000_000, burst: 1_000_000 });
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'load' })).body;
  const doomed = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'revoked after the restart' })).body;
  const rx = await startReceiver();
  leftovers.push(rx.close);
  await con.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: rx.url, mode: 'test' });
  /** Records a test.ping event and resolves once the receiver has it. */
  const ping = async (what: string, timeoutMs = 10_000) => {
    const event = (await con.post(`/admin/v1/accounts/${account.id}/test_events`, { mode: 'test' })).body;
    const id = event.id;
    if (!id) throw new Error(`no event id in ${JSON.stringify(event)}`);
    await until(`${what}: event ${id} delivered`, () => rx.received.some((r) => r.headers['webhook-id'] === id), timeoutMs);
    return id as string;
  };
  return { con, account, key, doomed, rx, ping };
}

/** A key revoked through the console is refused by `api` within a second: its change feed works. */
async function assertRevocationReaches(t: ExecutionContext, api: Instance, con: Client, accountId: string, doomed: { id: string; secret: string }) {
  const viaDoomed = client(api.url, doomed.secret);
  t.is((await viaDoomed.get('/v1/customers?limit=1')).status, 200, 'the second key works (and is cached)');
  t.is((await con.delete(`/admin/v1/accounts/${accountId}/keys/${doomed.id}`)).status, 200);
  const revokedAt = Date.now();
  await until('the revoked key to be refused', async () => (await viaDoomed.get('/v1/customers?limit=1')).status === 401, 1_000, 20);
  t.log(`revoked key refused after ${Date.now() - revokedAt} ms`);
}

/** Connections listening for the change feed (one per process). */
async function feedConnections(db: RestartableDatabase): Promise<number> {
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  try {
    return (await sql.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`)).rows[0].n;
  } finally {
    await sql.end();
  }
}

async function restartUnderLoad(t: ExecutionContext, mode: ShutdownMode, { sigtermWhileDown = false } = {}) {
  const started = Date.now();
  const db = await startRestartableDatabase();
  const api = await startRole(db, 'api');
  const [dialler, sender] = await Promise.all([startRole(db, 'dialler'), startRole(db, 'sender')]);
  const roles = { api, dialler, sender };
  const { con, account, key, doomed, rx, ping } = await setUp(api);
  await ping('before the restart');

  const load = startLoad(api.url, key.secret);
  await until('some load before the restart', () => load.outcomes.length >= 100, 10_000);
  // Down for 1.5 s: past the one second after which the old change feed gave up for good.
  const { downMs } = await db.restart(mode, { downMs: 1_500 });
  t.log(`database ${mode} restart: down ${Math.round(downMs)} ms`);
  for (const [role, p] of Object.entries(roles)) {
    await until(`${role} to see the database back`, () => {
      if (!p.isRunning()) throw new Error(`${role} exited\n${notRequests(p)}`);
      return logEvents(p, 'database_reachable').length > 0;
    }, 15_000).catch((err) => {
      throw new Error(`${err.message}\n${notRequests(p)}`);
    });
  }
  await until('the api change feed to reconnect', () => api.logs().some((l) => l.msg === 'change feed reconnected; dropping what it guards'), 10_000);
  const after = load.outcomes.length;
  await until('load served after the restart', () => load.outcomes.slice(after).filter((o) => o.status < 300).length >= 50, 10_000);
  assertNoServerErrors(t, await load.stop(), true);

  for (const [role, p] of Object.entries(roles)) {
    t.true(p.isRunning(), `${role} is still running`);
    t.is(logEvents(p, 'database_unreachable').length, 1, `${role}: one line when the database went away`);
    t.is(logEvents(p, 'database_reachable').length, 1, `${role}: one line when it came back`);
    t.deepEqual(p.logs().filter((l) => l.level >= 50 && l.event !== 'database_unreachable').map((l) => l.msg), [], `${role}: no other error logged`);
  }
  await assertRevocationReaches(t, api, con, account.id, doomed);
  await ping('after the restart');
  // Each role reconnects its feed on its own schedule (the api's is awaited above): a loaded
  // machine may take a moment longer for the other two.
  let feeds = await feedConnections(db);
  for (const deadline = Date.now() + 10_000; feeds < 3 && Date.now() < deadline; feeds = await feedConnections(db)) await new Promise((r) => setTimeout(r, 200));
  t.is(feeds, 3, 'one change-feed connection per process, as before the restart');

  // SIGTERM still stops every role at once, with the database up or (in the second test) away.
  if (sigtermWhileDown) await db.stop('fast');
  for (const [role, p] of Object.entries(roles)) {
    const exit = await p.stop('SIGTERM', 10_000);
    t.is(exit.code, 0, `${role} exits cleanly on SIGTERM`);
    t.true(exit.ms < 5_000, `${role} stopped in ${Math.round(exit.ms)} ms`);
  }
  await rx.close();
  await db.destroy();
  t.log(`whole test: ${Date.now() - started} ms`);
}

test.serial('PostgreSQL restarts in fast mode under load: no 500s, every role lives, feed and webhooks come back', (t) => restartUnderLoad(t, 'fast'));

test.serial('PostgreSQL restarts in immediate mode under load: no 500s, every role lives, feed and webhooks come back', (t) =>
  restartUnderLoad(t, 'immediate', { sigtermWhileDown: true }),
);

test.serial('a sender killed with SIGKILL under load: a second sender carries on delivering', async (t) => {
  const started = Date.now();
  const db = await startRestartableDatabase();
  const api = await startRole(db, 'api');
  const [first, second] = await Promise.all([startRole(db, 'sender'), startRole(db, 'sender')]);
  const { rx, ping, key } = await setUp(api);
  await ping('with two senders');

  const load = startLoad(api.url, key.secret);
  await until('some load before the kill', () => load.outcomes.length >= 100, 10_000);
  const kill = await first.stop('SIGKILL');
  t.is(kill.signal, 'SIGKILL');
  // Every event recorded after the kill reaches the receiver, through the sender that is left.
  const delivered = [];
  for (let i = 0; i < 5; i++) delivered.push(await ping(`event ${i} after the kill`, 10_000));
  t.is(new Set(delivered).size, 5);
  // And it is that sender: paused, nothing is delivered (the api process only records events).
  second.child.kill('SIGSTOP');
  const received = rx.received.length;
  await t.throwsAsync(ping('an event while the last sender is paused', 1_500), { message: /timed out/ });
  t.is(rx.received.length, received, 'nobody else delivers');
  second.child.kill('SIGCONT');
  await until('the paused event to be delivered once the sender resumes', () => rx.received.length > received, 10_000);
  assertNoServerErrors(t, await load.stop(), false);
  t.true(second.isRunning());
  t.true(api.isRunning());
  t.is((await second.stop('SIGTERM')).code, 0);
  t.is((await api.stop('SIGTERM')).code, 0);
  t.true(rx.received.length >= 7);
  await rx.close();
  await db.destroy();
  t.log(`whole test: ${Date.now() - started} ms`);
});
