import crypto from 'node:crypto';
import { withTransaction, type Pool } from '../../db/pool.ts';
import {
  createSimulatedPaymentsRepository,
  type SimulatedEventRow,
  type SimulatedIntentRow,
  type SimulatedPaymentMethodRow,
  type SimulatedPaymentsRepository,
  type SimulatedSessionRow,
} from '../../db/simulated-payments.ts';
import {
  PaymentDeclined,
  WebhookSignatureError,
  type CardDetails,
  type CheckoutSession,
  type PaymentProvider,
  type PaymentResult,
  type ProviderEvent,
} from '../../payments/provider.ts';
import { checkCardFields, chargeOutcome, testCard } from '../../payments/test-cards.ts';
import { realClock, type Clock } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/logger.ts';
import { Refusal } from '../../runtime/refusal.ts';

/**
 * The simulated card processor of test mode: Stripe's checkout and payment intents without an
 * outside service, so a reseller can try a top-up in test mode through the same code path as a
 * live one. Its "hosted page" is the console's card form (`/console/checkout/<session id>`),
 * which pays through `pay`; Stripe's test cards (payments/test-cards.ts) decide every payment.
 *
 * Its state is in the database (migration 034) so every process sees it. What Stripe would send
 * as webhooks (checkout.session.completed, payment_intent.succeeded, payment_intent.payment_failed,
 * charge.refunded) is written as events in the same transaction as the change they tell, then
 * handed to `onEvent` (the payments room's inbox, where Stripe's webhooks land) and marked
 * delivered once it has taken them: an event is never lost, and one handed over twice (a retry
 * after onEvent failed) has the same id, which the inbox takes once.
 *
 * Events, sessions and payment intents are shaped exactly as Stripe's (`object`, ids `cs_test_…`,
 * `pi_test_…`, `pm_test_…`, `ch_test_…`, `evt_test_…`, unix `created`, `livemode: false`);
 * a simulated charge has no receipt page (`receipt_url: null`).
 */
export interface SimulatedProviderDeps {
  pool: Pool;
  /** The service's public URL (read at each checkout: tests learn it after start). */
  publicUrl: string | (() => string);
  /** Takes one event (the payments room stores it in its inbox); an event is delivered again until this resolves. */
  onEvent: (event: ProviderEvent) => Promise<void>;
  /** Real time (Stripe's timestamps and a card's expiry are wall-clock facts). */
  clock?: Clock;
  log?: Logger;
}

/** The console's card form's view of a session (GET /console/api/billing/simulated_checkout/:id). */
export interface SimulatedCheckoutView {
  object: 'simulated_checkout';
  id: string;
  status: 'open' | 'complete' | 'expired';
  amount_cents: number;
  save_card: boolean;
  card_payment_id: string;
  success_url: string;
  cancel_url: string;
}

export interface SimulatedCard {
  cardNumber: string;
  expMonth: number;
  expYear: number;
  cvc: string;
}

export interface SimulatedProvider extends PaymentProvider {
  readonly kind: 'simulated';
  /** One of the account's test-mode sessions; 404 checkout_session_not_found for another account's or an unknown id. */
  checkout(accountId: string, sessionId: string): Promise<SimulatedCheckoutView>;
  /**
   * Pays a session with a card, as Stripe's hosted page does: `{ status: 'complete', redirectUrl }`
   * (the success URL with the session id), or a Refusal `card_declined` whose explanation is
   * Stripe's message. Paying a session already complete answers the same again.
   */
  pay(accountId: string, sessionId: string, card: SimulatedCard): Promise<{ status: 'complete'; redirectUrl: string }>;
  /** Hands pending events to onEvent (after a failed hand-over); resolves to how many were taken. */
  deliverPending(): Promise<number>;
  /** Sees every event as it is sent (once its change commits, before it is handed over; tests). Answers the function that stops it. */
  observe(listener: (event: ProviderEvent) => void): () => void;
}

const SESSION_LIFETIME_MS = 24 * 3600 * 1000;
const CURRENCY = 'usd';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function stripeId(prefix: string, length = 24): string {
  let out = '';
  while (out.length < length) for (const b of crypto.randomBytes(length * 2)) if (b < 248 && out.length < length) out += BASE62[b % 62];
  return prefix + out;
}

const unix = (d: Date) => Math.floor(d.getTime() / 1000);

function sessionStatus(s: SimulatedSessionRow, now: Date): SimulatedCheckoutView['status'] {
  return s.status === 'open' && now >= s.expires_at ? 'expired' : s.status;
}

function redirectUrl(s: SimulatedSessionRow): string {
  return s.success_url.replaceAll('{CHECKOUT_SESSION_ID}', s.id);
}

export function createSimulatedProvider(deps: SimulatedProviderDeps): SimulatedProvider {
  const clock = deps.clock ?? realClock;
  const publicUrl = () => (typeof deps.publicUrl === 'function' ? deps.publicUrl() : deps.publicUrl).replace(/\/$/, '');
  const repo = createSimulatedPaymentsRepository(deps.pool);
  const observers = new Set<(event: ProviderEvent) => void>();

  /** Stripe's `checkout.session` object. */
  function sessionObject(s: SimulatedSessionRow, now: Date): Record<string, any> {
    const status = sessionStatus(s, now);
    return {
      id: s.id,
      object: 'checkout.session',
      amount_subtotal: s.amount_cents,
      amount_total: s.amount_cents,
      cancel_url: s.cancel_url,
      client_reference_id: s.card_payment_id,
      created: unix(s.created_at),
      currency: CURRENCY,
      customer: s.customer_ref,
      customer_details: status === 'complete' ? { address: null, email: null, name: null, phone: null, tax_exempt: 'none', tax_ids: [] } : null,
      expires_at: unix(s.expires_at),
      livemode: false,
      metadata: { ...s.metadata },
      mode: 'payment',
      payment_intent: s.payment_intent_id,
      payment_method_types: ['card'],
      payment_status: status === 'complete' ? 'paid' : 'unpaid',
      status,
      success_url: s.success_url,
      ui_mode: 'hosted',
      url: status === 'open' ? `${publicUrl()}/console/checkout/${s.id}` : null,
    };
  }

  /** Stripe's `payment_intent` object (latest_charge an id, as Stripe sends it unexpanded). */
  function intentObject(pi: SimulatedIntentRow): Record<string, any> {
    return {
      id: pi.id,
      object: 'payment_intent',
      amount: pi.amount_cents,
      amount_capturable: 0,
      amount_received: pi.status === 'succeeded' ? pi.amount_cents : 0,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: 'automatic',
      confirmation_method: 'automatic',
      created: unix(pi.created_at),
      currency: CURRENCY,
      customer: pi.customer_ref,
      description: pi.description,
      last_payment_error: pi.failure_code
        ? { type: 'card_error', code: pi.failure_code, decline_code: pi.failure_decline_code, message: pi.failure_message, payment_method: pi.payment_method_id ? { id: pi.payment_method_id, object: 'payment_method' } : null }
        : null,
      latest_charge: pi.charge_id,
      livemode: false,
      metadata: { ...pi.metadata },
      next_action: null,
      payment_method: pi.payment_method_id,
      payment_method_types: ['card'],
      setup_future_usage: pi.setup_future_usage,
      status: pi.status,
    };
  }

  /** Stripe's `charge` object of a succeeded payment intent. */
  function chargeObject(pi: SimulatedIntentRow, pm: SimulatedPaymentMethodRow | null): Record<string, any> {
    return {
      id: pi.charge_id,
      object: 'charge',
      amount: pi.amount_cents,
      amount_captured: pi.amount_cents,
      amount_refunded: pi.refunded_cents,
      captured: true,
      created: unix(pi.succeeded_at ?? pi.created_at),
      currency: CURRENCY,
      customer: pi.customer_ref,
      description: pi.description,
      livemode: false,
      metadata: { ...pi.metadata },
      paid: true,
      payment_intent: pi.id,
      payment_method: pi.payment_method_id,
      payment_method_details: { type: 'card', card: pm ? { brand: pm.brand, last4: pm.last4, exp_month: pm.exp_month, exp_year: pm.exp_year, country: 'US', funding: 'credit' } : null },
      receipt_url: null,
      refunded: pi.refunded_cents === pi.amount_cents,
      status: 'succeeded',
    };
  }

  /** Writes an event in the caller's transaction and adds it to `written` (told to observers once that commits). */
  async function writeEvent(r: SimulatedPaymentsRepository, written: ProviderEvent[], type: string, object: Record<string, any>, now: Date): Promise<void> {
    const id = stripeId('evt_test_');
    // Stripe's event envelope; the payments room reads ProviderEvent's fields of it.
    const payload = { id, object: 'event', api_version: null, created: unix(now), data: { object }, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, type };
    const row = { id, type, payload, created_at: now };
    await r.insertEvent(row);
    written.push(providerEvent(row));
  }

  /** After a commit: observers see what was sent, then the events are handed over (a failure leaves them pending, never undoes the change). */
  async function sent(written: ProviderEvent[]): Promise<void> {
    for (const e of written) for (const o of observers) o(e);
    await deliverPending().catch((err) => deps.log?.warn({ err }, 'simulated payment events could not be read for delivery'));
  }

  function providerEvent(e: SimulatedEventRow): ProviderEvent {
    return { id: e.id, type: e.type, created: e.payload.created, livemode: false, object: e.payload.data.object };
  }

  async function deliverPending(): Promise<number> {
    let taken = 0;
    for (;;) {
      const batch = await repo.pendingEvents(50);
      if (batch.length === 0) return taken;
      for (const row of batch) {
        const event = providerEvent(row);
        try {
          await deps.onEvent(event);
        } catch (err) {
          deps.log?.warn({ err, event_id: event.id, type: event.type }, 'a simulated payment event was not taken; it is handed over again on the next payment');
          return taken;
        }
        await repo.markDelivered(row.id, clock.now());
        taken++;
      }
    }
  }

  function card(pm: SimulatedPaymentMethodRow | null): CardDetails | null {
    return pm ? { brand: pm.brand, last4: pm.last4, expMonth: pm.exp_month, expYear: pm.exp_year } : null;
  }

  async function paymentResult(pi: SimulatedIntentRow): Promise<PaymentResult> {
    const pm = pi.payment_method_id ? await repo.paymentMethod(pi.payment_method_id) : null;
    return {
      id: pi.id,
      status: pi.status,
      amountCents: pi.amount_cents,
      customerRef: pi.customer_ref,
      card: card(pm),
      paymentMethodId: pi.payment_method_id,
      receiptUrl: null,
      chargeId: pi.charge_id,
      metadata: { ...pi.metadata },
      failure: pi.failure_code ? { code: pi.failure_code, declineCode: pi.failure_decline_code, message: pi.failure_message ?? '' } : null,
    };
  }

  function checkoutSession(s: SimulatedSessionRow, now: Date): CheckoutSession {
    const status = sessionStatus(s, now);
    return {
      id: s.id,
      url: status === 'open' ? `${publicUrl()}/console/checkout/${s.id}` : null,
      status,
      paymentStatus: status === 'complete' ? 'paid' : 'unpaid',
      paymentIntentId: s.payment_intent_id,
      amountCents: s.amount_cents,
      customerRef: s.customer_ref,
      metadata: { ...s.metadata },
    };
  }

  const notFound = () => new Refusal('checkout_session_not_found');

  /**
   * A session read after its expiry is marked expired and sends checkout.session.expired, as
   * Stripe does when it expires one (the simulated processor has no timer: expiry happens when
   * the session is next looked at, which the payments room does while a top-up is pending).
   */
  async function readSession(id: string, accountId?: string): Promise<SimulatedSessionRow | null> {
    const s = await repo.session(id, { accountId });
    if (!s || sessionStatus(s, clock.now()) !== 'expired' || s.status !== 'open') return s;
    const written: ProviderEvent[] = [];
    const expired = await withTransaction(deps.pool, async (client) => {
      const r = createSimulatedPaymentsRepository(client);
      const row = await r.expireSession(id);
      if (row) await writeEvent(r, written, 'checkout.session.expired', sessionObject(row, clock.now()), clock.now());
      return row ?? (await r.session(id));
    });
    await sent(written);
    return expired;
  }

  return {
    kind: 'simulated',
    publishableKey: null,

    async createCustomer(c) {
      // One customer per account and mode, as Stripe's idempotent create gives: derived, so nothing to store.
      const digest = crypto.createHash('sha256').update(`customer:${c.accountId}:${c.mode}`).digest();
      let id = '';
      for (let i = 0; i < 14; i++) id += BASE62[digest[i]! % 62];
      return `cus_test_${id}`;
    },

    async createCheckoutSession(r) {
      const now = clock.now();
      const s = await repo.insertSession({
        id: stripeId('cs_test_', 58),
        account_id: r.accountId,
        mode: r.mode,
        card_payment_id: r.cardPaymentId,
        customer_ref: r.customerRef,
        amount_cents: r.amountCents,
        description: r.description,
        save_card: r.saveCard,
        success_url: r.successUrl,
        cancel_url: r.cancelUrl,
        metadata: { card_payment_id: r.cardPaymentId, account_id: r.accountId, mode: r.mode },
        created_at: now,
        expires_at: new Date(now.getTime() + SESSION_LIFETIME_MS),
      });
      return checkoutSession(s, now);
    },

    async retrieveCheckoutSession(id) {
      const s = await readSession(id);
      if (!s) throw new Error(`the simulated processor has no checkout session ${id}`);
      return checkoutSession(s, clock.now());
    },

    async checkout(accountId, sessionId) {
      const s = await readSession(sessionId, accountId);
      if (!s || s.mode !== 'test') throw notFound();
      return {
        object: 'simulated_checkout',
        id: s.id,
        status: sessionStatus(s, clock.now()),
        amount_cents: s.amount_cents,
        save_card: s.save_card,
        card_payment_id: s.card_payment_id,
        success_url: redirectUrl(s),
        cancel_url: s.cancel_url,
      };
    },

    async pay(accountId, sessionId, c) {
      const written: ProviderEvent[] = [];
      const outcome = await withTransaction(deps.pool, async (client) => {
        const r = createSimulatedPaymentsRepository(client);
        const now = clock.now();
        const s = await r.session(sessionId, { accountId, lock: true });
        if (!s || s.mode !== 'test') throw notFound();
        if (s.status === 'complete') return { ok: true as const, session: s };
        if (sessionStatus(s, now) === 'expired') {
          const row = await r.expireSession(s.id);
          if (row) await writeEvent(r, written, 'checkout.session.expired', sessionObject(row, now), now);
          return { ok: false as const, expired: true as const };
        }
        const checked = checkCardFields({ number: c.cardNumber, expMonth: c.expMonth, expYear: c.expYear, cvc: c.cvc }, now);
        // Refused before anything is stored: a malformed card, or one that is not a test card (never kept).
        if (!checked.ok) throw new Refusal('card_declined', checked.error.message, { code: checked.error.code });
        const failure = chargeOutcome(checked.card.digits, { offSession: false });
        if (!testCard(checked.card.digits)) throw new Refusal('card_declined', failure!.message, { code: failure!.code, decline_code: failure!.declineCode });

        const pmId = stripeId('pm_test_');
        const pmRow: SimulatedPaymentMethodRow = {
          id: pmId,
          customer_ref: null,
          test_number: checked.card.digits,
          brand: checked.card.brand,
          last4: checked.card.last4,
          exp_month: checked.card.expMonth,
          exp_year: checked.card.expYear,
          created_at: now,
        };
        await r.insertPaymentMethod(pmRow);
        let pi = s.payment_intent_id ? await r.intent(s.payment_intent_id, { lock: true }) : null;
        if (!pi) {
          pi = (
            await r.insertIntent({
              id: stripeId('pi_test_'),
              session_id: s.id,
              card_payment_id: s.card_payment_id,
              customer_ref: s.customer_ref,
              amount_cents: s.amount_cents,
              description: s.description,
              metadata: { ...s.metadata },
              setup_future_usage: s.save_card ? 'off_session' : null,
              status: 'requires_payment_method',
              payment_method_id: null,
              created_at: now,
            })
          ).row;
          await r.setSessionIntent(s.id, pi.id);
        }
        if (failure) {
          const failed = await r.recordAttempt(pi.id, { paymentMethodId: pmId, chargeId: null, failure, now });
          await writeEvent(r, written, 'payment_intent.payment_failed', intentObject(failed), now);
          return { ok: false as const, expired: false as const, failure };
        }
        const paid = await r.recordAttempt(pi.id, { paymentMethodId: pmId, chargeId: stripeId('ch_test_'), failure: null, now });
        if (s.save_card) await r.attachPaymentMethod(pmId, s.customer_ref);
        await r.completeSession(s.id, paid.id, now);
        const done = (await r.session(s.id))!;
        await writeEvent(r, written, 'payment_intent.succeeded', intentObject(paid), now);
        await writeEvent(r, written, 'checkout.session.completed', sessionObject(done, now), now);
        return { ok: true as const, session: done };
      });
      await sent(written);
      if (!outcome.ok && outcome.expired) throw new Refusal('checkout_session_expired');
      if (!outcome.ok) throw new Refusal('card_declined', outcome.failure.message, { code: outcome.failure.code, decline_code: outcome.failure.declineCode });
      return { status: 'complete', redirectUrl: redirectUrl(outcome.session) };
    },

    async chargeSavedCard(r) {
      const written: ProviderEvent[] = [];
      const result = await withTransaction(deps.pool, async (client) => {
        const repoTx = createSimulatedPaymentsRepository(client);
        const now = clock.now();
        const pm = await repoTx.paymentMethod(r.paymentMethodId);
        if (!pm) throw new Error(`the simulated processor has no payment method ${r.paymentMethodId}`);
        if (pm.customer_ref !== r.customerRef) throw new Error(`payment method ${r.paymentMethodId} is not saved on customer ${r.customerRef}`);
        const { row, created } = await repoTx.insertIntent({
          id: stripeId('pi_test_'),
          session_id: null,
          card_payment_id: r.cardPaymentId,
          customer_ref: r.customerRef,
          amount_cents: r.amountCents,
          description: r.description,
          metadata: { card_payment_id: r.cardPaymentId },
          setup_future_usage: null,
          status: 'requires_payment_method',
          payment_method_id: pm.id,
          created_at: now,
        });
        // The same card payment again (a retry): the first answer, as Stripe's idempotency replays it.
        if (!created) return row;
        const failure = chargeOutcome(pm.test_number, { offSession: true });
        const after = failure
          ? await repoTx.recordAttempt(row.id, { paymentMethodId: pm.id, chargeId: null, failure, now })
          : await repoTx.recordAttempt(row.id, { paymentMethodId: pm.id, chargeId: stripeId('ch_test_'), failure: null, now });
        await writeEvent(repoTx, written, failure ? 'payment_intent.payment_failed' : 'payment_intent.succeeded', intentObject(after), now);
        return after;
      });
      await sent(written);
      if (result.status !== 'succeeded')
        throw new PaymentDeclined({ code: result.failure_code ?? 'card_declined', declineCode: result.failure_decline_code, message: result.failure_message ?? 'Your card was declined.' }, result.id);
      return paymentResult(result);
    },

    async retrievePayment(id) {
      const pi = await repo.intent(id);
      if (!pi) throw new Error(`the simulated processor has no payment intent ${id}`);
      return paymentResult(pi);
    },

    async refund(r) {
      const written: ProviderEvent[] = [];
      const refund = await withTransaction(deps.pool, async (client) => {
        const repoTx = createSimulatedPaymentsRepository(client);
        const now = clock.now();
        const pi = await repoTx.intent(r.paymentIntentId, { lock: true });
        if (!pi) throw new Error(`the simulated processor has no payment intent ${r.paymentIntentId}`);
        const prior = await repoTx.refundByKey(r.refundId);
        if (prior) return prior;
        if (pi.status !== 'succeeded') throw new Error(`payment intent ${pi.id} has no successful charge to refund`);
        const left = pi.amount_cents - pi.refunded_cents;
        if (!Number.isInteger(r.amountCents) || r.amountCents <= 0 || r.amountCents > left)
          throw new Error(`a refund of ${r.amountCents} cents is more than the ${left} cents left of payment intent ${pi.id}`);
        const row = { id: stripeId('re_test_'), refund_key: r.refundId, payment_intent_id: pi.id, amount_cents: r.amountCents, created_at: now };
        const after = await repoTx.insertRefund(row);
        const pm = after.payment_method_id ? await repoTx.paymentMethod(after.payment_method_id) : null;
        await writeEvent(repoTx, written, 'charge.refunded', chargeObject(after, pm), now);
        return row;
      });
      await sent(written);
      const pi = await repo.intent(refund.payment_intent_id);
      return { id: refund.id, status: 'succeeded', amountCents: refund.amount_cents, paymentIntentId: refund.payment_intent_id, chargeId: pi?.charge_id ?? null };
    },

    async paymentMethod(id) {
      const pm = await repo.paymentMethod(id);
      if (!pm) throw new Error(`the simulated processor has no payment method ${id}`);
      return card(pm)!;
    },

    async detachPaymentMethod(id) {
      await repo.attachPaymentMethod(id, null);
    },

    verifyWebhook(): ProviderEvent {
      throw new WebhookSignatureError('the simulated processor sends no webhooks');
    },

    deliverPending,

    observe(listener) {
      observers.add(listener);
      return () => observers.delete(listener);
    },
  };
}
