import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { refuseRowChange } from '../helpers/db.ts';
import { until } from '../helpers/wait.ts';
import { startReceiver } from '../helpers/receiver.ts';

/*
 * A full disk as the service meets it: PostgreSQL refuses a write with SQLSTATE 53100 (disk_full).
 * A tablespace on a tiny filesystem needs root and a mount; a trigger raising the same SQLSTATE
 * gives the driver exactly the error a full disk gives (pg's DatabaseError, code '53100'), on the
 * one table the test chooses, and is dropped to "free space" again.
 * Spec (docs/api.md, "When the database cannot be reached"): a full server is 503
 * service_unavailable with Retry-After, never 500; the dialler logs the streak once, backs off,
 * and never closes a request it was dialling as lost.
 */

const DISK_FULL = 'could not extend file "base/16384/16385": No space left on device';

let svc: TestService;
let db: pg.Pool;
let account: TestAccount;
let ready: { id: string };

test.before(async () => {
  // The dialler polls on its own, often, as in production (1 s there).
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '100' });
  db = new pg.Pool({ connectionString: svc.databaseUrl, max: 2 });
  account = await makeAccount(svc.url);
  ready = await makeReadyCustomer(svc.url, account.api);
  // A Tuesday, 15:00 UTC: 10:00 in New York, inside every US window.
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

const queue = (phone: string) => account.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, business_name: 'Acme Plumbing', phone });
/** Error lines (level 50+) that carry a stack: what the operator saw every second. */
const stacks = () => svc.logs.lines.filter((l) => (l.level as number) >= 50 && JSON.stringify(l).includes('"stack"'));

test.serial('a write refused with 53100 disk_full is 503 service_unavailable with Retry-After in the error shape, never 500; it succeeds once space is back', async (t) => {
  const free = await refuseRowChange(db, { name: 'calls_disk_full', table: 'calls', event: 'INSERT', condition: 'true', message: DISK_FULL, sqlstate: '53100' });
  try {
    for (let i = 0; i < 3; i++) {
      const r = await queue(`+1202555011${i}`);
      t.is(r.status, 503, r.text);
      t.deepEqual(Object.keys(r.body), ['error']);
      t.like(r.body, { error: { type: 'api_error', code: 'service_unavailable' } });
      t.regex(r.body.error.request_id, /^req_/);
      t.is(r.body.error.message, 'The service cannot store this right now; nothing was changed. Retry after the number of seconds in Retry-After.');
      t.is(r.headers.get('retry-after'), '30');
      t.notRegex(r.text, /No space left|base\/16384|53100/, 'no internals in the answer');
    }
    // Reads go on.
    t.is((await account.api.get('/v1/calls')).status, 200);
    const keyed = await account.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, business_name: 'Acme Plumbing', phone: '+12025550119' }, { headers: { 'idempotency-key': 'disk-full-1' } });
    t.is(keyed.status, 503);
  } finally {
    await free();
  }
  // Nothing of the refused write was kept: the same key now carries it out, once.
  const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, business_name: 'Acme Plumbing', phone: '+12025550119' }, { headers: { 'idempotency-key': 'disk-full-1' } });
  t.is(r.status, 201, r.text);
  t.is(r.headers.get('idempotent-replayed'), null);
  const refusedLines = svc.logs.lines.filter((l) => l.error_code === '53100' && l.msg === 'the database refuses the work for want of resources; answered 503');
  t.is(refusedLines.length, 4, 'one line per refused request, naming the SQLSTATE');
  t.deepEqual(stacks(), [], 'no stack logged');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('the dialler, refused mid-admission after its hold: one log line for the streak, backs off, and dials the call when space is back (not closed as lost)', async (t) => {
  // The earlier test's request is dialled first (else it, not this one, would be the one held).
  const undialled = async () => (await db.query(`SELECT count(*)::int AS n FROM calls WHERE status IN ('queued', 'dialing') AND dialed_at IS NULL`)).rows[0].n;
  await until('earlier requests to be dialled', async () => (await undialled()) === 0, 15_000);
  const before = svc.logs.lines.length;
  // The compliance record is written after the hold is taken and before the carrier is asked.
  const free = await refuseRowChange(db, { name: 'records_disk_full', table: 'call_compliance_records', event: 'INSERT', condition: 'true', message: DISK_FULL, sqlstate: '53100' });
  let callId: string;
  try {
    const r = await queue('+12025550131');
    t.is(r.status, 201, r.text);
    callId = r.body.id;
    await until('the dialler to be refused', () => svc.logs.lines.some((l) => l.event === 'database_out_of_resources'), 10_000);
    // At 100 ms a round, 2.5 s is 25 rounds without backoff; with it (100, 200, 400, 800, 1600 ms) about 5.
    await new Promise((r) => setTimeout(r, 2_500));
    const { rows } = await db.query(`SELECT status, dialed_at, claimed_by, waiting_reason, waiting_detail, attempts FROM calls WHERE id = $1`, [callId]);
    t.like(rows[0], { status: 'dialing', dialed_at: null }, 'held by its dialler, not closed');
    t.truthy(rows[0].claimed_by);
    const { rows: holds } = await db.query(`SELECT count(*)::int AS n FROM holds WHERE reference = $1`, [callId]);
    t.is(holds[0].n, 1, 'its hold is kept');
  } finally {
    await free();
  }
  const refused = svc.logs.lines.slice(before).filter((l) => l.event === 'database_out_of_resources');
  t.is(refused.length, 1, 'one line for the whole streak');
  t.like(refused[0], { level: 50, source: 'dialler', error_code: '53100' });
  t.false(JSON.stringify(refused[0]).includes('"stack"'));
  t.deepEqual(stacks(), [], 'no stack logged');

  // Space is back: the next round (within the 5 s cap) dials it, and it ends as calls end.
  const done = await dialUntilFinished(account, account.api, callId!, 20_000);
  t.not(done.outcome, 'failed', JSON.stringify(done));
  t.is(done.status, 'completed');
  // Its own round succeeds within the backoff's 5 s cap, and says so once.
  await until('the dialler to say the database takes its work again', () => svc.logs.lines.slice(before).some((l) => l.event === 'database_resources_back'), 10_000);
  t.like(
    svc.logs.lines.slice(before).filter((l) => l.event === 'database_resources_back'),
    [{ source: 'dialler', level: 30 }],
  );
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM call_compliance_records WHERE call_id = $1`, [callId!]);
  t.is(rows[0].n, 1);
  t.false(
    svc.logs.lines.some((l) => l.call_id === callId && /closed|lost/.test(String(l.msg))),
    'never closed as lost',
  );
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('a call the carrier placed whose record is refused (53100) goes on and is recorded when space is back', async (t) => {
  const free = await refuseRowChange(db, {
    name: 'dial_record_disk_full',
    table: 'calls',
    event: 'UPDATE',
    condition: 'NEW.dialed_at IS NOT NULL AND OLD.dialed_at IS NULL',
    message: DISK_FULL,
    sqlstate: '53100',
  });
  let callId: string;
  try {
    const r = await queue('+12025550141');
    callId = r.body.id;
    await until('the carrier to place the call', () => svc.logs.lines.some((l) => l.call_id === callId && l.msg === 'the call was placed but the database refused its record; it is written when the database takes it'), 10_000);
    const { rows } = await db.query(`SELECT status, dialed_at FROM calls WHERE id = $1`, [callId]);
    t.is(rows[0].dialed_at, null);
    t.not(rows[0].status, 'completed');
  } finally {
    await free();
  }
  await until('the record to be written', () => svc.logs.lines.some((l) => l.call_id === callId && l.msg === 'the record of a placed call was written'), 10_000);
  const { rows } = await db.query(`SELECT dialed_at, carrier_call_id FROM calls WHERE id = $1`, [callId!]);
  t.truthy(rows[0].dialed_at);
  t.truthy(rows[0].carrier_call_id);
  t.false(svc.logs.lines.some((l) => l.call_id === callId && l.msg === 'the carrier refused the call'));
  t.deepEqual(stacks(), [], 'no stack logged');
});

test.serial('the webhook sender whose attempt records are refused (53100): one line for the streak however many deliveries, none with a stack, and one when records go through again', async (t) => {
  const before = svc.logs.lines.length;
  const rx = await startReceiver();
  t.teardown(() => rx.close().catch(() => {}));
  t.is((await account.admin.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: rx.url, mode: 'test' })).status, 201);
  const rotate = () => account.admin.post(`/admin/v1/accounts/${account.id}/keys/${account.testKeyId}/rotate`);
  const free = await refuseRowChange(db, { name: 'attempts_disk_full', table: 'webhook_attempts', event: 'INSERT', condition: 'true', message: DISK_FULL, sqlstate: '53100' });
  try {
    for (let i = 0; i < 3; i++) await rotate();
    await until('three deliveries sent', () => rx.received.length >= 3, 10_000);
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    await free();
  }
  const since = () => svc.logs.lines.slice(before);
  t.like(
    since().filter((l) => l.event === 'database_out_of_resources'),
    [{ level: 50, source: 'webhook attempts', error_code: '53100' }],
  );
  t.deepEqual(stacks(), [], 'no stack logged');
  // Space is back: the next delivery's record goes through, and the streak's end is said once.
  await rotate();
  await until('the streak to end', () => since().some((l) => l.event === 'database_resources_back' && l.source === 'webhook attempts'), 10_000);
  t.is(since().filter((l) => l.event === 'database_resources_back' && l.source === 'webhook attempts').length, 1);
});
