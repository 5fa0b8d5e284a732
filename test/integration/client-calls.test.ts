/**
 * The typed client (clients/typescript, issue 26) through a whole test call: queued, dialled to
 * its outcome, its recording downloaded as bytes, its `call.completed` delivered to a real HTTP
 * receiver during a secret roll and verified by `client.webhooks.verify` with either secret.
 */
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { webhookHeaders } from '../../actors/webhooks/signing.ts';
import { Client, WebhookVerificationError } from '../../clients/typescript/src/index.ts';

const NEVER_MS = '3600000';
let svc: TestService;
let account: TestAccount;
let client: Client;
let ready: { id: string };

test.before(async () => {
  // The dialler and the webhook sender run when the test asks; deliveries are stamped with real time.
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: NEVER_MS, SWITCHBOARD_SENDER_POLL_MS: NEVER_MS });
  account = await makeAccount(svc.url);
  client = new Client({ apiKey: account.testKey, baseUrl: svc.url });
  ready = await makeReadyCustomer(svc.url, account.api);
  // A Tuesday, 15:00 UTC: 10:00 in New York, inside every US calling window.
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await svc?.stop();
});

test.serial('a test call to its outcome, its recording as bytes, and its call.completed verified from a real delivery during a secret roll', async (t) => {
  const rx = await startReceiver();
  const endpoints = `/admin/v1/accounts/${account.id}/webhook_endpoints`;
  const endpoint = (await account.admin.post(endpoints, { url: rx.url, mode: 'test', event_types: ['call.completed'] })).body;
  // Rolled before the call: its delivery carries two signatures, one per secret.
  const rolled = (await account.admin.post(`${endpoints}/${endpoint.id}/roll_secret`, { grace_seconds: 3600 })).body;
  const queued = await client.queueCall({ body: { called_party: 'business', customer_id: ready.id, business_name: 'Acme Plumbing', phone: '+12025550101' } });
  t.is(queued.status, 'queued');
  await dialUntilFinished(account, account.api, queued.id);
  const call = await client.getCall({ params: { path: { id: queued.id } } });
  t.like(call, { id: queued.id, finished: true, outcome: 'appointment_booked' });

  const recording = await client.getRecording({ params: { path: { id: queued.id } } });
  t.true(recording instanceof Uint8Array);
  t.is(Buffer.from(recording.subarray(0, 4)).toString('latin1'), 'RIFF', 'WAV bytes, not parsed');
  t.is(Buffer.from(recording.subarray(8, 12)).toString('latin1'), 'WAVE');

  const delivered = () => rx.received.find((r) => r.headers['x-svc-event-type'] === 'call.completed');
  for (let i = 0; i < 100 && !delivered(); i++) {
    await account.admin.post('/admin/v1/webhooks/run');
    await new Promise((r) => setTimeout(r, 50));
  }
  const delivery = delivered();
  await rx.close();
  if (!delivery) return t.fail('no call.completed delivery arrived');
  t.is(String(delivery.headers['webhook-signature']).split(' ').length, 2);

  for (const secret of [rolled.secret, endpoint.secret, [endpoint.secret, rolled.secret]]) {
    const event = client.webhooks.verify(delivery.body, delivery.headers, secret);
    if (event.type !== 'call.completed') return t.fail(`verified a ${event.type}`);
    t.deepEqual(event.data, call, 'the event carries what getCall answers');
  }
  // Fetch's Headers do as well as Node's.
  t.is(client.webhooks.verify(delivery.body, new Headers(delivery.headers as Record<string, string>), rolled.secret).id, String(delivery.headers['webhook-id']));

  const wrong = 'whsec_' + Buffer.alloc(24, 9).toString('base64');
  t.throws(() => client.webhooks.verify(delivery.body, delivery.headers, wrong), { instanceOf: WebhookVerificationError, message: /no signature matches/ });
  t.throws(() => client.webhooks.verify(delivery.body.replace('appointment_booked', 'not_interested'), delivery.headers, rolled.secret), { instanceOf: WebhookVerificationError });
  const sentAt = Number(delivery.headers['webhook-timestamp']) * 1000;
  t.throws(() => client.webhooks.verify(delivery.body, delivery.headers, rolled.secret, { now: new Date(sentAt + 301_000) }), { instanceOf: WebhookVerificationError, message: /too far/ });
  t.throws(() => client.webhooks.verify(delivery.body, delivery.headers, rolled.secret, { now: new Date(sentAt - 301_000) }), { instanceOf: WebhookVerificationError, message: /too far/ });
  t.notThrows(() => client.webhooks.verify(delivery.body, delivery.headers, rolled.secret, { now: new Date(sentAt + 299_000) }));

  // The same event by read, through the auto-paging list.
  const seen: string[] = [];
  for await (const e of client.listEvents({ params: { query: { type: 'call.completed' } } })) seen.push(e.id);
  t.true(seen.includes(String(delivery.headers['webhook-id'])));
});

test.serial('an event of a type this client does not know passes verification as sent', async (t) => {
  const secret = 'whsec_' + Buffer.alloc(24, 3).toString('base64');
  const body = JSON.stringify({ id: 'evt_future', object: 'event', type: 'future.thing', mode: 'test', created_at: new Date().toISOString(), data: { anything: 1 } });
  // Signed as the service signs (actors/webhooks/signing.ts).
  const headers = webhookHeaders({ id: 'evt_future', timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: [secret], eventType: 'future.thing', mode: 'test' });
  const event = client.webhooks.verify(Buffer.from(body), headers, secret);
  t.is(event.type as string, 'future.thing');
  t.deepEqual(event.data, { anything: 1 });
});
