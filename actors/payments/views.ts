import { iso } from '../../runtime/types.ts';
import type { Mode } from '../../runtime/types.ts';
import type { AutoTopUpStateRow, CardPaymentRow, CardRefundRow, SavedCardRow } from '../../db/payments.ts';
import type { ProviderKind } from '../../payments/provider.ts';
import { BONUS_TIERS, MINIMUM_TOP_UP_CENTS } from '../../money/rules/pricing.ts';

/** What the console and the operator read of card payments (CONTRACT-22, "The card payment object"). */

/** The bonus tiers of a top-up, as the console shows them (smallest first): pricing's, which applies them. */
export const BONUS_TIERS_VIEW = [...BONUS_TIERS].sort((a, b) => a.fromCents - b.fromCents).map((t) => ({ from_cents: t.fromCents, percent: t.percent }));

export function cardPaymentView(p: CardPaymentRow) {
  return {
    object: 'card_payment' as const,
    id: p.id,
    mode: p.mode,
    kind: p.kind,
    status: p.status,
    amount_cents: p.amount_cents,
    bonus_cents: p.status === 'succeeded' ? p.bonus_cents : 0,
    refunded_cents: p.refunded_cents,
    card: p.card_brand || p.card_last4 ? { brand: p.card_brand, last4: p.card_last4 } : null,
    receipt_url: p.receipt_url,
    failure: p.failure_code ? { code: p.failure_code, message: p.failure_message ?? '' } : null,
    ledger_line_id: p.ledger_line_id,
    created_at: iso(p.created_at)!,
    paid_at: iso(p.paid_at),
  };
}

export type CardPaymentView = ReturnType<typeof cardPaymentView>;

export function cardRefundView(r: CardRefundRow) {
  return {
    object: 'card_refund' as const,
    id: r.id,
    card_payment_id: r.card_payment_id,
    amount_cents: r.amount_cents,
    status: r.status,
    ledger_line_id: r.ledger_line_id,
    created_at: iso(r.created_at)!,
  };
}

export function paymentsSetupView(s: {
  mode: Mode;
  processor: ProviderKind | null;
  publishableKey: string | null;
  card: SavedCardRow | null;
  autoTopUp: { thresholdCents: number; amountCents: number } | null;
  state: AutoTopUpStateRow | null;
  realNow: Date;
}) {
  const failing = Boolean(s.state?.failing_since);
  return {
    object: 'payments_setup' as const,
    mode: s.mode,
    processor: s.processor,
    publishable_key: s.publishableKey,
    minimum_top_up_cents: MINIMUM_TOP_UP_CENTS,
    bonus_tiers: BONUS_TIERS_VIEW,
    saved_card: s.card ? { brand: s.card.brand, last4: s.card.last4, exp_month: s.card.exp_month, exp_year: s.card.exp_year } : null,
    auto_top_up: s.autoTopUp
      ? {
          threshold_cents: s.autoTopUp.thresholdCents,
          amount_cents: s.autoTopUp.amountCents,
          status: failing ? ('failing' as const) : ('on' as const),
          retry_after: failing && s.state?.retry_after && s.state.retry_after > s.realNow ? iso(s.state.retry_after) : null,
          last_failure: s.state?.last_failure_code
            ? { code: s.state.last_failure_code, message: s.state.last_failure_message ?? '', at: iso(s.state.last_failure_at)! }
            : null,
        }
      : null,
  };
}

export type PaymentsSetupView = ReturnType<typeof paymentsSetupView>;
