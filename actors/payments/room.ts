import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import type { PaymentProvider } from '../../payments/provider.ts';

/**
 * What every part of the payments room shares: the process's deps, the money writer, and the
 * processor of each mode (live: Stripe when configured, else none; test: the simulated processor).
 */
export interface PaymentsDeps extends Deps {
  money: MoneyWriter;
  providers: { live: PaymentProvider | null; test: PaymentProvider | null };
  /** Events a processor could not hand over in-process (the simulated one's), offered again each inbox round. */
  handOverPending?: () => Promise<unknown>;
}

export interface Room {
  deps: PaymentsDeps;
  /** The processor of a mode, null when it is not configured. */
  providerFor(mode: Mode): PaymentProvider | null;
  /** Wakes the automatic top-up worker soon (after the caller's transaction commits). */
  pokeWorker(): void;
}

/** How an automatic top-up or a card payment reads on the ledger and the receipt. */
export function topUpDescription(kind: 'checkout' | 'automatic', card: { brand: string | null; last4: string | null } | null): string {
  const what = kind === 'automatic' ? 'Automatic top-up by card' : 'Top-up by card';
  return card?.last4 ? `${what} (${card.brand ?? 'card'} ending ${card.last4})` : what;
}
