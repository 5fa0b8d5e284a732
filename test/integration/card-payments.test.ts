import test from 'ava';
import type pg from 'pg';
import type { FakeStripe } from '../fakes/stripe.ts';
import type { TestService } from '../helpers/service.ts';
import { startTestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { card, liveConsoleAccount, payCheckout, sessionOf, startWithFakeStripe, type LiveAccount } from '../helpers/payments.ts';
import { until } from '../helpers/wait.ts';

/*
 * Issue 22, "Card payments through Stripe": a top-up from the console is a Stripe Checkout
 * Session; the webhook lands in the inbox first and writes the top-up and its bonus through the
 * money writer exactly once, whether it arrives twice, late, out of order, or the return page is
 * reloaded. Against the fake Stripe, through the production adapter (payments/stripe.ts).
 */

let svc: TestService;
let fake: FakeStripe;
let db: pg.Pool;
test.before(async () => {
  ({ svc, fake, db } = await startWithFakeStripe());
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
  await fake?.close();
});
test.afterEach.always(() => fake.scriptDeliveries(null));

const ledger = async (a: LiveAccount) => (await a.liveApi.get('/v1/usage?limit=100')).body.data as any[];
const balance = async (a: LiveAccount) => (await a.liveApi.get('/v1/balance')).body;
const eventsStored = async () => Number((await db.query(`SELECT count(*) FROM processor_events`)).rows[0].count);

/** Exactly one top-up of 50,000 with its 3 % bonus (1,500): the books after a paid checkout. */
async function creditedOnce(t: any, a: LiveAccount, paymentId: string) {
  const lines = await ledger(a);
  const topUps = lines.filter((l) => l.type === 'top_up');
  const bonuses = lines.filter((l) => l.type === 'bonus');
  t.is(topUps.length, 1, 'one top-up line');
  t.is(bonuses.length, 1, 'one bonus line');
  t.like(topUps[0], { amount_cents: 50_000, applied: true });
  t.like(bonuses[0], { amount_cents: 1_500 });
  t.like(await balance(a), { balance_cents: 51_500, paid_cents: 50_000, bonus_cents: 1_500 });
  const receipt = await a.owner.get(`/console/api/billing/top_ups/${paymentId}?mode=live`);
  t.like(receipt.body, { object: 'card_payment', status: 'succeeded', amount_cents: 50_000, bonus_cents: 1_500, refunded_cents: 0, card: { brand: 'visa', last4: '4242' }, ledger_line_id: topUps[0].id });
  t.regex(receipt.body.receipt_url, /\/receipts\/ch_/);
  t.truthy(receipt.body.paid_at);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
}

test.serial('the payments setup: Stripe in live mode, the minimum and the bonus tiers', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const r = await a.owner.get('/console/api/billing/payments?mode=live');
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, {
    object: 'payments_setup',
    mode: 'live',
    processor: 'stripe',
    publishable_key: fake.publishableKey,
    minimum_top_up_cents: 2_500,
    bonus_tiers: [
      { from_cents: 50_000, percent: 3 },
      { from_cents: 250_000, percent: 5 },
      { from_cents: 1_000_000, percent: 8 },
    ],
    saved_card: null,
    auto_top_up: null,
  });
  const small = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 2_499 });
  t.is(small.status, 400);
  t.is(small.body.error.code, 'top_up_too_small');
});

test.serial('a checkout paid at the page credits 50,000 and the 3 % bonus (1,500) once, with every webhook delivered twice and the return page reloaded', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  fake.scriptDeliveries({ twice: true });
  const created = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 50_000 });
  t.is(created.status, 201, created.text);
  t.like(created.body, { object: 'card_payment', mode: 'live', kind: 'checkout', status: 'pending', amount_cents: 50_000, bonus_cents: 0, card: null, ledger_line_id: null });
  t.regex(created.body.checkout_url, /\/pay\/cs_/);
  const session = fake.object(sessionOf(created.body))!;
  t.is(session.metadata.card_payment_id, created.body.id, 'the session names our card payment');
  t.is(session.success_url, `${svc.url}/console/billing/top-ups/${created.body.id}?mode=live`);
  const paid = await fake.pay(session.id, card());
  t.is(paid.status, 303);
  await fake.settled();
  for (let i = 0; i < 3; i++) t.is((await a.owner.get(`/console/api/billing/top_ups/${created.body.id}?mode=live`)).status, 200);
  await creditedOnce(t, a, created.body.id);
  const list = await a.owner.get('/console/api/billing/top_ups?mode=live');
  t.is(list.body.data.length, 1);
  t.is(list.body.data[0].id, created.body.id);
  t.is((await a.owner.get('/console/api/billing/top_ups?mode=test')).body.data.length, 0, 'live receipts are not test receipts');
});

test.serial('webhooks held back and sent newest first, late, after the return page already credited the payment: credited once', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  fake.holdEvents();
  const { payment } = await payCheckout(a, fake, 50_000);
  // The return page comes first: it asks Stripe and credits.
  t.like((await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body, { status: 'succeeded', bonus_cents: 1_500 });
  await fake.releaseEvents({ reverse: true });
  await fake.settled();
  await creditedOnce(t, a, payment.id);
  const deliveries = fake.deliveries.filter((d) => d.status !== 200);
  t.deepEqual(deliveries, [], 'every late event acknowledged');
});

test.serial('out of order: payment_intent.succeeded before checkout.session.completed, without the return page', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  fake.holdEvents();
  const { payment } = await payCheckout(a, fake, 50_000);
  await fake.releaseEvents({ reverse: true });
  await fake.settled();
  await until('the webhooks credit the payment', async () => (await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body.status === 'succeeded');
  await creditedOnce(t, a, payment.id);
});

test.serial('a webhook with a wrong or stale signature is answered 400 invalid_webhook_signature and nothing is stored', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const before = await eventsStored();
  fake.scriptDeliveries({ signature: 'wrong' });
  const { payment } = await payCheckout(a, fake, 50_000);
  await fake.settled();
  const attempts = fake.deliveries.filter((d) => d.at.getTime() >= new Date(payment.created_at).getTime());
  t.true(attempts.length > 0);
  t.true(attempts.every((d) => d.status === 400), 'every attempt refused');
  const last = fake.events.at(-1)!;
  t.is(await fake.redeliver(last.id, { signature: 'stale' }), 400, 'a timestamp outside the tolerance');
  const forged = await fetch(`${svc.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' }, body: JSON.stringify(last) });
  t.is(forged.status, 400);
  t.is((await forged.json()).error.code, 'invalid_webhook_signature');
  t.is(await eventsStored(), before, 'nothing stored');
  t.is((await balance(a)).balance_cents, 0, 'nothing credited by a webhook');
  // The return page still confirms it with Stripe.
  fake.scriptDeliveries(null);
  t.is((await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body.status, 'succeeded');
  await creditedOnce(t, a, payment.id);
});

test.serial('a webhook signed correctly is stored once by its event id, even sent again', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const { payment } = await payCheckout(a, fake, 50_000);
  await fake.settled();
  const session = fake.objectsOf('checkout.session').find((s) => s.metadata?.card_payment_id === payment.id)!;
  const completed = fake.events.find((e) => e.type === 'checkout.session.completed' && e.data.object.id === session.id)!;
  t.is(await fake.redeliver(completed.id), 200);
  t.is(await fake.redeliver(completed.id), 200);
  const stored = await db.query(`SELECT count(*)::int AS n, bool_and(processed_at IS NOT NULL) AS done FROM processor_events WHERE event_id = $1`, [completed.id]);
  t.deepEqual(stored.rows[0], { n: 1, done: true });
  await creditedOnce(t, a, payment.id);
});

test.serial('a declined card on the page leaves the top-up pending; an expired session cancels it; nothing is credited', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const created = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 5_000 });
  const declined = await fake.pay(sessionOf(created.body), card('4000000000000002'));
  t.not(declined.status, 303);
  await fake.settled();
  t.like((await a.owner.get(`/console/api/billing/top_ups/${created.body.id}?mode=live`)).body, { status: 'pending', ledger_line_id: null });
  const expired = await fetch(`${fake.url}/v1/checkout/sessions/${sessionOf(created.body)}/expire`, { method: 'POST', headers: { authorization: `Bearer ${fake.secretKey}` } });
  t.is(expired.status, 200);
  await fake.settled();
  await until('the expiry cancels the payment', async () => (await a.owner.get(`/console/api/billing/top_ups/${created.body.id}?mode=live`)).body.status === 'canceled');
  t.is((await balance(a)).balance_cents, 0);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('Stripe unreachable when the top-up is created: 503 processor_unavailable, nothing charged', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  fake.failNext({ status: 503, path: '/v1/checkout/sessions', method: 'POST' });
  const r = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 5_000 });
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, 'processor_unavailable');
  const list = await a.owner.get('/console/api/billing/top_ups?mode=live');
  t.like(list.body.data[0], { status: 'canceled', failure: { code: 'processor_unavailable' } });
});

test.serial('the processor customer is created once per account and mode', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 5_000 });
  await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 6_000 });
  const customers = new Set(fake.objectsOf('checkout.session').slice(-2).map((s) => s.customer));
  t.is(customers.size, 1, 'both checkouts for one Stripe customer');
  const stored = await db.query(`SELECT count(*)::int AS n FROM payment_customers WHERE account_id = $1`, [a.id]);
  t.is(stored.rows[0].n, 1);
});

test('without Stripe settings live card payments are not configured (409 payments_not_configured)', async (t) => {
  const bare = await startTestService();
  try {
    const a = await liveConsoleAccount(bare.url);
    t.like((await a.owner.get('/console/api/billing/payments?mode=live')).body, { processor: null, publishable_key: null });
    const r = await a.owner.post('/console/api/billing/top_ups', { mode: 'live', amount_cents: 5_000 });
    t.is(r.status, 409, r.text);
    t.is(r.body.error.code, 'payments_not_configured');
    const put = await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 1_000, amount_cents: 2_500 });
    t.is(put.body.error.code, 'payments_not_configured');
    const hook = await fetch(`${bare.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    t.is(hook.status, 400);
  } finally {
    await bare.stop();
  }
});

test.serial('test mode: the simulated card form completes the same flow; the top-up and its bonus are priced lines (applied: false), the test balance stays 0', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const setup = await a.owner.get('/console/api/billing/payments?mode=test');
  t.like(setup.body, { processor: 'simulated', publishable_key: null });
  const created = await a.owner.post('/console/api/billing/top_ups', { mode: 'test', amount_cents: 50_000 });
  t.is(created.status, 201, created.text);
  t.regex(created.body.checkout_url, /\/console\/checkout\/cs_/);
  const session = new URL(created.body.checkout_url).pathname.split('/').pop()!;
  const form = await a.owner.get(`/console/api/billing/simulated_checkout/${session}`);
  t.like(form.body, { status: 'open', amount_cents: 50_000, card_payment_id: created.body.id });
  const declined = await a.owner.post(`/console/api/billing/simulated_checkout/${session}/pay`, { card_number: '4000000000000002', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' });
  t.is(declined.status, 402);
  t.is(declined.body.error.code, 'card_declined');
  const paid = await a.owner.post(`/console/api/billing/simulated_checkout/${session}/pay`, { card_number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' });
  t.is(paid.status, 200, paid.text);
  t.is(paid.body.redirect_url, `${svc.url}/console/billing/top-ups/${created.body.id}?mode=test`);
  for (let i = 0; i < 2; i++) {
    t.like((await a.owner.get(`/console/api/billing/top_ups/${created.body.id}?mode=test`)).body, {
      status: 'succeeded',
      mode: 'test',
      bonus_cents: 1_500,
      receipt_url: null,
      card: { brand: 'visa', last4: '4242' },
    });
  }
  const lines = (await a.api.get('/v1/usage?limit=100')).body.data as any[];
  t.deepEqual(
    lines.filter((l) => l.type === 'top_up' || l.type === 'bonus').map((l) => [l.type, l.amount_cents, l.applied]).sort(),
    [
      ['bonus', 1_500, false],
      ['top_up', 50_000, false],
    ],
  );
  t.like((await a.api.get('/v1/balance')).body, { balance_cents: 0, bonus_cents: 0 });
  t.like((await balance(a)), { balance_cents: 0 }, 'the live balance is untouched');
  t.is((await a.owner.get(`/console/api/billing/top_ups/${created.body.id}?mode=live`)).body.error.code, 'card_payment_not_found', 'a test payment is not a live one');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});
