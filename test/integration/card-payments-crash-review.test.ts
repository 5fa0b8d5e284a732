import test from 'ava';
import type pg from 'pg';
import type { FakeStripe } from '../fakes/stripe.ts';
import type { TestService } from '../helpers/service.ts';
import { NO_BACKGROUND_WORK } from '../helpers/service.ts';
import { makeCustomer } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { until } from '../helpers/wait.ts';
import { liveCall, liveConsoleAccount, payCheckout, startWithFakeStripe, stopWithFakeStripe, type LiveAccount } from '../helpers/payments.ts';

/*
 * Issue 22, the second look at card payments: a process that fails after Stripe charged or
 * refunded and before our books say so, and many things at once on one account (charges that
 * each cross the automatic top-up's threshold, refunds racing each other and Stripe's
 * charge.refunded). The worker and the inbox run on demand (`payNow`).
 *
 * A failure is made by a trigger: the first ledger line of a given type on the target account
 * raises (a sequence counts, outside the transaction), so the credit's or the refund's whole
 * transaction is rolled back once, as a crash or a lost database would leave it.
 */

let svc: TestService;
let fake: FakeStripe;
let db: pg.Pool;
test.before(async () => {
  ({ svc, fake, db } = await startWithFakeStripe(NO_BACKGROUND_WORK));
  await db.query(`
    CREATE TABLE review_fail_target (account_id uuid PRIMARY KEY, line_type text NOT NULL);
    CREATE SEQUENCE review_fail_seq;
    CREATE FUNCTION review_fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- Once per arming: the sequence (not rolled back with the failing transaction) says whether it fired.
      IF EXISTS (SELECT 1 FROM review_fail_target WHERE account_id = NEW.account_id AND line_type = NEW.type) AND nextval('review_fail_seq') = 1 THEN
        RAISE EXCEPTION 'injected: the database went away';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER review_fail_once BEFORE INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION review_fail_once();`);
});
test.after.always(async () => {
  await db?.query(`DROP TRIGGER IF EXISTS review_fail_once ON ledger_entries; DROP FUNCTION IF EXISTS review_fail_once(); DROP TABLE IF EXISTS review_fail_target; DROP SEQUENCE IF EXISTS review_fail_seq`).catch(() => {});
  await stopWithFakeStripe({ svc, fake, db });
});

test.afterEach.always(() => fake.releaseEvents()); // a test that failed while holding events leaves none held for the next

/** The next ledger line of `type` on the account fails once (its transaction rolled back). */
async function failOnce(accountId: string, type: string) {
  await db.query(`DELETE FROM review_fail_target`);
  await db.query(`INSERT INTO review_fail_target (account_id, line_type) VALUES ($1, $2)`, [accountId, type]);
  await db.query(`SELECT setval('review_fail_seq', 1, false)`);
}

const balance = async (a: LiveAccount) => (await a.liveApi.get('/v1/balance')).body;
const lines = async (a: LiveAccount) => (await a.liveApi.get('/v1/usage?limit=200')).body.data as any[];
const automatic = async (a: LiveAccount) => (await db.query(`SELECT * FROM card_payments WHERE account_id = $1 AND kind = 'automatic' ORDER BY seq`, [a.id])).rows;
const intentsFor = (cardPaymentId: string) => fake.objectsOf('payment_intent').filter((pi) => pi.metadata?.card_payment_id === cardPaymentId);
const refundsAt = (pi: string) => fake.objectsOf('refund').filter((r) => r.payment_intent === pi);
/** Due now, whatever the lease or backoff said (the next round of the worker and the inbox). */
const dueNow = () => db.query(`UPDATE card_payments SET next_attempt_at = now() WHERE status = 'pending' AND kind = 'automatic'; UPDATE processor_events SET next_attempt_at = now() WHERE processed_at IS NULL`);

async function withSavedCard(cents = 5_000) {
  const a = await liveConsoleAccount(svc.url);
  const { payment } = await payCheckout(a, fake, cents, { saveCard: true });
  await fake.settled();
  await svc.services.payNow();
  await until('credited', async () => (await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body.status === 'succeeded');
  const c = await makeCustomer(a.liveApi);
  return { a, c, payment };
}

const call = liveCall;

test.serial('the worker fails after Stripe charged the card and before the credit: the next round credits once and never charges twice', async (t) => {
  const { a } = await withSavedCard();
  await failOnce(a.id, 'top_up');
  fake.holdEvents(); // the worker's own round credits (or fails to), not Stripe's webhook
  const set = await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 10_000, amount_cents: 5_000 });
  t.is(set.status, 200, set.text);
  await svc.services.payNow();
  const [p] = await automatic(a);
  t.is(p.status, 'pending', 'the credit failed: still pending');
  t.is(intentsFor(p.id).length, 1, 'Stripe charged once');
  t.is((await balance(a)).balance_cents, 5_000, 'nothing credited yet');
  await dueNow();
  await svc.services.payNow();
  await dueNow();
  await svc.services.payNow();
  t.like((await automatic(a))[0], { status: 'succeeded' });
  t.is(intentsFor(p.id).length, 1, 'never charged twice');
  await fake.releaseEvents(); // and Stripe's late payment_intent.succeeded credits nothing more
  await fake.settled();
  await dueNow();
  await svc.services.payNow();
  t.is((await lines(a)).filter((l) => l.type === 'top_up').length, 2, 'the first checkout and the automatic top-up, once');
  t.is((await balance(a)).balance_cents, 10_000);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('a webhook stored but its processing failed is retried and credits once', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  await failOnce(a.id, 'top_up');
  const { payment } = await payCheckout(a, fake, 50_000);
  await fake.settled();
  await dueNow();
  await svc.services.payNow();
  await dueNow();
  await svc.services.payNow();
  const unprocessed = (await db.query(`SELECT count(*) FROM processor_events WHERE processed_at IS NULL AND payload->'object'->'metadata'->>'card_payment_id' = $1`, [payment.id])).rows[0].count;
  t.is(Number(unprocessed), 0, 'every event processed in the end');
  const retried = (await db.query(`SELECT max(attempts) AS n FROM processor_events WHERE payload->'object'->'metadata'->>'card_payment_id' = $1`, [payment.id])).rows[0].n;
  t.true(Number(retried) >= 2, 'one event failed once and was tried again');
  t.like((await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body, { status: 'succeeded', bonus_cents: 1_500 });
  t.deepEqual((await lines(a)).filter((l) => l.type === 'top_up' || l.type === 'bonus').map((l) => l.amount_cents).sort(), [1_500, 50_000]);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('many call charges crossing the threshold at once ask for one automatic top-up', async (t) => {
  const { a, c } = await withSavedCard();
  const others = [c, await makeCustomer(a.liveApi), await makeCustomer(a.liveApi), await makeCustomer(a.liveApi)];
  t.is((await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 4_800, amount_cents: 2_500 })).status, 200);
  await Promise.all(Array.from({ length: 8 }, (_, i) => call(a, others[i % 4].id, 300))); // 8 × 100 cents: 4,200
  await Promise.all(Array.from({ length: 4 }, () => a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 4_800, amount_cents: 2_500 })));
  const open = (await automatic(a)).filter((p) => p.status === 'pending');
  t.is(open.length, 1, 'one open automatic payment');
  t.is((await automatic(a)).length, 1);
  await Promise.all([svc.services.payNow(), svc.services.payNow()]);
  t.is(intentsFor(open[0].id).length, 1, 'charged once');
  t.is((await balance(a)).balance_cents, 4_200 + 2_500);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('the refund is made at Stripe and the ledger write then fails: asked again, it completes once (one refund at Stripe)', async (t) => {
  const { a, payment } = await withSavedCard(50_000);
  const pi = (await db.query(`SELECT payment_intent_id FROM card_payments WHERE id = $1`, [payment.id])).rows[0].payment_intent_id as string;
  fake.holdEvents();
  await failOnce(a.id, 'top_up_refund');
  const first = await a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, { amount_cents: 10_000 });
  t.true(first.status >= 500, `the write failed: ${first.status} ${first.text}`);
  t.is(refundsAt(pi).length, 1, 'refunded at Stripe');
  const again = await a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, { amount_cents: 10_000 });
  t.is(again.status, 201, again.text);
  t.is(again.body.status, 'succeeded');
  await fake.releaseEvents();
  await fake.settled();
  await dueNow();
  await svc.services.payNow();
  t.is(refundsAt(pi).length, 1, 'still one refund at Stripe');
  t.deepEqual((await lines(a)).filter((l) => l.type === 'top_up_refund').map((l) => l.amount_cents), [-10_000]);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial("refunds racing each other and Stripe's charge.refunded: never more than paid, each refund once at Stripe and on the ledger", async (t) => {
  const { a, payment } = await withSavedCard(50_000);
  const pi = (await db.query(`SELECT payment_intent_id FROM card_payments WHERE id = $1`, [payment.id])).rows[0].payment_intent_id as string;
  const results = await Promise.all([
    ...Array.from({ length: 4 }, () => a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, { amount_cents: 20_000 })),
    ...Array.from({ length: 3 }, () => a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, {})),
  ]);
  for (const r of results) t.true([201, 409].includes(r.status), `${r.status} ${r.text}`);
  await fake.settled();
  await dueNow();
  await svc.services.payNow();
  const atStripe = refundsAt(pi).reduce((s, r) => s + r.amount, 0);
  const onLedger = -(await lines(a)).filter((l) => l.type === 'top_up_refund').reduce((s, l) => s + l.amount_cents, 0);
  t.true(atStripe <= 50_000);
  t.is(onLedger, atStripe, 'the ledger says what Stripe refunded');
  const p = (await db.query(`SELECT refunded_cents FROM card_payments WHERE id = $1`, [payment.id])).rows[0];
  t.is(Number(p.refunded_cents), atStripe);
  t.true((await balance(a)).paid_cents >= 0);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('a refund racing a spend: the cash never goes negative', async (t) => {
  const { a, c, payment } = await withSavedCard(5_000);
  const results = await Promise.all([
    a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, {}),
    call(a, c.id, 60 * 30).then(() => ({ status: 0 })).catch(() => ({ status: -1 })),
    call(a, c.id, 60 * 30).then(() => ({ status: 0 })).catch(() => ({ status: -1 })),
  ]);
  t.true([201, 409].includes(results[0].status), JSON.stringify(results[0]));
  await fake.settled();
  await dueNow();
  await svc.services.payNow();
  const b = await balance(a);
  t.true(b.paid_cents >= 0, `cash ${b.paid_cents}`);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial("the operator refunds what Stripe already refunded (in its dashboard, the webhook not yet here): a 409, no refund left pending, and Stripe's refund recorded when its webhook comes", async (t) => {
  const { a, payment } = await withSavedCard(50_000);
  const pi = (await db.query(`SELECT payment_intent_id FROM card_payments WHERE id = $1`, [payment.id])).rows[0].payment_intent_id as string;
  fake.holdEvents();
  const made = await fetch(`${fake.url}/v1/refunds`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fake.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ payment_intent: pi }).toString(),
  });
  t.is(made.status, 200);
  const refused = await a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${payment.id}/refunds`, {});
  t.is(refused.status, 409, refused.text);
  t.is(refused.body.error.code, 'refund_too_large');
  t.regex(refused.body.error.message, /processor/i);
  const pending = (await db.query(`SELECT count(*) FROM card_refunds WHERE card_payment_id = $1 AND status = 'pending'`, [payment.id])).rows[0].count;
  t.is(Number(pending), 0, 'nothing left pending to block what is left');
  await fake.releaseEvents();
  await fake.settled();
  await dueNow();
  await svc.services.payNow();
  t.is(refundsAt(pi).length, 1, 'one refund at Stripe: the dashboard one');
  t.deepEqual((await lines(a)).filter((l) => l.type === 'top_up_refund').map((l) => l.amount_cents), [-50_000], "Stripe's refund is on the ledger");
  t.like((await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body, { refunded_cents: 50_000 });
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

for (const how of ['automatic top-up turned off', 'saved card removed'] as const) {
  test.serial(`an automatic top-up requested, then the ${how} before the worker's round: the card is not charged`, async (t) => {
    const { a } = await withSavedCard();
    fake.failNext({ status: 503, path: '/v1/payment_intents', method: 'POST' });
    t.is((await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 10_000, amount_cents: 5_000 })).status, 200);
    await svc.services.payNow(); // Stripe unreachable: the charge waits for the next round
    const [p] = await automatic(a);
    t.is(p.status, 'pending');
    const off = how === 'automatic top-up turned off' ? await a.owner.delete('/console/api/billing/auto_top_up') : await a.owner.delete('/console/api/billing/saved_card?mode=live');
    t.is(off.status, 200, off.text);
    t.is(off.body.auto_top_up, null);
    await dueNow();
    await svc.services.payNow();
    t.is(intentsFor(p.id).length, 0, 'never charged');
    t.like((await automatic(a))[0], { status: 'canceled' });
    t.is((await balance(a)).balance_cents, 5_000);
    await dueNow();
    await svc.services.payNow();
    t.is(intentsFor(p.id).length, 0, 'nor later');
    t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
  });
}

test.serial('spec values named literally: a card top-up of 250,000 grants 12,500 (+5 %) expiring twelve months after the grant; 249,999 grants 7,499 (+3 %); a declined automatic charge waits exactly 24 hours', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const { payment } = await payCheckout(a, fake, 250_000, { saveCard: true });
  await fake.settled();
  await svc.services.payNow();
  await until('credited', async () => (await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body.status === 'succeeded');
  const { payment: second } = await payCheckout(a, fake, 249_999);
  await fake.settled();
  await svc.services.payNow();
  await until('credited', async () => (await a.owner.get(`/console/api/billing/top_ups/${second.id}?mode=live`)).body.status === 'succeeded');
  const grants = (await db.query(`SELECT granted_cents, granted_at, expires_at FROM bonus_grants WHERE account_id = $1 ORDER BY granted_at`, [a.id])).rows;
  t.deepEqual(grants.map((g) => Number(g.granted_cents)), [12_500, 7_499]);
  for (const g of grants) {
    const twelveMonthsOn = new Date(g.granted_at);
    twelveMonthsOn.setUTCMonth(twelveMonthsOn.getUTCMonth() + 12);
    t.is(new Date(g.expires_at).getTime(), twelveMonthsOn.getTime(), 'twelve months after the grant');
  }
  t.true((await lines(a)).filter((l) => l.type === 'bonus').every((l) => /not refundable/.test(l.description)));
  // A declined automatic charge: no new attempt for exactly 24 hours.
  const saved = (await db.query(`SELECT payment_method_id FROM saved_cards WHERE account_id = $1`, [a.id])).rows[0];
  fake.cardBehavesAs(saved.payment_method_id, '4000000000000002');
  t.is((await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 600_000, amount_cents: 2_500 })).status, 200);
  await svc.services.payNow();
  const state = (await db.query(`SELECT last_failure_at, retry_after FROM auto_top_up_state WHERE account_id = $1`, [a.id])).rows[0];
  t.is(new Date(state.retry_after).getTime() - new Date(state.last_failure_at).getTime(), 24 * 60 * 60 * 1000);
  // Asked again within the day (switched on again under the threshold): no new charge.
  t.is((await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 600_000, amount_cents: 2_500 })).status, 200);
  await svc.services.payNow();
  t.is((await automatic(a)).length, 1, 'one automatic payment, failed; none within the day');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('an automatic top-up that leaves the balance still under its threshold, with nothing spent since: no chain of charges, one per crossing', async (t) => {
  const { a } = await withSavedCard();
  t.is((await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 100_000, amount_cents: 2_500 })).status, 200);
  for (let i = 0; i < 4; i++) {
    await dueNow();
    await svc.services.payNow();
  }
  const all = await automatic(a);
  t.is(all.length, 1, 'one automatic top-up for one crossing');
  t.is(all.reduce((n, p) => n + intentsFor(p.id).length, 0), 1, 'the card charged once');
  t.is((await balance(a)).balance_cents, 7_500);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('refunds of two payments at once never refund at Stripe more than the cash the ledger can take back', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const payments = [];
  for (let i = 0; i < 2; i++) {
    const { payment } = await payCheckout(a, fake, 2_500);
    await fake.settled();
    await svc.services.payNow();
    await until('credited', async () => (await a.owner.get(`/console/api/billing/top_ups/${payment.id}?mode=live`)).body.status === 'succeeded');
    payments.push(payment);
  }
  const c = await makeCustomer(a.liveApi);
  for (let i = 0; i < 5; i++) await call(a, c.id, 1_200); // spends about 2,000 of the 5,000 cash
  const cash = (await balance(a)).paid_cents as number;
  const each = Math.min(2_500, Math.floor(cash * 0.6)); // one fits, two do not
  t.true(each <= cash && 2 * each > cash, `cash ${cash}, each ${each}`);
  const results = await Promise.all(payments.map((p) => a.admin.post(`/admin/v1/accounts/${a.id}/card_payments/${p.id}/refunds`, { amount_cents: each })));
  t.deepEqual(results.map((r) => r.status).sort(), [201, 409], results.map((r) => r.text).join(' | '));
  await fake.settled();
  await dueNow();
  await svc.services.payNow();
  const pis = (await db.query(`SELECT payment_intent_id FROM card_payments WHERE account_id = $1`, [a.id])).rows.map((r) => r.payment_intent_id);
  const atStripe = pis.flatMap((pi) => refundsAt(pi)).reduce((s, r) => s + r.amount, 0);
  // Seen once under full-suite load (3,600 at Stripe for 1,800 each): say everything if it comes back.
  const story = JSON.stringify({ cash, each, answers: results.map((r) => [r.status, r.body]), atStripe: pis.map((pi) => refundsAt(pi)), ours: (await db.query(`SELECT card_payment_id, amount_cents, status, source, processor_refund_id, created_at FROM card_refunds WHERE account_id = $1`, [a.id])).rows });
  t.is(atStripe, each, `one refund at Stripe: ${story}`);
  t.deepEqual((await lines(a)).filter((l) => l.type === 'top_up_refund').map((l) => l.amount_cents), [-each], 'and on the ledger');
  t.is(Number((await db.query(`SELECT count(*) FROM card_refunds WHERE account_id = $1 AND status = 'pending'`, [a.id])).rows[0].count), 0, 'nothing refunded at Stripe and left pending');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});
