import test from 'ava';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { FakeStripe } from '../fakes/stripe.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { consoleAs, consoleClientOf } from '../helpers/console.ts';
import { liveConsoleAccount, payCheckout, startWithFakeStripe, stopWithFakeStripe, type LiveAccount } from '../helpers/payments.ts';
import { until } from '../helpers/wait.ts';

/*
 * Issue 22, the second look at card payments: what the authors' suites did not try. An event
 * Stripe signed that names one card payment over another's payment (or another amount), bodies
 * that are signed but are not events, an event of the other Stripe mode, encoded paths, the
 * console's amounts at their limits, and every way of learning of one payment at once.
 */

let svc: TestService;
let fake: FakeStripe;
let db: pg.Pool;
test.before(async () => {
  ({ svc, fake, db } = await startWithFakeStripe());
});
test.after.always(() => stopWithFakeStripe({ svc, fake, db }));
test.afterEach.always(async () => {
  fake.scriptDeliveries(null);
  await fake.releaseEvents(); // a test that failed while holding events leaves none held for the next
});

const balance = async (a: LiveAccount) => (await a.liveApi.get('/v1/balance')).body;
const topUpLines = async (a: LiveAccount) => ((await a.liveApi.get('/v1/usage?limit=100')).body.data as any[]).filter((l) => l.type === 'top_up' || l.type === 'bonus');
const eventsStored = async () => Number((await db.query(`SELECT count(*) FROM processor_events`)).rows[0].count);
const receipt = async (a: LiveAccount, id: string) => (await a.owner.get(`/console/api/billing/top_ups/${id}?mode=live`)).body;

/** An event as Stripe sends it (test-mode keys: `livemode: false`). */
const stripeEvent = (type: string, object: Record<string, any>, extra: Record<string, unknown> = {}) => ({
  id: `evt_review_${randomUUID().replace(/-/g, '')}`,
  object: 'event',
  api_version: '2025-10-29.clover',
  created: Math.floor(Date.now() / 1000),
  data: { object },
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type,
  ...extra,
});

/** POSTs a body to the webhook with Stripe's signature over it (the webhook secret is right). */
async function postSigned(payload: string | object, path = '/webhooks/stripe') {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const res = await fetch(`${svc.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': fake.signatureHeader(body) }, body });
  const text = await res.text();
  return { status: res.status, text, body: text.startsWith('{') ? JSON.parse(text) : null };
}

/** A form-encoded call to the fake's API, as the SDK makes it (another integration on the same Stripe account). */
async function stripeApi(path: string, params: Record<string, string>) {
  const res = await fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fake.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

test.serial("a signed event that names one account's card payment over another account's paid session credits only the payer, once", async (t) => {
  const victim = await liveConsoleAccount(svc.url);
  const payer = await liveConsoleAccount(svc.url);
  // The victim's checkout is pending (older: it is the first card payment the event's ids find).
  const pending = await victim.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 50_000 });
  t.is(pending.status, 201, pending.text);
  fake.holdEvents();
  const { payment, session } = await payCheckout(payer, fake, 50_000);
  const paidSession = fake.object(session)!;
  const pi = fake.object(paidSession.payment_intent)!;
  // Stripe's own objects, their metadata edited to name the victim's card payment (a dashboard edit, another integration).
  const forgedSession = await postSigned(stripeEvent('checkout.session.completed', { ...paidSession, metadata: { ...paidSession.metadata, card_payment_id: pending.body.id } }));
  t.is(forgedSession.status, 200, forgedSession.text);
  const forgedIntent = await postSigned(stripeEvent('payment_intent.succeeded', { ...pi, metadata: { card_payment_id: pending.body.id } }));
  t.is(forgedIntent.status, 200, forgedIntent.text);
  await fake.releaseEvents();
  await fake.settled();
  await until('the payer is credited', async () => (await receipt(payer, payment.id)).status === 'succeeded');
  t.like(await receipt(victim, pending.body.id), { status: 'pending', ledger_line_id: null, bonus_cents: 0 });
  t.like(await balance(victim), { balance_cents: 0, paid_cents: 0 });
  t.deepEqual(await topUpLines(victim), [], 'nothing written on the account the event named');
  t.like(await balance(payer), { balance_cents: 51_500, paid_cents: 50_000, bonus_cents: 1_500 });
  t.is((await topUpLines(payer)).length, 2, 'one top-up and one bonus line for the payer');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial("an event whose payment intent is one card payment's and whose metadata names another's settles the payment intent's own", async (t) => {
  const victim = await liveConsoleAccount(svc.url);
  const payer = await liveConsoleAccount(svc.url);
  const pending = await victim.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 50_000 });
  t.is(pending.status, 201, pending.text);
  const created = await payer.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 50_000 });
  const sessionId = new URL(created.body.checkout_url).pathname.split('/').pop()!;
  // A declined card first: its payment_intent.payment_failed tells the payer's card payment its payment intent.
  t.not((await fake.pay(sessionId, { number: '4000000000000002', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' })).status, 303);
  await fake.settled();
  await until('the payment intent is known', async () => (await db.query(`SELECT payment_intent_id FROM card_payments WHERE id = $1`, [created.body.id])).rows[0].payment_intent_id !== null);
  fake.holdEvents(); // Stripe's own events of the success never come (held to the end)
  t.is((await fake.pay(sessionId, { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' })).status, 303);
  const pi = fake.object(fake.object(sessionId)!.payment_intent)!;
  const r = await postSigned(stripeEvent('payment_intent.succeeded', { ...pi, metadata: { card_payment_id: pending.body.id } }));
  t.is(r.status, 200, r.text);
  const row = (await db.query(`SELECT status FROM card_payments WHERE id = $1`, [created.body.id])).rows[0];
  t.is(row.status, 'succeeded', "the payment intent's own card payment is credited by the event");
  t.like(await receipt(victim, pending.body.id), { status: 'pending' });
  await fake.releaseEvents();
  await fake.settled();
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial("a signed charge.refunded naming one account's card payment over another account's charge refunds nothing on the account it names", async (t) => {
  const victim = await liveConsoleAccount(svc.url);
  const payer = await liveConsoleAccount(svc.url);
  const { payment: victimPayment } = await payCheckout(victim, fake, 50_000);
  const { payment: payerPayment, session } = await payCheckout(payer, fake, 50_000);
  await fake.settled();
  await until('both credited', async () => (await receipt(victim, victimPayment.id)).status === 'succeeded' && (await receipt(payer, payerPayment.id)).status === 'succeeded');
  const pi = fake.object(fake.object(session)!.payment_intent)!;
  const charge = fake.object(pi.latest_charge)!;
  // The payer's charge as Stripe has it after a refund of 10,000, its metadata naming the victim's card payment.
  const forged = await postSigned(stripeEvent('charge.refunded', { ...charge, amount_refunded: 10_000, refunded: false, metadata: { card_payment_id: victimPayment.id } }));
  t.is(forged.status, 200, forged.text);
  const refundLines = async (a: LiveAccount) => ((await a.liveApi.get('/v1/usage?limit=100')).body.data as any[]).filter((l) => l.type === 'top_up_refund');
  t.deepEqual(await refundLines(victim), [], 'nothing refunded on the account the metadata names');
  t.like(await receipt(victim, victimPayment.id), { refunded_cents: 0 });
  t.like(await balance(victim), { balance_cents: 51_500 });
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('a payment of another amount naming a card payment (another integration on the Stripe account) does not credit the amount asked', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const other = await liveConsoleAccount(svc.url);
  const pending = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 50_000 });
  t.is(pending.status, 201, pending.text);
  // Someone else's saved card, charged 2,500 with metadata naming the 50,000 checkout.
  await payCheckout(other, fake, 2_500, { saveCard: true });
  await fake.settled();
  await until('the other card is saved', async () => (await db.query(`SELECT 1 FROM saved_cards WHERE account_id = $1`, [other.id])).rowCount === 1);
  const saved = (await db.query(`SELECT customer_ref, payment_method_id FROM saved_cards WHERE account_id = $1`, [other.id])).rows[0];
  const charged = await stripeApi('/v1/payment_intents', {
    amount: '2500',
    currency: 'usd',
    customer: saved.customer_ref,
    payment_method: saved.payment_method_id,
    off_session: 'true',
    confirm: 'true',
    'metadata[card_payment_id]': pending.body.id,
  });
  t.is(charged.status, 200, JSON.stringify(charged.body));
  t.is(charged.body.status, 'succeeded');
  await fake.settled();
  // Whatever arrived (the fake's own payment_intent.succeeded), and once more by hand.
  t.is((await postSigned(stripeEvent('payment_intent.succeeded', fake.object(charged.body.id)!))).status, 200);
  t.like(await receipt(a, pending.body.id), { status: 'pending', ledger_line_id: null });
  t.like(await balance(a), { balance_cents: 0, paid_cents: 0 });
  t.deepEqual(await topUpLines(a), []);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('signed bodies that are not events, an event of the other Stripe mode, and encoded paths: a 4xx in the error shape, nothing stored', async (t) => {
  const before = await eventsStored();
  const refusedAs400 = async (what: string, r: { status: number; body: any; text: string }) => {
    t.is(r.status, 400, `${what}: ${r.text}`);
    t.is(r.body?.error?.code, 'invalid_webhook_signature', what);
    t.is(r.body?.error?.type, 'invalid_request_error', what);
    t.truthy(r.body?.error?.request_id, what);
  };
  await refusedAs400('no signature', await (async () => {
    const res = await fetch(`${svc.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(stripeEvent('checkout.session.completed', {})) });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) };
  })());
  await refusedAs400('signed, not JSON', await postSigned('this is not json'));
  await refusedAs400('signed, an empty object', await postSigned('{}'));
  await refusedAs400('signed, an id and no type', await postSigned({ id: 'evt_1', object: 'event' }));
  await refusedAs400('signed, a type that is not a string', await postSigned({ id: 'evt_2', object: 'event', type: { x: 1 }, created: 1, livemode: false, data: { object: {} } }));
  await refusedAs400('signed, no data.object', await postSigned({ id: 'evt_3', object: 'event', type: 'checkout.session.completed', created: 1, livemode: false }));
  await refusedAs400('signed, an event id of 10,000 characters', await postSigned(stripeEvent('checkout.session.completed', {}, { id: `evt_${'x'.repeat(10_000)}` })));
  const nested = '['.repeat(10_000) + ']'.repeat(10_000);
  await refusedAs400('signed, 20 KB of nested JSON', await postSigned(nested));
  // An event whose object nests 20 KB deep: stored (a type not handled) or refused, never 5xx.
  const deep = await postSigned(`{"id":"evt_deep_${randomUUID()}","object":"event","type":"x.y","created":1,"livemode":false,"data":{"object":${'{"a":'.repeat(4_000)}1${'}'.repeat(4_000)}}}`);
  t.true(deep.status === 200 || deep.status === 400, `deep: ${deep.status} ${deep.text}`);
  const deepStored = deep.status === 200 ? 1 : 0;
  await refusedAs400('a live event where the keys are test keys', await postSigned(stripeEvent('checkout.session.completed', { id: 'cs_live_x', object: 'checkout.session', metadata: {} }, { livemode: true })));
  // Over the body limit: the house's 400 payload_too_large (docs/api.md "Maximum sizes"), never 5xx.
  const huge = await postSigned({ ...stripeEvent('charge.refunded', {}), padding: 'x'.repeat(2 * 1024 * 1024) });
  t.is(huge.status, 400, huge.text);
  t.like(huge.body?.error, { type: 'invalid_request_error', code: 'payload_too_large' });
  // Spellings of the path: either the same route (the signature checked) or no route; never a stored event.
  for (const path of ['/webhooks/%73tripe', '/webhooks/stripe/', '//webhooks/stripe', '/webhooks/STRIPE', '/webhooks/stripe?x=1', '/webhooks/./stripe']) {
    const res = await fetch(`${svc.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(stripeEvent('checkout.session.completed', {})) });
    t.true([400, 404].includes(res.status), `${path}: ${res.status}`);
  }
  // Content types Stripe does not send: the signature decides, never a 5xx.
  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', null]) {
    const body = JSON.stringify(stripeEvent('x.content_type', { id: 'x_1', object: 'x' }, { livemode: true }));
    const res = await fetch(`${svc.url}/webhooks/stripe`, { method: 'POST', headers: { ...(contentType ? { 'content-type': contentType } : {}), 'stripe-signature': fake.signatureHeader(body) }, body: contentType ? body : Buffer.from(body) });
    t.true(res.status >= 400 && res.status < 500, `${contentType}: ${res.status}`);
  }
  t.is(await eventsStored(), before + deepStored, 'nothing stored');
});

test.serial('signed events of a type not handled, or naming no card payment of ours: 200, stored once, nothing credited', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const unhandled = stripeEvent('customer.subscription.created', { id: 'sub_x', object: 'subscription' });
  t.is((await postSigned(unhandled)).status, 200);
  t.is((await postSigned(unhandled)).status, 200, 'again');
  const unknown = stripeEvent('payment_intent.succeeded', { id: 'pi_not_ours', object: 'payment_intent', amount: 50_000, metadata: { card_payment_id: randomUUID() } });
  const r = await postSigned(unknown);
  t.is(r.status, 200, r.text);
  const rows = (await db.query(`SELECT event_id, processed_at FROM processor_events WHERE event_id = ANY($1)`, [[unhandled.id, unknown.id]])).rows;
  t.is(rows.length, 2);
  t.true(rows.every((row) => row.processed_at !== null));
  t.like(await balance(a), { balance_cents: 0 });
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('one payment learned of every way at once (each webhook several times, the return page many times, two sign-ins): credited once', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const second = await consoleAs(svc.url, a.id, 'billing');
  fake.holdEvents();
  const { payment } = await payCheckout(a, fake, 250_000);
  const held = fake.events.filter((e) => JSON.stringify(e.data.object).includes(payment.id) || e.data.object.metadata?.card_payment_id === payment.id);
  t.true(held.length >= 2, 'the session and payment intent events');
  await Promise.all([
    fake.releaseEvents(),
    ...held.flatMap((e) => [postSigned(e), postSigned(e), postSigned({ ...e, id: `${e.id}_copy` })]),
    ...Array.from({ length: 6 }, () => a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)),
    ...Array.from({ length: 6 }, () => second.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)),
  ]);
  await fake.settled();
  t.like(await receipt(a, payment.id), { status: 'succeeded', amount_cents: 250_000, bonus_cents: 12_500 });
  const lines = await topUpLines(a);
  t.deepEqual(lines.map((l) => [l.type, l.amount_cents]).sort(), [['bonus', 12_500], ['top_up', 250_000]]);
  t.like(await balance(a), { balance_cents: 262_500, paid_cents: 250_000, bonus_cents: 12_500 });
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('the console top-up amount at and around its limits, and callers who may not write: a 4xx in the error shape, nothing half-written', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const count = async () => Number((await db.query(`SELECT count(*) FROM card_payments WHERE account_id = $1`, [a.id])).rows[0].count);
  const post = (amount_cents: unknown, o: Record<string, unknown> = {}) => a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents, ...o });
  const refused: [unknown, number, string][] = [
    [2_499, 400, 'top_up_too_small'],
    [0, 400, 'top_up_too_small'],
    [-2_500, 400, 'top_up_too_small'],
    [5_000_001, 400, 'invalid_parameter'],
    [2_500.5, 400, 'invalid_parameter'],
    [1e300, 400, 'invalid_parameter'],
    ['lots', 400, 'invalid_parameter'],
    [null, 400, 'invalid_parameter'],
    [[2_500], 400, 'invalid_parameter'],
    [{ cents: 2_500 }, 400, 'invalid_parameter'],
  ];
  for (const [amount, status, code] of refused) {
    const r = await post(amount);
    t.is(r.status, status, `${JSON.stringify(amount)}: ${r.text}`);
    t.is(r.body.error?.code, code, JSON.stringify(amount));
    t.truthy(r.body.error?.request_id);
  }
  t.is((await post(2_500, { extra: true })).status, 400, 'an unknown field');
  t.is(await count(), 0, 'nothing written for a refused amount');
  t.is((await post(2_500)).status, 201, '2,500: the minimum');
  t.is((await post(5_000_000)).status, 201, '5,000,000: the maximum');
  // Roles that read but do not write billing, and a write without the CSRF token.
  for (const role of ['viewer', 'developer']) {
    const c = await consoleAs(svc.url, a.id, role);
    const r = await c.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 2_500 });
    t.is(r.status, 403, `${role}: ${r.text}`);
  }
  const noCsrf = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 2_500 }, { headers: { 'x-csrf-token': '' } });
  t.is(noCsrf.status, 403, noCsrf.text);
  // Another account's card payment is not found (not forbidden: its existence is not told).
  const other = await liveConsoleAccount(svc.url);
  const theirs = await other.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 2_500 });
  const peek = await a.owner.get(`/console/api/billing/top_ups/${theirs.body.id}?mode=live`);
  t.is(peek.status, 404);
  t.is(peek.body.error.code, 'card_payment_not_found');
  t.is(await count(), 2, 'the two accepted top-ups only');
});

test.serial('a suspended account reads its payments and starts none: 403 reseller_suspended, nothing written', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  t.is((await a.admin.post(`/admin/v1/accounts/${a.id}/suspend`)).status, 200);
  const refused = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 2_500 });
  t.is(refused.status, 403, refused.text);
  t.is(refused.body.error.code, 'reseller_suspended');
  const auto = await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 1_000, amount_cents: 2_500 });
  t.is(auto.status, 403, auto.text);
  t.is(auto.body.error.code, 'reseller_suspended');
  t.is((await a.owner.get('/console/api/billing/payments?mode=live')).status, 200);
  t.is((await a.owner.get('/console/api/billing/top_ups?mode=live')).status, 200);
  t.is(Number((await db.query(`SELECT count(*) FROM card_payments WHERE account_id = $1`, [a.id])).rows[0].count), 0);
});

test.serial('two service processes on one database: webhooks to one, their repeats and the return page on both at once, credited once', async (t) => {
  const other = await startTestService({
    DATABASE_URL: svc.databaseUrl,
    STRIPE_SECRET_KEY: fake.secretKey,
    STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
    STRIPE_PUBLISHABLE_KEY: fake.publishableKey,
    STRIPE_API_BASE: fake.url,
  });
  try {
    const a = await liveConsoleAccount(svc.url);
    // The same signed-in person, through the second process.
    const there = consoleClientOf(other.url, a.owner.cookie, a.owner.csrf, a.owner.user);
    fake.holdEvents();
    const { payment } = await payCheckout(a, fake, 1_000_000);
    const held = fake.events.filter((e) => e.data.object.metadata?.card_payment_id === payment.id);
    t.true(held.length >= 2);
    const postTo = async (base: string, e: object) => {
      const body = JSON.stringify(e);
      return (await fetch(`${base}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': fake.signatureHeader(body) }, body })).status;
    };
    const statuses = await Promise.all([
      fake.releaseEvents().then(() => 200),
      ...held.flatMap((e) => [postTo(svc.url, e), postTo(other.url, e), postTo(other.url, e)]),
      ...Array.from({ length: 4 }, () => a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`).then((r) => r.status)),
      ...Array.from({ length: 4 }, () => there.get(`/console/api/billing/top_ups/${payment.id}?mode=live`).then((r) => r.status)),
    ]);
    t.true(statuses.every((s) => s === 200), JSON.stringify(statuses));
    await fake.settled();
    t.like(await receipt(a, payment.id), { status: 'succeeded', amount_cents: 1_000_000, bonus_cents: 80_000 });
    t.deepEqual((await topUpLines(a)).map((l) => [l.type, l.amount_cents]).sort(), [['bonus', 80_000], ['top_up', 1_000_000]]);
    t.like(await balance(a), { balance_cents: 1_080_000, paid_cents: 1_000_000, bonus_cents: 80_000 });
    t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
  } finally {
    await other.stop();
  }
});

test.serial("the operator's refund and the console's reads with malformed input: a 4xx in the error shape, nothing written", async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const { payment } = await payCheckout(a, fake, 5_000);
  await fake.settled();
  await until('credited', async () => (await receipt(a, payment.id)).status === 'succeeded');
  const refund = (body: unknown, paymentId = payment.id, accountId = a.id) => a.admin.post(`/admin/v1/accounts/${accountId}/card_payments/${paymentId}/refunds`, body);
  const cases: [string, Promise<any>, number, string][] = [
    ['zero', refund({ amount_cents: 0 }), 400, 'invalid_parameter'],
    ['negative', refund({ amount_cents: -1 }), 400, 'invalid_parameter'],
    ['a float', refund({ amount_cents: 1.5 }), 400, 'invalid_parameter'],
    ['huge', refund({ amount_cents: 1e300 }), 400, 'invalid_parameter'],
    ['a word', refund({ amount_cents: 'all' }), 400, 'invalid_parameter'],
    ['more than paid', refund({ amount_cents: 5_001 }), 409, 'refund_too_large'],
    ['not an id', refund({}, 'not-a-payment'), 404, 'card_payment_not_found'],
    ['an unknown id', refund({}, randomUUID()), 404, 'card_payment_not_found'],
    ['another account', refund({}, payment.id, (await liveConsoleAccount(svc.url)).id), 404, 'card_payment_not_found'],
  ];
  for (const [what, pending, status, code] of cases) {
    const r = await pending;
    t.is(r.status, status, `${what}: ${r.text}`);
    t.is(r.body.error?.code, code, what);
    t.truthy(r.body.error?.request_id, what);
  }
  t.is(Number((await db.query(`SELECT count(*) FROM card_refunds WHERE card_payment_id = $1`, [payment.id])).rows[0].count), 0, 'no refund written');
  for (const [path, status] of [
    ['/console/api/billing/top_ups/not-an-id?mode=live', 404],
    [`/console/api/billing/top_ups/${payment.id}?mode=test`, 404],
    ['/console/api/billing/top_ups?mode=live&limit=0', 400],
    ['/console/api/billing/top_ups?mode=live&limit=100000', 400],
    ['/console/api/billing/top_ups?mode=live&starting_after=nope', 400],
    [`/console/api/billing/top_ups?mode=live&starting_after=${randomUUID()}`, 400],
    ['/console/api/billing/payments?mode=sandbox', 400],
  ] as const) {
    const r = await a.owner.get(path);
    t.is(r.status, status, `${path}: ${r.text}`);
    t.truthy(r.body.error?.code, path);
  }
});

test.serial("the processor no longer knows the account's customer (the operator changed Stripe accounts or keys): a new customer, the top-up works", async (t) => {
  const a = await liveConsoleAccount(svc.url);
  await payCheckout(a, fake, 2_500);
  await db.query(`UPDATE payment_customers SET customer_ref = 'cus_from_the_old_stripe_account' WHERE account_id = $1 AND mode = 'live'`, [a.id]);
  const r = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 2_500 });
  t.is(r.status, 201, r.text);
  const customer = (await db.query(`SELECT customer_ref FROM payment_customers WHERE account_id = $1 AND mode = 'live'`, [a.id])).rows[0].customer_ref;
  t.not(customer, 'cus_from_the_old_stripe_account');
  t.truthy(fake.object(customer), 'a customer the processor knows');
  const { status } = await fake.pay(new URL(r.body.checkout_url).pathname.split('/').pop()!, { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' });
  t.is(status, 303);
  await fake.settled();
  await until('credited', async () => (await receipt(a, r.body.id)).status === 'succeeded');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('a pending checkout whose session the processor no longer knows (another Stripe account): its receipt reads as pending, not a 500', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const created = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 2_500 });
  t.is(created.status, 201, created.text);
  await db.query(`UPDATE card_payments SET checkout_session_id = 'cs_from_the_old_stripe_account' WHERE id = $1`, [created.body.id]);
  const r = await a.owner.get(`/console/api/billing/top_ups/${created.body.id}?mode=live`);
  t.is(r.status, 200, r.text);
  t.like(r.body, { status: 'pending', ledger_line_id: null });
});

test.serial('the return page asked many times at once for a pending checkout asks Stripe once, not once per request (the platform shares its Stripe rate limit)', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const created = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 2_500 });
  t.is(created.status, 201, created.text);
  const session = new URL(created.body.checkout_url).pathname.split('/').pop()!;
  const asked = () => fake.requests.filter((r) => r.method === 'GET' && r.path === `/v1/checkout/sessions/${session}`).length;
  const replies = await Promise.all(Array.from({ length: 40 }, () => a.owner.get(`/console/api/billing/top_ups/${created.body.id}?mode=live`)));
  t.true(replies.every((r) => r.status === 200 && r.body.status === 'pending'));
  t.true(asked() <= 2, `Stripe asked ${asked()} times for 40 reads`);
  // Paid meanwhile: a read a moment later still sees it (the pause is short).
  await fake.pay(session, { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' });
  await until('the return page sees it paid', async () => (await receipt(a, created.body.id)).status === 'succeeded', 5_000);
  await fake.settled();
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});
