import type { Queryable } from './pool.ts';

/**
 * The simulated card processor's state (migration 034): checkout sessions, payment methods,
 * payment intents, refunds, and the events it has yet to hand over. Read and written only by
 * actors/payments/simulated-provider.ts.
 */

export interface SimulatedSessionRow {
  id: string;
  account_id: string;
  mode: 'test' | 'live';
  card_payment_id: string;
  customer_ref: string;
  amount_cents: number;
  description: string;
  save_card: boolean;
  success_url: string;
  cancel_url: string;
  metadata: Record<string, string>;
  status: 'open' | 'complete' | 'expired';
  payment_intent_id: string | null;
  created_at: Date;
  expires_at: Date;
  completed_at: Date | null;
}

export interface SimulatedPaymentMethodRow {
  id: string;
  customer_ref: string | null;
  test_number: string;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  created_at: Date;
}

export interface SimulatedIntentRow {
  id: string;
  session_id: string | null;
  card_payment_id: string;
  customer_ref: string | null;
  amount_cents: number;
  description: string | null;
  metadata: Record<string, string>;
  setup_future_usage: 'off_session' | null;
  status: 'requires_payment_method' | 'succeeded';
  payment_method_id: string | null;
  charge_id: string | null;
  failure_code: string | null;
  failure_decline_code: string | null;
  failure_message: string | null;
  refunded_cents: number;
  created_at: Date;
  succeeded_at: Date | null;
}

export interface SimulatedRefundRow {
  id: string;
  refund_key: string;
  payment_intent_id: string;
  amount_cents: number;
  created_at: Date;
}

export interface SimulatedEventRow {
  id: string;
  type: string;
  payload: Record<string, any>;
  created_at: Date;
}

const num = <T extends { amount_cents: number | string }>(r: T): T => ({ ...r, amount_cents: Number(r.amount_cents) });
const intent = (r: any): SimulatedIntentRow => ({ ...r, amount_cents: Number(r.amount_cents), refunded_cents: Number(r.refunded_cents) });

export function createSimulatedPaymentsRepository(db: Queryable) {
  return {
    /** A new session, or the one already made for this card payment (the create's idempotency). */
    async insertSession(s: Omit<SimulatedSessionRow, 'status' | 'payment_intent_id' | 'completed_at'>): Promise<SimulatedSessionRow> {
      await db.query(
        `INSERT INTO simulated_checkout_sessions
           (id, account_id, mode, card_payment_id, customer_ref, amount_cents, description, save_card, success_url, cancel_url, metadata, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         ON CONFLICT (card_payment_id) DO NOTHING`,
        [s.id, s.account_id, s.mode, s.card_payment_id, s.customer_ref, s.amount_cents, s.description, s.save_card, s.success_url, s.cancel_url, s.metadata, s.created_at, s.expires_at],
      );
      const { rows } = await db.query(`SELECT * FROM simulated_checkout_sessions WHERE card_payment_id = $1`, [s.card_payment_id]);
      return num(rows[0]);
    },

    /** A session by id; `accountId` limits it to one account's; `lock` takes its row lock (a payment). */
    async session(id: string, o: { accountId?: string; lock?: boolean } = {}): Promise<SimulatedSessionRow | null> {
      const { rows } = await db.query(
        `SELECT * FROM simulated_checkout_sessions WHERE id = $1 AND ($2::uuid IS NULL OR account_id = $2)${o.lock ? ' FOR UPDATE' : ''}`,
        [id, o.accountId ?? null],
      );
      return rows[0] ? num(rows[0]) : null;
    },

    async completeSession(id: string, paymentIntentId: string, now: Date): Promise<void> {
      await db.query(`UPDATE simulated_checkout_sessions SET status = 'complete', payment_intent_id = $2, completed_at = $3 WHERE id = $1`, [id, paymentIntentId, now]);
    },

    /** An open session past its expiry becomes expired; null when it was not open (another process did it first). */
    async expireSession(id: string): Promise<SimulatedSessionRow | null> {
      const { rows } = await db.query(`UPDATE simulated_checkout_sessions SET status = 'expired' WHERE id = $1 AND status = 'open' RETURNING *`, [id]);
      return rows[0] ? num(rows[0]) : null;
    },

    async setSessionIntent(id: string, paymentIntentId: string): Promise<void> {
      await db.query(`UPDATE simulated_checkout_sessions SET payment_intent_id = $2 WHERE id = $1`, [id, paymentIntentId]);
    },

    async insertPaymentMethod(pm: SimulatedPaymentMethodRow): Promise<void> {
      await db.query(
        `INSERT INTO simulated_payment_methods (id, customer_ref, test_number, brand, last4, exp_month, exp_year, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [pm.id, pm.customer_ref, pm.test_number, pm.brand, pm.last4, pm.exp_month, pm.exp_year, pm.created_at],
      );
    },

    async paymentMethod(id: string): Promise<SimulatedPaymentMethodRow | null> {
      const { rows } = await db.query(`SELECT * FROM simulated_payment_methods WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },

    /** Attaches (a customer) or detaches (null) a payment method. */
    async attachPaymentMethod(id: string, customerRef: string | null): Promise<void> {
      await db.query(`UPDATE simulated_payment_methods SET customer_ref = $2 WHERE id = $1`, [id, customerRef]);
    },

    /** A new payment intent, or the one already made for this card payment (the off-session charge's idempotency); `created` says which. */
    async insertIntent(pi: Omit<SimulatedIntentRow, 'refunded_cents' | 'charge_id' | 'succeeded_at' | 'failure_code' | 'failure_decline_code' | 'failure_message'>): Promise<{ row: SimulatedIntentRow; created: boolean }> {
      const inserted = await db.query(
        `INSERT INTO simulated_payment_intents
           (id, session_id, card_payment_id, customer_ref, amount_cents, description, metadata, setup_future_usage, status, payment_method_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (card_payment_id) DO NOTHING RETURNING *`,
        [pi.id, pi.session_id, pi.card_payment_id, pi.customer_ref, pi.amount_cents, pi.description, pi.metadata, pi.setup_future_usage, pi.status, pi.payment_method_id, pi.created_at],
      );
      if (inserted.rows[0]) return { row: intent(inserted.rows[0]), created: true };
      const { rows } = await db.query(`SELECT * FROM simulated_payment_intents WHERE card_payment_id = $1`, [pi.card_payment_id]);
      return { row: intent(rows[0]), created: false };
    },

    async intent(id: string, o: { lock?: boolean } = {}): Promise<SimulatedIntentRow | null> {
      const { rows } = await db.query(`SELECT * FROM simulated_payment_intents WHERE id = $1${o.lock ? ' FOR UPDATE' : ''}`, [id]);
      return rows[0] ? intent(rows[0]) : null;
    },

    /** Records one attempt of a payment intent: succeeded with its charge, or refused with the card error. */
    async recordAttempt(
      id: string,
      a: { paymentMethodId: string; now: Date } & ({ chargeId: string; failure: null } | { chargeId: null; failure: { code: string; declineCode: string | null; message: string } }),
    ): Promise<SimulatedIntentRow> {
      const { rows } = await db.query(
        `UPDATE simulated_payment_intents
            SET payment_method_id = $2, status = CASE WHEN $3::text IS NULL THEN 'succeeded' ELSE 'requires_payment_method' END,
                charge_id = $4, failure_code = $3, failure_decline_code = $5, failure_message = $6,
                succeeded_at = CASE WHEN $3::text IS NULL THEN $7::timestamptz ELSE NULL END
          WHERE id = $1 RETURNING *`,
        [id, a.paymentMethodId, a.failure?.code ?? null, a.chargeId, a.failure?.declineCode ?? null, a.failure?.message ?? null, a.now],
      );
      return intent(rows[0]);
    },

    async refundByKey(refundKey: string): Promise<SimulatedRefundRow | null> {
      const { rows } = await db.query(`SELECT * FROM simulated_refunds WHERE refund_key = $1`, [refundKey]);
      return rows[0] ? num(rows[0]) : null;
    },

    /** A refund, and the payment intent's refunded total raised by it (the caller holds the intent's lock). */
    async insertRefund(r: SimulatedRefundRow): Promise<SimulatedIntentRow> {
      await db.query(`INSERT INTO simulated_refunds (id, refund_key, payment_intent_id, amount_cents, created_at) VALUES ($1, $2, $3, $4, $5)`, [
        r.id,
        r.refund_key,
        r.payment_intent_id,
        r.amount_cents,
        r.created_at,
      ]);
      const { rows } = await db.query(`UPDATE simulated_payment_intents SET refunded_cents = refunded_cents + $2 WHERE id = $1 RETURNING *`, [r.payment_intent_id, r.amount_cents]);
      return intent(rows[0]);
    },

    async insertEvent(e: SimulatedEventRow): Promise<void> {
      await db.query(`INSERT INTO simulated_events (id, type, payload, created_at) VALUES ($1, $2, $3, $4)`, [e.id, e.type, e.payload, e.created_at]);
    },

    /** Events not yet handed over, oldest first. */
    async pendingEvents(limit: number): Promise<SimulatedEventRow[]> {
      const { rows } = await db.query(`SELECT id, type, payload, created_at FROM simulated_events WHERE delivered_at IS NULL ORDER BY seq LIMIT $1`, [limit]);
      return rows;
    },

    async markDelivered(id: string, now: Date): Promise<void> {
      await db.query(`UPDATE simulated_events SET delivered_at = $2 WHERE id = $1 AND delivered_at IS NULL`, [id, now]);
    },
  };
}

export type SimulatedPaymentsRepository = ReturnType<typeof createSimulatedPaymentsRepository>;
