import test from 'ava';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { cleanUpEverything, makeTempRoot, startSwitchboard, type Instance } from './process-helpers.ts';
import { destroyRestartableDatabases, startRestartableDatabase } from '../helpers/restartable-db.ts';
import { client } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';
import { makeAccount } from '../helpers/factories.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { ADMIN_TOKEN } from '../helpers/service.ts';
import { assertRevocationEverywhere, assertSharedRateLimit, testCallCompletes } from './across-processes.ts';

/**
 * The roles on several hosts (issue 25 §3; docs/decisions.md, "Several hosts"). Each host is a
 * network namespace of its own made by the test (`ip netns add`), joined to the others by a veth
 * pair on a bridge, as machines on one private network: two API hosts, a dialler with its media
 * server, a sender/builder. One PostgreSQL listens on the bridge's address (the host side), the
 * webhook receiver too. Nothing reaches another host through 127.0.0.1: each process is told the
 * database's address on the private network, and the test speaks to each host at its own.
 *
 * Making namespaces needs root (CI runs as root); elsewhere the test is skipped, saying so.
 */
const ENCRYPTION_KEY = Buffer.alloc(32, 25).toString('base64');
const HOSTS = ['api1', 'api2', 'dialler', 'sender'] as const;
type Host = (typeof HOSTS)[number];
const API_PORT = 8080;
const MEDIA_PORT = 9000;

/** Why namespaces cannot be made here, or null when they can. */
function cannotMakeNamespaces(): string | null {
  if (process.getuid?.() !== 0) return `the test process runs as uid ${process.getuid?.()}, not root (ip netns add needs root)`;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
  } catch {
    return 'the ip command (iproute2) is missing or cannot list network namespaces';
  }
  // Root in a container without CAP_NET_ADMIN cannot make one: try.
  const probe = `sb-probe-${crypto.randomBytes(3).toString('hex')}`;
  try {
    execFileSync('ip', ['netns', 'add', probe], { stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('ip', ['netns', 'del', probe], { stdio: 'ignore' });
  } catch (err) {
    return `ip netns add fails here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()})`;
  }
  return null;
}

/** The private network of this run: names unique to it, removed by `teardown` whatever happened. */
interface Network {
  bridge: string;
  /** The host side's address on the bridge (PostgreSQL and the receiver listen here). */
  gateway: string;
  subnet: string;
  hosts: Record<Host, { ns: string; address: string }>;
  teardown(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });

/** A /24 in 10.0.0.0/8 that no interface or route of this machine uses. */
function freeSubnet(): string {
  const used = `${ip('-4', 'addr')}\n${ip('-4', 'route')}`;
  for (let i = 0; i < 50; i++) {
    const net = `10.${crypto.randomInt(100, 250)}.${crypto.randomInt(0, 255)}`;
    if (!used.includes(`${net}.`)) return net;
  }
  throw new Error('no free 10.x.y.0/24 for the test network');
}

function makeNetwork(): Network {
  const id = crypto.randomBytes(3).toString('hex');
  const prefix = freeSubnet();
  const bridge = `sbbr${id}`;
  const made: { namespaces: string[]; links: string[] } = { namespaces: [], links: [] };
  const teardown = () => {
    for (const ns of made.namespaces.splice(0)) {
      try {
        ip('netns', 'del', ns); // takes its end of the veth pair, and so the pair, with it
      } catch {
        /* already gone */
      }
    }
    for (const link of made.links.splice(0)) {
      try {
        ip('link', 'del', link);
      } catch {
        /* already gone */
      }
    }
  };
  process.once('exit', teardown); // a test process that dies without its after-hooks
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    made.links.push(bridge);
    ip('addr', 'add', `${prefix}.1/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    const hosts = {} as Network['hosts'];
    HOSTS.forEach((host, i) => {
      const ns = `sb-${id}-${host}`;
      const outside = `sbv${id}${i}`;
      const inside = `sbp${id}${i}`;
      const address = `${prefix}.${10 + i}`;
      ip('netns', 'add', ns);
      made.namespaces.push(ns);
      ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
      made.links.push(outside);
      ip('link', 'set', outside, 'master', bridge);
      ip('link', 'set', outside, 'up');
      ip('link', 'set', inside, 'netns', ns);
      ip('-n', ns, 'link', 'set', inside, 'name', 'eth0');
      ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
      ip('-n', ns, 'link', 'set', 'eth0', 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      ip('-n', ns, 'route', 'add', 'default', 'via', `${prefix}.1`);
      hosts[host] = { ns, address };
    });
    return { bridge, gateway: `${prefix}.1`, subnet: `${prefix}.0/24`, hosts, teardown };
  } catch (err) {
    teardown();
    throw err;
  }
}

/** A webhook receiver on the host side of the private network. */
async function startReceiverOn(address: string) {
  const received: { id: string; body: any }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ id: String(req.headers['webhook-id']), body: JSON.parse(body) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://${address}:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Opens a TCP connection to `address:port` from this (the host's) namespace; resolves true when it connects. */
const connects = (address: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: address, port, timeout: 2_000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });

const reason = cannotMakeNamespaces();
if (reason) {
  console.log(`several-hosts: skipped, ${reason}`);
  test.skip('several hosts: a call, a webhook, a shared rate limit and a revocation across network namespaces', () => {});
} else {
  let network: Network | undefined;
  const leftovers: (() => Promise<unknown>)[] = [];
  test.after.always(async () => {
    for (const stop of leftovers) await stop().catch(() => {});
    await cleanUpEverything(); // the processes first: a namespace outlives its name while a process is in it
    await destroyRestartableDatabases();
    network?.teardown();
  });

  test.serial('several hosts: a call, a webhook, a shared rate limit and a revocation across network namespaces', async (t) => {
    t.timeout(240_000);
    const net0 = (network = makeNetwork());
    const { hosts } = net0;

    // One PostgreSQL on the host side, reachable over the veths (and on loopback for the test's own checks).
    const db = await startRestartableDatabase({ settings: { listen_addresses: `127.0.0.1,${net0.gateway}` } });
    await fs.appendFile(path.join(db.root, 'data', 'pg_hba.conf'), `host all all ${net0.subnet} scram-sha-256\n`);
    await db.restart('fast');
    const databaseUrl = db.url.replace('@127.0.0.1:', `@${net0.gateway}:`);
    const rx = await startReceiverOn(net0.gateway);
    leftovers.push(rx.close);

    const apiUrl = (host: Host) => `http://${hosts[host].address}:${API_PORT}`;
    const mediaUrl = `ws://${hosts.dialler.address}:${MEDIA_PORT}/media`;
    const startOn = async (host: Host, roles: string, extra: Record<string, string> = {}): Promise<Instance> =>
      startSwitchboard({
        dataDir: await makeTempRoot(`switchboard-${host}-`),
        via: ['ip', 'netns', 'exec', hosts[host].ns],
        address: hosts[host].address,
        port: API_PORT,
        readyWhen: roles.includes('api') ? 'healthz' : 'started',
        timeoutMs: 120_000,
        env: {
          DATABASE_URL: databaseUrl,
          HOST: hosts[host].address,
          SWITCHBOARD_ROLES: roles,
          // The load balancer's address in production; here the first API host.
          SWITCHBOARD_PUBLIC_URL: apiUrl('api1'),
          SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN,
          SWITCHBOARD_ENCRYPTION_KEY: ENCRYPTION_KEY,
          SWITCHBOARD_TEST_CLOCK: '1',
          SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '1',
          SWITCHBOARD_RATE_LIMIT_STORE: 'postgres',
          SWITCHBOARD_DB_POOL_SIZE: '4',
          SWITCHBOARD_DIALLER_POLL_MS: '200',
          SWITCHBOARD_SENDER_POLL_MS: '200',
          ...extra,
        },
      });
    // In parallel, as machines booting: the migration takes an advisory lock, the others wait on it.
    const [api1, api2, dialler, sender] = await Promise.all([
      startOn('api1', 'api'),
      startOn('api2', 'api'),
      startOn('dialler', 'dialler', { SWITCHBOARD_MEDIA_PORT: String(MEDIA_PORT), SWITCHBOARD_MEDIA_URL: mediaUrl }),
      startOn('sender', 'sender,builder'),
    ]);
    const processes = { api1, api2, dialler, sender };

    // Each API host is healthy and ready for a load balancer at its own address.
    for (const api of [api1, api2]) {
      t.is((await fetch(`${api.url}/readyz`)).status, 200, `${api.url} ready`);
      t.is((await fetch(`${api.url}/healthz`)).status, 200, `${api.url} live`);
    }

    // The dialler advertises the media URL on its own address, and its media server listens there.
    const started = dialler.logs().find((l) => l.msg === 'switchboard started');
    t.is(started?.mediaUrl, mediaUrl);
    t.true(await connects(hosts.dialler.address, MEDIA_PORT), 'the media server answers at the advertised address');

    // A test call made through one API host is dialled on the dialler host and completes; its
    // call.completed webhook is sent from the sender host to the receiver.
    const account = await makeAccount(api1.url);
    const viaApi2 = client(api2.url, account.testKey);
    await account.admin.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: rx.url, mode: 'test' });
    const customer = await makeReadyCustomer(api1.url, account.api);
    const done = await testCallCompletes(t, account, customer.id, viaApi2);
    await until('call.completed at the receiver', () => rx.received.some((r) => r.body.type === 'call.completed' && r.body.data?.id === done.id), 60_000, 100);

    await assertSharedRateLimit(t, api1, api2);
    await assertRevocationEverywhere(t, account, api1, api2);

    for (const [host, p] of Object.entries(processes)) {
      t.true(p.isRunning(), `${host} still runs`);
      t.deepEqual(
        p.logs().filter((l) => l.level >= 50).map((l) => l.msg),
        [],
        `${host}: no error logged`,
      );
    }
    await Promise.all(Object.values(processes).map((p) => p.stop('SIGTERM', 30_000)));
  });
}
