import type { Client } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { createPaymentRepository, type CardPaymentRow, type CardRefundRow } from '../../db/payments.ts';
import { balanceReads } from '../../db/money/balances.ts';
import { Refusal, isRefusal } from '../../runtime/refusal.ts';
import { ProcessorRefused, ProviderUnavailable } from '../../payments/provider.ts';
import type { Room } from './room.ts';
import { cardPaymentView, cardRefundView } from './views.ts';

/**
 * Refunds of a card top-up (the operator's action): the processor refunds first (our refund's id
 * as the idempotency key, so a retry refunds once), then the ledger gets its `top_up_refund` line
 * (and the bonus the refunded part earned is forfeited), in one transaction with the card payment
 * locked. The processor's `charge.refunded` converges on the same refund: one it names by its id,
 * or one of ours still waiting for its id (same amount), is completed once; a refund made at the
 * processor directly (its dashboard) is recorded as its own refund.
 */
export function createRefunds(room: Room) {
  const { pool, money, clock, log } = room.deps;

  const leftOf = (p: CardPaymentRow, refunds: CardRefundRow[]) =>
    p.amount_cents - refunds.filter((r) => r.status === 'succeeded' || r.status === 'pending').reduce((a, r) => a + r.amount_cents, 0);

  /** Completes a refund (locked payment, refund not yet succeeded): its ledger lines and the payment's refunded total. */
  async function complete(client: Client, p: CardPaymentRow, r: CardRefundRow, processorRefundId: string | null): Promise<CardRefundRow> {
    const repo = createPaymentRepository(client);
    const { line, forfeitedCents } = await money.refundTopUp(client, {
      accountId: p.account_id,
      paymentReference: p.payment_intent_id!,
      paymentCents: p.amount_cents,
      refundedBeforeCents: p.refunded_cents,
      forfeitedBeforeCents: p.bonus_forfeited_cents,
      amountCents: r.amount_cents,
      reference: r.id,
      description: `Refund of a card top-up to the card${p.card_last4 ? ` ending ${p.card_last4}` : ''}`,
      now: clock.now(),
    });
    await repo.updatePayment(p.id, { refunded_cents: p.refunded_cents + r.amount_cents, bonus_forfeited_cents: p.bonus_forfeited_cents + forfeitedCents });
    return repo.updateRefund(r.id, { status: 'succeeded', processor_refund_id: processorRefundId ?? r.processor_refund_id, ledger_line_id: line.id, bonus_forfeited_cents: forfeitedCents });
  }

  async function ownPayment(accountId: string, paymentId: string): Promise<CardPaymentRow> {
    const p = /^[0-9a-f-]{36}$/i.test(paymentId) ? await createPaymentRepository(pool).getPayment(paymentId) : null;
    if (!p || p.account_id !== accountId) throw new Refusal('card_payment_not_found');
    return p;
  }

  return {
    /** The operator's list of an account's card payments (both modes), newest first. */
    async list(accountId: string, limit: number) {
      const rows = await createPaymentRepository(pool).listPayments(accountId, null, limit + 1, null);
      return { object: 'list' as const, data: rows.slice(0, limit).map(cardPaymentView), has_more: rows.length > limit };
    },

    /** Refunds `amountCents` (default: what is left) of a live card top-up. */
    async refund(accountId: string, paymentId: string, amountCents: number | null) {
      const p = await ownPayment(accountId, paymentId);
      if (p.mode !== 'live') throw new Refusal('refund_too_large', 'A test-mode top-up moved no money; there is nothing to refund.');
      if (p.status !== 'succeeded' || !p.payment_intent_id) throw new Refusal('refund_too_large', 'Only a paid top-up can be refunded.');
      const provider = room.providerFor('live');
      if (!provider || provider.kind !== p.processor) throw new Refusal('payments_not_configured');
      // Claim the refund (or take up one of ours that never heard back from the processor: same amount, same id).
      const claimed = await withTransaction(pool, async (client) => {
        const repo = createPaymentRepository(client);
        // One claim at a time per account, before the card payment's lock: the cash is the account's.
        await repo.lockAccountRefunds(accountId);
        const locked = (await repo.lockPayment(p.id))!;
        const refunds = await repo.refundsOf(p.id);
        const waiting = refunds.find((r) => r.status === 'pending' && r.source === 'operator' && !r.processor_refund_id && (amountCents === null || r.amount_cents === amountCents));
        if (waiting) return waiting;
        const left = leftOf(locked, refunds);
        const amount = amountCents ?? left;
        if (amount <= 0 || amount > left) throw new Refusal('refund_too_large', `${Math.max(0, left)} cents of this payment are left to refund.`);
        const row = await balanceReads(client).get(accountId, 'live');
        // Less what other refunds took at the processor and have not written yet (another payment's, at the same moment).
        const cashFree = (row ? row.paid_cents - row.reserved_cents : 0) - (await repo.pendingRefundCents(accountId));
        if (amount > cashFree) throw new Refusal('refund_too_large', `The live cash balance less running calls' holds and refunds under way is ${Math.max(0, cashFree)} cents; a refund cannot take more.`);
        return repo.insertRefund({ cardPaymentId: p.id, accountId, amountCents: amount, source: 'operator', now: clock.now() });
      });
      let result;
      try {
        result = await provider.refund({ paymentIntentId: p.payment_intent_id, amountCents: claimed.amount_cents, refundId: claimed.id });
      } catch (err) {
        if (err instanceof ProviderUnavailable) throw new Refusal('processor_unavailable');
        if (err instanceof ProcessorRefused) {
          // Nothing was refunded (e.g. already refunded in the processor's dashboard, its webhook not
          // here yet): our claim fails rather than stay pending, where it would block what is left
          // and hide the processor's own refund from charge.refunded.
          await withTransaction(pool, async (client) => {
            const repo = createPaymentRepository(client);
            await repo.lockPayment(p.id);
            const r = await repo.getRefund(claimed.id);
            if (r?.status === 'pending') await repo.updateRefund(r.id, { status: 'failed', failure_message: err.processorMessage.slice(0, 500) });
          });
          log.warn({ card_refund_id: claimed.id, card_payment_id: p.id, code: err.code }, 'the card processor refused a refund; marked failed');
          throw new Refusal('refund_too_large', `The card processor refused the refund${err.code ? ` (${err.code})` : ''}: ${err.processorMessage}`);
        }
        throw err;
      }
      const done = await withTransaction(pool, async (client) => {
        const repo = createPaymentRepository(client);
        const locked = (await repo.lockPayment(p.id))!;
        const r = (await repo.getRefund(claimed.id))!;
        if (r.status === 'succeeded') return r; // the processor's webhook got here first
        if (result.status === 'failed' || result.status === 'canceled') return repo.updateRefund(r.id, { status: 'failed', processor_refund_id: result.id, failure_message: `The processor answered ${result.status}.` });
        try {
          return await complete(client, locked, r, result.id);
        } catch (err) {
          if (!isRefusal(err)) throw err;
          // Refunded at the processor, refused by the ledger (the cash went meanwhile): kept pending for the operator.
          log.error({ err, card_refund_id: r.id, card_payment_id: p.id }, 'a refund made at the processor could not be written to the ledger');
          throw err;
        }
      });
      return cardRefundView(done);
    },

    /** `charge.refunded`: the processor's refunds of a payment, converged with ours (in the event's transaction). */
    async processorRefunded(client: Client, paymentId: string, charge: Record<string, any>): Promise<void> {
      const repo = createPaymentRepository(client);
      let p = (await repo.lockPayment(paymentId))!;
      if (p.status !== 'succeeded' || p.mode !== 'live') return;
      const listed: { id: string; amount: number; status: string }[] = Array.isArray(charge.refunds?.data) ? charge.refunds.data : [];
      const settle = async (processorRefundId: string | null, amount: number) => {
        const refunds = await repo.refundsOf(p.id);
        let r = processorRefundId ? refunds.find((x) => x.processor_refund_id === processorRefundId) : undefined;
        if (r?.status === 'succeeded' || r?.status === 'failed') return;
        r ??= refunds.find((x) => x.status === 'pending' && !x.processor_refund_id && x.amount_cents === amount);
        r ??= await repo.insertRefund({ cardPaymentId: p.id, accountId: p.account_id, amountCents: amount, source: 'processor', processorRefundId, now: clock.now() });
        try {
          await client.query('SAVEPOINT processor_refund');
          await complete(client, p, r, processorRefundId);
          await client.query('RELEASE SAVEPOINT processor_refund');
        } catch (err) {
          if (!isRefusal(err)) throw err;
          await client.query('ROLLBACK TO SAVEPOINT processor_refund');
          log.error({ err, card_payment_id: p.id, processor_refund_id: processorRefundId }, 'a refund made at the processor cannot be written to the ledger; the operator must look at it');
        }
        p = (await repo.lockPayment(p.id))!;
      };
      if (listed.length > 0) {
        for (const refund of listed) if (refund.status === 'succeeded') await settle(refund.id, Number(refund.amount));
        return;
      }
      // Without the list: what the processor says was refunded beyond what we know of.
      const known = p.amount_cents - leftOf(p, await repo.refundsOf(p.id));
      const extra = Number(charge.amount_refunded ?? 0) - known;
      if (extra > 0) await settle(null, extra);
    },
  };
}

export type Refunds = ReturnType<typeof createRefunds>;
