import type { Queryable } from '../pool.ts';
import type { Mode } from '../../runtime/types.ts';
import type { MoneyRow } from './balances.ts';
import { preparedPerTariff, type HoldRow } from './holds.ts';
import { priceMinutesSql, type Tariff } from './price-sql.ts';

/**
 * Holds for many calls of one account in one statement (a dialler round's starts): the same
 * conditions as `openHold` (db/money/holds.ts), decided as if the calls asked one after another
 * in the order given. Every hold of the batch costs the same (the longest call at the locked
 * row's tier position, which a start does not move), so the k-th hold granted on the account
 * needs room for k holds, and the k-th of a customer room for k on the customer: a call is
 * granted when its rank among its customer's calls fits the customer's balance of caps and
 * concurrency, and its rank among the calls so granted fits the account's. A call refused here
 * would have been refused asked alone at that point of the order (the conditions only tighten
 * with each hold), so the caller asks it alone (`startCall`) to name its reason.
 */

const POSITION_OF_M = `(CASE WHEN l.minutes_month = $5::date THEN l.minutes_used ELSE 0 END)`;

const openHoldsStatement = preparedPerTariff(
  'open_holds_batch',
  (tariff) => `WITH locked AS (
     SELECT m.balance_cents, m.reserved_cents, m.open_calls, m.minutes_month, m.minutes_used,
            CASE WHEN m.spend_day = $4::date THEN m.spend_day_cents ELSE 0 END AS day_cents,
            CASE WHEN m.spend_month = $5::date THEN m.spend_month_cents ELSE 0 END AS month_cents
       FROM account_money m WHERE m.account_id = $1 AND m.mode = $2 FOR NO KEY UPDATE
   ), priced AS (
     SELECT l.*, ${priceMinutesSql(tariff.tiers, POSITION_OF_M, String(tariff.maxCallMinutes))}::bigint AS amount,
            a.daily_spend_cap_cents, a.monthly_spend_cap_cents, a.concurrent_calls
       FROM locked l JOIN accounts a ON a.id = $1
   ), req AS (
     SELECT * FROM unnest($3::uuid[], $7::text[], $8::timestamptz[]) WITH ORDINALITY AS r(customer_id, reference, expires_at, n)
   ), cust AS (
     SELECT c.id, c.reserved_cents, c.open_calls, c.daily_spend_cap_cents, c.monthly_spend_cap_cents, c.max_concurrent_calls,
            CASE WHEN c.spend_day = $4::date THEN c.spend_day_cents ELSE 0 END AS day_cents,
            CASE WHEN c.spend_month = $5::date THEN c.spend_month_cents ELSE 0 END AS month_cents
       FROM customers c
      WHERE c.id IN (SELECT customer_id FROM req) AND c.account_id = $1 AND c.mode = $2 AND EXISTS (SELECT 1 FROM locked)
      ORDER BY c.id FOR NO KEY UPDATE
   ), by_customer AS (
     SELECT req.*, row_number() OVER (PARTITION BY req.customer_id ORDER BY req.n) AS rc FROM req JOIN cust ON cust.id = req.customer_id
   ), customer_room AS (
     SELECT b.*, row_number() OVER (ORDER BY b.n) AS ra
       FROM by_customer b JOIN cust c ON c.id = b.customer_id CROSS JOIN priced p
      WHERE (c.daily_spend_cap_cents IS NULL OR c.day_cents + c.reserved_cents + b.rc * p.amount <= c.daily_spend_cap_cents)
        AND (c.monthly_spend_cap_cents IS NULL OR c.month_cents + c.reserved_cents + b.rc * p.amount <= c.monthly_spend_cap_cents)
        AND (c.max_concurrent_calls IS NULL OR c.open_calls + b.rc - 1 < c.max_concurrent_calls)
   ), granted AS (
     SELECT r.customer_id, r.reference, r.expires_at, r.n, p.amount
       FROM customer_room r CROSS JOIN priced p
      WHERE ($2 = 'test' OR p.balance_cents - p.reserved_cents >= r.ra * p.amount)
        AND (p.daily_spend_cap_cents IS NULL OR p.day_cents + p.reserved_cents + r.ra * p.amount <= p.daily_spend_cap_cents)
        AND (p.monthly_spend_cap_cents IS NULL OR p.month_cents + p.reserved_cents + r.ra * p.amount <= p.monthly_spend_cap_cents)
        AND p.open_calls + r.ra - 1 < p.concurrent_calls
   ), money AS (
     UPDATE account_money m SET reserved_cents = m.reserved_cents + g.total, open_calls = m.open_calls + g.k
       FROM (SELECT count(*) AS k, sum(amount) AS total FROM granted) g
      WHERE m.account_id = $1 AND m.mode = $2 AND g.k > 0
     RETURNING m.*
   ), cust_update AS (
     UPDATE customers c SET reserved_cents = c.reserved_cents + g.total, open_calls = c.open_calls + g.k
       FROM (SELECT customer_id, count(*) AS k, sum(amount) AS total FROM granted GROUP BY customer_id) g
      WHERE c.id = g.customer_id
   ), hold AS (
     INSERT INTO holds (account_id, mode, customer_id, reference, amount_cents, created_at, expires_at)
     SELECT $1, $2, g.customer_id, g.reference, g.amount, $6, g.expires_at FROM granted g ORDER BY g.n
     RETURNING *
   )
   SELECT (SELECT coalesce(jsonb_agg(jsonb_build_object('n', g.n, 'hold', to_jsonb(hold))), '[]') FROM hold JOIN granted g ON g.reference = hold.reference) AS holds,
          (SELECT to_jsonb(p) FROM priced p) AS account,
          (SELECT coalesce(jsonb_agg(to_jsonb(c)), '[]') FROM cust c) AS customers,
          (SELECT jsonb_build_object('balance_cents', balance_cents, 'reserved_cents', reserved_cents,
                  'low_balance_stage', low_balance_stage, 'last_top_up_cents', last_top_up_cents,
                  'minutes_month', minutes_month::text, 'minutes_used', minutes_used) FROM money) AS money`,
);

/**
 * What the batch decided on, as locked before its holds (for naming each refusal at its place in
 * the order: money/rules/hold-rules.ts `holdRefusal` with the batch's earlier holds added).
 */
export interface BatchFacts {
  account: {
    amountCents: number;
    balanceCents: number;
    reservedCents: number;
    openCalls: number;
    concurrentCalls: number;
    daySpendCents: number;
    monthSpendCents: number;
    dailyCapCents: number | null;
    monthlyCapCents: number | null;
  };
  /** The account's customers among the batch's (in its mode); one missing is not the account's. */
  customers: Map<
    string,
    { reservedCents: number; openCalls: number; maxConcurrentCalls: number | null; daySpendCents: number; monthSpendCents: number; dailyCapCents: number | null; monthlyCapCents: number | null }
  >;
}

export type BatchMoney = Pick<MoneyRow, 'balance_cents' | 'reserved_cents' | 'low_balance_stage' | 'last_top_up_cents' | 'minutes_month' | 'minutes_used'>;

export function holdBatchWrites(db: Queryable) {
  return {
    /**
     * Opens the holds of `calls` (of account `accountId` in `mode`) that may be taken, in one
     * statement; each granted hold by its call's place in `calls` (from 0; not by reference: a
     * reference may come twice, and only the call granted owns the hold). `money`: the money row
     * after them (null when none was granted).
     */
    async openHolds(h: {
      accountId: string;
      mode: Mode;
      day: string;
      month: string;
      now: Date;
      calls: readonly { customerId: string; reference: string; expiresAt: Date }[];
      tariff: Tariff;
    }): Promise<{ holds: Map<number, HoldRow>; money: BatchMoney | null; facts: BatchFacts | null }> {
      const { rows } = await db.query(
        openHoldsStatement(h.tariff)([
          h.accountId,
          h.mode,
          h.calls.map((c) => c.customerId),
          h.day,
          h.month,
          h.now,
          h.calls.map((c) => c.reference),
          h.calls.map((c) => c.expiresAt),
        ]),
      );
      const holds = new Map<number, HoldRow>();
      for (const { n, hold } of rows[0].holds) {
        holds.set(Number(n) - 1, { ...hold, created_at: new Date(hold.created_at), expires_at: new Date(hold.expires_at), resolved_at: null });
      }
      const account = rows[0].account;
      const facts: BatchFacts | null = account && {
        account: {
          amountCents: Number(account.amount),
          balanceCents: Number(account.balance_cents),
          reservedCents: Number(account.reserved_cents),
          openCalls: account.open_calls,
          concurrentCalls: account.concurrent_calls,
          daySpendCents: Number(account.day_cents),
          monthSpendCents: Number(account.month_cents),
          dailyCapCents: account.daily_spend_cap_cents === null ? null : Number(account.daily_spend_cap_cents),
          monthlyCapCents: account.monthly_spend_cap_cents === null ? null : Number(account.monthly_spend_cap_cents),
        },
        customers: new Map(
          (rows[0].customers as any[]).map((c) => [
            c.id,
            {
              reservedCents: Number(c.reserved_cents),
              openCalls: c.open_calls,
              maxConcurrentCalls: c.max_concurrent_calls,
              daySpendCents: Number(c.day_cents),
              monthSpendCents: Number(c.month_cents),
              dailyCapCents: c.daily_spend_cap_cents === null ? null : Number(c.daily_spend_cap_cents),
              monthlyCapCents: c.monthly_spend_cap_cents === null ? null : Number(c.monthly_spend_cap_cents),
            },
          ]),
        ),
      };
      return { holds, money: rows[0].money, facts };
    },
  };
}
