import test from 'ava';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { consoleAs, type ConsoleClient } from '../helpers/console.ts';
import { startReceiver } from '../helpers/receiver.ts';

/**
 * Test clocks of an account (issue 21), as Stripe's: a test customer on a clock has its test
 * records' schedules (calling window, retries, holds, renewals) run on the clock's frozen time;
 * advancing the clock runs what fell due before it answers. The service's own (shared) test clock
 * is never moved here: the process clock stays on real time, so whatever happens on a clock's
 * time happened because of the clock.
 */
let svc: TestService;
test.before(async () => {
  // Nothing runs on its own schedule: what is dialled or released is the advance's doing.
  svc = await startTestService({
    SWITCHBOARD_DIALLER_POLL_MS: '3600000',
    SWITCHBOARD_SENDER_POLL_MS: '3600000',
    SWITCHBOARD_JOB_INTERVAL_MS: '3600000',
    // Sites are built when a test asks (website_builder/run), never half-way by the builder's poll.
    SWITCHBOARD_BUILDER_POLL_MS: '3600000',
  });
});
test.after.always(async () => {
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

/** The first `weekday` (0 = Sunday) at `hour`:00 UTC after `from`. */
function nextUtc(from: Date, weekday: number, hour: number): Date {
  const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate(), hour));
  while (d <= from || d.getUTCDay() !== weekday) d.setUTCDate(d.getUTCDate() + 1);
  return d;
}

async function withDb<T>(fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

/** A clock of the console client's account, frozen at `at`, with `customerIds` on it. */
async function clockWith(owner: ConsoleClient, at: Date, customerIds: string[]) {
  const created = await owner.post('/console/api/test_clocks', { name: 'Scenario', frozen_time: at.toISOString() });
  if (created.status !== 201) throw new Error(`clock not created: ${created.status} ${created.text}`);
  for (const id of customerIds) {
    const r = await owner.patch(`/console/api/customers/${id}/test_clock`, { test_clock: created.body.id });
    if (r.status !== 200) throw new Error(`customer not attached: ${r.status} ${r.text}`);
  }
  return created.body as { id: string; frozen_time: string };
}

const queue = (account: TestAccount, customerId: string, phone: string) =>
  account.api.post('/v1/calls', { called_party: 'business', customer_id: customerId, business_name: 'Acme Plumbing', phone });

test.serial("a clock's customer waits for its calling window on the clock's time and is dialled when an advance passes the opening, not before", async (t) => {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const customer = await makeReadyCustomer(svc.url, account.api);
  // Saturday 03:00 UTC is Friday 22:00 in New York: after the federal 21:00 close.
  const frozen = nextUtc(new Date(Date.now() + 86_400_000), 6, 3);
  const clock = await clockWith(owner, frozen, [customer.id]);
  t.is(clock.frozen_time, frozen.toISOString());

  const r = await queue(account, customer.id, '+12025550170');
  t.is(r.status, 201, r.text);
  await account.admin.post('/admin/v1/dialler/run');
  t.like((await account.api.get(`/v1/calls/${r.body.id}`)).body, { status: 'queued', waiting_reason: 'outside_calling_window' });

  // 02:00 in New York: still closed, so the advance dials nothing.
  const early = await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { seconds: 4 * 3600 });
  t.is(early.status, 200, early.text);
  t.like(early.body, { object: 'test_clock', status: 'ready', frozen_time: new Date(frozen.getTime() + 4 * 3600_000).toISOString(), customer_count: 1 });
  await account.admin.post('/admin/v1/dialler/run');
  t.like((await account.api.get(`/v1/calls/${r.body.id}`)).body, { status: 'queued', waiting_reason: 'outside_calling_window' });

  // 09:00 or 10:00 in New York: open. When the advance answers, the request has been dialled.
  const opening = new Date(frozen.getTime() + 11 * 3600_000);
  const advanced = await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { to: opening.toISOString() });
  t.is(advanced.status, 200, advanced.text);
  t.like(advanced.body, { status: 'ready', frozen_time: opening.toISOString() });
  const dialled = (await account.api.get(`/v1/calls/${r.body.id}`)).body;
  t.not(dialled.status, 'queued', 'dialled by the advance itself');
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.is(done.status, 'completed');
  t.like((await owner.get(`/console/api/test_clocks/${clock.id}`)).body, { status: 'ready', frozen_time: opening.toISOString() });
});

test.serial("frequency caps count a clock customer's attempts on the clock's time", async (t) => {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const customer = await makeReadyCustomer(svc.url, account.api);
  const MIAMI = '+13055550141';
  const consent = { type: 'prior_express_written', obtained_at: '2026-01-05T10:00:00Z', source: 'web form, test', evidence_ref: 'consent-caps' };
  // Tuesday 14:00 UTC, days ahead: 09:00 or 10:00 in Miami, inside Florida's 08:00-20:00 for hours.
  const frozen = nextUtc(new Date(Date.now() + 2 * 86_400_000), 2, 14);
  const clock = await clockWith(owner, frozen, [customer.id]);
  for (let i = 0; i < 3; i++) {
    const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: MIAMI, consent });
    t.is(r.status, 201, r.text);
    await dialUntilFinished(account, account.api, r.body.id);
    await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { seconds: 3600 });
  }
  // Florida: three dials in 24 hours. The fourth waits until the first is 24 hours old on the clock.
  const fourth = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: MIAMI, consent });
  await account.admin.post('/admin/v1/dialler/run');
  const frees = new Date(frozen.getTime() + 86_400_000);
  t.like((await account.api.get(`/v1/calls/${fourth.body.id}`)).body, { status: 'queued', waiting_reason: 'frequency_cap', next_attempt_at: frees.toISOString() });
  await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { to: new Date(frees.getTime() - 1000).toISOString() });
  t.like((await account.api.get(`/v1/calls/${fourth.body.id}`)).body, { status: 'queued', waiting_reason: 'frequency_cap' });
  await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { seconds: 1 });
  t.not((await account.api.get(`/v1/calls/${fourth.body.id}`)).body.status, 'queued');
  await dialUntilFinished(account, account.api, fourth.body.id);
});

test.serial("a clock weeks ahead: a request due on it is dialled by the dialler's round, and readiness stays on the service's time", async (t) => {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const customer = await makeReadyCustomer(svc.url, account.api);
  // Six weeks on, the registries loaded today would be stale (31 days) if readiness ran on the clock.
  const frozen = nextUtc(new Date(Date.now() + 42 * 86_400_000), 2, 15);
  await clockWith(owner, frozen, [customer.id]);
  const r = await queue(account, customer.id, '+12025550174');
  t.is(new Date(r.body.dial_before).getTime(), frozen.getTime() + 7 * 86_400_000, "the deadline is counted from the clock's time");
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.is(done.status, 'completed');
});

test.serial('an advance only goes forward, two years at most, and says so', async (t) => {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const at = new Date('2027-03-01T12:00:00Z');
  const clock = await clockWith(owner, at, []);
  const back = await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { to: '2027-02-28T12:00:00Z' });
  t.is(back.status, 400);
  t.is(back.body.error.code, 'test_clock_not_forward');
  t.regex(back.body.error.message, /only moves forward/);
  t.is((await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { seconds: -60 })).body.error.code, 'test_clock_not_forward');
  t.is((await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { to: at.toISOString() })).body.error.code, 'test_clock_not_forward');
  const far = await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { to: '2029-03-01T12:00:01Z' });
  t.is(far.status, 400);
  t.is(far.body.error.code, 'test_clock_advance_too_far');
  t.is((await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { to: '2029-03-01T12:00:00Z' })).status, 200, 'exactly two years is allowed');
  t.is((await owner.post(`/console/api/test_clocks/${clock.id}/advance`, {})).body.error.code, 'parameter_missing');
  t.is((await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { to: '2030-01-01' })).body.error.code, 'invalid_parameter');
  t.like((await owner.get(`/console/api/test_clocks/${clock.id}`)).body, { frozen_time: '2029-03-01T12:00:00.000Z', status: 'ready' });
});

test.serial('a hold never reported back is released 30 minutes after by clock time; a customer on no clock keeps its hold', async (t) => {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const onClock = await makeReadyCustomer(svc.url, account.api);
  const offClock = await makeReadyCustomer(svc.url, account.api);
  // Two hours behind the process clock: the hold's 30 minutes are long past in real time.
  const clock = await clockWith(owner, new Date(Date.now() - 2 * 3600_000), [onClock.id]);
  for (const [customer, reference] of [[onClock.id, 'lost-on-clock'], [offClock.id, 'lost-off-clock']]) {
    const held = await account.admin.post(`/admin/v1/accounts/${account.id}/holds`, { mode: 'test', customer_id: customer, reference });
    t.true(held.body.ok, held.text);
  }
  const released = async () =>
    ((await account.admin.get(`/admin/v1/accounts/${account.id}/activity`)).body.data as { kind: string; reference: string }[])
      .filter((a) => a.kind === 'hold_released')
      .map((a) => a.reference);

  // The service's own job, on the process clock, leaves the clock customer's hold to its clock.
  await account.admin.post('/admin/v1/jobs/release_holds/run');
  t.deepEqual(await released(), []);
  await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { seconds: 29 * 60 });
  t.deepEqual(await released(), [], 'not yet: 29 minutes on the clock');
  await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { seconds: 60 });
  t.deepEqual(await released(), ['lost-on-clock'], 'released by the advance itself');
  // Past the other hold's expiry on the clock: the clock moves only its own customers' holds.
  await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { seconds: 3 * 3600 });
  t.deepEqual(await released(), ['lost-on-clock']);
  await account.admin.post(`/admin/v1/accounts/${account.id}/holds/lost-off-clock/end`, { duration_seconds: 0 });
});

test.serial("a number's rent falls due by clock time; the same number of a customer on no clock does not renew", async (t) => {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const onClock = await makeReadyCustomer(svc.url, account.api);
  const offClock = await makeReadyCustomer(svc.url, account.api);
  const numberOf = async (customerId: string) => (await account.api.get(`/v1/customers/${customerId}/numbers`)).body.data[0];
  const before = await numberOf(onClock.id);
  const otherBefore = await numberOf(offClock.id);
  t.truthy(before.renews_on);
  const clock = await clockWith(owner, new Date(), [onClock.id]);
  // The renewal day at noon, on the clock.
  const advanced = await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { to: `${before.renews_on}T12:00:00Z` });
  t.is(advanced.status, 200, advanced.text);
  const after = await numberOf(onClock.id);
  t.true(after.renews_on > before.renews_on, `renewed: ${before.renews_on} → ${after.renews_on}`);
  const rent = (await account.api.get('/v1/usage')).body.data.filter((l: any) => l.customer_id === onClock.id && String(l.reference).includes(before.id));
  t.is(rent.length, 2, 'the first month and the renewal');
  await account.admin.post('/admin/v1/jobs/renew_numbers/run');
  t.is((await numberOf(offClock.id)).renews_on, otherBefore.renews_on, 'the process clock has not reached it');
});

test.serial("a website's hosting renews by clock time", async (t) => {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const publishedSite = async () => {
    const c = (await account.api.post('/v1/customers', { name: 'Bright Dental', country: 'GB' })).body;
    const order = await account.api.post(`/v1/customers/${c.id}/websites`, { brief: 'Family dental practice in Leeds. Check-ups, hygiene and emergency appointments.' });
    t.is(order.status, 202, order.text);
    await account.admin.post('/admin/v1/website_builder/run');
    const live = await account.api.post(`/v1/customers/${c.id}/websites/${order.body.id}/publish`, {});
    t.is(live.status, 200, live.text);
    return { c, site: live.body };
  };
  const onClock = await publishedSite();
  const offClock = await publishedSite();
  const clock = await clockWith(owner, new Date(), [onClock.c.id]);
  const renewsOn = onClock.site.hosting_renews_on as string;
  t.truthy(renewsOn);
  await owner.post(`/console/api/test_clocks/${clock.id}/advance`, { to: `${renewsOn}T12:00:00Z` });
  const after = (await account.api.get(`/v1/customers/${onClock.c.id}/websites/${onClock.site.id}`)).body;
  t.true(after.hosting_renews_on > renewsOn, `renewed: ${renewsOn} → ${after.hosting_renews_on}`);
  t.is((await account.api.get(`/v1/customers/${offClock.c.id}/websites/${offClock.site.id}`)).body.hosting_renews_on, offClock.site.hosting_renews_on);
});

test.serial('a live customer never uses a clock: the console refuses it and so does the database', async (t) => {
  const account = await makeAccount(svc.url, { live: true });
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const live = (await account.liveApi!.post('/v1/customers', { name: 'Live Dental', country: 'US' })).body;
  const clock = await clockWith(owner, new Date(), []);
  const refused = await owner.patch(`/console/api/customers/${live.id}/test_clock`, { test_clock: clock.id });
  t.is(refused.status, 400);
  t.is(refused.body.error.code, 'test_clock_live_customer');
  const err = await withDb((db) => db.query(`UPDATE customers SET test_clock_id = $1 WHERE id = $2`, [clock.id, live.id])).catch((e) => e);
  t.is(err.code, '23514', 'the CHECK refuses it');
  t.like((await owner.get(`/console/api/test_clocks/${clock.id}`)).body, { customer_count: 0 });
});

test.serial('webhooks of a clock customer are dated and signed on real time while the clock is days ahead', async (t) => {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const customer = await makeReadyCustomer(svc.url, account.api);
  const rx = await startReceiver();
  const ep = (await account.admin.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: rx.url, mode: 'test', event_types: ['call.completed'] })).body;
  // Tuesday 15:00 UTC, at least two days ahead: 10:00 or 11:00 in New York.
  const frozen = nextUtc(new Date(Date.now() + 2 * 86_400_000), 2, 15);
  await clockWith(owner, frozen, [customer.id]);
  const r = await queue(account, customer.id, '+12025550171');
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.is(done.status, 'completed');
  await account.admin.post('/admin/v1/webhooks/run');
  const delivered = rx.received.find((x) => JSON.parse(x.body).data.id === r.body.id);
  t.truthy(delivered);
  const stamp = Number(delivered!.headers['webhook-timestamp']) * 1000;
  t.true(Math.abs(stamp - Date.now()) < 60_000, 'webhook-timestamp is real time');
  const payload = new Webhook(ep.secret).verify(delivered!.body, {
    'webhook-id': String(delivered!.headers['webhook-id']),
    'webhook-timestamp': String(delivered!.headers['webhook-timestamp']),
    'webhook-signature': String(delivered!.headers['webhook-signature']),
  }) as any;
  t.is(payload.type, 'call.completed');
  t.true(Math.abs(Date.parse(payload.created_at) - Date.now()) < 60_000, `the event is dated on real time (${payload.created_at}), not the clock's ${frozen.toISOString()}`);
  await rx.close();
});

test.serial("two accounts' clocks do not affect each other, and another account's clock is 404 everywhere", async (t) => {
  const a = await makeAccount(svc.url);
  const b = await makeAccount(svc.url);
  const ownerA = await consoleAs(svc.url, a.id, 'owner');
  const ownerB = await consoleAs(svc.url, b.id, 'owner');
  const customerA = await makeReadyCustomer(svc.url, a.api);
  const customerB = await makeReadyCustomer(svc.url, b.api);
  const frozen = nextUtc(new Date(Date.now() + 86_400_000), 6, 3);
  const clockA = await clockWith(ownerA, frozen, [customerA.id]);
  const clockB = await clockWith(ownerB, frozen, [customerB.id]);
  const callA = await queue(a, customerA.id, '+12025550172');
  const callB = await queue(b, customerB.id, '+12025550173');
  await a.admin.post('/admin/v1/dialler/run');

  await ownerA.post(`/console/api/test_clocks/${clockA.id}/advance`, { seconds: 11 * 3600 });
  t.not((await a.api.get(`/v1/calls/${callA.body.id}`)).body.status, 'queued', "A's call is dialled");
  t.like((await b.api.get(`/v1/calls/${callB.body.id}`)).body, { status: 'queued', waiting_reason: 'outside_calling_window' });
  t.like((await ownerB.get(`/console/api/test_clocks/${clockB.id}`)).body, { frozen_time: frozen.toISOString() });
  await dialUntilFinished(a, a.api, callA.body.id);

  // Account A reaching B's clock and customer: 404, as an unknown id.
  const notFound = async (reply: Promise<{ status: number; body: any }>, code: string) => {
    const r = await reply;
    t.is(r.status, 404);
    t.is(r.body.error.code, code);
  };
  await notFound(ownerA.get(`/console/api/test_clocks/${clockB.id}`), 'test_clock_not_found');
  await notFound(ownerA.post(`/console/api/test_clocks/${clockB.id}/advance`, { seconds: 3600 }), 'test_clock_not_found');
  await notFound(ownerA.delete(`/console/api/test_clocks/${clockB.id}`), 'test_clock_not_found');
  await notFound(ownerA.patch(`/console/api/customers/${customerA.id}/test_clock`, { test_clock: clockB.id }), 'test_clock_not_found');
  await notFound(ownerA.patch(`/console/api/customers/${customerB.id}/test_clock`, { test_clock: clockA.id }), 'customer_not_found');
  await notFound(ownerA.patch(`/console/api/customers/${customerB.id}/test_clock`, { test_clock: null }), 'customer_not_found');
  await notFound(ownerA.get('/console/api/test_clocks/00000000-0000-4000-8000-000000000000'), 'test_clock_not_found');
  t.deepEqual(
    (await ownerA.get('/console/api/test_clocks')).body.data.map((c: any) => c.id),
    [clockA.id],
  );
  t.like((await ownerB.get(`/console/api/test_clocks/${clockB.id}`)).body, { frozen_time: frozen.toISOString(), customer_count: 1 });
  const cursor = await ownerA.get(`/console/api/test_clocks?starting_after=${clockB.id}`);
  t.is(cursor.body.error.code, 'invalid_cursor');

  // Deleting B's clock puts its customer back on the process clock.
  const deleted = await ownerB.delete(`/console/api/test_clocks/${clockB.id}`);
  t.deepEqual(deleted.body, { object: 'test_clock', id: clockB.id, deleted: true });
  t.is((await ownerB.get(`/console/api/test_clocks/${clockB.id}`)).status, 404);
  t.deepEqual((await withDb((db) => db.query(`SELECT test_clock_id FROM customers WHERE id = $1`, [customerB.id]))).rows, [{ test_clock_id: null }]);
  await b.api.delete(`/v1/calls/${callB.body.id}`);
});

test.serial('roles: a viewer reads clocks but cannot create, advance, attach or delete one; a developer can', async (t) => {
  const account = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, account.id, 'owner');
  const viewer = await consoleAs(svc.url, account.id, 'viewer');
  const billing = await consoleAs(svc.url, account.id, 'billing');
  const developer = await consoleAs(svc.url, account.id, 'developer');
  const customer = (await account.api.post('/v1/customers', { name: 'Bright Dental', country: 'US' })).body;
  const clock = await clockWith(owner, new Date('2027-01-04T12:00:00Z'), []);
  t.is((await viewer.get('/console/api/test_clocks')).status, 200);
  t.is((await viewer.get(`/console/api/test_clocks/${clock.id}`)).status, 200);
  for (const who of [viewer, billing]) {
    for (const r of [
      await who.post('/console/api/test_clocks', {}),
      await who.post(`/console/api/test_clocks/${clock.id}/advance`, { seconds: 60 }),
      await who.patch(`/console/api/customers/${customer.id}/test_clock`, { test_clock: clock.id }),
      await who.delete(`/console/api/test_clocks/${clock.id}`),
    ]) {
      t.is(r.status, 403);
      t.is(r.body.error.code, 'role_forbidden');
    }
  }
  t.like((await owner.get(`/console/api/test_clocks/${clock.id}`)).body, { frozen_time: '2027-01-04T12:00:00.000Z' });
  t.is((await developer.post(`/console/api/test_clocks/${clock.id}/advance`, { seconds: 60 })).status, 200);
  t.is((await developer.patch(`/console/api/customers/${customer.id}/test_clock`, { test_clock: clock.id })).status, 200);
  t.is((await developer.post('/console/api/test_clocks', { name: 'Second' })).status, 201);
  const list = (await viewer.get('/console/api/test_clocks?limit=1')).body;
  t.is(list.data.length, 1);
  t.true(list.has_more);
  t.is(list.data[0].name, 'Second', 'newest first');
});
