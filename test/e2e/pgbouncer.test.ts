import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { cleanUpEverything, freePort, makeTempRoot, spawnSwitchboard, startSwitchboard } from './process-helpers.ts';
import { destroyRestartableDatabases, startRestartableDatabase, type RestartableDatabase } from '../helpers/restartable-db.ts';
import { client } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { makeAccount } from '../helpers/factories.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { ADMIN_TOKEN } from '../helpers/service.ts';
import { assertRevocationEverywhere, assertSharedRateLimit, testCallCompletes } from './across-processes.ts';
import { FEED_APPLICATION_NAME } from '../../runtime/change-feed.ts';

/**
 * Every process behind Debian's PgBouncer (1.18) in `pool_mode=transaction` with a pool of 4
 * server connections (docs/decisions.md, "PgBouncer in transaction mode"): DATABASE_URL at the
 * bouncer, SWITCHBOARD_DATABASE_POOLER=transaction, SWITCHBOARD_DIRECT_DATABASE_URL at PostgreSQL
 * for the change feed's LISTEN and the migrations' lock. Two processes, so the bouncer's server
 * connections are really shared between their pools. PgBouncer refuses to run as root, so as root
 * it runs as the `postgres` user; skipped, saying why, where the pgbouncer program is missing.
 */
const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => existsSync(p));
const POOL_SIZE = 4;
const ENCRYPTION_KEY = Buffer.alloc(32, 50).toString('base64');

function whyNot(): string | null {
  if (!PGBOUNCER) return 'no pgbouncer program (apt-get install pgbouncer)';
  if (process.getuid?.() === 0) {
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    } catch {
      return 'running as root and there is no `postgres` user to run PgBouncer as (it refuses root)';
    }
  }
  return null;
}

/** The uid/gid PgBouncer runs as: ours, or postgres's when we are root. */
function identity(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
  };
}

interface Bouncer {
  url: string;
  log(): string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** PgBouncer in transaction mode in front of `db`, on a loopback port, with a pool of POOL_SIZE server connections. */
async function startBouncer(db: RestartableDatabase): Promise<Bouncer> {
  const dir = await makeTempRoot('switchboard-pgbouncer-');
  const { username, password, port: pgPort } = new URL(db.url);
  const port = await freePort();
  const ini = path.join(dir, 'pgbouncer.ini');
  const logFile = path.join(dir, 'pgbouncer.log');
  const pidFile = path.join(dir, 'pgbouncer.pid');
  await fs.writeFile(path.join(dir, 'userlist.txt'), `"${username}" "${password}"\n`, { mode: 0o600 });
  await fs.writeFile(
    ini,
    [
      '[databases]',
      `* = host=127.0.0.1 port=${pgPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${POOL_SIZE}`,
      'max_client_conn = 200',
      `logfile = ${logFile}`,
      `pidfile = ${pidFile}`,
      '',
    ].join('\n'),
  );
  await fs.writeFile(logFile, '');
  const id = identity();
  if (id.uid !== undefined) for (const f of ['userlist.txt', 'pgbouncer.ini', 'pgbouncer.log']) await fs.chown(path.join(dir, f), id.uid, id.gid!);
  if (id.uid !== undefined) await fs.chown(dir, id.uid, id.gid!);
  const pid = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : undefined);
  // Kept in memory: the temp directory with the pid file may be gone by the time it is stopped.
  let running: number | undefined;
  const bouncer: Bouncer = {
    url: `postgres://${username}:${password}@127.0.0.1:${port}/postgres`,
    log: () => readFileSync(logFile, 'utf8'),
    async start() {
      // -d: it daemonizes once it listens, so the connection below is taken.
      await new Promise<void>((resolve, reject) =>
        execFile(PGBOUNCER!, ['-d', ini], { ...id, timeout: 20_000 }, (err, _o, stderr) => (err ? reject(new Error(`pgbouncer: ${err.message}\n${stderr}\n${bouncer.log()}`)) : resolve())),
      );
      await until('pgbouncer to listen', () => connects(port), 10_000);
      running = pid();
      live.add(running!);
    },
    async stop() {
      const p = running;
      if (p === undefined) return;
      running = undefined;
      live.delete(p);
      try {
        process.kill(p, 'SIGINT'); // PgBouncer's immediate shutdown
      } catch {
        return;
      }
      await until('pgbouncer to stop', () => !alive(p), 10_000);
    },
  };
  stops.push(() => bouncer.stop());
  await bouncer.start();
  return bouncer;
}

/** The bouncers running now; a test process that dies without its after-hooks still stops them. */
const live = new Set<number>();
process.once('exit', () => {
  for (const p of live) {
    try {
      process.kill(p, 'SIGINT');
    } catch {
      /* gone already */
    }
  }
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** A local webhook receiver. */
async function startReceiver() {
  const received: { body: any }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ body: JSON.parse(body) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stops.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hook`, received };
}

const stops: (() => Promise<unknown>)[] = [];
const baseEnv = (bouncer: Bouncer, db: RestartableDatabase) => ({
  DATABASE_URL: bouncer.url,
  SWITCHBOARD_DIRECT_DATABASE_URL: db.url,
  SWITCHBOARD_DATABASE_POOLER: 'transaction',
  SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN,
  SWITCHBOARD_ENCRYPTION_KEY: ENCRYPTION_KEY,
  SWITCHBOARD_TEST_CLOCK: '1',
  SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '1',
  SWITCHBOARD_RATE_LIMIT_STORE: 'postgres',
  SWITCHBOARD_DB_POOL_SIZE: '6',
  SWITCHBOARD_DIALLER_POLL_MS: '200',
  SWITCHBOARD_SENDER_POLL_MS: '200',
});

/** A start that must fail: resolves with its exit and output once it exited (or rejects after `ms`). */
async function startThatFails(env: Record<string, string>, ms = 60_000) {
  const p = await spawnSwitchboard({ dataDir: await makeTempRoot('switchboard-pgb-fail-'), env });
  const exit = await Promise.race([p.exited, new Promise<'running'>((r) => setTimeout(() => r('running'), ms))]);
  if (exit === 'running') p.kill('SIGKILL');
  return { exit, stdout: p.stdout(), stderr: p.stderr(), logs: p.logs() };
}

const reason = whyNot();
if (reason) {
  console.log(`pgbouncer: skipped, ${reason}`);
  test.skip('behind PgBouncer in transaction mode: migrations, a call and its webhook, a shared rate limit, a revocation', () => {});
  test.skip('behind PgBouncer without SWITCHBOARD_DATABASE_POOLER: start-up stops in one line', () => {});
  test.skip('behind PgBouncer with a role not in UTC: start-up stops in one JSON line saying ALTER ROLE', () => {});
} else {
  let db: RestartableDatabase;
  let bouncer: Bouncer;
  test.before(async () => {
    db = await startRestartableDatabase();
    bouncer = await startBouncer(db);
  });
  test.after.always(async () => {
    await cleanUpEverything();
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await destroyRestartableDatabases();
  });

  test.serial('behind PgBouncer without SWITCHBOARD_DATABASE_POOLER: start-up stops in one line', async (t) => {
    t.timeout(90_000);
    const { SWITCHBOARD_DATABASE_POOLER: _, ...env } = baseEnv(bouncer, db);
    const r = await startThatFails(env);
    t.not(r.exit, 'running', `still running after 60 s:\n${r.stdout}\n${r.stderr}`);
    t.like(r.exit, { code: 2 });
    t.is(r.stderr, '', 'nothing on stderr (no stack)');
    const fatal = r.logs.filter((l) => l.level >= 50);
    t.is(fatal.length, 1, r.stdout);
    t.regex(fatal[0].msg, /SWITCHBOARD_DATABASE_POOLER=transaction/);
    t.regex(fatal[0].msg, /unsupported startup parameter: options/);
    t.false(r.logs.some((l) => l.event === 'database_wait'), 'not taken for a database that is down');
  });

  test.serial('behind PgBouncer with a role not in UTC: start-up stops in one JSON line saying ALTER ROLE', async (t) => {
    t.timeout(90_000);
    const direct = new pg.Client({ connectionString: db.url });
    await direct.connect();
    try {
      await direct.query(`ALTER ROLE switchboard SET timezone = 'America/New_York'`);
      const r = await startThatFails(baseEnv(bouncer, db));
      t.like(r.exit, { code: 2 }, `${r.stdout}\n${r.stderr}`);
      t.is(r.stderr, '');
      const fatal = r.logs.filter((l) => l.level >= 50);
      t.is(fatal.length, 1, r.stdout);
      t.like(fatal[0], { event: 'database_time_zone_not_utc', time_zone: 'America/New_York', role: 'switchboard' });
      t.regex(fatal[0].msg, /ALTER ROLE "switchboard" SET timezone = 'UTC'/);
    } finally {
      // What the line says to do; the bouncer's server connections keep the old zone until reopened.
      await direct.query(`ALTER ROLE switchboard SET timezone = 'UTC'`);
      await direct.end();
      await bouncer.stop();
      await bouncer.start();
    }
  });

  test.serial('behind PgBouncer in transaction mode: migrations, a call and its webhook, a shared rate limit, a revocation', async (t) => {
    t.timeout(240_000);
    const logFrom = bouncer.log().length;
    const direct = new pg.Client({ connectionString: db.url });
    await direct.connect();
    stops.push(() => direct.end());
    const rx = await startReceiver();
    const startOne = async () =>
      startSwitchboard({ dataDir: await makeTempRoot('switchboard-pgb-'), timeoutMs: 120_000, env: baseEnv(bouncer, db) });
    // Both at once: one migrates (its lock on the direct connection), the other waits on the lock.
    const [a, b] = await Promise.all([startOne(), startOne()]);
    const applied = [...a.logs(), ...b.logs()].filter((l) => l.msg === 'migrations applied');
    t.is(applied.length, 1, 'one process applied the migrations');
    t.true(applied[0].applied.length > 40);
    t.is((await direct.query(`SELECT count(*)::int AS n FROM schema_migrations`)).rows[0].n, applied[0].applied.length);

    const account = await makeAccount(a.url);
    const onB = client(b.url, account.testKey);
    await account.admin.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: rx.url, mode: 'test' });
    const customer = await makeReadyCustomer(a.url, account.api);
    const done = await testCallCompletes(t, account, customer.id, onB);
    const usage = (await onB.get(`/v1/usage?customer_id=${customer.id}`)).body.data as any[];
    const charge = usage.find((u) => u.cause === 'call');
    t.truthy(charge, JSON.stringify(usage));
    t.like(charge, { type: 'usage', minutes: 1 });
    t.true(charge.amount_cents < 0);
    // The webhook is sent after commit, woken by the change feed (pg_notify through the bouncer, LISTEN direct).
    await until('call.completed at the receiver', () => rx.received.some((r) => r.body.type === 'call.completed' && r.body.data?.id === done.id), 60_000, 100);

    await assertSharedRateLimit(t, a, b);
    await assertRevocationEverywhere(t, account, a, b);

    // The change feed (which the revocation above needed) listens on PostgreSQL itself, one connection per process.
    const feeds = await direct.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`, [FEED_APPLICATION_NAME]);
    t.is(feeds.rows[0].n, 2);

    // Two processes with pools of 6 + 3 each went through 4 server connections.
    const server = await direct.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND application_name <> $1 AND pid <> pg_backend_pid()`,
      [FEED_APPLICATION_NAME],
    );
    t.true(server.rows[0].n <= POOL_SIZE, `${server.rows[0].n} server connections`);
    t.notRegex(bouncer.log().slice(logFrom), /prepared statement|unsupported startup parameter|pooler error/);
    for (const [name, p] of Object.entries({ a, b })) {
      t.true(p.isRunning(), `${name} still runs`);
      t.deepEqual(
        p.logs().filter((l) => l.level >= 50).map((l) => l.msg),
        [],
        `${name}: no error logged`,
      );
    }
    await Promise.all([a.stop('SIGTERM', 30_000), b.stop('SIGTERM', 30_000)]);
  });
}
