import type { Mode } from '../runtime/types.ts';

/**
 * The card processor as the payments room sees it (actors/payments/). Two implementations speak
 * it: `payments/stripe.ts` (the `stripe` SDK: live money, and Stripe's own test keys) and the
 * simulated processor of test mode (actors/payments/simulated-provider.ts: a card form in the
 * console, no outside service), so a top-up runs the same code path whichever completes it.
 *
 * Amounts are integer cents in USD. Every call that creates something takes an idempotency key
 * (Stripe's `Idempotency-Key`): a retry after a crash or a timeout creates nothing twice.
 */

export type ProviderKind = 'stripe' | 'simulated';

/** A card as the processor reports it: never the number, only what a receipt shows. */
export interface CardDetails {
  /** visa, mastercard, amex, … (Stripe's `card.brand`); null when not known. */
  brand: string | null;
  last4: string | null;
  expMonth: number | null;
  expYear: number | null;
}

export interface CheckoutRequest {
  accountId: string;
  mode: Mode;
  /** The processor's customer for the account (ensureCustomer). */
  customerRef: string;
  amountCents: number;
  /** Save the card for off-session use (automatic top-up): Stripe `payment_intent_data.setup_future_usage = 'off_session'`. */
  saveCard: boolean;
  /** Where the processor sends the person afterwards; `{CHECKOUT_SESSION_ID}` is replaced by the processor. */
  successUrl: string;
  cancelUrl: string;
  /** Our card payment's id: the idempotency key, and `metadata.card_payment_id` on the session and its payment intent. */
  cardPaymentId: string;
  /** What the person reads on the processor's page, e.g. "Account balance top-up". */
  description: string;
}

export interface CheckoutSession {
  id: string;
  /** The page the person is sent to (Stripe's hosted checkout, or the console's simulated card form). */
  url: string | null;
  status: 'open' | 'complete' | 'expired';
  paymentStatus: 'paid' | 'unpaid' | 'no_payment_required';
  paymentIntentId: string | null;
  amountCents: number;
  customerRef: string | null;
  metadata: Record<string, string>;
}

export type PaymentStatus = 'succeeded' | 'processing' | 'requires_action' | 'requires_payment_method' | 'requires_confirmation' | 'canceled';

export interface PaymentResult {
  /** The payment intent's id (`pi_…`). */
  id: string;
  status: PaymentStatus;
  amountCents: number;
  customerRef: string | null;
  /** The card that paid (from the latest charge's `payment_method_details.card`). */
  card: CardDetails | null;
  /** The saved card's id, when the payment saved one or used one (`pm_…`). */
  paymentMethodId: string | null;
  /** Stripe's receipt page of the latest charge. */
  receiptUrl: string | null;
  /** The latest charge's id (`ch_…`), which refunds and disputes name. */
  chargeId: string | null;
  metadata: Record<string, string>;
  /** Why the last attempt failed (`last_payment_error`), when it did. */
  failure: PaymentFailure | null;
}

export interface PaymentFailure {
  /** Stripe's error code: card_declined, authentication_required, expired_card, insufficient_funds, processing_error, … */
  code: string;
  declineCode: string | null;
  /** Stripe's message, safe to show the card holder. */
  message: string;
}

/**
 * An off-session charge the processor refused (Stripe answers 402 with a card error). The payment
 * intent it names exists (status requires_payment_method or requires_action).
 */
export class PaymentDeclined extends Error {
  override name = 'PaymentDeclined';
  constructor(
    readonly failure: PaymentFailure,
    readonly paymentIntentId: string | null,
  ) {
    super(failure.message);
  }
}

/** The processor could not be reached or answered 5xx / 429: nothing is known; try again with the same idempotency key. */
export class ProviderUnavailable extends Error {
  override name = 'ProviderUnavailable';
}

/**
 * The processor refused the request itself (Stripe's 4xx other than 429, e.g. a charge already
 * refunded in its dashboard): nothing was created, and the same idempotency key would be refused
 * again. `code` is Stripe's error code when it gave one.
 */
export class ProcessorRefused extends Error {
  override name = 'ProcessorRefused';
  constructor(
    message: string,
    readonly code: string | null,
    readonly processorMessage: string,
    /** The request parameter Stripe named (`customer` for a customer it does not know). */
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** A webhook whose signature or timestamp does not check out: answered 400, nothing stored. */
export class WebhookSignatureError extends Error {
  override name = 'WebhookSignatureError';
}

export interface RefundResult {
  id: string;
  status: 'pending' | 'succeeded' | 'failed' | 'canceled' | 'requires_action';
  amountCents: number;
  paymentIntentId: string | null;
  chargeId: string | null;
}

/** A verified processor event: Stripe's `event.id`, `event.type`, `event.created` and `event.data.object`. */
export interface ProviderEvent {
  id: string;
  type: string;
  created: number;
  livemode: boolean;
  object: Record<string, any>;
}

export interface PaymentProvider {
  readonly kind: ProviderKind;
  /** The publishable key a page may show (Stripe's `pk_…`); null for the simulated processor. */
  readonly publishableKey: string | null;
  /** The processor's customer for one account and mode, created once (idempotency key `customer:<accountId>:<mode>`). */
  createCustomer(c: { accountId: string; mode: Mode; name: string; email: string | null }): Promise<string>;
  createCheckoutSession(r: CheckoutRequest): Promise<CheckoutSession>;
  retrieveCheckoutSession(id: string): Promise<CheckoutSession>;
  /**
   * An off-session charge of a saved card, confirmed at once (`off_session: true, confirm: true`).
   * Resolves with the payment (succeeded, or processing); throws PaymentDeclined when the card is
   * refused or needs its holder (authentication_required), ProviderUnavailable when nothing is known.
   */
  chargeSavedCard(r: { customerRef: string; paymentMethodId: string; amountCents: number; cardPaymentId: string; description: string }): Promise<PaymentResult>;
  retrievePayment(paymentIntentId: string): Promise<PaymentResult>;
  /** Refunds part or all of a payment (idempotency key: our refund's id). */
  refund(r: { paymentIntentId: string; amountCents: number; refundId: string }): Promise<RefundResult>;
  paymentMethod(id: string): Promise<CardDetails>;
  detachPaymentMethod(id: string): Promise<void>;
  /** Verifies a webhook (Stripe-Signature over the raw body, 300 s tolerance) and returns its event; throws WebhookSignatureError. */
  verifyWebhook(rawBody: Buffer, signatureHeader: string | undefined): ProviderEvent;
}
