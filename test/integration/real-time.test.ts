import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { startTestService, type TestService } from '../helpers/service.ts';
import { adminClient, makeAccount } from '../helpers/factories.ts';
import { startReceiver } from '../helpers/receiver.ts';

/**
 * The test clock moves test-mode schedules only (DESIGN: "live facts, webhook timestamps and
 * signatures always use real time"). Each test first moves the shared test clock hours ahead,
 * then checks that what a receiver or a record of the live world carries is on real time.
 */
let svc: TestService;
test.before(async () => {
  // The sender runs only when asked.
  svc = await startTestService({ SWITCHBOARD_SENDER_POLL_MS: '3600000' });
});
test.after.always(async () => {
  await svc?.stop();
});

const HOURS_AHEAD = 6;
const con = () => adminClient(svc.url);
async function moveTestClock(): Promise<Date> {
  const r = await con().post('/admin/v1/test_clock/advance', { seconds: HOURS_AHEAD * 3600 });
  return new Date(r.body.now);
}
/** Within a minute of real time (and so far from the moved test clock). */
function isRealTime(t: { true: (v: boolean, m?: string) => void }, iso: string, what: string) {
  t.true(Math.abs(Date.parse(iso) - Date.now()) < 60_000, `${what} (${iso}) is real time, not the test clock`);
}

test.serial('after the test clock moves hours ahead, a webhook verifies with the standardwebhooks package at real time', async (t) => {
  const clockNow = await moveTestClock();
  t.true(clockNow.getTime() - Date.now() > (HOURS_AHEAD - 1) * 3600_000, 'the test clock is hours ahead');
  const a = await makeAccount(svc.url);
  const rx = await startReceiver();
  const ep = (await a.admin.post(`/admin/v1/accounts/${a.id}/webhook_endpoints`, { url: rx.url, mode: 'test' })).body;
  await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}/rotate`);
  await a.admin.post('/admin/v1/webhooks/run');
  t.is(rx.received.length, 1, 'the delivery is due at once on real time');
  const r = rx.received[0];
  isRealTime(t, new Date(Number(r.headers['webhook-timestamp']) * 1000).toISOString(), 'webhook-timestamp');
  // No clock is faked here: the package checks the timestamp against the real Date.now.
  const payload = new Webhook(ep.secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as any;
  t.like(payload, { type: 'key.rotated', mode: 'test' });
  const delivery = (await a.admin.get(`/admin/v1/accounts/${a.id}/webhook_endpoints/${ep.id}/deliveries`)).body.data[0];
  t.is(delivery.status, 'succeeded');
  await rx.close();
});

test.serial('signing the agreement and going live after the test clock moved are dated on real time', async (t) => {
  await moveTestClock();
  const account = (await con().post('/admin/v1/accounts', { name: 'Clock Agency', country: 'US' })).body;
  await con().post(`/admin/v1/accounts/${account.id}/kyb`, { status: 'verified' });
  const signed = await con().post(`/admin/v1/accounts/${account.id}/agreement`, { version: '2026-08' });
  t.is(signed.status, 200, signed.text);
  isRealTime(t, signed.body.onboarding.agreement_signed_at, 'agreement_signed_at');
  isRealTime(t, signed.body.onboarding.agreement_history[0].signed_at, 'the agreement history');
  const live = await con().post(`/admin/v1/accounts/${account.id}/go_live`);
  t.is(live.status, 200, live.text);
  isRealTime(t, live.body.went_live_at, 'went_live_at');
});

test.serial('a failed delivery is retried on real time: moving the test clock an hour does not bring its retry', async (t) => {
  const a = await makeAccount(svc.url);
  const rx = await startReceiver(() => ({ status: 500 }));
  const ep = (await a.admin.post(`/admin/v1/accounts/${a.id}/webhook_endpoints`, { url: rx.url, mode: 'test' })).body;
  await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}/rotate`);
  await a.admin.post('/admin/v1/webhooks/run');
  t.is(rx.received.length, 1);
  await con().post('/admin/v1/test_clock/advance', { seconds: 3600 });
  await a.admin.post('/admin/v1/webhooks/run');
  t.is(rx.received.length, 1, 'the first retry is 30 s of real time away');
  const delivery = (await a.admin.get(`/admin/v1/accounts/${a.id}/webhook_endpoints/${ep.id}/deliveries`)).body.data[0];
  t.like(delivery, { status: 'failed', attempts: 1 });
  const due = Date.parse(delivery.next_attempt_at) - Date.now();
  t.true(due > 0 && due <= 30_000, `the retry is due ${due} ms from now, on real time`);
  await rx.close();
});
