import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { TestClock } from '../../runtime/clock.ts';

let svc: TestService;
/** Stands in for real time, which delivery runs on (never the test clock): these tests move it to reach retries. */
const wall = new TestClock();
test.before(async () => {
  // The sender runs only when asked, so retries follow `wall`, not the passing of real time.
  svc = await startTestService({ SWITCHBOARD_SENDER_POLL_MS: '3600000' }, { realClock: wall });
});
test.after.always(async () => {
  await svc?.stop();
});

const endpoints = (a: TestAccount) => `/admin/v1/accounts/${a.id}/webhook_endpoints`;
const send = (a: TestAccount) => a.admin.post('/admin/v1/webhooks/run');
const advance = async (_a: TestAccount, seconds: number) => void wall.advance(seconds * 1000);
const rotate = (a: TestAccount) => a.admin.post(`/admin/v1/accounts/${a.id}/keys/${a.testKeyId}/rotate`);
/** A fresh key.rotated event in test mode (rotating the key keeps the old secret valid for a day). */
async function anEvent(a: TestAccount) {
  await rotate(a);
}

/**
 * Verifies with the standardwebhooks package as a receiver would. These tests move the service's
 * real time (`wall`) forward, so the receiver's clock is set to the service's: the package checks
 * the timestamp against Date.now (its 5-minute tolerance has unit tests of its own).
 */
function verify(secret: string, r: { body: string; headers: Record<string, any> }) {
  const realNow = Date.now;
  Date.now = () => Number(r.headers['webhook-timestamp']) * 1000;
  try {
    return new Webhook(secret).verify(r.body, {
      'webhook-id': r.headers['webhook-id'],
      'webhook-timestamp': r.headers['webhook-timestamp'],
      'webhook-signature': r.headers['webhook-signature'],
    }) as any;
  } finally {
    Date.now = realNow;
  }
}

test.serial('an endpoint receives signed envelopes of its mode only; the secret is shown once', async (t) => {
  const a = await makeAccount(svc.url);
  const rx = await startReceiver();
  const created = await a.admin.post(endpoints(a), { url: rx.url, mode: 'test' });
  t.is(created.status, 201, created.text);
  t.regex(created.body.secret, /^whsec_[A-Za-z0-9+/=]+$/);
  t.deepEqual(created.body.event_types, []);
  const listed = await a.admin.get(endpoints(a));
  t.is(listed.body.data[0].secret, undefined);
  const liveHttp = await a.admin.post(endpoints(a), { url: rx.url, mode: 'live' });
  t.is(liveHttp.body.error.code, 'invalid_webhook_url', 'live endpoints must be https');

  await anEvent(a);
  await send(a);
  t.is(rx.received.length, 1);
  const r = rx.received[0];
  const payload = verify(created.body.secret, r);
  t.like(payload, { object: 'event', type: 'key.rotated', mode: 'test' });
  t.regex(payload.id, /^evt_[0-9a-f]+$/);
  t.is(r.headers['webhook-id'], payload.id);
  t.is(r.headers['x-svc-event-type'], 'key.rotated');
  t.is(r.headers['x-svc-mode'], 'test');
  t.is(r.headers['content-type'], 'application/json');
  const byRead = await a.api.get(`/v1/events/${payload.id}`);
  t.deepEqual(byRead.body, payload, 'the webhook carries the same envelope as GET /v1/events/{id}');
  t.throws(() => verify(created.body.secret, { ...r, body: r.body.replace('key.rotated', 'key.rotatex') }));
  await rx.close();
});

test.serial('event type filters: an endpoint gets only the types it chose; none means every type', async (t) => {
  const a = await makeAccount(svc.url);
  const only = await startReceiver();
  const all = await startReceiver();
  t.is((await a.admin.post(endpoints(a), { url: only.url, mode: 'test', event_types: ['call.completed'] })).status, 201);
  t.is((await a.admin.post(endpoints(a), { url: all.url, mode: 'test' })).status, 201);
  t.is((await a.admin.post(endpoints(a), { url: all.url, mode: 'test', event_types: ['call.complete'] })).body.error.code, 'invalid_event_type');
  await anEvent(a);
  await send(a);
  t.is(only.received.length, 0);
  t.is(all.received.length, 1);
  await only.close();
  await all.close();
});

test.serial('retries after 30 s, 2 min, 10 min, 1 h, 6 h; then dead; resend delivers it', async (t) => {
  const a = await makeAccount(svc.url);
  let healthy = false;
  const rx = await startReceiver(() => ({ status: healthy ? 200 : 500 }));
  const ep = (await a.admin.post(endpoints(a), { url: rx.url, mode: 'test' })).body;
  await anEvent(a);
  await send(a);
  t.is(rx.received.length, 1);
  for (const [wait, expected] of [
    [29, 1],
    [1, 2],
    [119, 2],
    [1, 3],
    [600, 4],
    [3600, 5],
    [21_600, 6],
    [100_000, 6],
  ] as const) {
    await advance(a, wait);
    await send(a);
    t.is(rx.received.length, expected, `after waiting ${wait}s`);
  }
  const deliveries = (await a.admin.get(`${endpoints(a)}/${ep.id}/deliveries`)).body.data;
  t.like(deliveries[0], { status: 'dead', attempts: 6, last_status_code: 500 });
  t.is(deliveries[0].attempt_log.length, 6);
  t.true(deliveries[0].attempt_log.every((x: any) => x.status_code === 500 && typeof x.duration_ms === 'number'));
  healthy = true;
  const resent = await a.admin.post(`${endpoints(a)}/${ep.id}/deliveries/${deliveries[0].id}/resend`);
  t.is(resent.body.status, 'pending');
  await send(a);
  t.is(rx.received.length, 7);
  t.is((await a.admin.get(`${endpoints(a)}/${ep.id}/deliveries`)).body.data[0].status, 'succeeded');
  t.is(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 1, 'every attempt carries the same event id');
  await rx.close();
});

test.serial('410 stops retries at once; 404 does not', async (t) => {
  const a = await makeAccount(svc.url);
  const gone = await startReceiver(() => ({ status: 410 }));
  const missing = await startReceiver(() => ({ status: 404 }));
  const g = (await a.admin.post(endpoints(a), { url: gone.url, mode: 'test' })).body;
  const m = (await a.admin.post(endpoints(a), { url: missing.url, mode: 'test' })).body;
  await anEvent(a);
  await send(a);
  await advance(a, 30);
  await send(a);
  t.is(gone.received.length, 1);
  t.is(missing.received.length, 2);
  t.like((await a.admin.get(`${endpoints(a)}/${g.id}/deliveries`)).body.data[0], { status: 'dead', attempts: 1, last_status_code: 410 });
  t.like((await a.admin.get(`${endpoints(a)}/${m.id}/deliveries`)).body.data[0], { status: 'failed', attempts: 2 });
  await gone.close();
  await missing.close();
});

test.serial('a slow endpoint does not delay another; a redirect is a failure and is not followed', async (t) => {
  const a = await makeAccount(svc.url);
  const slow = await startReceiver(() => ({ status: 200, delayMs: 1500 }));
  const fast = await startReceiver();
  const target = await startReceiver();
  const redirect = await startReceiver(() => ({ status: 302 }));
  await a.admin.post(endpoints(a), { url: slow.url, mode: 'test' });
  await a.admin.post(endpoints(a), { url: fast.url, mode: 'test' });
  const r = (await a.admin.post(endpoints(a), { url: redirect.url, mode: 'test' })).body;
  await anEvent(a);
  const started = Date.now();
  await send(a);
  t.is(fast.received.length, 1);
  t.true(fast.received[0].at - started < 1000, 'the fast endpoint did not wait for the slow one');
  t.is(slow.received.length, 1);
  t.is(target.received.length, 0);
  t.like((await a.admin.get(`${endpoints(a)}/${r.id}/deliveries`)).body.data[0], { status: 'failed', last_status_code: 302 });
  for (const rx of [slow, fast, target, redirect]) await rx.close();
});

test.serial('rolling a secret signs with both during the grace window, then only the new one', async (t) => {
  const a = await makeAccount(svc.url);
  const rx = await startReceiver();
  const ep = (await a.admin.post(endpoints(a), { url: rx.url, mode: 'test' })).body;
  const rolled = (await a.admin.post(`${endpoints(a)}/${ep.id}/roll_secret`, { grace_seconds: 3600 })).body;
  t.not(rolled.secret, ep.secret);
  t.truthy(rolled.previous_secret_expires_at);
  t.is((await a.admin.post(`${endpoints(a)}/${ep.id}/roll_secret`, { grace_seconds: 8 * 86_400 })).body.error.code, 'invalid_parameter');
  // That refused roll changed nothing: the rolled secret is still current.
  await anEvent(a);
  await send(a);
  const during = rx.received.at(-1)!;
  t.is(String(during.headers['webhook-signature']).split(' ').length, 2);
  t.truthy(verify(rolled.secret, during));
  t.truthy(verify(ep.secret, during), 'the old secret still verifies during the grace window');
  await advance(a, 3601);
  await anEvent(a);
  await send(a);
  const after = rx.received.at(-1)!;
  t.is(String(after.headers['webhook-signature']).split(' ').length, 1);
  t.truthy(verify(rolled.secret, after));
  t.throws(() => verify(ep.secret, after));
  await rx.close();
});

test.serial('a receiver that was down catches up through GET /v1/events: every event once, in order', async (t) => {
  const a = await makeAccount(svc.url);
  for (let i = 0; i < 7; i++) await anEvent(a);
  const seen: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await a.api.get(`/v1/events?order=asc&limit=3${cursor ? `&starting_after=${cursor}` : ''}`);
    seen.push(...page.body.data.map((e: any) => e.id));
    if (!page.body.has_more) break;
    cursor = page.body.data.at(-1).id;
  }
  t.is(seen.length, 7);
  t.is(new Set(seen).size, 7);
  const newestFirst = (await a.api.get('/v1/events')).body.data.map((e: any) => e.id);
  t.deepEqual(newestFirst, [...seen].reverse());
  // Reading forward from the last handled id yields only what came after it.
  await anEvent(a);
  const next = await a.api.get(`/v1/events?order=asc&starting_after=${seen.at(-1)}`);
  t.is(next.body.data.length, 1);
  t.is((await a.api.get('/v1/events?type=call.completed')).body.data.length, 0);
  t.is((await a.api.get('/v1/events/evt_nope')).body.error.code, 'event_not_found');
  const other = await makeAccount(svc.url);
  t.is((await other.api.get(`/v1/events/${seen[0]}`)).body.error.code, 'event_not_found', 'another account never sees them');
});

test.serial('a test endpoint never receives live events (and a live event only reaches live endpoints)', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const rx = await startReceiver();
  await a.admin.post(endpoints(a), { url: rx.url, mode: 'test' });
  const liveKey = (await a.admin.get(`/admin/v1/accounts/${a.id}/keys`)).body.data.find((k: any) => k.mode === 'live');
  await a.admin.post(`/admin/v1/accounts/${a.id}/keys/${liveKey.id}/rotate`);
  await send(a);
  t.is(rx.received.length, 0, 'the live key.rotated did not reach the test endpoint');
  t.is((await a.liveApi!.get('/v1/events?type=key.rotated')).body.data.length, 1, 'it is a live event');
  await anEvent(a);
  await send(a);
  t.is(rx.received.length, 1);
  t.is(JSON.parse(rx.received[0].body).mode, 'test');
  await rx.close();
});
