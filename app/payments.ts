import type { Config } from '../runtime/config.ts';
import type { PaymentProvider } from '../payments/provider.ts';
import { createStripeProvider } from '../payments/stripe.ts';

/**
 * The card processor of each mode: live is Stripe when STRIPE_SECRET_KEY is set, else none (the
 * console says card payments are not configured); test is always the simulated processor.
 */
export function paymentProviders(config: Config, simulated: PaymentProvider): { live: PaymentProvider | null; test: PaymentProvider | null } {
  const live = config.stripe
    ? createStripeProvider({
        secretKey: config.stripe.secretKey,
        // Without the signing secret no webhook verifies (400): the return page still confirms payments.
        webhookSecret: config.stripe.webhookSecret ?? '',
        publishableKey: config.stripe.publishableKey ?? null,
        apiBase: config.stripe.apiBase ?? null,
      })
    : null;
  return { live, test: simulated };
}
