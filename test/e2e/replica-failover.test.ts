import test, { type ExecutionContext } from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { cleanUpEverything, freePort, makeTempRoot, startSwitchboard } from './process-helpers.ts';
import { makeAccount } from '../helpers/factories.ts';
import { client } from '../helpers/http.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { ADMIN_TOKEN } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

/**
 * A primary and its streaming replica (Debian's PostgreSQL 15, on loopback ports); the primary
 * dies and the replica is promoted. Two ways the service follows (docs/decisions.md, "Failover: a
 * DATABASE_URL listing both hosts"):
 * - DATABASE_URL lists both hosts (libpq's `h1:p1,h2:p2`, read-write by default): the running
 *   process, and one started after with the dead host still first in its list, follow the
 *   promoted replica by themselves (runtime/database-hosts.ts);
 * - DATABASE_URL names one address that moves to the new primary, as a managed service's
 *   endpoint, a virtual IP or PgBouncer does.
 * Meanwhile requests get 503 with Retry-After, never a 500; then reads of what was written before,
 * new writes and the change feed work again without a restart. Needs root (PostgreSQL runs as the
 * `postgres` user) and /usr/lib/postgresql/15/bin; skipped with a line saying why otherwise.
 */
const PG15 = '/usr/lib/postgresql/15/bin';
const USER = 'switchboard';

function whyNot(): string | null {
  if (process.getuid?.() !== 0) return `the test process runs as uid ${process.getuid?.()}, not root`;
  if (!existsSync(path.join(PG15, 'pg_basebackup'))) return `no PostgreSQL 15 in ${PG15} (apt-get install postgresql-15)`;
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
  } catch {
    return 'no `postgres` OS user to run PostgreSQL as';
  }
  return null;
}

const id = () => ({
  uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
  gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
});

function run(bin: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(path.join(PG15, bin), args, { ...id(), cwd: os.tmpdir(), timeout: 60_000, env: { ...process.env, LC_ALL: 'C', ...env } }, (err, stdout, stderr) =>
      err ? reject(new Error(`${bin} ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

/** A TCP forwarder standing in for the name that moves: `moveTo` breaks its connections and sends new ones elsewhere. */
async function movingAddress(targetPort: number) {
  let target = targetPort;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(target, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    moveTo(port: number) {
      target = port;
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))),
  };
}

const reason = whyNot();
if (reason) {
  console.log(`replica-failover: skipped, ${reason}`);
  test.skip('DATABASE_URL lists primary and replica: the replica is promoted, the running process and a new one follow it without a restart', () => {});
  test.skip('a promoted streaming replica takes over: the process follows the moved address without a restart', () => {});
} else {
  const servers: string[] = [];
  const leftovers: (() => Promise<unknown>)[] = [];
  test.after.always(async () => {
    for (const stop of leftovers) await stop().catch(() => {});
    await cleanUpEverything();
    for (const dir of servers) await run('pg_ctl', ['stop', '-D', dir, '-m', 'immediate', '-w']).catch(() => {});
  });

  /** A primary and its streaming replica, running; `replica` is a connection to the replica. */
  async function startPair(t: ExecutionContext) {
    const root = await makeTempRoot('switchboard-failover-');
    const { uid, gid } = id();
    const password = crypto.randomBytes(16).toString('hex');
    const pwFile = path.join(root, 'pw');
    await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
    await fs.chown(pwFile, uid, gid);
    const primaryDir = path.join(root, 'primary');
    const replicaDir = path.join(root, 'replica');
    // PostgreSQL runs as `postgres`: its directories and log files are made here and given to it.
    for (const dir of [primaryDir, replicaDir]) await fs.mkdir(dir, { mode: 0o700 });
    for (const log of ['primary.log', 'replica.log']) await fs.writeFile(path.join(root, log), '');
    for (const p of [primaryDir, replicaDir, path.join(root, 'primary.log'), path.join(root, 'replica.log')]) await fs.chown(p, uid, gid);
    await run('initdb', ['-D', primaryDir, '-U', USER, '--pwfile', pwFile, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const [primaryPort, replicaPort] = [await freePort(), await freePort()];
    const options = (port: number) => `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on`;
    await run('pg_ctl', ['start', '-D', primaryDir, '-w', '-l', path.join(root, 'primary.log'), '-o', options(primaryPort)]);
    servers.push(primaryDir);
    // The replica: a base backup streaming from the primary (-R writes primary_conninfo and standby.signal).
    await run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', USER, '-D', replicaDir, '-R', '-X', 'stream', '--no-sync'], { PGPASSWORD: password });
    await run('pg_ctl', ['start', '-D', replicaDir, '-w', '-l', path.join(root, 'replica.log'), '-o', options(replicaPort)]);
    servers.push(replicaDir);
    const urlOf = (port: number) => `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`;
    const replica = new pg.Client({ connectionString: urlOf(replicaPort) });
    await replica.connect();
    leftovers.push(() => replica.end());
    t.true((await replica.query('SELECT pg_is_in_recovery() AS r')).rows[0].r, 'the replica is a standby');

    return { primaryDir, replicaDir, primaryPort, replicaPort, password, urlOf, replica };
  }

  /** A switchboard process with every role on `url`; `env` adds to the settings. */
  async function startRole(url: string, env: Record<string, string> = {}) {
    return startSwitchboard({
      dataDir: await makeTempRoot('switchboard-failover-sb-'),
      timeoutMs: 120_000,
      env: { DATABASE_URL: url, SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN, SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 15).toString('base64'), SWITCHBOARD_DB_POOL_SIZE: '4', ...env },
    });
  }

  type Api = Awaited<ReturnType<typeof makeAccount>>['api'];

  /** A customer written through `api` and streamed to the replica before the crash. */
  async function writtenBefore(t: ExecutionContext, api: Api, replica: pg.Client): Promise<string> {
    const before = await api.post('/v1/customers', { name: 'Written Before', country: 'US' });
    t.is(before.status, 201);
    // Streaming replication is asynchronous here: wait until the replica has the write (a
    // synchronous standby in production makes every acknowledged write survive the failover).
    await until('the replica to have the write', async () => (await replica.query('SELECT 1 FROM customers WHERE id = $1', [before.body.id])).rowCount === 1, 10_000);
    return before.body.id;
  }

  /** Requests every 50 ms until stopped: reads, and a write every third when `writes`. */
  function startLoad(api: Api, { writes }: { writes: boolean }) {
    const statuses: { status: number; code?: string; retryAfter: string | null }[] = [];
    let loading = true;
    const load = (async () => {
      for (let i = 0; loading; i++) {
        const r = writes && i % 3 === 0 ? await api.post('/v1/customers', { name: `During ${i}`, country: 'US' }) : await api.get('/v1/customers?limit=1');
        statuses.push({ status: r.status, code: r.body?.error?.code, retryAfter: r.headers.get('retry-after') });
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    const stop = async () => ((loading = false), await load, statuses);
    leftovers.push(stop);
    return { statuses, stop };
  }

  /** A write answered 503 service_unavailable with Retry-After: the database away, not a fault. */
  async function writeRefusedAsAway(t: ExecutionContext, api: Api) {
    const r = await api.post('/v1/customers', { name: 'Too Early', country: 'US' });
    t.like(r, { status: 503, body: { error: { code: 'service_unavailable' } } }, JSON.stringify(r.body));
    t.truthy(r.headers.get('retry-after'));
  }

  /** Promotes the replica, waits for writes to succeed again, stops the load: only 2xx and 503s with Retry-After, the earlier write read back. */
  async function promoteAndRecover(t: ExecutionContext, o: { replicaDir: string; replica: pg.Client; api: Api; load: ReturnType<typeof startLoad>; failedAt: number; beforeId: string; url: string }) {
    await run('pg_ctl', ['promote', '-D', o.replicaDir, '-w']);
    t.false((await o.replica.query('SELECT pg_is_in_recovery() AS r')).rows[0].r, 'the replica is the primary now');
    await until('a write through the service to succeed', async () => (await o.api.post('/v1/customers', { name: 'Written After', country: 'US' })).status === 201, 30_000, 200);
    t.log(`writes accepted again ${Date.now() - o.failedAt} ms after the primary died`);
    const statuses = await o.load.stop();
    const bad = statuses.filter((s) => !(s.status === 200 || s.status === 201 || (s.status === 503 && s.code === 'service_unavailable' && s.retryAfter)));
    t.deepEqual(bad, [], 'during the failover only 2xx and 503s with Retry-After');
    t.log(`${statuses.length} requests during the failover: ${statuses.filter((s) => s.status === 503).length} answered 503`);
    t.is((await o.api.get(`/v1/customers/${o.beforeId}`)).status, 200, 'what was written before the failover is there');
    await until('/readyz to answer 200 again', async () => (await fetch(`${o.url}/readyz`)).status === 200, 10_000);
  }

  test.serial('DATABASE_URL lists primary and replica: the replica is promoted, the running process and a new one follow it without a restart', async (t) => {
    t.timeout(240_000);
    const { primaryDir, replicaDir, primaryPort, replicaPort, password, replica } = await startPair(t);
    // libpq's list, primary first, read-write by default (every role writes).
    const listed = `postgres://${USER}:${password}@127.0.0.1:${primaryPort},127.0.0.1:${replicaPort}/postgres`;
    // The sender polls once an hour: a webhook delivered within seconds was woken by the change feed.
    const role = (url: string) => startRole(url, { SWITCHBOARD_SENDER_POLL_MS: '3600000', SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '1' });
    const a = await role(listed);
    const account = await makeAccount(a.url);
    const rx = await startReceiver();
    leftovers.push(rx.close);
    t.is((await account.admin.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: rx.url, mode: 'test' })).status, 201);
    /** Records a test.ping event through `via` and waits for the receiver to have it. */
    const ping = async (what: string, via: string) => {
      const event = (await client(via, ADMIN_TOKEN).post(`/admin/v1/accounts/${account.id}/test_events`, { mode: 'test' })).body;
      if (!event?.id) throw new Error(`${what}: no event id in ${JSON.stringify(event)}`);
      await until(`${what}: event ${event.id} delivered`, () => rx.received.some((r) => r.headers['webhook-id'] === event.id), 10_000);
    };
    await ping('before the failover', a.url);
    const beforeId = await writtenBefore(t, account.api, replica);

    // Reads and writes through the failover.
    const load = startLoad(account.api, { writes: true });
    await until('the load to write before the failover', () => load.statuses.some((s) => s.status === 201), 10_000);
    const failedAt = Date.now();
    await run('pg_ctl', ['stop', '-D', primaryDir, '-m', 'immediate', '-w']);
    await until('a request to meet the outage', () => load.statuses.some((s) => s.status === 503), 10_000);
    // Not promoted yet: the first host refuses, the second is a standby (read-only), so the
    // process goes round the list and a write is answered 503 with Retry-After, not 500.
    await new Promise((r) => setTimeout(r, 1_000));
    await writeRefusedAsAway(t, account.api);
    await promoteAndRecover(t, { replicaDir, replica, api: account.api, load, failedAt, beforeId, url: a.url });
    // The change feed is back on the new primary: a webhook recorded now is delivered at once.
    await until('the change feed to reconnect', () => a.logs().some((l) => l.msg === 'change feed reconnected; dropping what it guards'), 15_000);
    await ping('after the failover', a.url);
    t.true(a.isRunning(), 'no restart was needed');
    // The operator can follow the failover in the process's log: each move of the believed primary is one line.
    const moves = a.logs().filter((l) => l.event === 'database_host_moved');
    t.true(moves.length >= 1, 'the move away from the dead primary is logged');
    t.like(moves[0], { level: 40, from: `127.0.0.1:${primaryPort}`, to: `127.0.0.1:${replicaPort}` });

    // A process started now, with the dead host still first in its list (and primary asked):
    // it moves past it at its first try and serves, feeds included.
    const b = await role(`${listed}?target_session_attrs=primary`);
    t.true(b.logs().filter((l) => l.event === 'database_wait').length <= 1, 'one failed try at most before the second host');
    t.is((await client(b.url, account.testKey).get(`/v1/customers/${beforeId}`)).status, 200);
    t.is((await client(b.url, account.testKey).post('/v1/customers', { name: 'Written By B', country: 'US' })).status, 201);
    await ping('sent through the new process', b.url);
    // Each process's change feed hears the other: a key revoked through one is refused by the other at once.
    for (const [revokes, refuses] of [
      [b, a],
      [a, b],
    ]) {
      const doomed = (await client(revokes.url, ADMIN_TOKEN).post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'revoked after the failover' })).body;
      const via = client(refuses.url, doomed.secret);
      t.is((await via.get('/v1/customers?limit=1')).status, 200, 'the key works (and is cached)');
      t.is((await client(revokes.url, ADMIN_TOKEN).delete(`/admin/v1/accounts/${account.id}/keys/${doomed.id}`)).status, 200);
      await until(`the key revoked through ${revokes === a ? 'a' : 'b'} to be refused by the other`, async () => (await via.get('/v1/customers?limit=1')).status === 401, 1_000, 20);
    }
    for (const p of [b, a]) t.is((await p.stop('SIGTERM', 15_000)).code, 0);
  });

  test.serial('a promoted streaming replica takes over: the process follows the moved address without a restart', async (t) => {
    t.timeout(180_000);
    const { primaryDir, replicaDir, primaryPort, replicaPort, urlOf, replica } = await startPair(t);
    const address = await movingAddress(primaryPort);
    leftovers.push(address.close);
    const sb = await startRole(urlOf(address.port));
    const account = await makeAccount(sb.url);
    const beforeId = await writtenBefore(t, account.api, replica);

    // The primary dies; the replica is promoted; the address moves to it.
    const load = startLoad(account.api, { writes: false });
    const failedAt = Date.now();
    await run('pg_ctl', ['stop', '-D', primaryDir, '-m', 'immediate', '-w']);
    await until('a request to meet the outage', () => load.statuses.some((s) => s.status === 503), 10_000);
    // The address moves before the promotion is over (a DNS answer or a virtual IP ahead of the
    // failover manager): a write reaches a standby, SQLSTATE 25006, and is answered 503, not 500.
    address.moveTo(replicaPort);
    // Reads are served by the standby...
    await until('a read to be served by the standby', async () => (await account.api.get('/v1/customers?limit=1')).status === 200, 10_000, 100);
    // ...and a write is refused there (SQLSTATE 25006) as the database being away.
    await writeRefusedAsAway(t, account.api);
    await promoteAndRecover(t, { replicaDir, replica, api: account.api, load, failedAt, beforeId, url: sb.url });
    t.true(sb.isRunning(), 'no restart was needed');
    const exit = await sb.stop('SIGTERM', 15_000);
    t.is(exit.code, 0);
  });
}
