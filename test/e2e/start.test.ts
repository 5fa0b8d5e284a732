/**
 * `switchboard start` as a person runs it: a child process on its own embedded PostgreSQL, the
 * README's first steps through the `switchboard admin` command, signals, restarts, two
 * instances side by side, and recovery after the node process was SIGKILLed.
 */
import crypto from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import path from 'node:path';
import {
  cleanUpEverything,
  freePort,
  makeTempRoot,
  postgresProcessesFor,
  request,
  runCli,
  spawnSwitchboard,
  startSwitchboard,
  TOKEN_LINE,
  type Instance,
} from './process-helpers.ts';

const PUBLIC_URL = 'https://onboard.example.test';

test.after.always('kill every process and postgres this file started', cleanUpEverything);

/** State carried through the serial tests: one data directory that lives across restarts. */
let dirA = '';
let first: Instance | undefined;
let adminToken = '';
let accountId = '';
let apiKey = '';
const coldStarts: Record<string, number> = {};

const killOnFailure = (t: ExecutionContext, instance: Instance) =>
  t.teardown(async () => {
    if (instance.isRunning()) await instance.stop('SIGKILL', 5_000).catch(() => {});
  });

/** `switchboard admin …` against one instance with the given token; parses the JSON it prints. */
async function adminCli(instance: Instance, token: string, args: string[]) {
  const result = await runCli(['admin', ...args], { SWITCHBOARD_ADMIN_TOKEN: token, SWITCHBOARD_URL: `http://127.0.0.1:${instance.port}` });
  const printed = result.code === 0 ? result.stdout : result.stderr;
  let json: any;
  try {
    json = JSON.parse(printed);
  } catch {
    json = undefined;
  }
  return { ...result, json };
}

/** Stops with `signal` and checks the README's promise: exit 0, promptly, no postgres left for the data dir. */
async function stopsCleanly(t: ExecutionContext, instance: Instance, signal: NodeJS.Signals) {
  t.true(postgresProcessesFor(instance.dataDir).length > 0, 'the embedded postgres runs while the service runs');
  const exit = await instance.stop(signal, 10_000);
  t.log(`${signal}: exited in ${Math.round(exit.ms)} ms`);
  t.is(exit.signal, null, `${signal} is handled, not fatal`);
  t.is(exit.code, 0, `exit code after ${signal}\n${instance.stderr()}`);
  t.true(exit.ms < 10_000);
  t.deepEqual(postgresProcessesFor(instance.dataDir), [], `no postgres left for ${instance.dataDir} after ${signal}`);
  const msgs = instance.logs().map((l) => l.msg);
  t.true(msgs.includes('stopping'), 'logs that it is stopping');
  t.true(msgs.includes('switchboard stopped'), 'logs that it stopped');
  t.is(instance.logs().find((l) => l.msg === 'stopping')?.signal, signal);
}

test.serial('first start on an empty data dir prints a admin token once and answers HTTP', async (t) => {
  dirA = path.join(await makeTempRoot(), 'data');
  first = await startSwitchboard({ dataDir: dirA, port: await freePort(), env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL } });
  coldStarts['first start (initdb + migrations)'] = first.coldStartMs;
  t.log(`cold start, empty data dir (spawn → first answered request): ${Math.round(first.coldStartMs)} ms`);
  t.true(first.coldStartMs < 30_000);

  const out = first.stdout();
  t.truthy(first.adminToken, `a admin token line on stdout:\n${out}`);
  adminToken = first.adminToken!;
  t.regex(adminToken, /^sbc_[0-9A-Za-z]{20,}$/);
  t.is(out.match(new RegExp(TOKEN_LINE.source, 'gm'))?.length, 1, 'the token is printed exactly once');
  // Every other stdout line is a pino JSON line, and none of them carries the token.
  const others = out.split('\n').filter((l) => l && !TOKEN_LINE.test(l));
  for (const line of others) t.notThrows(() => JSON.parse(line), `not a JSON log line: ${line}`);
  t.false(others.some((l) => l.includes(adminToken)), 'the token is not logged');
  const started = first.logs().find((l) => l.msg === 'switchboard started');
  t.is(started?.port, first.port);
  t.is(started?.publicUrl, PUBLIC_URL);
  t.is(started?.embeddedDatabase, true);
  t.true(first.logs().some((l) => l.msg === 'initialising embedded PostgreSQL'));

  const health = await request(first.url, 'GET', '/healthz');
  t.is(health.status, 200);
  t.deepEqual(health.body, { ok: true });
});

test.serial('the README newcomer flow: admin create-account and create-key, then the API with the key', async (t) => {
  t.truthy(first?.isRunning(), 'needs the first start');
  const created = await adminCli(first!, adminToken, ['create-account', '--name', 'Acme Agency', '--country', 'US']);
  t.is(created.code, 0, created.stderr);
  t.is(created.json?.object, 'account');
  t.is(created.json?.name, 'Acme Agency');
  t.is(created.json?.country, 'US');
  t.is(created.json?.mode, 'test');
  t.is(created.json?.onboarding?.kyb_status, 'pending');
  accountId = created.json.id;
  t.regex(accountId, /^[0-9a-f-]{36}$/);

  const key = await adminCli(first!, adminToken, ['create-key', '--account', accountId, '--mode', 'test', '--label', 'laptop']);
  t.is(key.code, 0, key.stderr);
  t.is(key.json?.object, 'api_key');
  t.is(key.json?.account_id, accountId);
  t.is(key.json?.label, 'laptop');
  apiKey = key.json?.secret;
  t.regex(apiKey, /^svc_test_[0-9A-Za-z]+$/);

  const me = await request(first!.url, 'GET', '/v1/me', { token: apiKey });
  t.is(me.status, 200, me.text);
  t.is(me.body.id, accountId);
  t.is(me.body.mode, 'test');
  t.is(me.body.key?.label, 'laptop');

  const customer = await request(first!.url, 'POST', '/v1/customers', { token: apiKey, body: { name: 'Bright Dental', external_ref: 'bright-1' } });
  t.is(customer.status, 201, customer.text);
  t.is(customer.body.object, 'customer');
  t.is(customer.body.external_ref, 'bright-1');
  t.is(customer.body.mode, 'test');

  const readiness = await request(first!.url, 'GET', '/v1/customers/bright-1/readiness', { token: apiKey });
  t.is(readiness.status, 200, readiness.text);
  t.is(readiness.body.customer_id, customer.body.id);
  t.false(readiness.body.ready_for_live_calls);
  const blockers: string[] = readiness.body.blockers.map((b: { code: string }) => b.code);
  t.true(blockers.includes('customer_not_attested'), `blockers: ${blockers.join(', ')}`);
  t.true(blockers.length > 1, 'a fresh test customer has other blockers too');
  t.false(readiness.body.checks.customer_accepted_terms);

  const link = await request(first!.url, 'POST', '/v1/customers/bright-1/onboarding_link', { token: apiKey });
  t.is(link.status, 201, link.text);
  t.is(link.body.status, 'active');
  t.true(typeof link.body.url === 'string' && link.body.url.startsWith(`${PUBLIC_URL}/onboarding/ob_`), `url: ${link.body.url}`);
  // The URL is served by this instance under the same path.
  const page = await request(first!.url, 'GET', new URL(link.body.url).pathname);
  t.is(page.status, 200);
  t.regex(page.text, /Calling terms for Bright Dental/);
});

test.serial('switchboard admin: a wrong token prints admin_unauthorized and exits 1; an unknown action exits 2', async (t) => {
  t.truthy(first?.isRunning(), 'needs the first start');
  const bad = await adminCli(first!, 'sbc_not_the_right_token', ['list-accounts']);
  t.is(bad.code, 1);
  t.is(bad.stdout, '', 'nothing on stdout');
  t.is(bad.json?.error?.code, 'admin_unauthorized', bad.stderr);
  t.is(bad.json?.error?.type, 'authentication_error');

  const unknown = await adminCli(first!, adminToken, ['make-coffee']);
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /unknown console action "make-coffee"/);
  t.regex(unknown.stderr, /Usage: switchboard admin/);

  // The right token still works against the same instance.
  const good = await adminCli(first!, adminToken, ['list-accounts']);
  t.is(good.code, 0, good.stderr);
  t.deepEqual(good.json?.data?.map((a: { id: string }) => a.id), [accountId]);
});

test.serial('a bad setting stops start-up with one line naming it, exit 2, before any database starts', async (t) => {
  const dataDir = await makeTempRoot();
  const r = await runCli(['start'], { SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_DB_POOL_SIZE: '0' });
  t.is(r.code, 2);
  t.is(r.stderr, 'switchboard: SWITCHBOARD_DB_POOL_SIZE must be at least 1, got "0"\n');
  t.deepEqual(postgresProcessesFor(dataDir), []);
});

test.serial('a weak admin token stops start-up with one line that does not print it, exit 2', async (t) => {
  const dataDir = await makeTempRoot();
  const r = await runCli(['start'], { SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_ADMIN_TOKEN: 'sbc_16_characters' });
  t.is(r.code, 2);
  t.regex(r.stderr, /^switchboard: SWITCHBOARD_ADMIN_TOKEN is too weak \(17 characters\): use at least 32 random characters[^\n]*\n$/);
  t.false(r.stderr.includes('sbc_16_characters'));
  t.deepEqual(postgresProcessesFor(dataDir), []);
});

test.serial('a malformed encryption key stops start-up with one line that does not print it, exit 2', async (t) => {
  const dataDir = await makeTempRoot();
  const hex = crypto.randomBytes(32).toString('hex');
  const r = await runCli(['start'], { SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_ENCRYPTION_KEY: hex });
  t.is(r.code, 2);
  t.regex(r.stderr, /^switchboard: SWITCHBOARD_ENCRYPTION_KEY must be 32 bytes in base64 \(44 characters; got 64\)[^\n]*\n$/);
  t.false(r.stderr.includes(hex));
  t.deepEqual(postgresProcessesFor(dataDir), []);
});

test.serial('SIGTERM: exits 0 within 10 s and leaves no postgres for its data dir', async (t) => {
  t.truthy(first?.isRunning(), 'needs the first start');
  await stopsCleanly(t, first!, 'SIGTERM');
});

test.serial('a restart on the same data dir keeps the data, prints no new token, and the first token works; SIGINT stops it', async (t) => {
  t.truthy(adminToken && accountId, 'needs the newcomer flow');
  const again = await startSwitchboard({ dataDir: dirA, env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL } });
  killOnFailure(t, again);
  coldStarts['restart (existing data dir)'] = again.coldStartMs;
  t.log(`cold start, existing data dir: ${Math.round(again.coldStartMs)} ms`);
  t.true(again.coldStartMs < 30_000);

  t.is(again.adminToken, undefined, 'no new admin token is printed');
  t.false(again.stdout().includes('Admin token'), again.stdout());
  t.false(again.logs().some((l) => l.msg === 'initialising embedded PostgreSQL'), 'the cluster is reused, not re-initialised');
  t.false(again.logs().some((l) => l.msg === 'migrations applied'), 'nothing left to migrate');

  const account = await adminCli(again, adminToken, ['get-account', '--account', accountId]);
  t.is(account.code, 0, account.stderr);
  t.is(account.json?.id, accountId);
  t.is(account.json?.name, 'Acme Agency');

  const me = await request(again.url, 'GET', '/v1/me', { token: apiKey });
  t.is(me.status, 200, 'the API key survives the restart');
  const customer = await request(again.url, 'GET', '/v1/customers/bright-1', { token: apiKey });
  t.is(customer.status, 200);
  t.is(customer.body.name, 'Bright Dental');

  await stopsCleanly(t, again, 'SIGINT');
});

test.serial('two instances with different data dirs and ports run side by side', async (t) => {
  t.truthy(adminToken && accountId, 'needs the newcomer flow');
  const dirB = path.join(await makeTempRoot(), 'data');
  const [a, b] = await Promise.all([
    startSwitchboard({ dataDir: dirA, env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL } }),
    startSwitchboard({ dataDir: dirB }),
  ]);
  killOnFailure(t, a);
  killOnFailure(t, b);
  t.not(a.port, b.port);
  t.log(`side by side: A answered after ${Math.round(a.coldStartMs)} ms, B (fresh) after ${Math.round(b.coldStartMs)} ms`);

  for (const instance of [a, b]) {
    const health = await request(instance.url, 'GET', '/healthz');
    t.is(health.status, 200, `${instance.url} answers`);
  }
  // Each has a database of its own: B made its own token, and A's token and data are not B's.
  t.is(a.adminToken, undefined);
  t.truthy(b.adminToken);
  t.not(b.adminToken, adminToken);
  const pgA = postgresProcessesFor(dirA);
  const pgB = postgresProcessesFor(dirB);
  t.true(pgA.length > 0 && pgB.length > 0);
  t.false(pgA.some((p) => pgB.some((q) => q.pid === p.pid)));

  const listA = await adminCli(a, adminToken, ['list-accounts']);
  t.deepEqual(listA.json?.data?.map((x: { id: string }) => x.id), [accountId]);
  const wrong = await adminCli(b, adminToken, ['list-accounts']);
  t.is(wrong.code, 1);
  t.is(wrong.json?.error?.code, 'admin_unauthorized');
  const listB = await adminCli(b, b.adminToken!, ['list-accounts']);
  t.is(listB.code, 0, listB.stderr);
  t.deepEqual(listB.json?.data, []);
  t.is((await request(b.url, 'GET', '/v1/me', { token: apiKey })).status, 401, "A's key means nothing to B");

  await Promise.all([stopsCleanly(t, a, 'SIGTERM'), stopsCleanly(t, b, 'SIGTERM')]);
});

test.serial('after a SIGKILL of node its postgres is stale; the next start stops it, keeps the data, and stops cleanly', async (t) => {
  t.truthy(adminToken && accountId, 'needs the newcomer flow');
  const doomed = await startSwitchboard({ dataDir: dirA, env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL } });
  killOnFailure(t, doomed);
  const before = postgresProcessesFor(dirA);
  t.is(before.length, 1, `one postmaster for the data dir: ${JSON.stringify(before)}`);
  const killed = await doomed.stop('SIGKILL', 5_000);
  t.is(killed.signal, 'SIGKILL');
  const stale = postgresProcessesFor(dirA);
  t.deepEqual(stale.map((p) => p.pid), before.map((p) => p.pid), 'precondition: SIGKILL leaves the postgres running');

  const revived = await startSwitchboard({ dataDir: dirA, env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL } });
  killOnFailure(t, revived);
  t.log(`start over a stale postgres: ${Math.round(revived.coldStartMs)} ms`);
  t.true(revived.coldStartMs < 30_000);
  t.true(
    revived.logs().some((l) => l.msg === 'stopping a stale embedded PostgreSQL left by an earlier run' && l.pid === stale[0].pid),
    'logs that it stopped the stale server',
  );
  // The stale server's processes end on their own after its postmaster: under load some are
  // still seen for a moment after the new start answers, so the count is given a few seconds.
  let now = postgresProcessesFor(dirA);
  for (let i = 0; i < 100 && now.length !== 1; i++) {
    await new Promise((r) => setTimeout(r, 100));
    now = postgresProcessesFor(dirA);
  }
  t.is(now.length, 1, JSON.stringify(now));
  t.false(now.some((p) => p.pid === stale[0].pid), 'the stale postmaster is gone');
  t.is(revived.adminToken, undefined, 'no new token: the data dir is the same');

  const account = await adminCli(revived, adminToken, ['get-account', '--account', accountId]);
  t.is(account.code, 0, account.stderr);
  t.is(account.json?.name, 'Acme Agency');
  t.is((await request(revived.url, 'GET', '/v1/customers/bright-1', { token: apiKey })).status, 200);

  await stopsCleanly(t, revived, 'SIGTERM');
  t.log(`cold starts: ${Object.entries(coldStarts).map(([k, v]) => `${k} ${Math.round(v)} ms`).join('; ')}`);
});

test.serial('SIGTERM during start-up (database up, HTTP not yet) still stops the embedded postgres', async (t) => {
  const dir = path.join(await makeTempRoot(), 'data');
  const starting = await spawnSwitchboard({ dataDir: dir });
  killOnFailure(t, starting);
  const dbUp = () => starting.logs().some((l) => l.msg === 'embedded PostgreSQL started');
  for (let i = 0; i < 1_500 && !dbUp() && starting.isRunning(); i++) await new Promise((r) => setTimeout(r, 10));
  t.true(dbUp(), `the embedded database started:\n${starting.stdout()}${starting.stderr()}`);
  const alreadyStarted = starting.logs().some((l) => l.msg === 'switchboard started');
  t.log(alreadyStarted ? 'start-up had already finished when the signal was sent' : 'signal sent between "embedded PostgreSQL started" and "switchboard started"');

  const exit = await starting.stop('SIGTERM', 10_000);
  t.log(`exit after SIGTERM during start-up: code ${exit.code}, signal ${exit.signal}, ${Math.round(exit.ms)} ms`);
  let left = postgresProcessesFor(dir);
  for (let i = 0; i < 20 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = postgresProcessesFor(dir);
  }
  t.deepEqual(left, [], 'SIGTERM leaves no postgres behind, even while starting');
  t.is(exit.signal, null, 'the signal is handled during start-up, not fatal to node');
});
