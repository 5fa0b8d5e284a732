import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { consoleAs } from '../helpers/console.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { call } from '../helpers/http.ts';

/*
 * Issue 21, Developers: a reseller's people create, rotate and revoke API keys, manage webhook
 * endpoints, watch deliveries with every attempt and resend one, and browse events, in the
 * console, without the operator. Only the session's account is ever reached.
 */

let svc: TestService;
test.before(async () => {
  // The sender runs only when a test asks (POST /admin/v1/webhooks/run), as the webhook tests do.
  svc = await startTestService({ SWITCHBOARD_SENDER_POLL_MS: '3600000' });
});
test.after.always(async () => svc?.stop());

const runSender = (a: TestAccount) => a.admin.post('/admin/v1/webhooks/run');
const me = (secret: string) => call(svc.url, 'GET', '/v1/me', { key: secret });

test('a key made in the console shows its secret once and works; rotation keeps the old secret for 24 hours; revocation stops both', async (t) => {
  const a = await makeAccount(svc.url);
  const dev = await consoleAs(svc.url, a.id, 'developer');
  const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const created = await dev.post('/console/api/keys', { mode: 'test', label: ' Backend ', scopes: ['customers:read', 'calls:read'], ip_allowlist: null, expires_at: expiresAt });
  t.is(created.status, 201, created.text);
  t.like(created.body, { object: 'api_key', account_id: a.id, mode: 'test', label: 'Backend', scopes: ['customers:read', 'calls:read'], previous_secret_expires_at: null });
  t.regex(created.body.secret, /^svc_test_/);
  t.is(created.body.expires_at, expiresAt);

  const listed = await dev.get('/console/api/keys');
  t.is(listed.status, 200);
  const row = listed.body.data.find((k: any) => k.id === created.body.id);
  t.truthy(row);
  t.false('secret' in row, 'the list never shows a secret');
  t.false(listed.text.includes(created.body.secret));
  t.is((await me(created.body.secret)).status, 200, 'the new key works on /v1/me');

  const rotated = await dev.post(`/console/api/keys/${created.body.id}/rotate`);
  t.is(rotated.status, 200, rotated.text);
  t.not(rotated.body.secret, created.body.secret);
  t.is(Date.parse(rotated.body.previous_secret_expires_at) - Date.parse(rotated.body.rotated_at), 24 * 3600_000, 'the answer says until when the old secret works');
  t.is((await me(created.body.secret)).status, 200, 'the old secret works during the grace');
  t.is((await me(rotated.body.secret)).status, 200);

  const revoked = await dev.delete(`/console/api/keys/${created.body.id}`);
  t.is(revoked.status, 200);
  t.truthy(revoked.body.revoked_at);
  t.false('secret' in revoked.body);
  for (const secret of [created.body.secret, rotated.body.secret]) t.is((await me(secret)).body.error.code, 'key_revoked');
  t.is((await dev.delete(`/console/api/keys/${created.body.id}`)).body.error.code, 'key_already_revoked');
});

test('key rules are the operator route\'s: a live key before business verification is kyb_incomplete; a bad scope, allowlist or expiry is refused', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const live = await owner.post('/console/api/keys', { mode: 'live', label: 'live' });
  t.is(live.status, 409);
  t.is(live.body.error.code, 'kyb_incomplete');
  t.is((await owner.post('/console/api/keys', { mode: 'test', label: 'x', scopes: ['everything'] })).body.error.code, 'invalid_scope');
  t.is((await owner.post('/console/api/keys', { mode: 'test', label: 'x', ip_allowlist: ['not an address'] })).body.error.code, 'invalid_ip_allowlist');
  t.is((await owner.post('/console/api/keys', { mode: 'test', label: 'x', expires_at: '2020-01-01T00:00:00Z' })).body.error.code, 'invalid_expires_at');
  t.is((await owner.post('/console/api/keys', { mode: 'test', label: 'x', ip_allowlist: ['203.0.113.0/24'] })).body.ip_allowlist[0], '203.0.113.0/24');
  await a.admin.post(`/admin/v1/accounts/${a.id}/kyb`, { status: 'verified' });
  t.is((await owner.post('/console/api/keys', { mode: 'live', label: 'live' })).status, 201, 'after verification, as today');
  t.deepEqual((await owner.get('/console/api/keys?mode=live')).body.data.map((k: any) => k.mode), ['live']);
  t.true((await owner.get('/console/api/keys?mode=test')).body.data.every((k: any) => k.mode === 'test'));
  t.is((await owner.get('/console/api/keys')).body.data.length, 3, 'both modes without mode');
});

test('roles: a viewer reads keys but cannot create one; billing cannot list keys', async (t) => {
  const a = await makeAccount(svc.url);
  const viewer = await consoleAs(svc.url, a.id, 'viewer');
  const billing = await consoleAs(svc.url, a.id, 'billing');
  const refused = await viewer.post('/console/api/keys', { mode: 'test', label: 'nope' });
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'role_forbidden');
  t.is((await viewer.get('/console/api/keys')).status, 200);
  t.is((await viewer.post(`/console/api/keys/${a.testKeyId}/rotate`)).body.error.code, 'role_forbidden');
  t.is((await viewer.post('/console/api/webhook_endpoints', { url: 'http://127.0.0.1:9/x', mode: 'test' })).body.error.code, 'role_forbidden');
  for (const path of ['/console/api/keys', '/console/api/webhook_endpoints', '/console/api/events']) {
    const r = await billing.get(path);
    t.is(r.status, 403, path);
    t.is(r.body.error.code, 'role_forbidden');
  }
});

test('a webhook endpoint made in the console: secret once, a test event arrives, a failure is logged with every attempt and a resend succeeds', async (t) => {
  const a = await makeAccount(svc.url);
  const dev = await consoleAs(svc.url, a.id, 'developer');
  let failing = false;
  const rx = await startReceiver(() => (failing ? { status: 500, body: 'receiver is down\u0000 for maintenance' } : { status: 200, body: 'thanks' }));
  t.teardown(() => rx.close());

  const created = await dev.post('/console/api/webhook_endpoints', { url: rx.url, mode: 'test', description: 'CRM sync' });
  t.is(created.status, 201, created.text);
  t.regex(created.body.secret, /^whsec_/);
  t.like(created.body, { object: 'webhook_endpoint', mode: 'test', url: rx.url, description: 'CRM sync', enabled: true, event_types: [] });
  const listed = await dev.get('/console/api/webhook_endpoints?mode=test');
  t.is(listed.body.data.length, 1);
  t.false('secret' in listed.body.data[0]);
  t.false('secret' in (await dev.get(`/console/api/webhook_endpoints/${created.body.id}`)).body);
  const id = created.body.id;

  const ping = await dev.post(`/console/api/webhook_endpoints/${id}/test_event`);
  t.is(ping.status, 201, ping.text);
  t.like(ping.body, { object: 'event', type: 'test.ping', mode: 'test' });
  await runSender(a);
  t.is(rx.received.length, 1);
  const delivered = new Webhook(created.body.secret).verify(rx.received[0]!.body, {
    'webhook-id': rx.received[0]!.headers['webhook-id'] as string,
    'webhook-timestamp': rx.received[0]!.headers['webhook-timestamp'] as string,
    'webhook-signature': rx.received[0]!.headers['webhook-signature'] as string,
  }) as any;
  t.is(delivered.id, ping.body.id);

  let deliveries = await dev.get(`/console/api/webhook_endpoints/${id}/deliveries`);
  t.is(deliveries.status, 200, deliveries.text);
  t.like(deliveries.body.data[0], { object: 'webhook_delivery', event_id: ping.body.id, event_type: 'test.ping', status: 'succeeded', attempts: 1 });
  t.like(deliveries.body.data[0].attempt_log[0], { attempt: 1, status_code: 200, response_excerpt: 'thanks', error: null });
  t.true(Number.isInteger(deliveries.body.data[0].attempt_log[0].duration_ms));
  t.truthy(Date.parse(deliveries.body.data[0].attempt_log[0].attempted_at));

  failing = true;
  const second = await dev.post(`/console/api/webhook_endpoints/${id}/test_event`);
  await runSender(a);
  deliveries = await dev.get(`/console/api/webhook_endpoints/${id}/deliveries`);
  const failed = deliveries.body.data[0];
  t.like(failed, { event_id: second.body.id, status: 'failed', last_status_code: 500 });
  t.like(failed.attempt_log[0], { attempt: 1, status_code: 500, response_excerpt: 'receiver is down  for maintenance' });

  failing = false;
  const resent = await dev.post(`/console/api/webhook_endpoints/${id}/deliveries/${failed.id}/resend`);
  t.is(resent.status, 200, resent.text);
  t.like(resent.body, { id: failed.id, status: 'pending' });
  await runSender(a);
  const after = (await dev.get(`/console/api/webhook_endpoints/${id}/deliveries`)).body.data[0];
  t.is(after.status, 'succeeded');
  t.deepEqual(
    after.attempt_log.map((x: any) => [x.status_code, x.response_excerpt]),
    [
      [500, 'receiver is down  for maintenance'],
      [200, 'thanks'],
    ],
    'every attempt is listed, the failure and the resend',
  );

  // Cursor pages, newest first.
  const page1 = await dev.get(`/console/api/webhook_endpoints/${id}/deliveries?limit=1`);
  t.is(page1.body.data.length, 1);
  t.true(page1.body.has_more);
  const page2 = await dev.get(`/console/api/webhook_endpoints/${id}/deliveries?limit=1&starting_after=${page1.body.data[0].id}`);
  t.is(page2.body.data[0].event_id, ping.body.id);
  t.false(page2.body.has_more);
  t.is((await dev.get(`/console/api/webhook_endpoints/${id}/deliveries?starting_after=00000000-0000-4000-8000-000000000000`)).body.error.code, 'invalid_cursor');
});

test("an endpoint's test event goes to that endpoint only, whatever event types it chose", async (t) => {
  const a = await makeAccount(svc.url);
  const dev = await consoleAs(svc.url, a.id, 'developer');
  const picky = await startReceiver();
  const other = await startReceiver();
  t.teardown(() => Promise.all([picky.close(), other.close()]));
  const target = (await dev.post('/console/api/webhook_endpoints', { url: picky.url, mode: 'test', event_types: ['call.completed'] })).body;
  await dev.post('/console/api/webhook_endpoints', { url: other.url, mode: 'test' });
  const ping = await dev.post(`/console/api/webhook_endpoints/${target.id}/test_event`);
  t.is(ping.status, 201);
  await runSender(a);
  t.is(picky.received.length, 1);
  t.is(JSON.parse(picky.received[0]!.body).id, ping.body.id);
  t.is(other.received.length, 0, 'no other endpoint gets it');
});

test('an endpoint moved to the other mode never gets an event of its old mode, not even a resend', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const rx = await startReceiver(() => ({ status: 503 }));
  t.teardown(() => rx.close());
  const endpoint = (await owner.post('/console/api/webhook_endpoints', { url: rx.url, mode: 'test' })).body;
  await owner.post(`/console/api/webhook_endpoints/${endpoint.id}/test_event`);
  await runSender(a);
  const failed = (await owner.get(`/console/api/webhook_endpoints/${endpoint.id}/deliveries`)).body.data[0];
  t.is(failed.status, 'failed');
  t.is((await owner.patch(`/console/api/webhook_endpoints/${endpoint.id}`, { mode: 'live' })).body.error.code, 'invalid_webhook_url', 'live needs https');
  const moved = await owner.patch(`/console/api/webhook_endpoints/${endpoint.id}`, { mode: 'live', url: 'https://127.0.0.1:9/hook' });
  t.is(moved.status, 200, moved.text);
  t.is(moved.body.mode, 'live');
  await owner.post(`/console/api/webhook_endpoints/${endpoint.id}/deliveries/${failed.id}/resend`);
  await runSender(a);
  const after = (await owner.get(`/console/api/webhook_endpoints/${endpoint.id}/deliveries`)).body.data[0];
  t.like(after, { id: failed.id, status: 'dead', last_error: 'endpoint moved to live mode; test events are not sent to it' });
  t.is(rx.received.length, 1, 'only the attempt made while it was a test endpoint');
});

test('an endpoint is edited (URL, types, description, enabled), rolled with a grace of up to a week, and deleted; live waits for go-live', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const created = (await owner.post('/console/api/webhook_endpoints', { url: rx.url, mode: 'test' })).body;

  const patched = await owner.patch(`/console/api/webhook_endpoints/${created.id}`, { url: `${rx.url}/v2`, event_types: ['call.completed'], description: 'calls only', enabled: false });
  t.is(patched.status, 200, patched.text);
  t.like(patched.body, { url: `${rx.url}/v2`, event_types: ['call.completed'], description: 'calls only', enabled: false });
  t.is((await owner.patch(`/console/api/webhook_endpoints/${created.id}`, { event_types: ['no.such'] })).body.error.code, 'invalid_event_type');
  const toLive = await owner.patch(`/console/api/webhook_endpoints/${created.id}`, { mode: 'live' });
  t.is(toLive.status, 403);
  t.is(toLive.body.error.code, 'live_not_enabled');
  t.is((await owner.post('/console/api/webhook_endpoints', { url: 'https://hooks.example.com/x', mode: 'live' })).body.error.code, 'live_not_enabled');

  const before = Date.now();
  const week = await owner.post(`/console/api/webhook_endpoints/${created.id}/roll_secret`, { grace_seconds: 604_800 });
  t.is(week.status, 200, week.text);
  t.regex(week.body.secret, /^whsec_/);
  t.not(week.body.secret, created.secret);
  const graceMs = Date.parse(week.body.previous_secret_expires_at) - before;
  t.true(graceMs >= 604_800_000 - 1000 && graceMs <= 604_800_000 + 60_000, `a week of grace, got ${graceMs} ms`);
  const tooLong = await owner.post(`/console/api/webhook_endpoints/${created.id}/roll_secret`, { grace_seconds: 604_801 });
  t.is(tooLong.status, 400);
  t.is(tooLong.body.error.code, 'invalid_parameter');
  const byDefault = await owner.post(`/console/api/webhook_endpoints/${created.id}/roll_secret`, {});
  const defaultMs = Date.parse(byDefault.body.previous_secret_expires_at) - Date.now();
  t.true(defaultMs > 86_300_000 && defaultMs <= 86_400_000, 'a day of grace by default');
  const none = await owner.post(`/console/api/webhook_endpoints/${created.id}/roll_secret`, { grace_seconds: 0 });
  t.is(none.body.previous_secret_expires_at, null);

  const deleted = await owner.delete(`/console/api/webhook_endpoints/${created.id}`);
  t.deepEqual(deleted.body, { object: 'webhook_endpoint', id: created.id, deleted: true });
  t.is((await owner.get(`/console/api/webhook_endpoints/${created.id}`)).body.error.code, 'webhook_endpoint_not_found');
});

test('the events browser lists the account\'s events of a mode, newest first, filtered by type, and opens one', async (t) => {
  const a = await makeAccount(svc.url);
  const viewer = await consoleAs(svc.url, a.id, 'viewer');
  const owner = await consoleAs(svc.url, a.id, 'owner');
  await owner.post(`/console/api/keys/${a.testKeyId}/rotate`);
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  const endpoint = (await owner.post('/console/api/webhook_endpoints', { url: rx.url, mode: 'test' })).body;
  const ping = (await owner.post(`/console/api/webhook_endpoints/${endpoint.id}/test_event`)).body;

  const all = await viewer.get('/console/api/events?mode=test');
  t.is(all.status, 200, all.text);
  t.deepEqual(all.body.data.map((e: any) => e.type), ['test.ping', 'key.rotated']);
  const rotations = await viewer.get('/console/api/events?type=key.rotated');
  t.deepEqual(rotations.body.data.map((e: any) => e.type), ['key.rotated']);
  t.is(rotations.body.data[0].data.id, a.testKeyId);
  const page = await viewer.get(`/console/api/events?limit=1&starting_after=${ping.id}`);
  t.deepEqual(page.body.data.map((e: any) => e.type), ['key.rotated']);
  t.deepEqual((await viewer.get('/console/api/events?mode=live')).body.data, [], 'live events of an account not live: none');
  const one = await viewer.get(`/console/api/events/${ping.id}`);
  t.deepEqual(one.body, ping);
  t.is((await viewer.get(`/console/api/events/${ping.id}?mode=live`)).body.error.code, 'event_not_found');
});

test('BOLA: another account\'s key, endpoint, delivery and event ids answer 404 on every console route', async (t) => {
  const a = await makeAccount(svc.url);
  const b = await makeAccount(svc.url);
  const rx = await startReceiver();
  t.teardown(() => rx.close());
  // Account B's objects, made by its operator routes.
  const bEndpoint = (await b.admin.post(`/admin/v1/accounts/${b.id}/webhook_endpoints`, { url: rx.url, mode: 'test' })).body;
  const bEvent = (await b.admin.post(`/admin/v1/accounts/${b.id}/test_events`, { mode: 'test' })).body;
  await runSender(b);
  const bDelivery = (await b.admin.get(`/admin/v1/accounts/${b.id}/webhook_endpoints/${bEndpoint.id}/deliveries`)).body.data[0];
  t.truthy(bDelivery, 'B has a delivery');

  // A's own endpoint, to try B's delivery under it too.
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const aEndpoint = (await owner.post('/console/api/webhook_endpoints', { url: rx.url, mode: 'test' })).body;

  const tries: [string, () => Promise<{ status: number; body: any }>, string][] = [
    ['rotate key', () => owner.post(`/console/api/keys/${b.testKeyId}/rotate`), 'key_not_found'],
    ['revoke key', () => owner.delete(`/console/api/keys/${b.testKeyId}`), 'key_not_found'],
    ['get endpoint', () => owner.get(`/console/api/webhook_endpoints/${bEndpoint.id}`), 'webhook_endpoint_not_found'],
    ['patch endpoint', () => owner.patch(`/console/api/webhook_endpoints/${bEndpoint.id}`, { description: 'mine' }), 'webhook_endpoint_not_found'],
    ['delete endpoint', () => owner.delete(`/console/api/webhook_endpoints/${bEndpoint.id}`), 'webhook_endpoint_not_found'],
    ['roll secret', () => owner.post(`/console/api/webhook_endpoints/${bEndpoint.id}/roll_secret`, {}), 'webhook_endpoint_not_found'],
    ['test event', () => owner.post(`/console/api/webhook_endpoints/${bEndpoint.id}/test_event`), 'webhook_endpoint_not_found'],
    ['deliveries', () => owner.get(`/console/api/webhook_endpoints/${bEndpoint.id}/deliveries`), 'webhook_endpoint_not_found'],
    ['resend under B', () => owner.post(`/console/api/webhook_endpoints/${bEndpoint.id}/deliveries/${bDelivery.id}/resend`), 'webhook_endpoint_not_found'],
    ['resend under A', () => owner.post(`/console/api/webhook_endpoints/${aEndpoint.id}/deliveries/${bDelivery.id}/resend`), 'webhook_delivery_not_found'],
    ['event', () => owner.get(`/console/api/events/${bEvent.id}`), 'event_not_found'],
    ['made-up key id', () => owner.post('/console/api/keys/not-a-key/rotate'), 'key_not_found'],
    ['made-up endpoint id', () => owner.get('/console/api/webhook_endpoints/nope'), 'webhook_endpoint_not_found'],
  ];
  for (const [what, go, code] of tries) {
    const r = await go();
    t.is(r.status, 404, what);
    t.is(r.body.error?.code, code, what);
  }
  // Lists show only A's objects; B's are untouched.
  t.false((await owner.get('/console/api/keys')).body.data.some((k: any) => k.id === b.testKeyId));
  t.false((await owner.get('/console/api/webhook_endpoints')).body.data.some((e: any) => e.id === bEndpoint.id));
  t.false((await owner.get('/console/api/events')).body.data.some((e: any) => e.id === bEvent.id));
  t.is((await b.api.get('/v1/me')).status, 200, "B's key still works");
  t.like((await b.admin.get(`/admin/v1/accounts/${b.id}/webhook_endpoints/${bEndpoint.id}`)).body, { description: null, enabled: true });
});
