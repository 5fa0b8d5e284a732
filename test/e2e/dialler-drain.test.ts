import test from 'ava';
import pg from 'pg';
import { cleanUpEverything, makeTempRoot, startSwitchboard } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';
import { ADMIN_TOKEN } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { advanceToNext, makeReadyCustomer } from '../helpers/calls.ts';

/**
 * A dialler signalled with SIGINT while a call runs (what `pm2 reload` does to it): it claims no
 * new call, the running call goes on to its true end inside the drain time, and only then does the
 * process exit, cleanly. Before issue 25 the process exited at once and the call was closed as
 * `failed` 40 s later. test/integration/dialler-drain.test.ts covers the hand-over of a call that
 * outlasts the drain.
 */
test.after.always(cleanUpEverything);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a running call survives a SIGINT of its dialler: the dialler drains it to its true end, then exits 0', async (t) => {
  t.timeout(300_000);
  const databaseUrl = await freshDatabase();
  const p = await startSwitchboard({
    dataDir: await makeTempRoot('switchboard-drain-'),
    timeoutMs: 120_000,
    env: {
      DATABASE_URL: databaseUrl,
      SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN,
      SWITCHBOARD_TEST_CLOCK: '1',
      SWITCHBOARD_ROLES: 'api,dialler',
      // The talk-until-limit call (digit 6) lasts 4 s of wall time: running when the signal comes.
      SWITCHBOARD_SIMULATED_TALK_MS: '4000',
      SWITCHBOARD_DRAIN_MS: '20000',
      SWITCHBOARD_KEEPER_POLL_MS: '500',
      SWITCHBOARD_DIALLER_POLL_MS: '200',
      SWITCHBOARD_JOB_INTERVAL_MS: '3600000',
    },
  });
  const db = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const account = await makeAccount(p.url);
    const customer = await makeReadyCustomer(p.url, account.api);
    await advanceToNext(account, 2, 15); // a Tuesday, 10:00 in New York
    const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550186' });
    for (const deadline = Date.now() + 20_000; (await account.api.get(`/v1/calls/${r.body.id}`)).body.status !== 'in_progress'; await sleep(50)) {
      if (Date.now() > deadline) throw new Error('the call did not start');
    }
    // A request made after the signal is not claimed by the draining dialler.
    const signalledAt = Date.now();
    p.kill('SIGINT');
    await sleep(300);
    const later = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550170' });
    const exit = await p.stop('SIGINT', 60_000);
    t.is(exit.code, 0, p.stderr());
    const call = (await db.query(`SELECT status, outcome, duration_seconds, attempts FROM calls WHERE id = $1`, [r.body.id])).rows[0];
    t.deepEqual(call, { status: 'completed', outcome: 'time_limit', duration_seconds: 1200, attempts: 1 }, 'the call ended with its true outcome, not closed as failed');
    t.true(Date.now() - signalledAt >= 2_000, 'the process stayed until the call ended');
    if (later.status === 201) {
      const waiting = (await db.query(`SELECT status, claimed_by FROM calls WHERE id = $1`, [later.body.id])).rows[0];
      t.deepEqual(waiting, { status: 'queued', claimed_by: null }, 'nothing new was claimed during the drain');
    }
    const logs = p.logs();
    const drained = logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('dialler drained'));
    t.like(drained, { msg: 'dialler drained: every call finished', running: 1, finished: 1, handed_over: 0 });
    t.false(logs.some((l) => l.msg === 'a running call is handed over by lease to another dialler; the call goes on'));
  } finally {
    await db.end();
  }
});
