/**
 * payments/stripe.ts (the PaymentProvider on the `stripe` SDK) against the fake Stripe: what it
 * asks Stripe for, how it reads the answers, its idempotency keys, how Stripe's errors become
 * PaymentDeclined / ProviderUnavailable, and its webhook verification (signature and tolerance).
 */
import test from 'ava';
import Stripe from 'stripe';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe.ts';
import { createStripeProvider } from '../../payments/stripe.ts';
import { PaymentDeclined, ProviderUnavailable, WebhookSignatureError, type PaymentProvider } from '../../payments/provider.ts';

const YEAR = new Date().getUTCFullYear() + 3;
const CARD = { number: '4242424242424242', exp_month: 11, exp_year: YEAR, cvc: '314' };

let fake: FakeStripe;
let provider: PaymentProvider;
test.before(async () => {
  fake = await startFakeStripe();
  provider = createStripeProvider({ secretKey: fake.secretKey, webhookSecret: fake.webhookSecret, publishableKey: fake.publishableKey, apiBase: fake.url });
});
test.after.always(async () => {
  await fake?.close();
});

let n = 0;
const request = (customerRef: string, o: { saveCard?: boolean } = {}) => ({
  accountId: '00000000-0000-4000-8000-000000000001',
  mode: 'live' as const,
  customerRef,
  amountCents: 5000,
  saveCard: o.saveCard ?? false,
  successUrl: 'https://console.example/console/billing/top-ups/x?mode=live&s={CHECKOUT_SESSION_ID}',
  cancelUrl: 'https://console.example/console/billing?mode=live&top_up=canceled',
  cardPaymentId: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
  description: 'Account balance top-up',
});

const customer = () => provider.createCustomer({ accountId: `00000000-0000-4000-9000-${String(++n).padStart(12, '0')}`, mode: 'live', name: 'Acme Voice', email: 'billing@acme.example' });

/** A customer with a card saved through a checkout paid with `number`; answers the saved card. */
async function savedCard(number: string) {
  const cus = await customer();
  const session = await provider.createCheckoutSession(request(cus, { saveCard: true }));
  const paid = await fake.pay(session.id, { ...CARD, number });
  if (paid.status !== 303) throw new Error(`pay: ${paid.status} ${paid.body}`);
  const s = await provider.retrieveCheckoutSession(session.id);
  const pi = await provider.retrievePayment(s.paymentIntentId!);
  return { cus, paymentMethodId: pi.paymentMethodId! };
}

const lastRequest = (method: string, path: string) => fake.requests.filter((r) => r.method === method && r.path === path).at(-1)!;

test.serial('createCustomer: the account as a Stripe customer, once per account and mode (idempotency key customer:<account>:<mode>)', async (t) => {
  const input = { accountId: '00000000-0000-4000-8000-00000000aaaa', mode: 'live' as const, name: 'Acme Voice', email: 'billing@acme.example' };
  const a = await provider.createCustomer(input);
  const b = await provider.createCustomer(input);
  t.regex(a, /^cus_/);
  t.is(b, a);
  const req = lastRequest('POST', '/v1/customers');
  t.is(req.idempotencyKey, 'customer:00000000-0000-4000-8000-00000000aaaa:live');
  t.like(fake.object(a)!, { name: 'Acme Voice', email: 'billing@acme.example', metadata: { account_id: input.accountId, mode: 'live' } });
});

test.serial('createCheckoutSession: the account as customer, the amount, metadata card_payment_id on session and payment intent; setup_future_usage only when asked', async (t) => {
  const cus = await customer();
  const plain = request(cus);
  const s = await provider.createCheckoutSession(plain);
  t.regex(s.id, /^cs_test_/);
  t.is(s.url, `${fake.url}/pay/${s.id}`);
  t.like(s, { status: 'open', paymentStatus: 'unpaid', paymentIntentId: null, amountCents: 5000, customerRef: cus });
  t.is(s.metadata.card_payment_id, plain.cardPaymentId);
  const req = lastRequest('POST', '/v1/checkout/sessions');
  t.is(req.idempotencyKey, plain.cardPaymentId);
  t.like(req.params, {
    mode: 'payment',
    customer: cus,
    success_url: plain.successUrl,
    cancel_url: plain.cancelUrl,
    line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: '5000', product_data: { name: 'Account balance top-up' } } }],
    payment_intent_data: { metadata: { card_payment_id: plain.cardPaymentId } },
  });
  t.false('setup_future_usage' in req.params.payment_intent_data);

  const saving = await provider.createCheckoutSession(request(cus, { saveCard: true }));
  t.is(lastRequest('POST', '/v1/checkout/sessions').params.payment_intent_data.setup_future_usage, 'off_session');

  // Paid: the session names its payment intent, whose metadata carries the card payment id, and the card is saved.
  t.is((await fake.pay(saving.id, CARD)).status, 303);
  const done = await provider.retrieveCheckoutSession(saving.id);
  t.like(done, { status: 'complete', paymentStatus: 'paid' });
  const pi = await provider.retrievePayment(done.paymentIntentId!);
  t.is(pi.metadata.card_payment_id, lastRequest('POST', '/v1/checkout/sessions').params.metadata.card_payment_id);
  t.is(fake.object(pi.paymentMethodId!)!.customer, cus);
});

test.serial('createCheckoutSession twice for one card payment creates one session at Stripe', async (t) => {
  const r = request(await customer());
  const a = await provider.createCheckoutSession(r);
  const b = await provider.createCheckoutSession(r);
  t.is(b.id, a.id);
  t.is(fake.objectsOf('checkout.session').filter((s) => s.metadata.card_payment_id === r.cardPaymentId).length, 1);
});

test.serial('retrievePayment: card brand, last4, expiry and Stripe\'s receipt_url from the latest charge', async (t) => {
  const cus = await customer();
  const s = await provider.createCheckoutSession(request(cus));
  await fake.pay(s.id, { ...CARD, number: '5555555555554444' });
  const pi = await provider.retrievePayment((await provider.retrieveCheckoutSession(s.id)).paymentIntentId!);
  t.like(pi, { status: 'succeeded', amountCents: 5000, customerRef: cus, failure: null });
  t.deepEqual(pi.card, { brand: 'mastercard', last4: '4444', expMonth: 11, expYear: YEAR });
  t.regex(pi.chargeId!, /^ch_/);
  t.is(pi.receiptUrl, `${fake.url}/receipts/${pi.chargeId}`);
  t.deepEqual(lastRequest('GET', `/v1/payment_intents/${pi.id}`).params.expand, ['latest_charge']);
});

test.serial('chargeSavedCard off-session: succeeds with the card and receipt', async (t) => {
  const { cus, paymentMethodId } = await savedCard('4242424242424242');
  const cardPaymentId = '00000000-0000-4000-8000-0000000c0001';
  const pi = await provider.chargeSavedCard({ customerRef: cus, paymentMethodId, amountCents: 3000, cardPaymentId, description: 'Automatic top-up' });
  t.like(pi, { status: 'succeeded', amountCents: 3000, paymentMethodId, metadata: { card_payment_id: cardPaymentId } });
  t.is(pi.card?.last4, '4242');
  t.truthy(pi.receiptUrl);
  t.like(lastRequest('POST', '/v1/payment_intents').params, { off_session: 'true', confirm: 'true', customer: cus, payment_method: paymentMethodId, amount: '3000', currency: 'usd' });
  t.is(lastRequest('POST', '/v1/payment_intents').idempotencyKey, cardPaymentId);
});

test.serial('chargeSavedCard: the same card payment id twice creates one payment intent at Stripe', async (t) => {
  const { cus, paymentMethodId } = await savedCard('4242424242424242');
  const r = { customerRef: cus, paymentMethodId, amountCents: 2500, cardPaymentId: '00000000-0000-4000-8000-0000000c0002', description: 'Automatic top-up' };
  const a = await provider.chargeSavedCard(r);
  const b = await provider.chargeSavedCard(r);
  t.is(b.id, a.id);
  t.is(fake.objectsOf('payment_intent').filter((p) => p.metadata.card_payment_id === r.cardPaymentId).length, 1);
});

test.serial('chargeSavedCard: a declined card is PaymentDeclined with code, decline_code, message and the payment intent', async (t) => {
  const { cus, paymentMethodId } = await savedCard('4242424242424242');
  fake.cardBehavesAs(paymentMethodId, '4000000000009995');
  const err = await t.throwsAsync(
    provider.chargeSavedCard({ customerRef: cus, paymentMethodId, amountCents: 2500, cardPaymentId: '00000000-0000-4000-8000-0000000c0003', description: 'Automatic top-up' }),
    { instanceOf: PaymentDeclined },
  );
  t.deepEqual(err!.failure, { code: 'card_declined', declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' });
  t.regex(err!.paymentIntentId!, /^pi_/);
  t.is(fake.object(err!.paymentIntentId!)!.status, 'requires_payment_method');
  const pi = await provider.retrievePayment(err!.paymentIntentId!);
  t.like(pi, { status: 'requires_payment_method', failure: { code: 'card_declined', declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' } });
});

test.serial('chargeSavedCard: the authentication card off-session is PaymentDeclined authentication_required', async (t) => {
  const { cus, paymentMethodId } = await savedCard('4000002500003155');
  const err = await t.throwsAsync(
    provider.chargeSavedCard({ customerRef: cus, paymentMethodId, amountCents: 2500, cardPaymentId: '00000000-0000-4000-8000-0000000c0004', description: 'Automatic top-up' }),
    { instanceOf: PaymentDeclined },
  );
  t.like(err!.failure, { code: 'authentication_required', declineCode: 'authentication_required' });
  t.regex(err!.message, /requires authentication/);
});

test.serial('refund: part of a payment, idempotent on our refund id', async (t) => {
  const { cus, paymentMethodId } = await savedCard('4242424242424242');
  const pi = await provider.chargeSavedCard({ customerRef: cus, paymentMethodId, amountCents: 4000, cardPaymentId: '00000000-0000-4000-8000-0000000c0005', description: 'Automatic top-up' });
  const r = { paymentIntentId: pi.id, amountCents: 1500, refundId: '00000000-0000-4000-8000-0000000e0001' };
  const a = await provider.refund(r);
  const b = await provider.refund(r);
  t.like(a, { status: 'succeeded', amountCents: 1500, paymentIntentId: pi.id, chargeId: pi.chargeId });
  t.is(b.id, a.id);
  t.is(fake.object(pi.chargeId!)!.amount_refunded, 1500);
});

test.serial('paymentMethod and detachPaymentMethod (a second detach is not an error)', async (t) => {
  const { paymentMethodId } = await savedCard('5555555555554444');
  t.deepEqual(await provider.paymentMethod(paymentMethodId), { brand: 'mastercard', last4: '4444', expMonth: 11, expYear: YEAR });
  await provider.detachPaymentMethod(paymentMethodId);
  t.is(fake.object(paymentMethodId)!.customer, null);
  await t.notThrowsAsync(provider.detachPaymentMethod(paymentMethodId));
});

test.serial('500 once, 429 once and an unreachable Stripe are ProviderUnavailable (no silent retry); a bad key too, without the key in the message', async (t) => {
  fake.failNext({ status: 500, path: '/v1/checkout/sessions' });
  const r = request(await customer());
  await t.throwsAsync(provider.createCheckoutSession(r), { instanceOf: ProviderUnavailable });
  t.truthy(await provider.createCheckoutSession(r), 'the same request works on the next try');

  fake.failNext({ status: 429 });
  await t.throwsAsync(provider.retrieveCheckoutSession('cs_test_x'), { instanceOf: ProviderUnavailable });

  const nowhere = createStripeProvider({ secretKey: fake.secretKey, webhookSecret: fake.webhookSecret, publishableKey: null, apiBase: 'http://127.0.0.1:9' });
  await t.throwsAsync(nowhere.retrievePayment('pi_x'), { instanceOf: ProviderUnavailable });

  const badKey = 'sk_test_' + 'z'.repeat(24);
  const wrongKey = createStripeProvider({ secretKey: badKey, webhookSecret: fake.webhookSecret, publishableKey: null, apiBase: fake.url });
  const err = await t.throwsAsync(wrongKey.retrievePayment('pi_x'), { instanceOf: ProviderUnavailable });
  t.false(err!.message.includes('zzzz'));
});

test.serial('verifyWebhook: an event signed as Stripe signs it is accepted; a wrong signature, a missing header and a timestamp outside 300 s are refused', (t) => {
  const payload = JSON.stringify({ id: 'evt_1', object: 'event', type: 'checkout.session.completed', created: 1, livemode: false, data: { object: { id: 'cs_test_1', object: 'checkout.session' } } }, null, 2);
  const raw = Buffer.from(payload);
  const good = Stripe.webhooks.generateTestHeaderString({ payload, secret: fake.webhookSecret });
  t.deepEqual(provider.verifyWebhook(raw, good), { id: 'evt_1', type: 'checkout.session.completed', created: 1, livemode: false, object: { id: 'cs_test_1', object: 'checkout.session' } });
  t.is(provider.verifyWebhook(raw, fake.signatureHeader(payload)).id, 'evt_1', "the fake's header is accepted");

  const wrong = Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_not_ours' });
  t.throws(() => provider.verifyWebhook(raw, wrong), { instanceOf: WebhookSignatureError });
  t.throws(() => provider.verifyWebhook(raw, undefined), { instanceOf: WebhookSignatureError });
  t.throws(() => provider.verifyWebhook(Buffer.from(payload.replace('evt_1', 'evt_2')), good), { instanceOf: WebhookSignatureError }, 'a changed body');

  const now = Math.floor(Date.now() / 1000);
  const old = Stripe.webhooks.generateTestHeaderString({ payload, secret: fake.webhookSecret, timestamp: now - 301 });
  t.throws(() => provider.verifyWebhook(raw, old), { instanceOf: WebhookSignatureError, message: /tolerance/ });
  const recent = Stripe.webhooks.generateTestHeaderString({ payload, secret: fake.webhookSecret, timestamp: now - 290 });
  t.is(provider.verifyWebhook(raw, recent).id, 'evt_1');
});
