import type { Config } from '../runtime/config.ts';
import type { PaymentProvider } from '../payments/provider.ts';

/**
 * The card processor of each mode: live is Stripe when STRIPE_SECRET_KEY is set, else none (the
 * console says card payments are not configured); test is always the simulated processor.
 */
export function paymentProviders(_config: Config): { live: PaymentProvider | null; test: PaymentProvider | null } {
  // Filled in when the Stripe adapter and the simulated processor land (branch `stripe`).
  return { live: null, test: null };
}
