import type { Client } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import { createPaymentRepository, type CardPaymentRow, type Processor, type ProcessorEventRow } from '../../db/payments.ts';
import type { PaymentProvider, ProviderEvent } from '../../payments/provider.ts';
import type { Room } from './room.ts';
import type { Settlement } from './settle.ts';
import type { Refunds } from './refunds.ts';

/**
 * The processor's events inbox: a verified webhook (or the simulated processor's event) is stored
 * before anything is done with it (unique on the event id: a repeat is one event), then processed;
 * a failed attempt is recorded and retried with backoff by the retry loop of any process, as the
 * carrier inbox does (actors/call/carrier-inbox.ts). Processing asks the processor for the
 * payment as it is now (outside any transaction), then applies it with the card payment locked and
 * marks the event processed in that same transaction: an event is acted on once, and an old
 * event arriving late or out of order cannot undo what a newer one did.
 */

const ATTEMPT_LEASE_SECONDS = 30;
const RETRY_SECONDS = [5, 15, 30, 60, 120, 300];
export const eventRetryDelaySeconds = (attempts: number) => RETRY_SECONDS[Math.min(Math.max(attempts, 1), RETRY_SECONDS.length) - 1];

const idOf = (v: unknown): string | null => (typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : null);

export function createPaymentsInbox(room: Room, settlement: Settlement, refunds: () => Refunds) {
  const { pool, log } = room.deps;

  const providerOf = (processor: Processor): PaymentProvider | null => {
    const p = room.providerFor(processor === 'stripe' ? 'live' : 'test');
    return p && p.kind === processor ? p : null;
  };

  async function paymentNamed(ref: { metadata?: Record<string, string> | null; sessionId?: string | null; paymentIntentId?: string | null }): Promise<CardPaymentRow | null> {
    const id = ref.metadata?.card_payment_id;
    const uuid = id && /^[0-9a-f-]{36}$/i.test(id) ? id : null;
    return createPaymentRepository(pool).findPayment({ id: uuid, sessionId: ref.sessionId ?? null, paymentIntentId: ref.paymentIntentId ?? null });
  }

  /**
   * What an event means, worked out outside any transaction (it may ask the processor): the
   * change to make in the transaction that marks the event processed; null when there is none.
   */
  async function prepare(row: ProcessorEventRow): Promise<((client: Client) => Promise<unknown>) | null> {
    const provider = providerOf(row.processor);
    const object = (row.payload?.object ?? {}) as Record<string, any>;
    if (!provider) throw new Error(`no ${row.processor} processor configured to process event ${row.event_id}`);
    switch (row.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
      case 'checkout.session.expired': {
        const p = await paymentNamed({ metadata: object.metadata, sessionId: object.id });
        if (!p) return unknown(row);
        // The session as it is now: a late or repeated event cannot act on an old state.
        const session = await provider.retrieveCheckoutSession(object.id);
        // The session as the processor has it must be this card payment's (not only the event's metadata).
        if (session.metadata?.card_payment_id !== p.id && session.id !== p.checkout_session_id) return unknown(row);
        if (session.status === 'expired') return (client) => settlement.sessionExpired(client, p.id);
        if (session.paymentIntentId && session.paymentStatus === 'paid') {
          const pr = await provider.retrievePayment(session.paymentIntentId);
          return (client) => settlement.applyPayment(client, p.id, pr);
        }
        return null;
      }
      case 'checkout.session.async_payment_failed': {
        const p = await paymentNamed({ metadata: object.metadata, sessionId: object.id });
        if (!p || p.checkout_session_id !== object.id) return unknown(row);
        return (client) => settlement.checkoutFailed(client, p.id, { code: 'payment_failed', declineCode: null, message: 'The payment did not go through.' });
      }
      case 'payment_intent.succeeded':
      case 'payment_intent.payment_failed': {
        const p = await paymentNamed({ metadata: object.metadata, paymentIntentId: object.id });
        if (!p) return unknown(row);
        const pr = await provider.retrievePayment(object.id);
        return (client) => settlement.applyPayment(client, p.id, pr);
      }
      case 'charge.refunded': {
        const piId = idOf(object.payment_intent);
        // By its payment intent only (the processor's link, not metadata anyone can edit): a refund
        // of one payment is never written on another account's card payment.
        const p = piId ? await paymentNamed({ paymentIntentId: piId }) : null;
        if (!p || p.payment_intent_id !== piId) return unknown(row);
        return (client) => refunds().processorRefunded(client, p.id, object);
      }
      default:
        return null;
    }
  }

  function unknown(row: ProcessorEventRow): null {
    // Not one of ours (another integration on the same Stripe account): stored, nothing to do.
    log.info({ event_id: row.event_id, type: row.type }, 'a processor event names no card payment of ours; stored and marked processed');
    return null;
  }

  async function attempt(row: ProcessorEventRow): Promise<boolean> {
    try {
      const change = await prepare(row);
      return await withTransaction(pool, async (client) => {
        const repo = createPaymentRepository(client);
        if (!(await repo.lockUnprocessedEvent(row.id))) return true; // another attempt finished it
        if (change) await change(client);
        await repo.markEventProcessed(row.id);
        return true;
      });
    } catch (err) {
      const retryIn = eventRetryDelaySeconds(row.attempts);
      await createPaymentRepository(pool)
        .recordEventFailure(row.id, retryIn, err instanceof Error ? err.message : String(err))
        .catch(() => {});
      log.error({ err, event_id: row.event_id, type: row.type, attempt: row.attempts, retry_in_seconds: retryIn }, 'processor event not processed; it is kept and retried');
      return false;
    }
  }

  return {
    /** Stores an event (throws when it cannot: the webhook is answered 503 and the processor retries), then makes the first attempt. */
    async receive(processor: Processor, event: ProviderEvent): Promise<boolean> {
      const row = await createPaymentRepository(pool).insertEvent(
        { processor, eventId: event.id, type: event.type, payload: { id: event.id, type: event.type, created: event.created, livemode: event.livemode, object: event.object } },
        ATTEMPT_LEASE_SECONDS,
      );
      if (row.processed_at) return true;
      return attempt(row);
    },
    /** One retry round: due events, oldest first. Returns how many were processed. */
    async retryDue(limit = 20): Promise<number> {
      let n = 0;
      for (const row of await createPaymentRepository(pool).claimDueEvents(limit, ATTEMPT_LEASE_SECONDS)) if (await attempt(row)) n++;
      return n;
    },
  };
}

export type PaymentsInbox = ReturnType<typeof createPaymentsInbox>;
