/**
 * The simulated card processor of test mode (actors/payments/simulated-provider.ts) and the
 * console's routes of its card form: a session read and paid through the console as a signed-in
 * person, Stripe's test cards deciding, Stripe-shaped events handed to the payments room's
 * callback (observed here), and another account's session not found.
 */
import test from 'ava';
import crypto from 'node:crypto';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { consoleAs, type ConsoleClient } from '../helpers/console.ts';
import { createPool } from '../../db/pool.ts';
import { createSimulatedProvider, type SimulatedProvider } from '../../actors/payments/simulated-provider.ts';
import { PaymentDeclined, type ProviderEvent } from '../../payments/provider.ts';

const YEAR = new Date().getUTCFullYear() + 2;
const VISA = { card_number: '4242 4242 4242 4242', exp_month: 12, exp_year: YEAR, cvc: '123' };

let svc: TestService;
let owner: ConsoleClient;
let accountId: string;
let processor: SimulatedProvider;
const seen: ProviderEvent[] = [];
test.before(async () => {
  svc = await startTestService();
  processor = svc.services.simulatedCheckout;
  processor.observe((e) => seen.push(e));
  const a = await makeAccount(svc.url);
  accountId = a.id;
  owner = await consoleAs(svc.url, a.id, 'owner');
});
test.after.always(async () => {
  await svc?.stop();
});

/** Events first seen since `from` (an event handed over again has the same id). */
const eventsSince = (from: number) => [...new Map(seen.slice(from).map((e) => [e.id, e])).values()];

async function openCheckout(accountId: string, o: { saveCard?: boolean; amountCents?: number; mode?: 'test' | 'live' } = {}) {
  const mode = o.mode ?? 'test';
  const customerRef = await processor.createCustomer({ accountId, mode, name: 'Agency', email: null });
  const cardPaymentId = crypto.randomUUID();
  const session = await processor.createCheckoutSession({
    accountId,
    mode,
    customerRef,
    amountCents: o.amountCents ?? 5000,
    saveCard: o.saveCard ?? false,
    successUrl: `${svc.url}/console/billing/top-ups/${cardPaymentId}?mode=${mode}&session={CHECKOUT_SESSION_ID}`,
    cancelUrl: `${svc.url}/console/billing?mode=${mode}&top_up=canceled`,
    cardPaymentId,
    description: 'Account balance top-up',
  });
  return { session, cardPaymentId, customerRef };
}


test.serial('a checkout: Stripe-shaped ids, url on the console, and the card form reads it', async (t) => {
  const { session, cardPaymentId, customerRef } = await openCheckout(accountId, { saveCard: true });
  t.regex(session.id, /^cs_test_[0-9A-Za-z]{58}$/);
  t.regex(customerRef, /^cus_test_/);
  t.is(session.url, `${svc.url}/console/checkout/${session.id}`);
  t.like(session, { status: 'open', paymentStatus: 'unpaid', paymentIntentId: null, amountCents: 5000, customerRef, metadata: { card_payment_id: cardPaymentId } });
  t.is(await processor.createCustomer({ accountId, mode: 'test', name: 'x', email: null }), customerRef, 'one customer per account and mode');

  const view = await owner.get(`/console/api/billing/simulated_checkout/${session.id}`);
  t.is(view.status, 200);
  t.deepEqual(view.body, {
    object: 'simulated_checkout',
    id: session.id,
    status: 'open',
    amount_cents: 5000,
    save_card: true,
    card_payment_id: cardPaymentId,
    success_url: `${svc.url}/console/billing/top-ups/${cardPaymentId}?mode=test&session=${session.id}`,
    cancel_url: `${svc.url}/console/billing?mode=test&top_up=canceled`,
  });

  const again = await processor.createCheckoutSession({ accountId, mode: 'test', customerRef, amountCents: 5000, saveCard: true, successUrl: 'x', cancelUrl: 'y', cardPaymentId, description: 'd' });
  t.is(again.id, session.id, 'the same card payment opens the same session');
});

test.serial('paying with 4242: complete, redirect to the success URL, payment_intent.succeeded and checkout.session.completed shaped as Stripe\'s', async (t) => {
  const { session, cardPaymentId, customerRef } = await openCheckout(accountId, { saveCard: true, amountCents: 7500 });
  const from = seen.length;
  const paid = await owner.post(`/console/api/billing/simulated_checkout/${session.id}/pay`, VISA);
  t.is(paid.status, 200, paid.text);
  t.deepEqual(paid.body, { status: 'complete', redirect_url: `${svc.url}/console/billing/top-ups/${cardPaymentId}?mode=test&session=${session.id}` });

  const events = eventsSince(from);
  t.deepEqual(events.map((e) => e.type), ['payment_intent.succeeded', 'checkout.session.completed']);
  for (const e of events) {
    t.regex(e.id, /^evt_test_/);
    t.false(e.livemode);
    t.true(Number.isInteger(e.created) && Math.abs(e.created - Date.now() / 1000) < 60);
  }
  const [pi, cs] = [events[0]!.object, events[1]!.object];
  t.like(cs, {
    id: session.id,
    object: 'checkout.session',
    mode: 'payment',
    status: 'complete',
    payment_status: 'paid',
    amount_total: 7500,
    currency: 'usd',
    customer: customerRef,
    client_reference_id: cardPaymentId,
    metadata: { card_payment_id: cardPaymentId, account_id: accountId, mode: 'test' },
    livemode: false,
    url: null,
  });
  t.regex(cs.payment_intent, /^pi_test_/);
  t.like(pi, { id: cs.payment_intent, object: 'payment_intent', status: 'succeeded', amount: 7500, amount_received: 7500, currency: 'usd', customer: customerRef, setup_future_usage: 'off_session', metadata: { card_payment_id: cardPaymentId }, last_payment_error: null });
  t.regex(pi.payment_method, /^pm_test_/);
  t.regex(pi.latest_charge, /^ch_test_/);

  // What the payments room asks the processor afterwards, as it asks Stripe.
  t.like(await processor.retrieveCheckoutSession(session.id), { status: 'complete', paymentStatus: 'paid', paymentIntentId: pi.id });
  t.like(await processor.retrievePayment(pi.id), {
    status: 'succeeded',
    amountCents: 7500,
    card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: YEAR },
    paymentMethodId: pi.payment_method,
    receiptUrl: null,
    chargeId: pi.latest_charge,
  });
  t.deepEqual(await processor.paymentMethod(pi.payment_method), { brand: 'visa', last4: '4242', expMonth: 12, expYear: YEAR });

  // A second click (or a reload) pays nothing more.
  const twice = await owner.post(`/console/api/billing/simulated_checkout/${session.id}/pay`, VISA);
  t.is(twice.status, 200);
  t.is(twice.body.redirect_url, paid.body.redirect_url);
  t.deepEqual(eventsSince(from).map((e) => e.id), events.map((e) => e.id));
  t.is((await owner.get(`/console/api/billing/simulated_checkout/${session.id}`)).body.status, 'complete');
});

test.serial('declines answer 402 card_declined with Stripe\'s message; the session stays open and another card pays it', async (t) => {
  const { session } = await openCheckout(accountId);
  const from = seen.length;
  const pay = (card: Partial<typeof VISA>) => owner.post(`/console/api/billing/simulated_checkout/${session.id}/pay`, { ...VISA, ...card });
  const cases: [Partial<typeof VISA>, string][] = [
    [{ card_number: '4000000000000002' }, 'Your card was declined.'],
    [{ card_number: '4000000000009995' }, 'Your card has insufficient funds.'],
    [{ card_number: '4000000000000069' }, 'Your card has expired.'],
    [{ card_number: '4242424242424241' }, 'Your card number is incorrect.'],
    [{ exp_year: 2020 }, "Your card's expiration year is invalid."],
    [{ exp_month: 13 }, "Your card's expiration month is invalid."],
    [{ cvc: '1' }, "Your card's security code is invalid."],
    [{ card_number: '4111111111111111' }, 'Your card was declined. Your request was in test mode, but used a non test card.'],
  ];
  for (const [card, message] of cases) {
    const r = await pay(card);
    t.is(r.status, 402, JSON.stringify(card));
    t.like(r.body.error, { type: 'invalid_request_error', code: 'card_declined', message });
  }
  // Three declines reached the bank (the field errors and the real card did not): each a payment_failed event.
  const failed = eventsSince(from).filter((e) => e.type === 'payment_intent.payment_failed');
  t.deepEqual(failed.map((e) => e.object.last_payment_error.decline_code), ['generic_decline', 'insufficient_funds', 'expired_card']);
  t.true(failed.every((e) => e.object.status === 'requires_payment_method' && e.object.id === failed[0]!.object.id), 'one payment intent per checkout');
  t.is((await owner.get(`/console/api/billing/simulated_checkout/${session.id}`)).body.status, 'open');

  const ok = await pay({ card_number: '5555-5555-5555-4444', exp_month: '11' as any, exp_year: String(YEAR).slice(2) as any });
  t.is(ok.status, 200, ok.text);
  const pi = await processor.retrievePayment((await processor.retrieveCheckoutSession(session.id)).paymentIntentId!);
  t.like(pi, { status: 'succeeded', card: { brand: 'mastercard', last4: '4444', expMonth: 11, expYear: YEAR }, failure: null });
});

test.serial('the authentication card succeeds on the form, and fails off-session with authentication_required', async (t) => {
  const { session, customerRef } = await openCheckout(accountId, { saveCard: true });
  t.is((await owner.post(`/console/api/billing/simulated_checkout/${session.id}/pay`, { ...VISA, card_number: '4000002500003155' })).status, 200);
  const pi = await processor.retrievePayment((await processor.retrieveCheckoutSession(session.id)).paymentIntentId!);
  const from = seen.length;
  const cardPaymentId = crypto.randomUUID();
  const err = await t.throwsAsync(
    processor.chargeSavedCard({ customerRef, paymentMethodId: pi.paymentMethodId!, amountCents: 2500, cardPaymentId, description: 'Automatic top-up' }),
    { instanceOf: PaymentDeclined },
  );
  t.like(err!.failure, { code: 'authentication_required', declineCode: 'authentication_required' });
  t.deepEqual(eventsSince(from).map((e) => e.type), ['payment_intent.payment_failed']);
  // The same card payment again: the same answer, no new payment intent.
  const again = await t.throwsAsync(processor.chargeSavedCard({ customerRef, paymentMethodId: pi.paymentMethodId!, amountCents: 2500, cardPaymentId, description: 'Automatic top-up' }), { instanceOf: PaymentDeclined });
  t.is(again!.paymentIntentId, err!.paymentIntentId);
});

test.serial('a saved visa charged off-session succeeds; a refund sends charge.refunded and is idempotent on its id', async (t) => {
  const { session, customerRef } = await openCheckout(accountId, { saveCard: true });
  await owner.post(`/console/api/billing/simulated_checkout/${session.id}/pay`, VISA);
  const saved = await processor.retrievePayment((await processor.retrieveCheckoutSession(session.id)).paymentIntentId!);
  const cardPaymentId = crypto.randomUUID();
  const charged = await processor.chargeSavedCard({ customerRef, paymentMethodId: saved.paymentMethodId!, amountCents: 3000, cardPaymentId, description: 'Automatic top-up' });
  t.like(charged, { status: 'succeeded', amountCents: 3000, metadata: { card_payment_id: cardPaymentId } });
  const from = seen.length;
  const refundId = crypto.randomUUID();
  const a = await processor.refund({ paymentIntentId: charged.id, amountCents: 1000, refundId });
  const b = await processor.refund({ paymentIntentId: charged.id, amountCents: 1000, refundId });
  t.regex(a.id, /^re_test_/);
  t.is(b.id, a.id);
  t.like(a, { status: 'succeeded', amountCents: 1000, paymentIntentId: charged.id, chargeId: charged.chargeId });
  const refunded = eventsSince(from);
  t.deepEqual(refunded.map((e) => e.type), ['charge.refunded']);
  t.like(refunded[0]!.object, { object: 'charge', id: charged.chargeId, amount: 3000, amount_refunded: 1000, refunded: false, payment_intent: charged.id });
  await processor.detachPaymentMethod(saved.paymentMethodId!);
  await t.throwsAsync(processor.chargeSavedCard({ customerRef, paymentMethodId: saved.paymentMethodId!, amountCents: 3000, cardPaymentId: crypto.randomUUID(), description: 'x' }));
});

test.serial("another account's session, a live one and an unknown id are not found; a viewer cannot pay", async (t) => {
  const other = await makeAccount(svc.url);
  const { session } = await openCheckout(other.id);
  const get = await owner.get(`/console/api/billing/simulated_checkout/${session.id}`);
  t.is(get.status, 404);
  t.is(get.body.error.code, 'checkout_session_not_found');
  const pay = await owner.post(`/console/api/billing/simulated_checkout/${session.id}/pay`, VISA);
  t.is(pay.status, 404);
  t.is(pay.body.error.code, 'checkout_session_not_found');
  t.is((await processor.retrieveCheckoutSession(session.id)).status, 'open', 'nothing paid');

  const live = await openCheckout(accountId, { mode: 'live' });
  t.is((await owner.get(`/console/api/billing/simulated_checkout/${live.session.id}`)).status, 404);
  t.is((await owner.get(`/console/api/billing/simulated_checkout/cs_test_nope`)).status, 404);

  const viewer = await consoleAs(svc.url, accountId, 'viewer');
  const mine = await openCheckout(accountId);
  t.is((await viewer.get(`/console/api/billing/simulated_checkout/${mine.session.id}`)).status, 200, 'billing:read');
  const refused = await viewer.post(`/console/api/billing/simulated_checkout/${mine.session.id}/pay`, VISA);
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'role_forbidden');
});

test.serial('an event the payments room did not take is handed over again, with the same id, until it is', async (t) => {
  const pool = createPool(svc.databaseUrl, 2);
  const taken: ProviderEvent[] = [];
  let failing = true;
  const own = createSimulatedProvider({
    pool,
    publicUrl: svc.url,
    onEvent: async (e) => {
      if (failing) throw new Error('inbox down');
      taken.push(e);
    },
  });
  try {
    // Drain what the service's processor left pending (its onEvent is the payments room's).
    failing = false;
    await own.deliverPending();
    taken.length = 0;
    failing = true;
    const { session } = await (async () => {
      const customerRef = await own.createCustomer({ accountId, mode: 'test', name: 'A', email: null });
      const cardPaymentId = crypto.randomUUID();
      return { session: await own.createCheckoutSession({ accountId, mode: 'test', customerRef, amountCents: 2500, saveCard: false, successUrl: 'https://x.example/{CHECKOUT_SESSION_ID}', cancelUrl: 'https://x.example/c', cardPaymentId, description: 'Top-up' }) };
    })();
    const paid = await own.pay(accountId, session.id, { cardNumber: '4242424242424242', expMonth: 1, expYear: YEAR, cvc: '000' });
    t.is(paid.redirectUrl, `https://x.example/${session.id}`, 'the payment stands though its events were not taken');
    t.is(taken.length, 0);
    failing = false;
    t.is(await own.deliverPending(), 2);
    t.deepEqual(taken.map((e) => e.type), ['payment_intent.succeeded', 'checkout.session.completed']);
    t.is(await own.deliverPending(), 0, 'taken once');
  } finally {
    await pool.end();
  }
});

test.serial('a session looked at after 24 hours is expired: checkout.session.expired once, and paying it is checkout_session_expired', async (t) => {
  const pool = createPool(svc.databaseUrl, 2);
  let now = new Date();
  const taken: ProviderEvent[] = [];
  const own = createSimulatedProvider({ pool, publicUrl: svc.url, clock: { now: () => now }, onEvent: async (e) => void taken.push(e) });
  try {
    await own.deliverPending();
    taken.length = 0;
    const customerRef = await own.createCustomer({ accountId, mode: 'test', name: 'A', email: null });
    const s = await own.createCheckoutSession({ accountId, mode: 'test', customerRef, amountCents: 2500, saveCard: false, successUrl: 'https://x.example/ok', cancelUrl: 'https://x.example/c', cardPaymentId: crypto.randomUUID(), description: 'Top-up' });
    now = new Date(now.getTime() + 24 * 3600 * 1000 - 1000);
    t.is((await own.checkout(accountId, s.id)).status, 'open', 'still open a second before');
    now = new Date(now.getTime() + 1000);
    t.like(await own.retrieveCheckoutSession(s.id), { status: 'expired', url: null });
    t.is((await own.checkout(accountId, s.id)).status, 'expired');
    t.deepEqual(taken.map((e) => [e.type, e.object.id, e.object.status]), [['checkout.session.expired', s.id, 'expired']]);
    const err = await t.throwsAsync(own.pay(accountId, s.id, { cardNumber: '4242424242424242', expMonth: 1, expYear: YEAR, cvc: '000' }));
    t.is((err as any).code, 'checkout_session_expired');
    t.is(taken.length, 1, 'expired once');
  } finally {
    await pool.end();
  }
});
