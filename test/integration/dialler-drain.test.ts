import crypto from 'node:crypto';
import test from 'ava';
import { freshDatabase } from '../helpers/db.ts';
import { LogCapture } from '../helpers/service.ts';
import { createPool } from '../../db/pool.ts';
import { createCallRepository } from '../../db/calls.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { systemClock } from '../../runtime/clock.ts';
import { createMoneyWriter } from '../../money/writer.ts';
import { CallKeeper } from '../../actors/call/call-keeper.ts';
import { drainCalls } from '../../actors/call/call-drain.ts';
import type { CarrierInbox } from '../../actors/call/carrier-inbox.ts';
import type { Carrier, CarrierStatusReport } from '../../telephony/carrier.ts';

/*
 * A dialler's drain (actors/call/call-drain.ts) against a real database, with two processes' call
 * keepers: process B stops; the call that ends during its drain is simply finished, the one still
 * running when the drain time runs out is handed over by lease, and process A's keeper takes it
 * at once (no 30-second lease wait, no 30 seconds of its own health), without hanging it up or
 * closing it. test/e2e/dialler-drain.test.ts signals a real dialler process.
 */

const HANDED = 'a running call is handed over by lease to another dialler; the call goes on';
const TAKEN = 'a call handed over by a stopping dialler is taken over here';

test('a draining dialler claims nothing more, waits for its calls, hands the one still running over by lease, and another keeper takes it at once without ending it', async (t) => {
  const url = await freshDatabase();
  const db = createPool(url, 4);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: url, SWITCHBOARD_ADMIN_TOKEN: 'sbc_test_console_token_for_tests_only', SWITCHBOARD_PUBLIC_URL: 'http://127.0.0.1:9' });
  const logs = new LogCapture();
  const log = createLogger('info', logs);
  const hangups: string[] = [];
  const carrier = {
    name: 'simulated',
    async fetchStatus(callId: string, carrierCallId: string): Promise<CarrierStatusReport> {
      return { callId, carrierCallId, status: 'in-progress' };
    },
    async hangup(carrierCallId: string) {
      hangups.push(carrierCallId);
    },
  } as unknown as Carrier;
  const inbox = { retryDue: async () => 0, retryMachineVerdictsOf: async () => 0, receive: async () => true, receiveLocal: () => {} } as unknown as CarrierInbox;
  const money = createMoneyWriter({ spendableCrossedCallReserve: async () => {} });
  const keeper = (owner: string) =>
    new CallKeeper({ pool: db, clock: systemClock, realClock: systemClock, log: log.child({ owner }), config, money, owner, carriers: { test: carrier, live: carrier }, inbox }, { pollMs: 3_600_000 });
  try {
    const { rows } = await db.query(`INSERT INTO accounts (slug, name, country, created_at) VALUES ($1, 'Agency', 'US', now()) RETURNING id`, [`d-${crypto.randomUUID()}`]);
    const customer = await db.query(`INSERT INTO customers (account_id, mode, name, country, timezone, created_at) VALUES ($1, 'test', 'Dental Co', 'US', 'America/New_York', now()) RETURNING id`, [rows[0].id]);
    const runningCall = async (owner: string) => {
      const now = new Date();
      const { row } = await createCallRepository(db).insertOrFindOpen({
        accountId: rows[0].id,
        mode: 'test',
        customerId: customer.rows[0].id,
        toE164: `+1202555${crypto.randomInt(1000, 9999)}`,
        toCountry: 'US',
        phoneInput: '+12025550100',
        businessName: null,
        externalRef: null,
        dialBefore: new Date(now.getTime() + 86_400_000),
        now,
      });
      await db.query(
        `UPDATE calls SET status = 'in_progress', claimed_by = $2, dialed_at = now(), answered_at = now(), carrier = 'simulated', carrier_call_id = $3,
                          lease_expires_at = now() + interval '30 seconds'
          WHERE id = $1`,
        [row.id, owner, `CA${crypto.randomBytes(8).toString('hex')}`],
      );
      return row.id;
    };
    const long = await runningCall('process-b');
    const short = await runningCall('process-b');
    const a = keeper('process-a');
    const b = keeper('process-b');
    b.start();
    let diallerStopped = false;

    // The short call ends 300 ms into the drain; the long one outlasts the 1.5-second drain.
    setTimeout(() => void db.query(`UPDATE calls SET status = 'completed', outcome = 'not_interested', ended_at = now() WHERE id = $1`, [short]), 300);
    const t0 = Date.now();
    const result = await drainCalls({ pool: db, log, owner: 'process-b', dialler: { stop: async () => void (diallerStopped = true) }, keeper: b }, 1_500);
    t.true(diallerStopped, 'the dialler stopped claiming first');
    t.true(Date.now() - t0 >= 1_400, 'the drain waited its time for the call still running');
    t.like(result, { running: 2, finished: 1, handedOver: [long] });
    const handed = logs.lines.filter((l) => l.msg === HANDED);
    t.deepEqual(handed.map((l) => l.call_id), [long], 'one line per call handed over');
    t.like(handed[0], { status: 'in_progress', owner: 'process-b' });
    t.like(logs.lines.find((l) => String(l.msg).startsWith('dialler drained')), { running: 2, finished: 1, handed_over: 1 });

    // Process B's stopped keeper does not renew the handed-over lease; process A, fresh, takes it at once.
    await a.tick();
    const after = (await db.query(`SELECT status, outcome, claimed_by, lease_expires_at > now() AS leased FROM calls WHERE id = $1`, [long])).rows[0];
    t.deepEqual(after, { status: 'in_progress', outcome: null, claimed_by: 'process-a', leased: true }, 'taken over, still running');
    t.like(logs.lines.find((l) => l.msg === TAKEN), { call_id: long, from: 'process-b', to: 'process-a' });
    t.deepEqual(hangups, [], 'not hung up');
    // Process A renews it from now on, as its own.
    await a.tick();
    t.is((await db.query(`SELECT claimed_by FROM calls WHERE id = $1`, [long])).rows[0].claimed_by, 'process-a');
    await b.stop();
  } finally {
    await db.end();
  }
});
