import type { Client } from '../../db/pool.ts';
import { createPaymentRepository, type CardPaymentRow } from '../../db/payments.ts';
import { ledgerReads } from '../../db/money/ledger.ts';
import { balanceReads } from '../../db/money/balances.ts';
import { enqueueEmail } from '../../db/email-outbox.ts';
import { topUpBonusCents } from '../../money/rules/pricing.ts';
import { iso } from '../../runtime/types.ts';
import type { PaymentFailure, PaymentResult } from '../../payments/provider.ts';
import { topUpDescription, type Room } from './room.ts';

/** After a failed automatic top-up, no new attempt for this long. */
export const AUTO_TOP_UP_RETRY_MS = 24 * 60 * 60 * 1000;

/**
 * What the processor says of a payment, applied to its card payment once, in the caller's
 * transaction with the card payment locked: a succeeded payment is credited through the money
 * writer (top-up line, bonus), whatever way the news arrives (a webhook, twice or late or out of
 * order, the return page reloaded, the automatic top-up's own charge); a failed automatic charge
 * is recorded with its activity line and email; a payment still processing waits.
 */
export function createSettlement(room: Room) {
  const { money, clock, realClock, log } = room.deps;

  async function credit(client: Client, p: CardPaymentRow, pr: PaymentResult): Promise<CardPaymentRow> {
    const repo = createPaymentRepository(client);
    const now = clock.now();
    const card = pr.card ? { brand: pr.card.brand, last4: pr.card.last4 } : { brand: p.card_brand, last4: p.card_last4 };
    const lines = await money.topUp(client, { accountId: p.account_id, mode: p.mode, amountCents: p.amount_cents, paymentReference: pr.id, description: topUpDescription(p.kind, card), now });
    const line = lines[0] ?? (await ledgerReads(client).topUpLine(p.account_id, pr.id));
    if (!line) throw new Error(`card payment ${p.id}: no top-up line for ${pr.id}`);
    const updated = await repo.updatePayment(p.id, {
      status: 'succeeded',
      payment_intent_id: pr.id,
      charge_id: pr.chargeId ?? p.charge_id,
      payment_method_id: pr.paymentMethodId ?? p.payment_method_id,
      card_brand: card.brand,
      card_last4: card.last4,
      receipt_url: pr.receiptUrl ?? p.receipt_url,
      failure_code: null,
      failure_message: null,
      ledger_line_id: line.id,
      bonus_cents: lines[1]?.amount_cents ?? topUpBonusCents(p.amount_cents),
      paid_at: realClock.now(),
    });
    // The card is saved for automatic top-up when the reseller asked (a new card ends a failing spell).
    if (p.save_card && pr.paymentMethodId && p.customer_ref) {
      const details = pr.card ?? { brand: null, last4: null, expMonth: null, expYear: null };
      await repo.saveCard(
        { account_id: p.account_id, mode: p.mode, processor: p.processor, customer_ref: pr.customerRef ?? p.customer_ref, payment_method_id: pr.paymentMethodId, brand: details.brand, last4: details.last4, exp_month: details.expMonth, exp_year: details.expYear },
        realClock.now(),
      );
      if (p.mode === 'live') await repo.clearAutoTopUpFailing(p.account_id);
    }
    // Not chained: a balance still under the threshold after this credit asks again at its next
    // charge line or renewal (the writer's reaction), never by itself, so a threshold far above the
    // amount cannot charge the card round after round with nothing spent.
    if (p.kind === 'automatic') await repo.clearAutoTopUpFailing(p.account_id);
    log.info({ card_payment_id: p.id, account_id: p.account_id, mode: p.mode, kind: p.kind, amount_cents: p.amount_cents }, 'card payment credited');
    return updated;
  }

  /** A failed automatic top-up: the payment failed, its activity line and email, no new attempt for a day. */
  async function failAutomatic(client: Client, p: CardPaymentRow, failure: PaymentFailure, paymentIntentId: string | null): Promise<CardPaymentRow> {
    const repo = createPaymentRepository(client);
    const at = realClock.now();
    const retryAfter = new Date(at.getTime() + AUTO_TOP_UP_RETRY_MS);
    const updated = await repo.updatePayment(p.id, {
      status: 'failed',
      payment_intent_id: paymentIntentId ?? p.payment_intent_id,
      failure_code: failure.code,
      failure_message: failure.message,
      next_attempt_at: null,
    });
    await repo.recordAutoTopUpFailure(p.account_id, { code: failure.code, message: failure.message, at, retryAfter });
    const money_ = await balanceReads(client).get(p.account_id, 'live');
    const detail = {
      card_payment_id: p.id,
      amount_cents: p.amount_cents,
      threshold_cents: money_?.auto_top_up_threshold_cents ?? null,
      code: failure.code,
      message: failure.message,
      card_brand: p.card_brand,
      card_last4: p.card_last4,
      retry_after: iso(retryAfter),
    };
    await money.recordAutoTopUpFailure(client, { accountId: p.account_id, cardPaymentId: p.id, code: failure.code, detail, now: clock.now() });
    await enqueueEmail(client, {
      accountId: p.account_id,
      mode: 'live',
      kind: 'auto_top_up_failed',
      audience: 'billing',
      dedupeKey: `auto_top_up_failed:${p.id}`,
      data: detail,
      now: clock.now(),
    });
    log.warn({ card_payment_id: p.id, account_id: p.account_id, code: failure.code }, 'automatic top-up failed; no new attempt for a day');
    return updated;
  }

  return {
    credit,
    failAutomatic,

    /** A payment's state from the processor, applied to the (locked) card payment. */
    async applyPayment(client: Client, paymentId: string, pr: PaymentResult): Promise<CardPaymentRow> {
      const repo = createPaymentRepository(client);
      const p = await repo.lockPayment(paymentId);
      if (!p) throw new Error(`no card payment ${paymentId}`);
      if (p.status === 'succeeded') return p;
      // Only a payment that is this one's (our id in its metadata, the amount asked) settles it: an
      // event naming our card payment over another payment (an edited metadata, another integration
      // on the same processor account) credits nothing, and never the amount asked for another paid.
      if (pr.metadata?.card_payment_id !== p.id || pr.amountCents !== p.amount_cents) {
        log.error(
          { card_payment_id: p.id, payment_intent: pr.id, names: pr.metadata?.card_payment_id ?? null, paid_cents: pr.amountCents, expected_cents: p.amount_cents },
          'a processor payment named a card payment it is not (another id or amount); nothing applied, the operator must look at it',
        );
        return p;
      }
      // Money taken is credited, even on a payment we had given up on (a late success).
      if (pr.status === 'succeeded') return credit(client, p, pr);
      if (p.kind === 'automatic' && p.status === 'pending') {
        if (pr.status === 'processing') return repo.updatePayment(p.id, { payment_intent_id: pr.id });
        if (pr.status === 'requires_payment_method' || pr.status === 'requires_action' || pr.status === 'canceled') {
          return failAutomatic(client, p, pr.failure ?? { code: pr.status === 'requires_action' ? 'authentication_required' : 'payment_failed', declineCode: null, message: 'The card was not charged.' }, pr.id);
        }
      }
      // A checkout's failed attempt leaves its page open for another card; the session's expiry ends it.
      if (p.status === 'pending' && pr.id && !p.payment_intent_id) return repo.updatePayment(p.id, { payment_intent_id: pr.id });
      return p;
    },

    /** A checkout session the processor says expired: its card payment is canceled (unless it was paid). */
    async sessionExpired(client: Client, paymentId: string): Promise<CardPaymentRow> {
      const repo = createPaymentRepository(client);
      const p = await repo.lockPayment(paymentId);
      if (!p) throw new Error(`no card payment ${paymentId}`);
      if (p.status !== 'pending') return p;
      return repo.updatePayment(p.id, { status: 'canceled' });
    },

    /** An asynchronous checkout payment that failed (checkout.session.async_payment_failed). */
    async checkoutFailed(client: Client, paymentId: string, failure: PaymentFailure): Promise<CardPaymentRow> {
      const repo = createPaymentRepository(client);
      const p = await repo.lockPayment(paymentId);
      if (!p) throw new Error(`no card payment ${paymentId}`);
      if (p.status !== 'pending') return p;
      return repo.updatePayment(p.id, { status: 'failed', failure_code: failure.code, failure_message: failure.message });
    },
  };
}

export type Settlement = ReturnType<typeof createSettlement>;
