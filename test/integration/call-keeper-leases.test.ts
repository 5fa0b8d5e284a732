import crypto from 'node:crypto';
import test from 'ava';
import type pg from 'pg';
import { freshDatabase } from '../helpers/db.ts';
import { LogCapture } from '../helpers/service.ts';
import { createPool } from '../../db/pool.ts';
import { createCallRepository } from '../../db/calls.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { systemClock } from '../../runtime/clock.ts';
import { createMoneyWriter } from '../../money/writer.ts';
import { CallKeeper } from '../../actors/call/call-keeper.ts';
import type { CarrierInbox } from '../../actors/call/carrier-inbox.ts';
import type { Carrier, CarrierStatusReport } from '../../telephony/carrier.ts';

/*
 * Two processes' call keepers on one database, each with its own identity (the dialler's
 * `claimed_by`), its own connection to the database (which can be cut) and its own real-time
 * source, injected so that a lease's 30 seconds are played without waiting them (leases run on
 * real time: the keeper's Date.now and the database's now()). A call's lease is 30 seconds,
 * renewed every 10; a keeper that was away takes other processes' calls only after it has itself
 * renewed for a whole 30-second lease, and a lease that really lapsed is taken exactly once.
 */

const TAKEN = 'a call whose process stopped renewing its lease is recovered here';

/** What a connection cut looks like to the keeper (pg's error for a connection that ended). */
const cut = () => Object.assign(new Error('Connection terminated unexpectedly'), {});

/** A pool that answers like `real` until `down` is set, then fails every query as a cut connection does. */
function cuttablePool(real: pg.Pool): { pool: pg.Pool; setDown(down: boolean): void } {
  let down = false;
  const pool = new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'query') return (...args: unknown[]) => (down ? Promise.reject(cut()) : (target.query as (...a: unknown[]) => unknown)(...args));
      if (prop === 'connect') return () => (down ? Promise.reject(cut()) : target.connect());
      return Reflect.get(target, prop, receiver);
    },
  });
  return { pool, setDown: (d) => (down = d) };
}

/** A carrier that says every call asked about is still running, and counts hangups. */
function runningCarrier(hangups: string[]): Carrier {
  return {
    name: 'simulated',
    async fetchStatus(callId: string, carrierCallId: string): Promise<CarrierStatusReport> {
      return { callId, carrierCallId, status: 'in-progress' };
    },
    async hangup(carrierCallId: string) {
      hangups.push(carrierCallId);
    },
  } as unknown as Carrier;
}

interface World {
  url: string;
  db: pg.Pool;
  /** Real time as every keeper sees it, ms; moved by the test. */
  nowMs: number;
  logs: LogCapture;
  hangups: string[];
  keeper(owner: string): { keeper: CallKeeper; setDown(down: boolean): void };
  /** A running call dialled by `owner`, its lease `leaseSeconds` from the database's now (negative: lapsed). */
  runningCall(owner: string, leaseSeconds: number): Promise<string>;
  owners(ids: string[]): Promise<(string | null)[]>;
  takenOver(): string[];
  close(): Promise<void>;
}

async function world(): Promise<World> {
  const url = await freshDatabase();
  const db = createPool(url, 6);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: url, SWITCHBOARD_ADMIN_TOKEN: 'sbc_test_console_token_for_tests_only', SWITCHBOARD_PUBLIC_URL: 'http://127.0.0.1:9' });
  const logs = new LogCapture();
  const log = createLogger('info', logs);
  const hangups: string[] = [];
  const money = createMoneyWriter({ spendableCrossedCallReserve: async () => {} });
  const inbox = { retryDue: async () => 0, receive: async () => true, receiveLocal: () => {} } as unknown as CarrierInbox;
  const { rows } = await db.query(`INSERT INTO accounts (slug, name, country, created_at) VALUES ($1, 'Agency', 'US', now()) RETURNING id`, [`k-${crypto.randomUUID()}`]);
  const accountId: string = rows[0].id;
  const customer = await db.query(`INSERT INTO customers (account_id, mode, name, country, timezone, created_at) VALUES ($1, 'test', 'Dental Co', 'US', 'America/New_York', now()) RETURNING id`, [accountId]);
  const pools: pg.Pool[] = [];
  const w: World = {
    url,
    db,
    nowMs: Date.UTC(2026, 10, 27, 9),
    logs,
    hangups,
    keeper(owner) {
      const { pool, setDown } = cuttablePool(createPool(url, 3));
      pools.push(pool);
      const carrier = runningCarrier(hangups);
      const keeper = new CallKeeper(
        { pool, clock: systemClock, realClock: systemClock, log: log.child({ owner }), config, money, owner, carriers: { test: carrier, live: carrier }, inbox },
        { pollMs: 1_000, nowMs: () => w.nowMs },
      );
      return { keeper, setDown };
    },
    async runningCall(owner, leaseSeconds) {
      const now = new Date();
      const { row } = await createCallRepository(db).insertOrFindOpen({
        accountId,
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
                          lease_expires_at = now() + make_interval(secs => $4)
          WHERE id = $1`,
        [row.id, owner, `CA${crypto.randomBytes(8).toString('hex')}`, leaseSeconds],
      );
      return row.id;
    },
    async owners(ids) {
      const { rows } = await db.query(`SELECT id, claimed_by FROM calls WHERE id = ANY($1)`, [ids]);
      return ids.map((id) => rows.find((r) => r.id === id)?.claimed_by ?? null);
    },
    takenOver: () => logs.lines.filter((l) => l.msg === TAKEN).map((l) => String(l.call_id)),
    async close() {
      for (const p of pools) await p.end();
      await db.end();
    },
  };
  return w;
}

const seconds = (w: World, s: number) => (w.nowMs += s * 1000);

/** Keepers of processes A and B, both healthy after one round each; B runs two calls. */
async function twoProcesses(w: World) {
  const a = w.keeper('process-a');
  const b = w.keeper('process-b');
  const bCalls = [await w.runningCall('process-b', 30), await w.runningCall('process-b', 30)];
  await a.keeper.tick();
  await b.keeper.tick();
  return { a, b, bCalls };
}

test('after an outage longer than the 30-second lease, a keeper back first takes none of the other process’s calls during its own first 30 seconds of health, and none once that process renews', async (t) => {
  const w = await world();
  try {
    // Both healthy: each renews its own leases.
    const { a, b, bCalls } = await twoProcesses(w);
    t.deepEqual(await w.owners(bCalls), ['process-b', 'process-b']);

    // The database goes away for both, for longer than the 30-second lease: process B's leases lapse.
    a.setDown(true);
    b.setDown(true);
    for (let s = 0; s < 45; s += 5) {
      seconds(w, 5);
      await t.throwsAsync(a.keeper.tick());
      await t.throwsAsync(b.keeper.tick());
    }
    await w.db.query(`UPDATE calls SET lease_expires_at = now() - interval '15 seconds' WHERE claimed_by = 'process-b'`);

    // A is back; B only 20 seconds later (still inside a lease of A's health, as a live process is).
    a.setDown(false);
    for (const s of [0, 5, 10, 15]) {
      if (s > 0) seconds(w, 5);
      await a.keeper.tick();
      t.deepEqual(await w.owners(bCalls), ['process-b', 'process-b'], `A healthy for ${s} s of the 30-second lease takes nothing`);
    }
    seconds(w, 5);
    b.setDown(false);
    await b.keeper.tick();
    // A healthy for 29 s, then 30 s and well beyond: B renews every 10 s, and its calls stay B's.
    for (const s of [9, 1, 10, 10, 10, 30]) {
      seconds(w, s);
      await a.keeper.tick();
      await b.keeper.tick();
      t.deepEqual(await w.owners(bCalls), ['process-b', 'process-b']);
    }
    t.deepEqual(w.takenOver(), [], 'no call was taken over');
    t.deepEqual(w.hangups, [], 'no running call was hung up');
  } finally {
    await w.close();
  }
});

test('a keeper whose own connection was cut comes back and leaves the other process’s leased calls alone; a lease that really lapsed is taken exactly once by the two keepers', async (t) => {
  const w = await world();
  try {
    const { a, b, bCalls } = await twoProcesses(w);

    // Only A loses the database, for longer than the 30-second lease; B keeps renewing its calls.
    a.setDown(true);
    for (let s = 0; s < 40; s += 10) {
      seconds(w, 10);
      await t.throwsAsync(a.keeper.tick());
      await b.keeper.tick();
    }
    a.setDown(false);
    for (let s = 0; s <= 40; s += 10) {
      await Promise.all([a.keeper.tick(), b.keeper.tick()]);
      t.deepEqual(await w.owners(bCalls), ['process-b', 'process-b'], `A back for ${s} s`);
      seconds(w, 10);
    }

    // A third process died 40 s ago: its call's lease lapsed. Both keepers, healthy for over 30 s, run at once.
    const orphan = await w.runningCall('process-c', -10);
    await Promise.all([a.keeper.tick(), b.keeper.tick(), a.keeper.tick(), b.keeper.tick()]);
    const [owner] = await w.owners([orphan]);
    t.true(owner === 'process-a' || owner === 'process-b', `taken by a live keeper (${owner})`);
    // Many rounds later (renewals every 10 s), it is still taken once, and B's calls are still B's.
    for (let s = 0; s < 120; s += 10) {
      seconds(w, 10);
      await Promise.all([a.keeper.tick(), b.keeper.tick()]);
    }
    t.deepEqual(w.takenOver(), [orphan], 'the lapsed call was taken over exactly once');
    // The line says whose lease it was and when it ran out.
    const line = w.logs.lines.find((l) => l.msg === TAKEN)!;
    t.like(line, { event: 'lease_taken_over', kind: 'call', call_id: orphan, previous_owner: 'process-c' });
    t.true(Date.now() - new Date(line.lease_expired_at as string).getTime() >= 10_000, String(line.lease_expired_at));
    t.deepEqual(await w.owners([orphan, ...bCalls]), [owner, 'process-b', 'process-b']);
  } finally {
    await w.close();
  }
});
