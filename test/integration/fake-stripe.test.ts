/**
 * The fake Stripe (test/fakes/stripe.ts) speaks Stripe's protocol: its webhooks pass the real
 * SDK's signature check (`stripe.webhooks.constructEvent`) and its signer agrees with the SDK's
 * `generateTestHeaderString`; its wire format (bracket notation, auth, idempotency, errors) is
 * Stripe's, checked with raw HTTP where the SDK would hide it.
 */
import test from 'ava';
import Stripe from 'stripe';
import { startFakeStripe, parseStripeForm, type FakeStripe } from '../fakes/stripe.ts';
import { startReceiver } from '../helpers/receiver.ts';

const CARD = { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' };

let fake: FakeStripe;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let status = 200;
test.before(async () => {
  receiver = await startReceiver(() => ({ status }));
  fake = await startFakeStripe({ webhookUrl: receiver.url, webhookRetryMs: 20 });
});
test.after.always(async () => {
  await fake?.close();
  await receiver?.close();
});

const sdk = () => {
  const u = new URL(fake.url);
  return new Stripe(fake.secretKey, { host: u.hostname, port: Number(u.port), protocol: 'http', maxNetworkRetries: 0 });
};

async function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await fetch(fake.url + path, {
    method,
    headers: { authorization: `Bearer ${fake.secretKey}`, ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
    body,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

async function paidSession(o: { saveCard?: boolean } = {}) {
  const stripe = sdk();
  const customer = await stripe.customers.create({ name: 'Acme' });
  const session = await stripe.checkout.sessions.create({
    mode: 'payment',
    customer: customer.id,
    line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 2500, product_data: { name: 'Account balance top-up' } } }],
    payment_intent_data: { metadata: { card_payment_id: 'cp_1' }, ...(o.saveCard ? { setup_future_usage: 'off_session' as const } : {}) },
    metadata: { card_payment_id: 'cp_1' },
    success_url: 'https://app.example/done?session={CHECKOUT_SESSION_ID}',
    cancel_url: 'https://app.example/cancel',
  });
  return { stripe, customer, session };
}

test.serial('parses Stripe bracket notation: nested objects, indexed and empty-bracket arrays', (t) => {
  t.deepEqual(parseStripeForm('metadata[card_payment_id]=abc&line_items[0][price_data][unit_amount]=2500&line_items[0][quantity]=1&expand[]=a&expand[]=b'), {
    metadata: { card_payment_id: 'abc' },
    line_items: [{ price_data: { unit_amount: '2500' }, quantity: '1' }],
    expand: ['a', 'b'],
  });
  t.deepEqual(parseStripeForm('expand[0]=payment_intent'), { expand: ['payment_intent'] });
});

test.serial("a wrong or missing secret key is 401 in Stripe's error shape", async (t) => {
  const wrong = await raw('GET', '/v1/customers', undefined, { authorization: 'Bearer sk_test_wrongwrongwrong' });
  t.is(wrong.status, 401);
  t.is(wrong.body.error.type, 'invalid_request_error');
  t.regex(wrong.body.error.message, /^Invalid API Key provided: sk_test_\**rong$/);
  const none = await raw('GET', '/v1/customers', undefined, { authorization: '' });
  t.is(none.status, 401);
  t.regex(none.body.error.message, /You did not provide an API key/);
});

test.serial('Idempotency-Key: same key and parameters replay the first answer; other parameters are a 400 idempotency_error', async (t) => {
  const first = await raw('POST', '/v1/customers', 'name=Acme&metadata[a]=1', { 'idempotency-key': 'k-1' });
  const again = await raw('POST', '/v1/customers', 'name=Acme&metadata[a]=1', { 'idempotency-key': 'k-1' });
  t.is(first.status, 200);
  t.is(again.body.id, first.body.id);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  const other = await raw('POST', '/v1/customers', 'name=Other', { 'idempotency-key': 'k-1' });
  t.is(other.status, 400);
  t.is(other.body.error.type, 'idempotency_error');
  t.is(fake.objectsOf('customer').filter((c) => c.name === 'Acme').length, 1);
});

test.serial('unknown parameters, missing parameters and unknown ids are refused as Stripe refuses them', async (t) => {
  const unknown = await raw('POST', '/v1/customers', 'nmae=Acme');
  t.is(unknown.status, 400);
  t.like(unknown.body.error, { type: 'invalid_request_error', code: 'parameter_unknown', param: 'nmae' });
  const missing = await raw('POST', '/v1/payment_intents', 'currency=usd');
  t.like(missing.body.error, { type: 'invalid_request_error', code: 'parameter_missing', param: 'amount' });
  const gone = await raw('GET', '/v1/payment_intents/pi_nope');
  t.is(gone.status, 404);
  t.like(gone.body.error, { type: 'invalid_request_error', code: 'resource_missing', param: 'id', message: "No such payment_intent: 'pi_nope'" });
});

test.serial('the hosted page pays a session: 303 to success_url with the session id, session complete, payment intent expandable with its charge', async (t) => {
  const { stripe, customer, session } = await paidSession({ saveCard: true });
  t.regex(session.id, /^cs_test_/);
  t.is(session.url, `${fake.url}/pay/${session.id}`);
  const form = await fetch(session.url!);
  t.regex(await form.text(), /<label for="number">Card number<\/label>/);
  const paid = await fake.pay(session.id, CARD);
  t.is(paid.status, 303);
  t.is(paid.location, `https://app.example/done?session=${session.id}`);
  const done = await stripe.checkout.sessions.retrieve(session.id, { expand: ['payment_intent'] });
  t.is(done.status, 'complete');
  t.is(done.payment_status, 'paid');
  const pi = done.payment_intent as Stripe.PaymentIntent;
  t.is(pi.status, 'succeeded');
  t.is(pi.metadata.card_payment_id, 'cp_1');
  const full = await stripe.paymentIntents.retrieve(pi.id, { expand: ['latest_charge'] });
  const charge = full.latest_charge as Stripe.Charge;
  t.like(charge.payment_method_details!.card!, { brand: 'visa', last4: '4242', exp_month: 12, exp_year: CARD.exp_year });
  t.regex(charge.receipt_url!, /\/receipts\/ch_/);
  const pm = await stripe.paymentMethods.retrieve(full.payment_method as string);
  t.is(pm.customer, customer.id, 'setup_future_usage saves the card on the customer');
});

test.serial('a declined card stays on the page with Stripe\'s message; the session stays open', async (t) => {
  const { stripe, session } = await paidSession();
  const declined = await fake.pay(session.id, { ...CARD, number: '4000000000009995' });
  t.is(declined.status, 402);
  t.regex(declined.body, /Your card has insufficient funds\./);
  t.is((await stripe.checkout.sessions.retrieve(session.id)).status, 'open');
  const bad = await fake.pay(session.id, { ...CARD, number: '4242424242424241' });
  t.regex(bad.body, /Your card number is incorrect\./);
});

test.serial('webhooks are signed as Stripe signs them: constructEvent accepts them, and the signer matches generateTestHeaderString', async (t) => {
  const before = receiver.received.length;
  const { session } = await paidSession();
  await fake.pay(session.id, CARD);
  await fake.settled();
  const got = receiver.received.slice(before);
  t.deepEqual(got.map((r) => JSON.parse(r.body).type).sort(), ['checkout.session.completed', 'payment_intent.succeeded']);
  const stripe = sdk();
  for (const r of got) {
    const event = stripe.webhooks.constructEvent(r.body, r.headers['stripe-signature'] as string, fake.webhookSecret, 300);
    if (event.type === 'checkout.session.completed') t.is(event.data.object.id, session.id);
  }
  const payload = JSON.stringify({ id: 'evt_x', object: 'event' });
  const timestamp = Math.floor(Date.now() / 1000);
  t.is(fake.signatureHeader(payload, { timestamp }), stripe.webhooks.generateTestHeaderString({ payload, secret: fake.webhookSecret, timestamp }));
});

test.serial('scripted deliveries: a wrong signature and a stale timestamp fail constructEvent; twice delivers twice; held events come reversed', async (t) => {
  const stripe = sdk();
  const check = (r: { body: string; headers: any }) => () => stripe.webhooks.constructEvent(r.body, r.headers['stripe-signature'], fake.webhookSecret, 300);

  fake.scriptDeliveries({ signature: 'wrong' });
  let before = receiver.received.length;
  await fake.pay((await paidSession()).session.id, CARD);
  await fake.settled();
  t.throws(check(receiver.received[before]!), { message: /No signatures found matching the expected signature/ });

  fake.scriptDeliveries({ signature: 'stale' });
  before = receiver.received.length;
  await fake.pay((await paidSession()).session.id, CARD);
  await fake.settled();
  t.throws(check(receiver.received[before]!), { message: /Timestamp outside the tolerance zone/ });

  fake.scriptDeliveries({ delayMs: 300 });
  before = receiver.received.length;
  const paidAt = Date.now();
  await fake.pay((await paidSession()).session.id, CARD);
  t.is(receiver.received.length, before, 'not yet: late');
  await fake.settled();
  t.true(receiver.received[before]!.at - paidAt >= 290, 'delivered late');

  fake.scriptDeliveries({ twice: true });
  before = receiver.received.length;
  await fake.pay((await paidSession()).session.id, CARD);
  await fake.settled();
  const ids = receiver.received.slice(before).map((r) => JSON.parse(r.body).id);
  t.is(ids.length, 4);
  t.is(new Set(ids).size, 2);
  fake.scriptDeliveries(null);

  fake.holdEvents();
  before = receiver.received.length;
  await fake.pay((await paidSession()).session.id, CARD);
  await fake.settled();
  t.is(receiver.received.length, before, 'held back');
  await fake.releaseEvents({ reverse: true });
  t.deepEqual(
    receiver.received.slice(before).map((r) => JSON.parse(r.body).type),
    ['checkout.session.completed', 'payment_intent.succeeded'],
  );
});

test.serial('an endpoint answering 503 gets the event again until it answers 2xx', async (t) => {
  status = 503;
  const before = fake.deliveries.length;
  await fake.pay((await paidSession()).session.id, CARD);
  setTimeout(() => (status = 200), 30);
  await fake.settled();
  const tries = fake.deliveries.slice(before).filter((d) => d.type === 'checkout.session.completed');
  t.true(tries.length >= 2);
  t.is(tries.at(-1)!.status, 200);
  t.is(tries[0]!.status, 503);
});

test.serial("off-session charges follow the test cards: 402 card_error with the payment intent; refunds send charge.refunded", async (t) => {
  const { stripe, session } = await paidSession({ saveCard: true });
  await fake.pay(session.id, { ...CARD, number: '4000002500003155' });
  const pi = await stripe.paymentIntents.retrieve((await stripe.checkout.sessions.retrieve(session.id)).payment_intent as string);
  t.is(pi.status, 'succeeded', 'on-session the authentication card succeeds');
  const off = await raw('POST', '/v1/payment_intents', `amount=3000&currency=usd&customer=${pi.customer}&payment_method=${pi.payment_method}&off_session=true&confirm=true`);
  t.is(off.status, 402);
  t.like(off.body.error, { type: 'card_error', code: 'authentication_required', decline_code: 'authentication_required' });
  t.is(off.body.error.payment_intent.status, 'requires_payment_method');
  t.true(fake.events.some((e) => e.type === 'payment_intent.payment_failed' && e.data.object.id === off.body.error.payment_intent.id));

  const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 1000 });
  t.like(refund, { object: 'refund', amount: 1000, status: 'succeeded', payment_intent: pi.id });
  const tooMuch = await raw('POST', '/v1/refunds', `payment_intent=${pi.id}&amount=2000`);
  t.is(tooMuch.status, 400);
  t.is(tooMuch.body.error.param, 'amount');
  const ev = fake.events.filter((e) => e.type === 'charge.refunded').at(-1)!;
  t.is(ev.data.object.amount_refunded, 1000);
});

test.serial('failNext answers 500 or 429 once, then the API works again', async (t) => {
  fake.failNext({ status: 500, path: '/v1/customers' });
  const failed = await raw('POST', '/v1/customers', 'name=X');
  t.is(failed.status, 500);
  t.is(failed.body.error.type, 'api_error');
  fake.failNext({ status: 429 });
  const limited = await raw('GET', '/v1/customers');
  t.is(limited.status, 429);
  t.is(limited.body.error.code, 'rate_limit');
  t.is((await raw('POST', '/v1/customers', 'name=X')).status, 200);
});
