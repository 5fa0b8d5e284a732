import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { cleanUpEverything, makeTempRoot, startSwitchboard, type Instance } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';
import { client } from '../helpers/http.ts';
import { DELIVERY_TIMEOUT_MS, RETRY_SCHEDULE_MS } from '../../actors/webhooks/deliver.ts';

/**
 * Webhooks across process deaths and receiver outages. Delivery runs on real time, never on the
 * test clock (docs/decisions.md, "Real time and the test clock"), so these tests wait for the
 * claim to run out and for the first retry as a receiver would.
 */
const TOKEN = 'sbc_e2e_webhooks_console_token_JzTdI6fAMFLm';
test.after.always(cleanUpEverything);

async function start(databaseUrl: string): Promise<Instance> {
  return startSwitchboard({
    dataDir: await makeTempRoot('switchboard-webhooks-'),
    env: {
      DATABASE_URL: databaseUrl,
      SWITCHBOARD_ADMIN_TOKEN: TOKEN,
      SWITCHBOARD_TEST_CLOCK: '1',
      SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '1',
      SWITCHBOARD_SENDER_POLL_MS: '100',
      SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
    },
  });
}

/**
 * How the receiver answers a request: at once (`ok`), never (`hang`), or 200 after `delayMs`.
 * A function of the request's index (0 for the first) lets one receiver answer some and not others.
 */
type Answer = 'ok' | 'hang' | { delayMs: number };

/** A receiver whose behaviour can change; it can be stopped and restarted on the same port. */
async function receiver(port = 0) {
  const bodies: { id: string; body: string; headers: http.IncomingHttpHeaders; at: number }[] = [];
  /** Webhook ids answered 200 (an answer the sender may no longer be waiting for included). */
  const answered: string[] = [];
  let mode: Answer | ((index: number) => Answer) = 'ok';
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const index = bodies.push({ id, body, headers: req.headers, at: Date.now() }) - 1;
      const answer = typeof mode === 'function' ? mode(index) : mode;
      if (answer === 'hang') return;
      const reply = () => {
        if (res.destroyed) return;
        answered.push(id);
        res.writeHead(200).end();
      };
      if (answer === 'ok') reply();
      else setTimeout(reply, answer.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    bodies,
    answered,
    set: (m: typeof mode) => (mode = m),
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

async function until(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('a sender killed mid-batch: after restart every event of the batch is delivered once, verifiably', async (t) => {
  const databaseUrl = await freshDatabase();
  const rx = await receiver();
  t.teardown(() => rx.close());
  // Of a batch of 10 events, the first 4 requests are answered; the other 6 hang until the sender is killed.
  const BATCH = 10;
  const ANSWERED_BEFORE_KILL = 4;
  rx.set((i) => (i < ANSWERED_BEFORE_KILL ? 'ok' : 'hang'));
  const a = await start(databaseUrl);
  const con = client(a.url, TOKEN);
  const account = (await con.post('/admin/v1/accounts', { name: 'Hooks', country: 'US' })).body;
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'k' })).body;
  const endpoint = (await con.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: `http://127.0.0.1:${rx.port}/hook`, mode: 'test' })).body;
  for (let i = 0; i < BATCH; i++) await con.post(`/admin/v1/accounts/${account.id}/keys/${key.id}/rotate`);
  await until('every event of the batch to reach the receiver', () => rx.bodies.length === BATCH);
  const deliveries = async (c = con) => (await c.get(`/admin/v1/accounts/${account.id}/webhook_endpoints/${endpoint.id}/deliveries?limit=100`)).body.data as any[];
  await until('the answered ones to be recorded', async () => (await deliveries()).filter((d) => d.status === 'succeeded').length === ANSWERED_BEFORE_KILL);
  await a.stop('SIGKILL');

  rx.set('ok');
  const b = await start(databaseUrl);
  const con2 = client(b.url, TOKEN);
  // The dead sender's claims run out after a minute of real time (moving the test clock does not
  // hasten them); then the deliveries are anyone's again.
  await con2.post('/admin/v1/test_clock/advance', { seconds: 3600 });
  await until('every delivery to succeed', async () => (await deliveries(con2)).filter((d) => d.status === 'succeeded').length === BATCH, 90_000);
  const ids = [...new Set(rx.bodies.map((r) => r.id))];
  t.is(ids.length, BATCH, 'ten events');
  // Delivered once each: answered 200 exactly once per event; the 4 answered before the kill were not sent again.
  for (const id of ids) t.is(rx.answered.filter((x) => x === id).length, 1, `event ${id} answered once`);
  t.is(rx.bodies.length, BATCH + (BATCH - ANSWERED_BEFORE_KILL), 'only the 6 in flight at the kill were sent again');
  // An attempt cut short by the kill left no record (the sender died before writing it): each
  // delivery shows the one attempt that was answered.
  t.deepEqual((await deliveries(con2)).map((d) => [d.status, d.attempts]), Array(BATCH).fill(['succeeded', 1]));
  const last = rx.bodies.at(-1)!;
  // Verified at real time: the test clock moved an hour, the signature's timestamp did not.
  t.like(new Webhook(endpoint.secret).verify(last.body, last.headers as any), { type: 'key.rotated', mode: 'test' });
  await b.stop('SIGTERM');
});

test.serial('a receiver answering after 9 s is delivered once; one answering after 11 s (past the 10 s timeout) is retried 30 s later and delivered once', async (t) => {
  t.is(DELIVERY_TIMEOUT_MS, 10_000, "the sender's timeout (actors/webhooks/deliver.ts)");
  t.is(RETRY_SCHEDULE_MS[0], 30_000, 'the first retry');
  const databaseUrl = await freshDatabase();
  const slow = await receiver();
  slow.set({ delayMs: 9_000 });
  const late = await receiver();
  // Past the timeout the first time; in time (9 s) on the retry.
  late.set((i) => ({ delayMs: i === 0 ? 11_000 : 9_000 }));
  const sb = await start(databaseUrl);
  const con = client(sb.url, TOKEN);
  const account = (await con.post('/admin/v1/accounts', { name: 'Slow', country: 'US' })).body;
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'k' })).body;
  const hook = async (port: number) => (await con.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: `http://127.0.0.1:${port}/hook`, mode: 'test' })).body;
  const slowEndpoint = await hook(slow.port);
  const lateEndpoint = await hook(late.port);
  await con.post(`/admin/v1/accounts/${account.id}/keys/${key.id}/rotate`);
  const delivery = async (endpoint: { id: string }) => (await con.get(`/admin/v1/accounts/${account.id}/webhook_endpoints/${endpoint.id}/deliveries`)).body.data[0];

  await until('the slow receiver to be delivered', async () => (await delivery(slowEndpoint))?.status === 'succeeded', 30_000);
  t.like(await delivery(slowEndpoint), { status: 'succeeded', attempts: 1 });
  await until('the late receiver’s first attempt to time out', async () => (await delivery(lateEndpoint))?.attempts === 1 && (await delivery(lateEndpoint)).status === 'failed', 30_000);
  const failed = await delivery(lateEndpoint);
  t.regex(failed.last_error, /time/i);
  t.log(`the timed-out attempt: ${failed.last_error}`);
  await until('the late receiver’s retry to succeed', async () => (await delivery(lateEndpoint))?.status === 'succeeded', 90_000);
  t.like(await delivery(lateEndpoint), { status: 'succeeded', attempts: 2 });
  const gapMs = late.bodies[1].at - late.bodies[0].at;
  t.log(`the retry came ${gapMs} ms after the first attempt (10 s timeout + 30 s)`);
  t.true(gapMs >= DELIVERY_TIMEOUT_MS + RETRY_SCHEDULE_MS[0] - 1_000 && gapMs < DELIVERY_TIMEOUT_MS + RETRY_SCHEDULE_MS[0] + 15_000, `on the schedule (${gapMs} ms)`);
  // Nothing more comes: the slow one was not retried while it answered, the late one not after its success.
  await new Promise((r) => setTimeout(r, 3_000));
  t.is(slow.bodies.length, 1, 'the slow receiver got the event once');
  t.is(late.bodies.length, 2, 'the late receiver got the timed-out attempt and the retry');
  t.is(late.bodies[0].id, late.bodies[1].id, 'the same event');
  t.is((await delivery(lateEndpoint)).attempts, 2);
  await sb.stop('SIGTERM');
  await slow.close();
  await late.close();
});

test.serial('a receiver that is down and comes back gets the event on the retry schedule', async (t) => {
  const databaseUrl = await freshDatabase();
  let rx = await receiver();
  const port = rx.port;
  const sb = await start(databaseUrl);
  const con = client(sb.url, TOKEN);
  const account = (await con.post('/admin/v1/accounts', { name: 'Down', country: 'US' })).body;
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'k' })).body;
  const endpoint = (await con.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: `http://127.0.0.1:${port}/hook`, mode: 'test' })).body;
  await rx.close();
  await con.post(`/admin/v1/accounts/${account.id}/keys/${key.id}/rotate`);
  const deliveries = async () => (await con.get(`/admin/v1/accounts/${account.id}/webhook_endpoints/${endpoint.id}/deliveries`)).body.data;
  await until('the first attempt to fail', async () => (await deliveries())[0]?.attempts === 1);
  const failed = (await deliveries())[0];
  t.is(failed.status, 'failed');
  t.regex(failed.last_error, /ECONNREFUSED|refused/i);
  rx = await receiver(port);
  // The first retry comes 30 s of real time after the failure.
  await until('the retry to succeed', async () => (await deliveries())[0]?.status === 'succeeded', 60_000);
  t.is(rx.bodies.length, 1);
  t.is((await deliveries())[0].attempts, 2);
  await sb.stop('SIGTERM');
  await rx.close();
});
