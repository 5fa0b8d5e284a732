import test from 'ava';
import type pg from 'pg';
import type { FakeStripe } from '../fakes/stripe.ts';
import type { TestService } from '../helpers/service.ts';
import { NO_BACKGROUND_WORK } from '../helpers/service.ts';
import { makeCustomer } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { liveCall, liveConsoleAccount, payCheckout, startWithFakeStripe, stopWithFakeStripe, type LiveAccount } from '../helpers/payments.ts';
import { clockDays } from '../helpers/clock-days.ts';
import { adminClient } from '../helpers/factories.ts';
import { addDays } from '../../money/rules/renewal.ts';
import { fundableCents } from '../../money/balance-view.ts';

/*
 * Issue 22, automatic top-up (as Vapi's auto-reload): an amount and a threshold; when a charge
 * leaves the available balance under the threshold, one off-session payment on the saved card,
 * credited only when it succeeds; a failure records an activity line, emails the billing people
 * and is not retried within a day. The worker runs on demand here (`payNow`), so every charge
 * attempt is the test's.
 */

let svc: TestService;
let fake: FakeStripe;
let db: pg.Pool;
test.before(async () => {
  ({ svc, fake, db } = await startWithFakeStripe(NO_BACKGROUND_WORK));
});
test.after.always(() => stopWithFakeStripe({ svc, fake, db }));

const balance = async (a: LiveAccount) => (await a.liveApi.get('/v1/balance')).body;
const offSessionCharges = (customer: string) => fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.params.customer === customer && String(r.params.off_session) === 'true');
const savedCard = async (a: LiveAccount) => (await db.query(`SELECT * FROM saved_cards WHERE account_id = $1 AND mode = 'live'`, [a.id])).rows[0];
const automatic = async (a: LiveAccount) => (await db.query(`SELECT * FROM card_payments WHERE account_id = $1 AND kind = 'automatic' ORDER BY seq`, [a.id])).rows;

/** A live account with 5,000 paid by card (card saved) and a customer; answers the card's Stripe ids. */
async function withSavedCard() {
  const a = await liveConsoleAccount(svc.url);
  await payCheckout(a, fake, 5_000, { saveCard: true });
  await fake.settled();
  await svc.services.payNow();
  const setup = (await a.owner.get('/console/api/billing/payments?mode=live')).body;
  if (!setup.saved_card) throw new Error(`no saved card: ${JSON.stringify(setup)}`);
  const c = await makeCustomer(a.liveApi);
  const saved = await savedCard(a);
  return { a, c, customer: saved.customer_ref as string, paymentMethod: saved.payment_method_id as string };
}

/** The test clock at noon of its next day (renewal tests), and a live account that paid `cents` by card, saved. */
async function onNextDayWithCard(cents: number) {
  const days = clockDays(adminClient(svc.url));
  await days.startOfTest();
  const a = await liveConsoleAccount(svc.url);
  await payCheckout(a, fake, cents, { saveCard: true });
  await fake.settled();
  return { days, a };
}

const call = liveCall;

test.serial('automatic top-up needs a saved card (409 saved_card_required)', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  const r = await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 1_000, amount_cents: 2_500 });
  t.is(r.status, 409, r.text);
  t.is(r.body.error.code, 'saved_card_required');
  t.is((await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 1_000, amount_cents: 2_499 })).body.error.code, 'top_up_too_small');
});

test.serial('spending under the threshold makes one off-session charge of the saved card, credited when it succeeds', async (t) => {
  const { a, c, customer, paymentMethod } = await withSavedCard();
  const set = await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 4_900, amount_cents: 2_500 });
  t.is(set.status, 200, set.text);
  t.like(set.body, { saved_card: { brand: 'visa', last4: '4242' }, auto_top_up: { threshold_cents: 4_900, amount_cents: 2_500, status: 'on', retry_after: null, last_failure: null } });
  await call(a, c.id, 60); // 20 cents: 4,980, above 4,900
  t.is((await automatic(a)).length, 0);
  await call(a, c.id, 300); // 100 cents: 4,880 < 4,900
  await call(a, c.id, 60); // still under: no second request while one is open
  t.is((await automatic(a)).length, 1, 'one automatic top-up requested');
  t.is(offSessionCharges(customer).length, 0, 'the card is not charged inside the call charge');
  t.is((await balance(a)).balance_cents, 4_860, 'not credited before the charge succeeds');
  await svc.services.payNow();
  const charges = offSessionCharges(customer);
  t.is(charges.length, 1, 'one off-session charge');
  t.like(charges[0].params, { amount: '2500', payment_method: paymentMethod, confirm: 'true' });
  t.is(charges[0].idempotencyKey, (await automatic(a))[0].id, 'the card payment id is the idempotency key');
  t.like(await balance(a), { balance_cents: 4_860 + 2_500 });
  const [p] = await automatic(a);
  t.like(p, { status: 'succeeded', kind: 'automatic' });
  const receipts = (await a.owner.get('/console/api/billing/top_ups?mode=live')).body.data;
  t.like(receipts[0], { kind: 'automatic', status: 'succeeded', amount_cents: 2_500, card: { last4: '4242' } });
  await fake.settled();
  await svc.services.payNow();
  t.is(offSessionCharges(customer).length, 1, 'the webhooks of the charge credit nothing more');
  t.is((await balance(a)).balance_cents, 7_360);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('switched on while already under the threshold: a charge is requested at once', async (t) => {
  const { a, customer } = await withSavedCard();
  await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 10_000, amount_cents: 5_000 });
  t.is((await automatic(a)).length, 1);
  await svc.services.payNow();
  t.is(offSessionCharges(customer).length, 1);
  t.is((await balance(a)).balance_cents, 10_000);
  // Still under 10,000? No: exactly 10,000, so nothing more.
  t.is((await automatic(a)).length, 1);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('a declined automatic charge: the payment failed, an activity line, an email to the billing people, and no second attempt within 24 hours', async (t) => {
  const { a, c, customer, paymentMethod } = await withSavedCard();
  fake.cardBehavesAs(paymentMethod, '4000000000009995'); // insufficient funds from now on
  await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 4_990, amount_cents: 2_500 });
  await call(a, c.id, 60);
  await svc.services.payNow();
  t.is(offSessionCharges(customer).length, 1);
  const [p] = await automatic(a);
  t.like(p, { status: 'failed', failure_code: 'card_declined' });
  t.is((await balance(a)).balance_cents, 4_980, 'nothing credited');

  const activity = (await a.owner.get('/console/api/billing/activity?mode=live')).body.data;
  const failed = activity.find((x: any) => x.kind === 'auto_top_up_failed');
  t.like(failed, { kind: 'auto_top_up_failed', reason: 'card_declined', reference: p.id });
  const emails = (await db.query(`SELECT * FROM email_outbox WHERE account_id = $1 AND kind = 'auto_top_up_failed'`, [a.id])).rows;
  t.is(emails.length, 1);
  t.like(emails[0], { audience: 'billing', mode: 'live', dedupe_key: `auto_top_up_failed:${p.id}` });
  t.like(emails[0].data, { card_payment_id: p.id, amount_cents: 2_500, threshold_cents: 4_990, code: 'card_declined', card_brand: 'visa', card_last4: '4242' });

  const setup = (await a.owner.get('/console/api/billing/payments?mode=live')).body;
  t.is(setup.auto_top_up.status, 'failing');
  t.truthy(setup.auto_top_up.retry_after);
  t.true(new Date(setup.auto_top_up.retry_after).getTime() - Date.now() > 23 * 3600_000, 'a day later');
  t.like(setup.auto_top_up.last_failure, { code: 'card_declined' });

  // More spending under the threshold: nothing is asked of the card within the day.
  await call(a, c.id, 600);
  await svc.services.payNow();
  t.is((await automatic(a)).length, 1, 'no new automatic top-up');
  t.is(offSessionCharges(customer).length, 1, 'no second charge');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('a card that needs its holder (authentication_required) fails the same way', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  await payCheckout(a, fake, 5_000, { saveCard: true, number: '4000002500003155' });
  await fake.settled();
  const customer = (await savedCard(a)).customer_ref;
  await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 6_000, amount_cents: 2_500 });
  await svc.services.payNow();
  t.is(offSessionCharges(customer).length, 1);
  t.like((await automatic(a))[0], { status: 'failed', failure_code: 'authentication_required' });
  t.is((await balance(a)).balance_cents, 5_000);
});

test.serial('an automatic top-up the processor never answers (5xx every time) is failed as processor_unavailable after a day of attempts, so it no longer holds renewals', async (t) => {
  const a = await liveConsoleAccount(svc.url);
  await payCheckout(a, fake, 5_000, { saveCard: true });
  await fake.settled();
  await svc.services.payNow();
  const customer = (await savedCard(a)).customer_ref;
  fake.failNext({ status: 503, path: '/v1/payment_intents', method: 'POST', times: 1 });
  await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 6_000, amount_cents: 2_500 });
  await svc.services.payNow();
  const [first] = await automatic(a);
  t.like(first, { status: 'pending', attempts: 1, failure_code: null }, 'one unavailable answer: tried again');

  // A day of attempts a minute apart (1,440), the last one unanswered too.
  await db.query(`UPDATE card_payments SET attempts = 1439, next_attempt_at = now() WHERE id = $1`, [first.id]);
  fake.failNext({ status: 503, path: '/v1/payment_intents', method: 'POST', times: 1 });
  await svc.services.payNow();
  const [p] = await automatic(a);
  t.like(p, { status: 'failed', failure_code: 'processor_unavailable' });
  t.deepEqual(offSessionCharges(customer).map((r) => r.status), [503, 503], 'asked twice, never charged');
  t.is((await balance(a)).balance_cents, 5_000, 'nothing credited');
  const setup = (await a.owner.get('/console/api/billing/payments?mode=live')).body;
  t.is(setup.auto_top_up.status, 'failing');
  t.truthy(setup.auto_top_up.retry_after);
  t.like(setup.auto_top_up.last_failure, { code: 'processor_unavailable' });
  const emails = (await db.query(`SELECT * FROM email_outbox WHERE account_id = $1 AND kind = 'auto_top_up_failed'`, [a.id])).rows;
  t.is(emails.length, 1);
  t.like(emails[0].data, { card_payment_id: p.id, code: 'processor_unavailable' });
  const activity = (await a.owner.get('/console/api/billing/activity?mode=live')).body.data;
  t.like(activity.find((x: any) => x.kind === 'auto_top_up_failed'), { reason: 'processor_unavailable', reference: p.id });
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('the money a renewal can count on includes a working automatic top-up only with a live processor configured (as the charge itself), and not while it is failing in real time', async (t) => {
  const { a } = await withSavedCard();
  await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 100, amount_cents: 2_500 });
  const realNow = new Date();
  t.is(await fundableCents(db, a.id, 'live', { liveProcessor: true, realNow }), 5_000 + 2_500, 'the top-up is money to come');
  t.is(await fundableCents(db, a.id, 'live', { liveProcessor: false, realNow }), 5_000, 'no live processor: no charge can be made, so none is counted');
  await db.query(`INSERT INTO auto_top_up_state (account_id, retry_after) VALUES ($1, $2) ON CONFLICT (account_id) DO UPDATE SET retry_after = $2`, [a.id, new Date(realNow.getTime() + 3600_000)]);
  t.is(await fundableCents(db, a.id, 'live', { liveProcessor: true, realNow }), 5_000, 'failing: not counted');
});

test.serial('the saved card deleted: detached at Stripe, automatic top-up off', async (t) => {
  const { a, paymentMethod } = await withSavedCard();
  await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 100, amount_cents: 2_500 });
  const r = await a.owner.delete('/console/api/billing/saved_card?mode=live');
  t.is(r.status, 200, r.text);
  t.like(r.body, { saved_card: null, auto_top_up: null });
  t.is(fake.object(paymentMethod)!.customer, null, 'detached');
  t.is((await a.owner.delete('/console/api/billing/auto_top_up')).body.auto_top_up, null);
});

test.serial('a number renewal the balance cannot cover: no early warning and no countdown while a working automatic top-up is on; the next round pays it from the top-up', async (t) => {
  const { days, a } = await onNextDayWithCard(2_500);
  const c = await makeCustomer(a.liveApi);
  const rented = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, {});
  t.is(rented.status, 201, rented.text);
  const n = rented.body;
  t.is((await balance(a)).balance_cents, 1_000, 'less than a month of rent left');
  // Threshold 500: 1,000 is above it (nothing asked now), and short of the 1,500 rent.
  t.is((await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 500, amount_cents: 2_500 })).status, 200);
  t.is((await automatic(a)).length, 0);
  const renewsOn = n.renews_on as string;
  await days.advanceTo(addDays(renewsOn, -3));
  await a.admin.post('/admin/v1/jobs/renew_numbers/run');
  const warnings = ((await a.liveApi.get('/v1/events?type=number.payment_due&limit=100')).body.data as any[]).filter((e) => e.data.id === n.id);
  t.is(warnings.length, 0, 'the automatic top-up covers the rent: no early warning');
  await days.advanceTo(renewsOn);
  await a.admin.post('/admin/v1/jobs/renew_numbers/run');
  t.like((await a.liveApi.get(`/v1/customers/${c.id}/numbers/${n.id}`)).body, { status: 'active', renews_on: renewsOn, release_due_on: null }, 'not paid yet, and no countdown');
  t.is((await automatic(a)).length, 1, 'the renewal asked for the automatic top-up');
  await svc.services.payNow();
  t.is((await balance(a)).balance_cents, 1_000 + 2_500, 'the automatic top-up is credited');
  // The renewal's next round takes the rent from the money that came.
  await a.admin.post('/admin/v1/jobs/renew_numbers/run');
  const after = (await a.liveApi.get(`/v1/customers/${c.id}/numbers/${n.id}`)).body;
  t.like(after, { status: 'active', release_due_on: null });
  t.not(after.renews_on, renewsOn, 'the rent was taken');
  t.is((await balance(a)).balance_cents, 1_000 + 2_500 - 1_500);
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('a number in its countdown is paid by the automatic top-up the moment its credit is written, once', async (t) => {
  const { days, a } = await onNextDayWithCard(2_500);
  const c = await makeCustomer(a.liveApi);
  const n = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, {})).body;
  const renewsOn = n.renews_on as string;
  await days.advanceTo(renewsOn);
  await a.admin.post('/admin/v1/jobs/renew_numbers/run');
  t.like((await a.liveApi.get(`/v1/customers/${c.id}/numbers/${n.id}`)).body, { status: 'payment_due' }, 'no automatic top-up yet: the countdown');
  // Switched on under its threshold: a charge at once; its credit pays the rent in its own transaction.
  t.is((await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 2_000, amount_cents: 2_500 })).status, 200);
  await svc.services.payNow();
  t.like((await a.liveApi.get(`/v1/customers/${c.id}/numbers/${n.id}`)).body, { status: 'active', release_due_on: null });
  const rent = ((await a.liveApi.get(`/v1/usage?customer_id=${c.id}&limit=100`)).body.data as any[]).filter((l) => l.cause === 'number');
  t.is(rent.length, 2, 'the first month and the renewal, once');
  t.is((await balance(a)).balance_cents, 1_000 + 2_500 - 1_500);
  t.is((await automatic(a)).length, 1, '2,000 is not under the 2,000 threshold: no second top-up');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

test.serial('website hosting the balance cannot cover waits for the automatic top-up, without hosting_due, and the next round pays it', async (t) => {
  const { days, a } = await onNextDayWithCard(38_000);
  const c = await makeCustomer(a.liveApi, { name: 'Bright Dental', country: 'GB' });
  const order = await a.liveApi.post(`/v1/customers/${c.id}/websites`, { brief: 'Family dental practice in Leeds. Check-ups, hygiene and emergency appointments; evening hours on Thursdays.' });
  t.is(order.status, 202, order.text);
  t.is((await a.admin.post('/admin/v1/website_builder/run')).status, 200);
  const site = (await a.liveApi.post(`/v1/customers/${c.id}/websites/${order.body.id}/publish`, {})).body;
  t.is((await balance(a)).balance_cents, 38_000 - 35_000 - 2_000);
  t.is((await a.owner.put('/console/api/billing/auto_top_up', { threshold_cents: 500, amount_cents: 2_500 })).status, 200);
  const renewsOn = site.hosting_renews_on as string;
  await days.advanceTo(addDays(renewsOn, -3));
  await a.admin.post('/admin/v1/jobs/renew_hosting/run');
  await days.advanceTo(renewsOn);
  await a.admin.post('/admin/v1/jobs/renew_hosting/run');
  t.like((await a.liveApi.get(`/v1/customers/${c.id}/websites/${site.id}`)).body, { status: 'live', hosting_renews_on: renewsOn, suspend_due_on: null });
  await svc.services.payNow();
  await a.admin.post('/admin/v1/jobs/renew_hosting/run');
  const after = (await a.liveApi.get(`/v1/customers/${c.id}/websites/${site.id}`)).body;
  t.like(after, { status: 'live', suspend_due_on: null });
  t.not(after.hosting_renews_on, renewsOn);
  t.is((await balance(a)).balance_cents, 1_000 + 2_500 - 2_000);
  const due = ((await a.liveApi.get('/v1/events?type=website.hosting_due&limit=100')).body.data as any[]).filter((e) => e.data.id === site.id);
  t.is(due.length, 0, 'never hosting_due: no warning, no countdown');
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});
