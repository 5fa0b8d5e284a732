import test from 'ava';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { childEnv, cleanUpEverything, freePort, makeTempRoot, ROOT } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';
import { ADMIN_TOKEN } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { advanceToNext, makeReadyCustomer } from '../helpers/calls.ts';

/**
 * The rolling upgrade the README gives (`pm2 reload ecosystem.config.cjs`) under load, played by
 * test/fakes/pm2-reload.mjs as pm2 does it with `wait_ready: true` (pm2 is not a dependency): two
 * api workers in cluster mode on one port, each replaced by a new one that is ready first; two
 * diallers restarted one at a time, each draining its calls on SIGINT. Requests and calls go on
 * throughout: every request is answered (none refused, reset or left unanswered, no fastify 503),
 * and every call is dialled once and ends with its true outcome, none dropped or closed as failed.
 */
test.after.always(cleanUpEverything);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  at: number;
  kind: 'read' | 'call';
  status?: number;
  code?: string;
  retryAfter?: string | null;
  body?: string;
  error?: string;
}

test('a rolling upgrade of the api and the diallers under load drops no request and no call', async (t) => {
  // Six process starts on a machine of 2 cores: 40 to 60 s idle, minutes when it is shared.
  t.timeout(600_000);
  const databaseUrl = await freshDatabase();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const DRAIN_MS = 8_000;
  const pm2 = spawn(process.execPath, [path.join(ROOT, 'test', 'fakes', 'pm2-reload.mjs'), '2', '2', String(DRAIN_MS + 15_000)], {
    cwd: ROOT,
    env: childEnv({
      DATABASE_URL: databaseUrl,
      SWITCHBOARD_DATA_DIR: path.join(await makeTempRoot('switchboard-reload-'), 'data'),
      SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN,
      SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      SWITCHBOARD_PUBLIC_URL: url,
      SWITCHBOARD_TEST_CLOCK: '1',
      SWITCHBOARD_RATE_LIMIT_STORE: 'postgres',
      SWITCHBOARD_DB_POOL_SIZE: '4',
      SWITCHBOARD_DIALLER_POLL_MS: '200',
      SWITCHBOARD_KEEPER_POLL_MS: '500',
      SWITCHBOARD_JOB_INTERVAL_MS: '3600000',
      // A talk-until-limit call (digit 6) lasts 2 s of wall time: some are running whenever a dialler is signalled.
      SWITCHBOARD_SIMULATED_TALK_MS: '2000',
      SWITCHBOARD_DRAIN_MS: String(DRAIN_MS),
      PORT: String(port),
      HOST: '127.0.0.1',
      // A process starts in 4.5–12 s on an idle machine, 40 s on a shared CI machine under load: the
      // test waits for every `ready` (pm2 would go on after listen_timeout, and a connection could be refused).
      PM2_LISTEN_TIMEOUT: '150000',
    }),
    stdio: ['pipe', 'pipe', 'pipe'],
    // A group of its own: a failed test kills the fake and every process it started.
    detached: true,
  });
  let out = '';
  let err = '';
  pm2.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  pm2.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => pm2.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    try {
      process.kill(-pm2.pid!, 'SIGKILL');
    } catch {
      /* all gone */
    }
    // Every process's log lines, for a failure to be read in full.
    if (!t.passed) writeFileSync(path.join(os.tmpdir(), `switchboard-rolling-upgrade-${process.pid}.log`), out + err);
  });
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, any>];
        } catch {
          return [];
        }
      });
  const events = () => lines().filter((l) => l.pm2);
  const waitFor = async (name: string, timeoutMs: number) => {
    for (const deadline = Date.now() + timeoutMs; !events().some((e) => e.pm2 === name); await sleep(50)) {
      if (Date.now() > deadline || pm2.exitCode !== null) throw new Error(`no pm2 "${name}" within ${timeoutMs} ms\n--- stderr ---\n${err}\n--- stdout (tail) ---\n${out.slice(-4000)}`);
    }
    return events().find((e) => e.pm2 === name)!;
  };
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    await waitFor('online', 160_000);
    const account = await makeAccount(url);
    await account.admin.patch(`/admin/v1/accounts/${account.id}/limits`, { concurrent_calls: 1_000 });
    const customer = await makeReadyCustomer(url, account.api);
    await advanceToNext(account, 2, 15); // a Tuesday, 10:00 in New York

    // Load: reads on two connections, a call requested every 150 ms (every third one talks for 2 s).
    const outcomes: Outcome[] = [];
    const callIds: string[] = [];
    let loading = true;
    const record = async (kind: Outcome['kind'], go: () => Promise<Response>) => {
      try {
        const res = await go();
        const body = await res.text();
        let parsed: any;
        try {
          parsed = JSON.parse(body);
        } catch {
          /* not JSON */
        }
        outcomes.push({ at: Date.now(), kind, status: res.status, code: parsed?.error?.code, retryAfter: res.headers.get('retry-after'), body });
        return parsed;
      } catch (e) {
        const c = e as { cause?: { code?: string; message?: string }; message?: string };
        outcomes.push({ at: Date.now(), kind, error: c.cause?.code ?? c.cause?.message ?? c.message });
        return undefined;
      }
    };
    const headers = { authorization: `Bearer ${account.testKey}`, 'content-type': 'application/json' };
    const reader = async () => {
      while (loading) await record('read', () => fetch(`${url}/v1/customers?limit=2`, { headers, signal: AbortSignal.timeout(20_000) }));
    };
    const caller = async () => {
      for (let i = 0; loading; i++) {
        const phone = `+1202555${String(i).padStart(3, '0')}${i % 3 === 0 ? 6 : 0}`;
        const body = await record('call', () =>
          fetch(`${url}/v1/calls`, { method: 'POST', headers, body: JSON.stringify({ called_party: 'business', customer_id: customer.id, phone }), signal: AbortSignal.timeout(20_000) }),
        );
        if (body?.id) callIds.push(body.id);
        await sleep(150);
      }
    };
    const load = [reader(), reader(), caller()];
    await sleep(1_500);
    const reloadAt = Date.now();
    pm2.stdin.write('reload\n');
    await waitFor('reloaded', 400_000);
    const reloadMs = Date.now() - reloadAt;
    await sleep(1_000);
    loading = false;
    await Promise.all(load);

    // Every call ends, with its scenario's outcome.
    let calls: any[] = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(250)) {
      calls = (await db.query(`SELECT id, status, outcome, attempts, to_e164 FROM calls WHERE id = ANY($1)`, [callIds])).rows;
      if (calls.length === callIds.length && calls.every((c) => c.status === 'completed')) break;
    }
    const ev = events();
    t.log(`reload took ${reloadMs} ms; ${outcomes.length} requests, ${callIds.length} calls; api ready after ${ev.filter((e) => e.pm2 === 'ready').map((e) => e.start_ms).join(', ')} ms`);
    t.log(ev.filter((e) => e.pm2 === 'exited').map((e) => `${e.app} ${e.pid} exited ${e.code ?? e.signal} after ${e.stop_ms} ms`).join('\n'));

    const failures = outcomes.filter((o) => o.status === undefined);
    t.deepEqual(failures, [], 'no request refused, reset or left unanswered');
    t.deepEqual(outcomes.filter((o) => o.body?.includes('"statusCode":503')), [], "never fastify's own 503");
    const unavailable = outcomes.filter((o) => o.status === 503);
    for (const o of unavailable) t.like(o, { code: 'service_unavailable' }, 'a 503 is in the error shape with Retry-After') && t.truthy(o.retryAfter);
    t.deepEqual(outcomes.filter((o) => o.status !== undefined && o.status !== 503 && o.status >= 300), [], 'every other answer is a success');
    t.true(outcomes.filter((o) => o.at > reloadAt && o.at < reloadAt + reloadMs && o.status === 200).length > 20, 'requests were answered during the reload');

    t.true(callIds.length >= 20, `calls were requested throughout (${callIds.length})`);
    t.deepEqual(
      calls.filter((c) => c.status !== 'completed' || c.outcome !== (c.to_e164.endsWith('6') ? 'time_limit' : 'not_interested')),
      [],
      'every call ended with its true outcome: none dropped, none closed as failed',
    );
    t.deepEqual(calls.filter((c) => c.attempts !== 1), [], 'each dialled once');
    t.false(ev.some((e) => e.pm2 === 'killed'), 'no process needed SIGKILL');
    t.false(ev.some((e) => e.pm2 === 'listen_timeout'), 'every new process said it was ready');
    t.true(ev.filter((e) => e.pm2 === 'exited').every((e) => e.code === 0), 'every old process exited cleanly');
    const drained = lines().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('dialler drained'));
    t.is(drained.length, 2, 'each old dialler logged its drain');
    t.true(drained.some((l) => l.running > 0), 'a dialler had calls running when it was signalled');
    t.log(drained.map((l) => `drain: ${l.running} running, ${l.finished} finished, ${l.handed_over} handed over in ${l.waited_ms} ms`).join('\n'));

    pm2.stdin.write('stop\n');
    t.is(await exited, 0);
  } finally {
    await db.end();
  }
});
