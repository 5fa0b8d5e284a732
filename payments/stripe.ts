import Stripe from 'stripe';
import {
  PaymentDeclined,
  ProcessorRefused,
  ProviderUnavailable,
  WebhookSignatureError,
  type CardDetails,
  type CheckoutSession,
  type PaymentProvider,
  type PaymentResult,
  type PaymentStatus,
  type ProviderEvent,
  type RefundResult,
} from './provider.ts';

/**
 * The card processor for live money (and Stripe's own test keys): Stripe through its SDK.
 *
 * - Every create carries an idempotency key (the contract's: `customer:<account>:<mode>`, the card
 *   payment's id for a checkout or an off-session charge, the refund's id for a refund), so a retry
 *   after a timeout creates nothing twice. The SDK's own retries are off (`maxNetworkRetries: 0`):
 *   a 5xx, a 429 or a lost connection is `ProviderUnavailable` at once, and the caller retries with
 *   the same key when it chooses (its worker's round, or the person's next click).
 * - A card error (402) is `PaymentDeclined` with Stripe's code, decline code and message (safe to
 *   show the card holder). A refused API key is `ProviderUnavailable` too: nothing can be done
 *   until the operator fixes the configuration, and the message never carries the key.
 * - Webhooks are verified with `stripe.webhooks.constructEvent` over the raw body, 300 s tolerance.
 *
 * `apiBase` (STRIPE_API_BASE) points the SDK elsewhere: the tests' fake Stripe.
 */
export interface StripeProviderConfig {
  secretKey: string;
  webhookSecret: string;
  publishableKey: string | null;
  /** e.g. http://127.0.0.1:4242 (tests); default Stripe's own API. */
  apiBase?: string | null;
  /** Per request, ms. Default 20 000. */
  timeoutMs?: number;
}

export const WEBHOOK_TOLERANCE_SECONDS = 300;
const CURRENCY = 'usd';

function idOf(v: string | { id: string } | null | undefined): string | null {
  if (!v) return null;
  return typeof v === 'string' ? v : v.id;
}

function sdkOptions(c: StripeProviderConfig): Stripe.StripeConfig {
  const options: Stripe.StripeConfig = { maxNetworkRetries: 0, timeout: c.timeoutMs ?? 20_000, telemetry: false };
  if (c.apiBase) {
    const base = new URL(c.apiBase);
    const protocol = base.protocol === 'http:' ? 'http' : 'https';
    options.host = base.hostname;
    options.port = base.port ? Number(base.port) : protocol === 'http' ? 80 : 443;
    options.protocol = protocol;
  }
  return options;
}

/** Stripe's errors as the payments room knows them; anything else (a bug in the request) goes up as it is, without the key. */
function mapError(e: unknown): never {
  if (e instanceof Stripe.errors.StripeCardError) {
    const raw = e.raw as { payment_intent?: { id?: string } };
    throw new PaymentDeclined(
      { code: e.code ?? 'card_declined', declineCode: e.decline_code ?? null, message: e.message },
      idOf(e.payment_intent as { id: string } | undefined) ?? raw.payment_intent?.id ?? null,
    );
  }
  if (e instanceof Stripe.errors.StripeConnectionError) throw new ProviderUnavailable('the card processor could not be reached');
  if (e instanceof Stripe.errors.StripeAuthenticationError || e instanceof Stripe.errors.StripePermissionError)
    throw new ProviderUnavailable(`the card processor refused the API key (${e.statusCode ?? 'no status'})`);
  if (e instanceof Stripe.errors.StripeError) {
    const status = e.statusCode ?? 0;
    if (status >= 500 || status === 429 || e instanceof Stripe.errors.StripeRateLimitError || e instanceof Stripe.errors.StripeAPIError)
      throw new ProviderUnavailable(`the card processor answered ${status || e.type}`);
    throw new ProcessorRefused(`the card processor refused the request (${status} ${e.type}${e.code ? ` ${e.code}` : ''}${e.param ? ` param ${e.param}` : ''}): ${e.message}`, e.code ?? null, e.message, e.param ?? null);
  }
  throw e;
}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    mapError(e);
  }
}

function card(c: { brand?: string | null; last4?: string | null; exp_month?: number | null; exp_year?: number | null } | null | undefined): CardDetails | null {
  if (!c) return null;
  return { brand: c.brand ?? null, last4: c.last4 ?? null, expMonth: c.exp_month ?? null, expYear: c.exp_year ?? null };
}

function checkoutSession(s: Stripe.Checkout.Session): CheckoutSession {
  return {
    id: s.id,
    url: s.url ?? null,
    status: (s.status ?? 'open') as CheckoutSession['status'],
    paymentStatus: s.payment_status as CheckoutSession['paymentStatus'],
    paymentIntentId: idOf(s.payment_intent),
    amountCents: s.amount_total ?? 0,
    customerRef: idOf(s.customer as string | { id: string } | null),
    metadata: { ...(s.metadata ?? {}) },
  };
}

function paymentResult(pi: Stripe.PaymentIntent): PaymentResult {
  const charge = pi.latest_charge && typeof pi.latest_charge === 'object' ? pi.latest_charge : null;
  const err = pi.last_payment_error;
  return {
    id: pi.id,
    status: pi.status as PaymentStatus,
    amountCents: pi.amount,
    customerRef: idOf(pi.customer as string | { id: string } | null),
    card: card(charge?.payment_method_details?.card),
    paymentMethodId: idOf(pi.payment_method as string | { id: string } | null),
    receiptUrl: charge?.receipt_url ?? null,
    chargeId: idOf(pi.latest_charge as string | { id: string } | null),
    metadata: { ...(pi.metadata ?? {}) },
    failure: err ? { code: err.code ?? 'card_declined', declineCode: err.decline_code ?? null, message: err.message ?? 'The payment failed.' } : null,
  };
}

export function createStripeProvider(config: StripeProviderConfig): PaymentProvider {
  const stripe = new Stripe(config.secretKey, sdkOptions(config));
  const webhookSecret = config.webhookSecret;
  // Stripe's live keys sign live events only, its test keys test events (null: a key of another form, not checked).
  const keyLivemode = /^(sk|rk)_live_/.test(config.secretKey) ? true : /^(sk|rk)_test_/.test(config.secretKey) ? false : null;

  return {
    kind: 'stripe',
    publishableKey: config.publishableKey,

    async createCustomer(c) {
      const customer = await call(() =>
        stripe.customers.create(
          { name: c.name, ...(c.email ? { email: c.email } : {}), metadata: { account_id: c.accountId, mode: c.mode } },
          { idempotencyKey: `customer:${c.accountId}:${c.mode}` },
        ),
      );
      return customer.id;
    },

    async createCheckoutSession(r) {
      const metadata = { card_payment_id: r.cardPaymentId, account_id: r.accountId, mode: r.mode };
      const session = await call(() =>
        stripe.checkout.sessions.create(
          {
            mode: 'payment',
            customer: r.customerRef,
            client_reference_id: r.cardPaymentId,
            line_items: [{ quantity: 1, price_data: { currency: CURRENCY, unit_amount: r.amountCents, product_data: { name: r.description } } }],
            payment_intent_data: { description: r.description, metadata, ...(r.saveCard ? { setup_future_usage: 'off_session' as const } : {}) },
            metadata,
            success_url: r.successUrl,
            cancel_url: r.cancelUrl,
          },
          { idempotencyKey: r.cardPaymentId },
        ),
      );
      return checkoutSession(session);
    },

    async retrieveCheckoutSession(id) {
      return checkoutSession(await call(() => stripe.checkout.sessions.retrieve(id)));
    },

    async chargeSavedCard(r) {
      const pi = await call(() =>
        stripe.paymentIntents.create(
          {
            amount: r.amountCents,
            currency: CURRENCY,
            customer: r.customerRef,
            payment_method: r.paymentMethodId,
            off_session: true,
            confirm: true,
            description: r.description,
            metadata: { card_payment_id: r.cardPaymentId },
            expand: ['latest_charge'],
          },
          { idempotencyKey: r.cardPaymentId },
        ),
      );
      return paymentResult(pi);
    },

    async retrievePayment(paymentIntentId) {
      return paymentResult(await call(() => stripe.paymentIntents.retrieve(paymentIntentId, { expand: ['latest_charge'] })));
    },

    async refund(r) {
      const refund = await call(() => stripe.refunds.create({ payment_intent: r.paymentIntentId, amount: r.amountCents }, { idempotencyKey: r.refundId }));
      return {
        id: refund.id,
        status: (refund.status ?? 'pending') as RefundResult['status'],
        amountCents: refund.amount,
        paymentIntentId: idOf(refund.payment_intent as string | { id: string } | null),
        chargeId: idOf(refund.charge as string | { id: string } | null),
      };
    },

    async paymentMethod(id) {
      const pm = await call(() => stripe.paymentMethods.retrieve(id));
      return card(pm.card) ?? { brand: null, last4: null, expMonth: null, expYear: null };
    },

    async detachPaymentMethod(id) {
      try {
        await stripe.paymentMethods.detach(id);
      } catch (e) {
        // Already detached (or gone): what was asked is true.
        if (e instanceof Stripe.errors.StripeInvalidRequestError && (e.code === 'payment_method_unexpected_state' || e.code === 'resource_missing')) return;
        mapError(e);
      }
    },

    verifyWebhook(rawBody, signatureHeader): ProviderEvent {
      if (!signatureHeader) throw new WebhookSignatureError('no Stripe-Signature header');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, signatureHeader, webhookSecret, WEBHOOK_TOLERANCE_SECONDS);
      } catch (e) {
        throw new WebhookSignatureError(e instanceof Stripe.errors.StripeSignatureVerificationError ? e.message : 'the webhook body is not an event');
      }
      // Signed is not enough: a body that is not an event (or an event of Stripe's other mode, when
      // the webhook secret belongs to the other mode's endpoint) is refused, never stored.
      const e = event as unknown as Record<string, any> | null;
      const object = e?.data?.object;
      if (
        !e ||
        typeof e !== 'object' ||
        typeof e.id !== 'string' ||
        e.id.length === 0 ||
        e.id.length > 255 ||
        typeof e.type !== 'string' ||
        e.type.length === 0 ||
        e.type.length > 255 ||
        !Number.isFinite(e.created) ||
        typeof e.livemode !== 'boolean' ||
        !object ||
        typeof object !== 'object' ||
        Array.isArray(object)
      ) {
        throw new WebhookSignatureError('the webhook body is not a Stripe event');
      }
      if (keyLivemode !== null && e.livemode !== keyLivemode) {
        throw new WebhookSignatureError(`a ${e.livemode ? 'live' : 'test'}-mode event, but the API key is a ${keyLivemode ? 'live' : 'test'}-mode key (is STRIPE_WEBHOOK_SECRET the other mode's endpoint's?)`);
      }
      return { id: event.id, type: event.type, created: event.created, livemode: event.livemode, object: event.data.object as unknown as Record<string, any> };
    },
  };
}
