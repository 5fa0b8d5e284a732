import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/**
 * Card payments (032_payments.sql): the processor's customers, saved cards, card payments and
 * their refunds, the automatic top-up's failure state and the processor's events inbox. Money
 * itself moves only through money/writer.ts; these rows say what the processor did and which
 * ledger line credited it.
 */

export type Processor = 'stripe' | 'simulated';

export interface CardPaymentRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  processor: Processor;
  kind: 'checkout' | 'automatic';
  status: 'pending' | 'succeeded' | 'failed' | 'canceled';
  amount_cents: number;
  bonus_cents: number;
  save_card: boolean;
  customer_ref: string | null;
  checkout_session_id: string | null;
  checkout_url: string | null;
  payment_intent_id: string | null;
  charge_id: string | null;
  payment_method_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  receipt_url: string | null;
  failure_code: string | null;
  failure_message: string | null;
  ledger_line_id: string | null;
  refunded_cents: number;
  bonus_forfeited_cents: number;
  next_attempt_at: Date | null;
  attempts: number;
  created_at: Date;
  paid_at: Date | null;
}

export interface SavedCardRow {
  account_id: string;
  mode: Mode;
  processor: Processor;
  customer_ref: string;
  payment_method_id: string;
  brand: string | null;
  last4: string | null;
  exp_month: number | null;
  exp_year: number | null;
  saved_at: Date;
}

export interface CardRefundRow {
  id: string;
  seq: number;
  card_payment_id: string;
  account_id: string;
  amount_cents: number;
  status: 'pending' | 'succeeded' | 'failed';
  processor_refund_id: string | null;
  ledger_line_id: string | null;
  bonus_forfeited_cents: number;
  source: 'operator' | 'processor';
  failure_message: string | null;
  created_at: Date;
}

export interface AutoTopUpStateRow {
  account_id: string;
  failing_since: Date | null;
  retry_after: Date | null;
  last_failure_code: string | null;
  last_failure_message: string | null;
  last_failure_at: Date | null;
}

export interface ProcessorEventRow {
  id: string;
  seq: number;
  processor: Processor;
  event_id: string;
  type: string;
  payload: Record<string, any>;
  received_at: Date;
  processed_at: Date | null;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
}

/** bigint columns come back as text: the money-bearing ones as numbers. */
function payment(r: any): CardPaymentRow {
  return { ...r, seq: Number(r.seq), amount_cents: Number(r.amount_cents), bonus_cents: Number(r.bonus_cents), refunded_cents: Number(r.refunded_cents), bonus_forfeited_cents: Number(r.bonus_forfeited_cents) };
}
function refund(r: any): CardRefundRow {
  return { ...r, seq: Number(r.seq), amount_cents: Number(r.amount_cents), bonus_forfeited_cents: Number(r.bonus_forfeited_cents) };
}

type PaymentUpdate = Partial<Omit<CardPaymentRow, 'id' | 'seq' | 'account_id' | 'mode' | 'processor' | 'kind' | 'created_at'>>;

export function createPaymentRepository(db: Queryable) {
  return {
    // ---- the processor's customers
    async customerOf(accountId: string, mode: Mode, processor: Processor): Promise<string | null> {
      const { rows } = await db.query(`SELECT customer_ref FROM payment_customers WHERE account_id = $1 AND mode = $2 AND processor = $3`, [accountId, mode, processor]);
      return rows[0]?.customer_ref ?? null;
    },
    /** Forgets a customer the processor no longer knows (another Stripe account or keys): the next asks for a new one. */
    async forgetCustomer(accountId: string, mode: Mode, processor: Processor, customerRef: string): Promise<void> {
      await db.query(`DELETE FROM payment_customers WHERE account_id = $1 AND mode = $2 AND processor = $3 AND customer_ref = $4`, [accountId, mode, processor, customerRef]);
    },
    /** Records the customer once; answers the one stored (another request may have stored it first). */
    async saveCustomer(accountId: string, mode: Mode, processor: Processor, customerRef: string): Promise<string> {
      const { rows } = await db.query(
        `WITH ins AS (INSERT INTO payment_customers (account_id, mode, processor, customer_ref) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING customer_ref)
         SELECT customer_ref FROM ins UNION ALL SELECT customer_ref FROM payment_customers WHERE account_id = $1 AND mode = $2 AND processor = $3 AND NOT EXISTS (SELECT 1 FROM ins)`,
        [accountId, mode, processor, customerRef],
      );
      return rows[0].customer_ref;
    },

    // ---- saved cards
    async savedCard(accountId: string, mode: Mode): Promise<SavedCardRow | null> {
      const { rows } = await db.query(`SELECT * FROM saved_cards WHERE account_id = $1 AND mode = $2`, [accountId, mode]);
      return rows[0] ?? null;
    },
    async saveCard(c: Omit<SavedCardRow, 'saved_at'>, now: Date): Promise<void> {
      await db.query(
        `INSERT INTO saved_cards (account_id, mode, processor, customer_ref, payment_method_id, brand, last4, exp_month, exp_year, saved_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (account_id, mode) DO UPDATE SET processor = EXCLUDED.processor, customer_ref = EXCLUDED.customer_ref,
           payment_method_id = EXCLUDED.payment_method_id, brand = EXCLUDED.brand, last4 = EXCLUDED.last4,
           exp_month = EXCLUDED.exp_month, exp_year = EXCLUDED.exp_year, saved_at = EXCLUDED.saved_at`,
        [c.account_id, c.mode, c.processor, c.customer_ref, c.payment_method_id, c.brand, c.last4, c.exp_month, c.exp_year, now],
      );
    },
    async deleteSavedCard(accountId: string, mode: Mode): Promise<SavedCardRow | null> {
      const { rows } = await db.query(`DELETE FROM saved_cards WHERE account_id = $1 AND mode = $2 RETURNING *`, [accountId, mode]);
      return rows[0] ?? null;
    },

    // ---- card payments
    async insertPayment(p: { accountId: string; mode: Mode; processor: Processor; kind: CardPaymentRow['kind']; amountCents: number; saveCard: boolean; customerRef: string | null; paymentMethodId?: string | null; nextAttemptAt?: Date | null; now: Date }): Promise<CardPaymentRow> {
      const { rows } = await db.query(
        `INSERT INTO card_payments (account_id, mode, processor, kind, amount_cents, save_card, customer_ref, payment_method_id, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
        [p.accountId, p.mode, p.processor, p.kind, p.amountCents, p.saveCard, p.customerRef, p.paymentMethodId ?? null, p.nextAttemptAt ?? null, p.now],
      );
      return payment(rows[0]);
    },
    /** An automatic top-up requested, unless one is open already (the unique index): null then. */
    async insertAutomatic(p: { accountId: string; processor: Processor; amountCents: number; customerRef: string; paymentMethodId: string; brand: string | null; last4: string | null; now: Date }): Promise<CardPaymentRow | null> {
      const { rows } = await db.query(
        `INSERT INTO card_payments (account_id, mode, processor, kind, amount_cents, save_card, customer_ref, payment_method_id, card_brand, card_last4, next_attempt_at, created_at)
         VALUES ($1, 'live', $2, 'automatic', $3, false, $4, $5, $6, $7, now(), $8)
         ON CONFLICT (account_id) WHERE kind = 'automatic' AND status = 'pending' DO NOTHING RETURNING *`,
        [p.accountId, p.processor, p.amountCents, p.customerRef, p.paymentMethodId, p.brand, p.last4, p.now],
      );
      return rows[0] ? payment(rows[0]) : null;
    },
    async getPayment(id: string): Promise<CardPaymentRow | null> {
      const { rows } = await db.query(`SELECT * FROM card_payments WHERE id = $1`, [id]);
      return rows[0] ? payment(rows[0]) : null;
    },
    async lockPayment(id: string): Promise<CardPaymentRow | null> {
      const { rows } = await db.query(`SELECT * FROM card_payments WHERE id = $1 FOR UPDATE`, [id]);
      return rows[0] ? payment(rows[0]) : null;
    },
    /** The card payment a processor's object names: by its session or its payment intent first (the processor's ids), else our id in its metadata. */
    async findPayment(ref: { id?: string | null; sessionId?: string | null; paymentIntentId?: string | null }): Promise<CardPaymentRow | null> {
      const { rows } = await db.query(
        `SELECT * FROM card_payments
          WHERE ($1::text IS NOT NULL AND id::text = $1) OR ($2::text IS NOT NULL AND checkout_session_id = $2) OR ($3::text IS NOT NULL AND payment_intent_id = $3)
          ORDER BY (($2::text IS NOT NULL AND checkout_session_id = $2) OR ($3::text IS NOT NULL AND payment_intent_id = $3)) IS TRUE DESC, seq LIMIT 1`,
        [ref.id ?? null, ref.sessionId ?? null, ref.paymentIntentId ?? null],
      );
      return rows[0] ? payment(rows[0]) : null;
    },
    async updatePayment(id: string, fields: PaymentUpdate): Promise<CardPaymentRow> {
      const entries = Object.entries(fields);
      const sets = entries.map(([k], i) => `${k} = $${i + 2}`).join(', ');
      const { rows } = await db.query(`UPDATE card_payments SET ${sets} WHERE id = $1 RETURNING *`, [id, ...entries.map(([, v]) => v)]);
      return payment(rows[0]);
    },
    /** One account's card payments of a mode, newest first (`beforeSeq`: after a cursor). */
    async listPayments(accountId: string, mode: Mode | null, limit: number, beforeSeq: number | null): Promise<CardPaymentRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM card_payments WHERE account_id = $1 AND ($2::text IS NULL OR mode = $2) AND ($4::bigint IS NULL OR seq < $4) ORDER BY seq DESC LIMIT $3`,
        [accountId, mode, limit, beforeSeq],
      );
      return rows.map(payment);
    },
    async openAutomatic(accountId: string): Promise<CardPaymentRow | null> {
      const { rows } = await db.query(`SELECT * FROM card_payments WHERE account_id = $1 AND kind = 'automatic' AND status = 'pending'`, [accountId]);
      return rows[0] ? payment(rows[0]) : null;
    },
    /** Claims due automatic charges for one attempt each: pushed `leaseSeconds` ahead and counted. */
    async claimDueAutomatic(limit: number, leaseSeconds: number): Promise<CardPaymentRow[]> {
      const { rows } = await db.query(
        `UPDATE card_payments SET next_attempt_at = now() + make_interval(secs => $2), attempts = attempts + 1
          WHERE id IN (SELECT id FROM card_payments WHERE kind = 'automatic' AND status = 'pending' AND next_attempt_at <= now()
                        ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [limit, leaseSeconds],
      );
      return rows.map(payment).sort((a, b) => a.seq - b.seq);
    },
    /** When a claimed automatic charge is looked at next (after a failed try, or while the payment is processing). */
    async retryAutomaticIn(id: string, seconds: number): Promise<void> {
      await db.query(`UPDATE card_payments SET next_attempt_at = now() + make_interval(secs => $2) WHERE id = $1 AND status = 'pending'`, [id, seconds]);
    },

    // ---- refunds
    async insertRefund(r: { cardPaymentId: string; accountId: string; amountCents: number; source: CardRefundRow['source']; processorRefundId?: string | null; now: Date }): Promise<CardRefundRow> {
      const { rows } = await db.query(
        `INSERT INTO card_refunds (card_payment_id, account_id, amount_cents, source, processor_refund_id, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [r.cardPaymentId, r.accountId, r.amountCents, r.source, r.processorRefundId ?? null, r.now],
      );
      return refund(rows[0]);
    },
    /** Serializes the refund claims of one account (its cash is shared by all its payments), to the end of the transaction. */
    async lockAccountRefunds(accountId: string): Promise<void> {
      await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('card_refunds:' || $1::text, 0))`, [accountId]);
    },
    /** Cents of the account's refunds claimed (or made at the processor) and not yet on the ledger. */
    async pendingRefundCents(accountId: string): Promise<number> {
      const { rows } = await db.query(`SELECT COALESCE(sum(amount_cents), 0) AS cents FROM card_refunds WHERE account_id = $1 AND status = 'pending'`, [accountId]);
      return Number(rows[0].cents);
    },
    async getRefund(id: string): Promise<CardRefundRow | null> {
      const { rows } = await db.query(`SELECT * FROM card_refunds WHERE id = $1`, [id]);
      return rows[0] ? refund(rows[0]) : null;
    },
    async refundsOf(cardPaymentId: string): Promise<CardRefundRow[]> {
      const { rows } = await db.query(`SELECT * FROM card_refunds WHERE card_payment_id = $1 ORDER BY seq`, [cardPaymentId]);
      return rows.map(refund);
    },
    async updateRefund(id: string, fields: Partial<Pick<CardRefundRow, 'status' | 'processor_refund_id' | 'ledger_line_id' | 'bonus_forfeited_cents' | 'failure_message'>>): Promise<CardRefundRow> {
      const entries = Object.entries(fields);
      const sets = entries.map(([k], i) => `${k} = $${i + 2}`).join(', ');
      const { rows } = await db.query(`UPDATE card_refunds SET ${sets} WHERE id = $1 RETURNING *`, [id, ...entries.map(([, v]) => v)]);
      return refund(rows[0]);
    },

    // ---- the automatic top-up's failures
    async autoTopUpState(accountId: string): Promise<AutoTopUpStateRow | null> {
      const { rows } = await db.query(`SELECT * FROM auto_top_up_state WHERE account_id = $1`, [accountId]);
      return rows[0] ?? null;
    },
    async recordAutoTopUpFailure(accountId: string, f: { code: string; message: string; at: Date; retryAfter: Date }): Promise<void> {
      await db.query(
        `INSERT INTO auto_top_up_state (account_id, failing_since, retry_after, last_failure_code, last_failure_message, last_failure_at)
         VALUES ($1, $4, $5, $2, $3, $4)
         ON CONFLICT (account_id) DO UPDATE SET failing_since = COALESCE(auto_top_up_state.failing_since, EXCLUDED.failing_since),
           retry_after = EXCLUDED.retry_after, last_failure_code = EXCLUDED.last_failure_code,
           last_failure_message = EXCLUDED.last_failure_message, last_failure_at = EXCLUDED.last_failure_at`,
        [accountId, f.code, f.message.slice(0, 500), f.at, f.retryAfter],
      );
    },
    /** A success (or a new card) ends the failing state; the last failure stays on record. */
    async clearAutoTopUpFailing(accountId: string): Promise<void> {
      await db.query(`UPDATE auto_top_up_state SET failing_since = NULL, retry_after = NULL WHERE account_id = $1`, [accountId]);
    },

    // ---- the processor's events inbox
    /** Stores an event once (a repeat answers the stored row); the storer makes the first attempt, so the row is leased. */
    async insertEvent(e: { processor: Processor; eventId: string; type: string; payload: unknown }, leaseSeconds: number): Promise<ProcessorEventRow> {
      const { rows } = await db.query(
        `WITH ins AS (
           INSERT INTO processor_events (processor, event_id, type, payload, attempts, next_attempt_at)
           VALUES ($1, $2, $3, $4, 1, now() + make_interval(secs => $5))
           ON CONFLICT (processor, event_id) DO NOTHING RETURNING *
         )
         SELECT * FROM ins UNION ALL SELECT * FROM processor_events WHERE processor = $1 AND event_id = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
        [e.processor, e.eventId, e.type, JSON.stringify(e.payload), leaseSeconds],
      );
      return rows[0];
    },
    async lockUnprocessedEvent(id: string): Promise<ProcessorEventRow | null> {
      const { rows } = await db.query(`SELECT * FROM processor_events WHERE id = $1 AND processed_at IS NULL FOR UPDATE`, [id]);
      return rows[0] ?? null;
    },
    async markEventProcessed(id: string): Promise<void> {
      await db.query(`UPDATE processor_events SET processed_at = now(), last_error = NULL WHERE id = $1`, [id]);
    },
    async claimDueEvents(limit: number, leaseSeconds: number): Promise<ProcessorEventRow[]> {
      const { rows } = await db.query(
        `UPDATE processor_events SET next_attempt_at = now() + make_interval(secs => $2), attempts = attempts + 1
          WHERE id IN (SELECT id FROM processor_events WHERE processed_at IS NULL AND next_attempt_at <= now()
                        ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [limit, leaseSeconds],
      );
      return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
    },
    async recordEventFailure(id: string, retryInSeconds: number, error: string): Promise<void> {
      await db.query(
        `UPDATE processor_events SET next_attempt_at = now() + make_interval(secs => $2), last_error = $3 WHERE id = $1 AND processed_at IS NULL`,
        [id, retryInSeconds, error.slice(0, 2000)],
      );
    },
  };
}

export type PaymentRepository = ReturnType<typeof createPaymentRepository>;

/**
 * Whether the account has a working automatic top-up (live): on (threshold and amount set), a
 * saved card, and not failing (no retry_after in the future). Its amount, or null.
 */
export async function workingAutoTopUpCents(db: Queryable, accountId: string, now: Date): Promise<number | null> {
  const { rows } = await db.query(
    `SELECT m.auto_top_up_amount_cents AS amount
       FROM account_money m
       JOIN saved_cards c ON c.account_id = m.account_id AND c.mode = 'live'
       LEFT JOIN auto_top_up_state s ON s.account_id = m.account_id
      WHERE m.account_id = $1 AND m.mode = 'live' AND m.auto_top_up_threshold_cents IS NOT NULL AND m.auto_top_up_amount_cents IS NOT NULL
        AND (s.retry_after IS NULL OR s.retry_after <= $2)`,
    [accountId, now],
  );
  return rows[0] ? Number(rows[0].amount) : null;
}
