import { withTransaction } from '../../db/pool.ts';
import { createPaymentRepository } from '../../db/payments.ts';
import { balanceReads } from '../../db/money/balances.ts';
import { createAccountRepository } from '../../db/accounts.ts';
import { cursorSeq } from '../../db/pagination.ts';
import { Refusal } from '../../runtime/refusal.ts';
import type { Mode } from '../../runtime/types.ts';
import { MINIMUM_TOP_UP_CENTS } from '../../money/rules/pricing.ts';
import { ProcessorRefused, ProviderUnavailable, WebhookSignatureError, type PaymentProvider, type ProviderEvent } from '../../payments/provider.ts';
import type { Page } from '../shared/list.ts';
import { pollLoop } from '../../runtime/poll-loop.ts';
import type { PaymentsDeps, Room } from './room.ts';
import { createSettlement } from './settle.ts';
import { createAutoTopUp } from './auto-top-up.ts';
import { createPaymentsInbox } from './inbox.ts';
import { createRefunds } from './refunds.ts';
import { cardPaymentView, paymentsSetupView } from './views.ts';

/**
 * The payments room: card top-ups through a processor (Stripe in live mode when configured, the
 * simulated processor in test mode), the events inbox, automatic top-up, refunds and receipts.
 * Money moves only through the money writer; the processor is called outside any transaction.
 */
export function createPayments(deps: PaymentsDeps) {
  const { pool, config, clock, realClock, log, money } = deps;
  const room: Room = { deps, providerFor: (mode) => deps.providers[mode] };
  const settlement = createSettlement(room);
  const autoTopUp = createAutoTopUp(room, () => settlement);
  const refunds = createRefunds(room);
  const inbox = createPaymentsInbox(room, settlement, () => refunds);
  const repo = () => createPaymentRepository(pool);

  function configured(mode: Mode): PaymentProvider {
    const provider = room.providerFor(mode);
    if (!provider) throw new Refusal('payments_not_configured');
    return provider;
  }

  async function ownPayment(accountId: string, mode: Mode, id: string) {
    const p = /^[0-9a-f-]{36}$/i.test(id) ? await repo().getPayment(id) : null;
    if (!p || p.account_id !== accountId || p.mode !== mode) throw new Refusal('card_payment_not_found');
    return p;
  }

  /** The processor's customer of the account, created once (the processor's idempotency key covers a race). */
  async function ensureCustomer(provider: PaymentProvider, accountId: string, mode: Mode): Promise<string> {
    const known = await repo().customerOf(accountId, mode, provider.kind);
    if (known) return known;
    const account = await createAccountRepository(pool).get(accountId);
    if (!account) throw new Refusal('account_not_found');
    const ref = await provider.createCustomer({ accountId, mode, name: account.name, email: account.support_email ?? null });
    return repo().saveCustomer(accountId, mode, provider.kind, ref);
  }

  async function setup(accountId: string, mode: Mode) {
    const provider = room.providerFor(mode);
    const card = await repo().savedCard(accountId, mode);
    const row = mode === 'live' ? await balanceReads(pool).get(accountId, 'live') : null;
    const on = row && row.auto_top_up_threshold_cents !== null && row.auto_top_up_amount_cents !== null;
    return paymentsSetupView({
      mode,
      processor: provider?.kind ?? null,
      publishableKey: provider?.publishableKey ?? null,
      card,
      autoTopUp: on ? { thresholdCents: row.auto_top_up_threshold_cents!, amountCents: row.auto_top_up_amount_cents! } : null,
      state: mode === 'live' ? await repo().autoTopUpState(accountId) : null,
      realNow: realClock.now(),
    });
  }

  /** Asks the processor about a pending checkout and applies what it says (the return page; a lost webhook). */
  async function refreshCheckout(paymentId: string): Promise<void> {
    const p = await repo().getPayment(paymentId);
    if (!p || p.status !== 'pending' || p.kind !== 'checkout' || !p.checkout_session_id) return;
    const provider = room.providerFor(p.mode);
    if (!provider || provider.kind !== p.processor) return;
    try {
      const session = await provider.retrieveCheckoutSession(p.checkout_session_id);
      if (session.status === 'expired') {
        await withTransaction(pool, (client) => settlement.sessionExpired(client, p.id));
      } else if (session.paymentIntentId && session.paymentStatus === 'paid') {
        const pr = await provider.retrievePayment(session.paymentIntentId);
        await withTransaction(pool, (client) => settlement.applyPayment(client, p.id, pr));
      }
    } catch (err) {
      if (err instanceof ProcessorRefused) {
        // The processor refuses to say (a session of another Stripe account or keys): shown as it is.
        log.warn({ err, card_payment_id: p.id, code: err.code }, 'the card processor refused a question about a pending top-up; shown as pending');
        return;
      }
      if (!(err instanceof ProviderUnavailable)) throw err;
      log.warn({ err, card_payment_id: p.id }, 'the card processor could not be asked about a pending top-up; shown as pending');
    }
  }

  /** A card payment and the processor's checkout page for it. */
  async function openCheckout(provider: PaymentProvider, accountId: string, mode: Mode, amountCents: number, saveCard: boolean) {
    const customerRef = await ensureCustomer(provider, accountId, mode);
    const p = await repo().insertPayment({ accountId, mode, processor: provider.kind, kind: 'checkout', amountCents, saveCard, customerRef, now: clock.now() });
    const base = config.publicUrl;
    let session;
    try {
      session = await provider.createCheckoutSession({
        accountId,
        mode,
        customerRef,
        amountCents,
        saveCard,
        successUrl: `${base}/console/billing/top-ups/${p.id}?mode=${mode}`,
        cancelUrl: `${base}/console/billing?mode=${mode}&top_up=canceled`,
        cardPaymentId: p.id,
        description: 'Account balance top-up',
      });
    } catch (err) {
      await repo().updatePayment(p.id, { status: 'canceled', failure_code: 'processor_unavailable', failure_message: 'The checkout page could not be opened.' });
      throw err;
    }
    const updated = await repo().updatePayment(p.id, { checkout_session_id: session.id, checkout_url: session.url, payment_intent_id: session.paymentIntentId });
    return { ...cardPaymentView(updated), checkout_url: session.url };
  }

  // The return page's questions to the processor, per card payment: one at a time, and not again
  // within a second (40 reads at once, or a script, ask once: the platform shares its Stripe rate limit).
  const REFRESH_EVERY_MS = 1_000;
  const asking = new Map<string, { at: number; done: Promise<void> }>();
  function refreshOnce(paymentId: string): Promise<void> {
    const at = performance.now();
    const last = asking.get(paymentId);
    if (last && at - last.at < REFRESH_EVERY_MS) return last.done;
    if (asking.size > 10_000) for (const [id, a] of asking) if (at - a.at >= REFRESH_EVERY_MS) asking.delete(id);
    const done = refreshCheckout(paymentId);
    asking.set(paymentId, { at, done: done.catch(() => {}) });
    return done;
  }

  const stops: (() => Promise<void>)[] = [];
  // One worker round at a time in this process (the loop's and payNow's): a round waits for the one running.
  let charging: Promise<number> = Promise.resolve(0);
  const chargeRound = () => (charging = charging.catch(() => 0).then(() => autoTopUp.chargeDue()));
  const inboxRound = async () => {
    await deps.handOverPending?.();
    await inbox.retryDue();
  };

  return {
    autoTopUpWanted: autoTopUp.autoTopUpWanted,
    setup,

    /** A top-up by card: a card payment and the processor's checkout page (the person pays there). */
    async createTopUp(accountId: string, mode: Mode, amountCents: number, saveCard: boolean) {
      if (amountCents < MINIMUM_TOP_UP_CENTS) throw new Refusal('invalid_parameter', 'A top-up is at least 2,500 cents.');
      const provider = configured(mode);
      try {
        try {
          return await openCheckout(provider, accountId, mode, amountCents, saveCard);
        } catch (err) {
          // The processor does not know the customer we stored (the operator moved to another Stripe
          // account, or from test keys to live ones): forgotten, and the top-up opened once more with a new one.
          if (!(err instanceof ProcessorRefused && err.code === 'resource_missing' && err.param === 'customer')) throw err;
          const stale = await repo().customerOf(accountId, mode, provider.kind);
          if (stale) await repo().forgetCustomer(accountId, mode, provider.kind, stale);
          log.warn({ account_id: accountId, mode, customer_ref: stale }, 'the card processor does not know the stored customer; a new one is created');
          return await openCheckout(provider, accountId, mode, amountCents, saveCard);
        }
      } catch (err) {
        if (err instanceof ProviderUnavailable) throw new Refusal('processor_unavailable');
        throw err;
      }
    },

    /** An account's card payments of a mode (its receipts), newest first. */
    async listTopUps(accountId: string, mode: Mode, page: Page) {
      let beforeSeq: number | null = null;
      if (page.startingAfter) {
        beforeSeq = await cursorSeq(pool, { table: 'card_payments', accountId, mode }, page.startingAfter);
        if (beforeSeq === null) throw new Refusal('invalid_cursor');
      }
      const rows = await repo().listPayments(accountId, mode, page.limit + 1, beforeSeq);
      return { object: 'list' as const, data: rows.slice(0, page.limit).map(cardPaymentView), has_more: rows.length > page.limit };
    },

    /** One card payment; a pending checkout is confirmed with the processor first (credited once if paid). */
    async getTopUp(accountId: string, mode: Mode, id: string) {
      const p = await ownPayment(accountId, mode, id);
      if (p.status === 'pending' && p.kind === 'checkout') await refreshOnce(p.id);
      return cardPaymentView((await repo().getPayment(p.id))!);
    },

    /** Turns automatic top-up on (live; a saved card needed); under the threshold already, a charge is asked for at once. */
    async setAutoTopUp(accountId: string, thresholdCents: number, amountCents: number) {
      configured('live');
      if (!(await repo().savedCard(accountId, 'live'))) throw new Refusal('saved_card_required');
      await withTransaction(pool, async (client) => {
        await money.setAutoTopUp(client, accountId, { thresholdCents, amountCents });
        const row = await balanceReads(client).get(accountId, 'live');
        if (row && row.balance_cents - row.reserved_cents < thresholdCents) await autoTopUp.autoTopUpWanted(client, accountId, clock.now());
      });
      return setup(accountId, 'live');
    },

    async disableAutoTopUp(accountId: string) {
      await withTransaction(pool, (client) => money.setAutoTopUp(client, accountId, { thresholdCents: null, amountCents: null }));
      return setup(accountId, 'live');
    },

    /** Forgets the saved card (detached at the processor); automatic top-up goes off with it. */
    async deleteSavedCard(accountId: string, mode: Mode) {
      const card = await repo().savedCard(accountId, mode);
      if (card) {
        const provider = room.providerFor(mode);
        if (provider && provider.kind === card.processor) {
          try {
            await provider.detachPaymentMethod(card.payment_method_id);
          } catch (err) {
            if (err instanceof ProviderUnavailable) throw new Refusal('processor_unavailable');
            throw err;
          }
        }
        await withTransaction(pool, async (client) => {
          await createPaymentRepository(client).deleteSavedCard(accountId, mode);
          if (mode === 'live') await money.setAutoTopUp(client, accountId, { thresholdCents: null, amountCents: null });
        });
      }
      return setup(accountId, mode);
    },

    /** `POST /webhooks/stripe`: verified (WebhookSignatureError: 400, nothing stored), stored (throws: 503), then processed. */
    async receiveStripeWebhook(rawBody: Buffer, signature: string | undefined): Promise<void> {
      const provider = room.providerFor('live');
      if (!provider || provider.kind !== 'stripe') throw new WebhookSignatureError('Stripe is not configured');
      const event = provider.verifyWebhook(rawBody, signature);
      await inbox.receive('stripe', event);
    },

    /** The simulated processor's events (in-process): stored and processed like Stripe's. */
    async receiveSimulatedEvent(event: ProviderEvent): Promise<void> {
      await inbox.receive('simulated', event);
    },

    refunds,
    inbox,

    /** One round of the automatic top-up worker (tests: `services.payNow()`): due charges, then due events. */
    async payNow(): Promise<number> {
      const n = await chargeRound();
      await inboxRound();
      return n;
    },

    /** The inbox's retry loop (any process) and, in the dialler role, the automatic top-up worker. */
    start(opts: { worker: boolean }) {
      stops.push(pollLoop(inboxRound, config.keeperPollMs, log, 'payments inbox'));
      if (opts.worker) stops.push(pollLoop(chargeRound, config.keeperPollMs, log, 'automatic top-up'));
    },
    async stop() {
      await Promise.all(stops.splice(0).map((s) => s()));
    },
  };
}

export type Payments = ReturnType<typeof createPayments>;
