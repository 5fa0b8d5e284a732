import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { cleanUpEverything, makeTempRoot, startSwitchboard, type Instance } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';
import { client } from '../helpers/http.ts';

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

/** A receiver whose behaviour can change; it can be stopped and restarted on the same port. */
async function receiver(port = 0) {
  const bodies: { id: string; body: string; headers: http.IncomingHttpHeaders }[] = [];
  let mode: 'ok' | 'hang' = 'ok';
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      bodies.push({ id: String(req.headers['webhook-id']), body, headers: req.headers });
      if (mode === 'ok') res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    bodies,
    set: (m: 'ok' | 'hang') => (mode = m),
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

test.serial('a sender killed mid-delivery: after restart the event is still delivered, verifiably', async (t) => {
  const databaseUrl = await freshDatabase();
  const rx = await receiver();
  rx.set('hang');
  const a = await start(databaseUrl);
  const con = client(a.url, TOKEN);
  const account = (await con.post('/admin/v1/accounts', { name: 'Hooks', country: 'US' })).body;
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'k' })).body;
  const endpoint = (await con.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: `http://127.0.0.1:${rx.port}/hook`, mode: 'test' })).body;
  await con.post(`/admin/v1/accounts/${account.id}/keys/${key.id}/rotate`);
  await until('the first attempt to reach the receiver', () => rx.bodies.length === 1);
  await a.stop('SIGKILL');

  rx.set('ok');
  const b = await start(databaseUrl);
  const con2 = client(b.url, TOKEN);
  // The dead sender's claim runs out after a minute of real time (moving the test clock does not
  // hasten it); then the delivery is anyone's again.
  await con2.post('/admin/v1/test_clock/advance', { seconds: 3600 });
  await until('the delivery to be retried', () => rx.bodies.length >= 2, 90_000);
  const deliveries = async () => (await con2.get(`/admin/v1/accounts/${account.id}/webhook_endpoints/${endpoint.id}/deliveries`)).body.data;
  await until('the delivery to succeed', async () => (await deliveries())[0]?.status === 'succeeded');
  t.is(rx.bodies[0].id, rx.bodies[1].id, 'the same event, at least once');
  const last = rx.bodies.at(-1)!;
  // Verified at real time: the test clock moved an hour, the signature's timestamp did not.
  t.like(new Webhook(endpoint.secret).verify(last.body, last.headers as any), { type: 'key.rotated', mode: 'test' });
  await b.stop('SIGTERM');
  await rx.close();
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
