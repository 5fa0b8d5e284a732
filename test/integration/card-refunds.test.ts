import test from 'ava';
import type pg from 'pg';
import type { FakeStripe } from '../fakes/stripe.ts';
import type { TestService } from '../helpers/service.ts';
import { makeCustomer } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { adminCli } from '../helpers/admin-cli.ts';
import { until } from '../helpers/wait.ts';
import { liveConsoleAccount, payCheckout, startWithFakeStripe, type LiveAccount } from '../helpers/payments.ts';

/*
 * Issue 22: "Refunds of a top-up (operator action) go to Stripe and appear as their own ledger
 * line; bonus is not refundable." The refund is Stripe's first (our refund id as the idempotency
 * key), then the `top_up_refund` line; the bonus the refunded part earned is forfeited as a
 * `bonus_expired` line (cause `bonus_forfeited`); Stripe's `charge.refunded` converges on the
 * same refund and never writes it twice.
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

const lines = async (a: LiveAccount) => (await a.liveApi.get('/v1/usage?limit=100')).body.data as any[];
const balance = async (a: LiveAccount) => (await a.liveApi.get('/v1/balance')).body;
const refundsAt = (pi: string) => fake.objectsOf('refund').filter((r) => r.payment_intent === pi);

/** A live account that paid 50,000 by card (bonus 1,500); answers the card payment with its payment intent. */
async function paid() {
  const a = await liveConsoleAccount(svc.url);
  const { payment } = await payCheckout(a, fake, 50_000);
  await fake.settled();
  await until('credited', async () => (await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body.status === 'succeeded');
  const pi = (await db.query(`SELECT payment_intent_id FROM card_payments WHERE id = $1`, [payment.id])).rows[0].payment_intent_id as string;
  return { a, payment, pi };
}

test.serial('a partial then the whole rest: refunded at Stripe once each, a top_up_refund line each, the bonus the refunded part earned forfeited, charge.refunded writing nothing more', async (t) => {
  const { a, payment, pi } = await paid();
  const first = await a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, { amount_cents: 25_000 });
  t.is(first.status, 201, first.text);
  t.like(first.body, { object: 'card_refund', card_payment_id: payment.id, amount_cents: 25_000, status: 'succeeded' });
  t.truthy(first.body.ledger_line_id);
  const atStripe = refundsAt(pi);
  t.is(atStripe.length, 1);
  t.is(atStripe[0].amount, 25_000);
  t.true(fake.requests.some((r) => r.path === '/v1/refunds' && r.idempotencyKey === first.body.id), "our refund's id is Stripe's idempotency key");
  await fake.settled(); // charge.refunded arrives
  const after = await lines(a);
  const refundLines = after.filter((l) => l.type === 'top_up_refund');
  t.is(refundLines.length, 1, 'one refund line, whatever the webhook says');
  t.like(refundLines[0], { id: first.body.ledger_line_id, cause: 'top_up_refund', amount_cents: -25_000 });
  const forfeits = after.filter((l) => l.type === 'bonus_expired' && l.cause === 'bonus_forfeited');
  t.is(forfeits.length, 1);
  t.is(forfeits[0].amount_cents, -750, 'half the payment refunded: half its 1,500 bonus forfeited');
  t.like(await balance(a), { balance_cents: 51_500 - 25_000 - 750, paid_cents: 25_000, bonus_cents: 750 });

  const rest = await a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, {});
  t.is(rest.status, 201, rest.text);
  t.is(rest.body.amount_cents, 25_000, 'default: what is left');
  await fake.settled();
  t.like(await balance(a), { balance_cents: 0, paid_cents: 0, bonus_cents: 0 });
  t.like((await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body, { refunded_cents: 50_000 });
  const again = await a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, {});
  t.is(again.status, 409);
  t.is(again.body.error.code, 'refund_too_large');
  t.is(refundsAt(pi).length, 2);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('never more than the live cash balance less running holds: 409 refund_too_large, nothing asked of Stripe', async (t) => {
  const { a, payment, pi } = await paid();
  const c = await makeCustomer(a.liveApi);
  // A running call holds 400 of the cash.
  const r = await a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id: c.id, reference: 'running' });
  t.true(r.body.ok);
  const cash = (await balance(a)).paid_cents;
  const held = (await balance(a)).reserved_cents;
  const tooMuch = await a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, { amount_cents: cash - held + 1 });
  t.is(tooMuch.status, 409, tooMuch.text);
  t.is(tooMuch.body.error.code, 'refund_too_large');
  t.is(refundsAt(pi).length, 0);
  const over = await a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, { amount_cents: 50_001 });
  t.is(over.body.error.code, 'refund_too_large', 'more than the payment');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial("another account's card payment, or none: 404 card_payment_not_found", async (t) => {
  const { payment } = await paid();
  const other = await liveConsoleAccount(svc.url);
  const r = await other.admin.post(`/admin/v1/accounts/${other.id}/card_payments/${payment.id}/refunds`, {});
  t.is(r.status, 404);
  t.is(r.body.error.code, 'card_payment_not_found');
  t.is((await other.admin.post(`/admin/v1/accounts/${other.id}/card_payments/nope/refunds`, {})).body.error.code, 'card_payment_not_found');
  const list = await other.admin.get(`/admin/v1/accounts/${other.id}/card_payments`);
  t.deepEqual(list.body.data, []);
});

test.serial('a refund made in the Stripe dashboard arrives as charge.refunded: recorded once as its own refund', async (t) => {
  const { a, payment, pi } = await paid();
  const made = await fetch(`${fake.url}/v1/refunds`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fake.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ payment_intent: pi, amount: '10000' }).toString(),
  });
  t.is(made.status, 200);
  await fake.settled();
  const last = fake.events.filter((e) => e.type === 'charge.refunded').at(-1)!;
  t.is(await fake.redeliver(last.id), 200, 'sent again');
  await until('recorded', async () => (await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body.refunded_cents === 10_000);
  const refundLines = (await lines(a)).filter((l) => l.type === 'top_up_refund');
  t.is(refundLines.length, 1);
  t.is(refundLines[0].amount_cents, -10_000);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('Stripe unreachable: 503 processor_unavailable and the refund waits; the retry refunds once with the same key', async (t) => {
  const { a, payment, pi } = await paid();
  fake.failNext({ status: 503, path: '/v1/refunds', method: 'POST' });
  const failed = await a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, { amount_cents: 5_000 });
  t.is(failed.status, 503, failed.text);
  t.is(failed.body.error.code, 'processor_unavailable');
  t.is((await balance(a)).balance_cents, 51_500, 'nothing written');
  const retried = await adminCli(svc.url, ['refund-top-up', '--account', a.id, '--payment', payment.id, '--amount', '5000']);
  t.is(retried.code, 0, JSON.stringify(retried.err));
  t.like(retried.out, { object: 'card_refund', amount_cents: 5_000, status: 'succeeded' });
  const keys = fake.requests.filter((r) => r.path === '/v1/refunds' && r.method === 'POST').slice(-2).map((r) => r.idempotencyKey);
  t.is(keys[0], keys[1], 'the same idempotency key both times');
  t.is(refundsAt(pi).length, 1, 'refunded once at Stripe');
  await fake.settled();
  t.is((await lines(a)).filter((l) => l.type === 'top_up_refund').length, 1);
  const listed = await adminCli(svc.url, ['card-payments', '--account', a.id]);
  t.like(listed.out.data[0], { id: payment.id, refunded_cents: 5_000 });
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});
