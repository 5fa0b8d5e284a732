import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { TestClock } from '../../runtime/clock.ts';

/*
 * A sender killed mid-attempt leaves its deliveries `sending` under a 60-second claim; the next
 * sender takes them once the claim runs out, and says so in one line (issue 25 §0: "a killed
 * sender's deliveries … wait 60 s … with no log line saying so"): which deliveries, when their
 * claim was taken and ran out, how old it was. A delivery merely due again says nothing.
 */
let svc: TestService;
let db: pg.Client;
/** Real time, which delivery runs on; moved by the test past the claim. */
const wall = new TestClock();
test.before(async () => {
  // Without the sender role its loop never starts, so no poke of the change feed sends a delivery
  // behind the test's back: deliveries go only when the test runs the sender.
  svc = await startTestService({ SWITCHBOARD_ROLES: 'api,dialler,builder', SWITCHBOARD_SENDER_POLL_MS: '3600000' }, { realClock: wall });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

const CLAIM_MS = 60_000;
const takeOvers = () => svc.logs.lines.filter((l) => l.event === 'lease_taken_over');

test.serial('deliveries a stopped sender held are taken over once its claim runs out, with one line naming them, the claim and its age', async (t) => {
  const a = await makeAccount(svc.url);
  const rx = await startReceiver();
  t.teardown(() => rx.close().catch(() => {}));
  const endpoint = (await a.admin.post(`/admin/v1/accounts/${a.id}/webhook_endpoints`, { url: rx.url, mode: 'test' })).body;
  // Two events: two deliveries.
  await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}/rotate`);
  await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}/rotate`);
  // What a sender's claim does, by a sender then killed before its attempts were recorded.
  const claimedAt = wall.now();
  const { rows } = await db.query(
    `UPDATE webhook_deliveries SET status = 'sending', locked_until = $2, updated_at = $1 WHERE endpoint_id = $3 RETURNING id`,
    [claimedAt, new Date(claimedAt.getTime() + CLAIM_MS), endpoint.id],
  );
  t.is(rows.length, 2);

  wall.advance(30_000);
  t.is((await a.admin.post('/admin/v1/webhooks/run')).body.claimed, 0, 'the claim still holds');
  t.deepEqual(takeOvers(), []);

  wall.advance(31_000);
  t.is((await a.admin.post('/admin/v1/webhooks/run')).body.claimed, 2);
  t.is(rx.received.length, 2);
  const lines = takeOvers();
  t.is(lines.length, 1, 'one line for the round');
  t.like(lines[0], { level: 40, kind: 'webhook_delivery', count: 2, lease_ms: CLAIM_MS });
  // The clock runs on between its moves: a little over the 61 s it was moved.
  const age = lines[0].oldest_claim_age_ms as number;
  t.true(age >= 61_000 && age < 70_000, String(age));
  const named = lines[0].deliveries as { delivery_id: string; attempt: number; claimed_at: string; lease_expired_at: string }[];
  t.deepEqual(named.map((d) => d.delivery_id).sort(), rows.map((r) => r.id).sort());
  for (const d of named) {
    t.is(d.claimed_at, claimedAt.toISOString());
    t.is(d.lease_expired_at, new Date(claimedAt.getTime() + CLAIM_MS).toISOString());
    t.is(d.attempt, 1);
  }

  // A delivery that failed and is due again is a retry, not a take-over.
  await rx.close();
  await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}/rotate`);
  await a.admin.post('/admin/v1/webhooks/run');
  wall.advance(31_000);
  await a.admin.post('/admin/v1/webhooks/run');
  t.is(takeOvers().length, 1, 'no line for a retry');
});
