import type { Client } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { createPaymentRepository, workingAutoTopUpCents, type CardPaymentRow } from '../../db/payments.ts';
import { balanceReads } from '../../db/money/balances.ts';
import { PaymentDeclined, ProcessorRefused, ProviderUnavailable } from '../../payments/provider.ts';
import type { Room } from './room.ts';
import type { Settlement } from './settle.ts';

/**
 * Automatic top-up (live only): the money writer asks for one (`autoTopUpWanted`, in its
 * transaction) when a charge leaves the available balance under the threshold or a renewal finds
 * the money short; this records ONE requested automatic card payment (none while one is open,
 * after a failure less than a day old, or without a saved card). The worker then charges the
 * saved card off-session outside any transaction, the card payment's id as the idempotency key
 * (a retry after a crash or a timeout charges once), and credits through the writer only when the
 * payment succeeded; a payment still processing waits for the processor's webhook.
 */

/** How long one charge attempt holds its claim before another process may try it. */
const CHARGE_LEASE_SECONDS = 120;
/** The processor could not be reached: the same charge (same idempotency key) is tried again after this long. */
const UNAVAILABLE_RETRY_SECONDS = 60;
/** A payment processing (Stripe answered `processing`): asked again this often until the webhook settles it. */
const PROCESSING_RECHECK_SECONDS = 15 * 60;
/**
 * An automatic top-up whose attempts keep failing other than by a decline or refusal (the processor
 * unreachable, its key revoked, no live processor configured) fails as `processor_unavailable` after
 * this many attempts (a day of tries a minute apart): while it stays open renewals wait for it
 * (`awaiting_top_up`), so without an end they would never charge nor count down.
 */
export const MAX_UNAVAILABLE_ATTEMPTS = (24 * 3600) / UNAVAILABLE_RETRY_SECONDS;

export function createAutoTopUp(room: Room, settlement: () => Settlement) {
  const { pool, realClock, log } = room.deps;

  /** The writer's reaction: records one automatic card payment to charge. True when one is open. */
  async function autoTopUpWanted(client: Client, accountId: string, now: Date): Promise<boolean> {
    // The one rule of a working automatic top-up (as the renewals' `fundableCents`): a live
    // processor, on, a saved card, not failing.
    if (!room.providerFor('live')) return false;
    const amountCents = await workingAutoTopUpCents(client, accountId, realClock.now());
    if (amountCents === null) return false;
    const repo = createPaymentRepository(client);
    if (await repo.openAutomatic(accountId)) return true;
    const card = (await repo.savedCard(accountId, 'live'))!;
    await repo.insertAutomatic({ accountId, processor: card.processor, amountCents, customerRef: card.customer_ref, paymentMethodId: card.payment_method_id, brand: card.brand, last4: card.last4, now });
    // The worker's next round (SWITCHBOARD_KEEPER_POLL_MS, 2 s by default) charges it.
    return true;
  }

  /** Automatic top-up is still on (live) with the saved card this payment was asked for. */
  async function stillWanted(p: CardPaymentRow): Promise<boolean> {
    const row = await balanceReads(pool).get(p.account_id, 'live');
    if (!row || row.auto_top_up_threshold_cents === null || row.auto_top_up_amount_cents === null) return false;
    const card = await createPaymentRepository(pool).savedCard(p.account_id, 'live');
    return card !== null && card.payment_method_id === p.payment_method_id;
  }

  /** Tried MAX_UNAVAILABLE_ATTEMPTS times without an answer: failed (`processor_unavailable`), so renewals fall back. */
  async function givenUp(p: CardPaymentRow): Promise<boolean> {
    if (p.attempts < MAX_UNAVAILABLE_ATTEMPTS) return false;
    await withTransaction(pool, async (client) => {
      const locked = await createPaymentRepository(client).lockPayment(p.id);
      if (locked?.status === 'pending') {
        await settlement().failAutomatic(client, locked, { code: 'processor_unavailable', declineCode: null, message: 'The card processor could not be reached for a day of attempts; the card was not charged.' }, locked.payment_intent_id);
      }
    });
    log.warn({ card_payment_id: p.id, account_id: p.account_id, attempts: p.attempts }, 'automatic top-up not charged after a day of attempts; failed as processor_unavailable');
    return true;
  }

  /** One charge attempt of a claimed automatic card payment. */
  async function chargeOne(p: CardPaymentRow): Promise<void> {
    const provider = room.providerFor('live');
    const repo = createPaymentRepository(pool);
    if (!provider) {
      if (await givenUp(p)) return;
      await repo.retryAutomaticIn(p.id, UNAVAILABLE_RETRY_SECONDS);
      return;
    }
    // Not charged yet: only while automatic top-up is still on with the card it was asked for (the
    // reseller may have turned it off or removed the card since, e.g. while the processor was down).
    if (!p.payment_intent_id && !(await stillWanted(p))) {
      await withTransaction(pool, async (client) => {
        const r = createPaymentRepository(client);
        const locked = await r.lockPayment(p.id);
        if (locked?.status === 'pending' && !locked.payment_intent_id) {
          await r.updatePayment(p.id, { status: 'canceled', next_attempt_at: null, failure_code: 'auto_top_up_off', failure_message: 'Automatic top-up was turned off or its card removed before the charge was made.' });
        }
      });
      log.info({ card_payment_id: p.id, account_id: p.account_id }, 'automatic top-up canceled before its charge: turned off or its card removed');
      return;
    }
    try {
      // Charged before (a processing payment, or a crash after the charge): asked, never charged again.
      const pr = p.payment_intent_id
        ? await provider.retrievePayment(p.payment_intent_id)
        : await provider.chargeSavedCard({
            customerRef: p.customer_ref!,
            paymentMethodId: p.payment_method_id!,
            amountCents: p.amount_cents,
            cardPaymentId: p.id,
            description: 'Automatic balance top-up',
          });
      const after = await withTransaction(pool, (client) => settlement().applyPayment(client, p.id, pr));
      if (after.status === 'pending') await repo.retryAutomaticIn(p.id, PROCESSING_RECHECK_SECONDS);
    } catch (err) {
      if (err instanceof PaymentDeclined) {
        await withTransaction(pool, async (client) => {
          const locked = await createPaymentRepository(client).lockPayment(p.id);
          if (locked?.status === 'pending') await settlement().failAutomatic(client, locked, err.failure, err.paymentIntentId);
        });
        return;
      }
      if (err instanceof ProcessorRefused) {
        // The processor refused the request itself (e.g. the card detached): the same key would be
        // refused again, so it is a failure like a decline, not a retry every minute.
        await withTransaction(pool, async (client) => {
          const locked = await createPaymentRepository(client).lockPayment(p.id);
          if (locked?.status === 'pending') await settlement().failAutomatic(client, locked, { code: err.code ?? 'processor_refused', declineCode: null, message: err.processorMessage }, locked.payment_intent_id);
        });
        return;
      }
      if (!(err instanceof ProviderUnavailable)) log.error({ err, card_payment_id: p.id }, 'automatic top-up attempt failed; tried again');
      else log.warn({ err, card_payment_id: p.id }, 'the card processor could not be reached for an automatic top-up; tried again with the same idempotency key');
      if (await givenUp(p).catch(() => false)) return;
      await repo.retryAutomaticIn(p.id, UNAVAILABLE_RETRY_SECONDS).catch(() => {});
    }
  }

  return {
    autoTopUpWanted,
    /** One worker round: claims the due automatic charges and makes one attempt each. Returns how many were looked at. */
    async chargeDue(limit = 10): Promise<number> {
      const due = await createPaymentRepository(pool).claimDueAutomatic(limit, CHARGE_LEASE_SECONDS);
      for (const p of due) await chargeOne(p);
      return due.length;
    },
  };
}
