import { prepared, type Queryable } from '../pool.ts';
import type { Mode } from '../../runtime/types.ts';
import { MONEY_COLUMNS, type MoneyRow } from './balances.ts';
import type { NewLedgerLine } from './ledger.ts';

/**
 * Periods of recurring charges (`recurring_charges`): one row per item and period, claimed once
 * by the money writer before it charges the period (money/writer.ts `chargeRecurring`).
 */

/**
 * The money row locked (the lock `balanceWrites.lock` takes) and, only where the live balance
 * less what running calls hold covers `amount` (test mode: always), the period claimed: one
 * statement instead of the lock and then the claim.
 */
const LOCK_AND_CLAIM_PERIOD = prepared(
  'lock_money_claim_recurring_period',
  `WITH m AS (
     SELECT ${MONEY_COLUMNS} FROM account_money WHERE account_id = $4 AND mode = $5 FOR NO KEY UPDATE
   ), claim AS (
     INSERT INTO recurring_charges (item_id, period_start, item, account_id, mode, customer_id, period_end, amount_cents, created_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 FROM m WHERE $5 = 'test' OR m.balance_cents - m.reserved_cents >= $8
     ON CONFLICT DO NOTHING
     RETURNING 1
   )
   SELECT m.*, EXISTS (SELECT 1 FROM claim) AS claimed FROM m`,
);

export function recurringWrites(db: Queryable) {
  return {
    /**
     * Locks the account's money row and claims the period once, if the money covers it. Null
     * without a money row; `claimed` false when the money is short (nothing claimed) or the period was claimed
     * already (by another run or process).
     */
    async lockAndClaimPeriod(p: {
      itemId: string;
      item: string;
      accountId: string;
      mode: Mode;
      customerId: string;
      periodStart: string;
      periodEnd: string;
      amountCents: number;
      now: Date;
    }): Promise<{ row: MoneyRow; claimed: boolean } | null> {
      const { rows } = await db.query(
        LOCK_AND_CLAIM_PERIOD([p.itemId, p.periodStart, p.item, p.accountId, p.mode, p.customerId, p.periodEnd, p.amountCents, p.now]),
      );
      if (!rows[0]) return null;
      const { claimed, ...row } = rows[0];
      return { row, claimed };
    },
  };
}

/**
 * The money rows of several accounts locked in one statement, in one order (account, then mode):
 * a renewal batch takes every money row it may charge up front, so two batches (two jobs) that
 * share accounts wait for each other instead of deadlocking.
 */
const LOCK_MONEY_ROWS = prepared(
  'lock_money_rows_in_order',
  `SELECT ${MONEY_COLUMNS} FROM account_money
    WHERE (account_id, mode) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
    ORDER BY account_id, mode FOR NO KEY UPDATE`,
);

/**
 * Read under those locks (a statement of its own, so it sees the grants and claims as they are
 * once the locks are granted): the accounts' bonus grants with credit left, earliest expiry first
 * as the money change spends them, each marked unexpired or not at `realNow`; and which of the
 * periods are claimed already.
 */
const BATCH_FACTS = `SELECT
    (SELECT COALESCE(json_agg(json_build_object('id', g.id, 'account_id', g.account_id, 'remaining_cents', g.remaining_cents, 'unexpired', g.expires_at > $3)
                              ORDER BY g.account_id, g.expires_at, g.id), '[]'::json)
       FROM bonus_grants g WHERE g.account_id = ANY($1::uuid[]) AND g.remaining_cents > 0) AS grants,
    (SELECT COALESCE(json_agg(r.item_id), '[]'::json)
       FROM recurring_charges r WHERE (r.item_id, r.period_start) IN (SELECT * FROM unnest($2::uuid[], $4::date[]))) AS claimed`;

/**
 * A batch of recurring charges written at once (money/writer/recurring-batch.ts): the periods
 * claimed, the ledger lines in the order given, each account's money row set to its final values,
 * each customer's spend added, and the bonus grants' spend taken. Returns how many periods it
 * claimed (the writer checks it claimed every one).
 */
const APPLY_BATCH = `WITH claims AS (
     INSERT INTO recurring_charges (item_id, period_start, item, account_id, mode, customer_id, period_end, amount_cents, created_at)
     SELECT * FROM unnest($1::uuid[], $2::date[], $3::text[], $4::uuid[], $5::text[], $6::uuid[], $7::date[], $8::bigint[], $9::timestamptz[])
     ON CONFLICT DO NOTHING
     RETURNING 1
   ), lines AS (
     INSERT INTO ledger_entries (account_id, mode, customer_id, type, cause, amount_cents, cash_cents, bonus_cents,
                                 balance_after_cents, applied, minutes, reference, payment_reference, description, created_at)
     SELECT l.account_id, l.mode, l.customer_id, l.type, l.cause, l.amount_cents, l.cash_cents, l.bonus_cents,
            l.balance_after_cents, l.applied, NULL, l.reference, NULL, l.description, l.created_at
       FROM unnest($10::uuid[], $11::text[], $12::uuid[], $13::text[], $14::text[], $15::bigint[], $16::bigint[], $17::bigint[],
                   $18::bigint[], $19::boolean[], $20::text[], $21::text[], $22::timestamptz[])
            WITH ORDINALITY AS l(account_id, mode, customer_id, type, cause, amount_cents, cash_cents, bonus_cents,
                                 balance_after_cents, applied, reference, description, created_at, n)
      ORDER BY l.n
     RETURNING 1
   ), m AS (
     UPDATE account_money a SET balance_cents = v.balance_cents, paid_cents = v.paid_cents, bonus_cents = v.bonus_cents,
            spend_day = v.spend_day, spend_day_cents = v.spend_day_cents, spend_month = v.spend_month, spend_month_cents = v.spend_month_cents,
            low_balance_stage = v.low_balance_stage
       FROM unnest($23::uuid[], $24::text[], $25::bigint[], $26::bigint[], $27::bigint[], $28::date[], $29::bigint[], $30::date[], $31::bigint[], $32::text[])
            AS v(account_id, mode, balance_cents, paid_cents, bonus_cents, spend_day, spend_day_cents, spend_month, spend_month_cents, low_balance_stage)
      WHERE a.account_id = v.account_id AND a.mode = v.mode
   ), c AS (
     UPDATE customers SET
            spend_day_cents = CASE WHEN spend_day = $35::date THEN spend_day_cents ELSE 0 END + v.spend,
            spend_day = $35::date,
            spend_month_cents = CASE WHEN spend_month = $36::date THEN spend_month_cents ELSE 0 END + v.spend,
            spend_month = $36::date
       FROM unnest($33::uuid[], $34::bigint[]) AS v(id, spend)
      WHERE customers.id = v.id AND v.spend > 0
   ), g AS (
     UPDATE bonus_grants b SET remaining_cents = b.remaining_cents - v.take
       FROM unnest($37::uuid[], $38::bigint[]) AS v(id, take)
      WHERE b.id = v.id AND v.take > 0
   )
   SELECT (SELECT count(*) FROM claims)::int AS claimed, (SELECT count(*) FROM lines)::int AS lines`;

/** One period of a batch, as it is claimed. */
export interface PeriodClaim {
  itemId: string;
  periodStart: string;
  item: string;
  accountId: string;
  mode: Mode;
  customerId: string;
  periodEnd: string;
  amountCents: number;
  now: Date;
}

/** What a batch writes (see APPLY_BATCH). */
export interface RecurringBatchWrite {
  claims: PeriodClaim[];
  lines: NewLedgerLine[];
  rows: MoneyRow[];
  /** Spend added per customer, all on `spendDay` and `spendMonth`. */
  spend: { customerId: string; cents: number }[];
  spendDay: string;
  spendMonth: string;
  /** Bonus credit taken per grant. */
  takes: { grantId: string; cents: number }[];
}

export function recurringBatchWrites(db: Queryable) {
  return {
    /** Locks the money rows of `keys` in one order; the rows found (a key without one is left out). */
    async lockInOrder(keys: { accountId: string; mode: Mode }[]): Promise<MoneyRow[]> {
      if (keys.length === 0) return [];
      const { rows } = await db.query(LOCK_MONEY_ROWS([keys.map((k) => k.accountId), keys.map((k) => k.mode)]));
      return rows;
    },

    /** Read after `lockInOrder`: the accounts' grants with credit left (earliest expiry first) and which periods are claimed already. */
    async facts(accountIds: string[], periods: { itemId: string; periodStart: string }[], realNow: Date) {
      const { rows } = await db.query(BATCH_FACTS, [accountIds, periods.map((p) => p.itemId), realNow, periods.map((p) => p.periodStart)]);
      return {
        grants: rows[0].grants as { id: string; account_id: string; remaining_cents: number; unexpired: boolean }[],
        claimed: new Set<string>(rows[0].claimed as string[]),
      };
    },

    /** Writes a whole batch in one statement; how many periods it claimed and lines it wrote. */
    async apply(w: RecurringBatchWrite): Promise<{ claimed: number; lines: number }> {
      const { claims: k, lines: l, rows: r, spend: s, takes: g } = w;
      const { rows } = await db.query(APPLY_BATCH, [
        k.map((x) => x.itemId), k.map((x) => x.periodStart), k.map((x) => x.item), k.map((x) => x.accountId), k.map((x) => x.mode),
        k.map((x) => x.customerId), k.map((x) => x.periodEnd), k.map((x) => x.amountCents), k.map((x) => x.now),
        l.map((x) => x.account_id), l.map((x) => x.mode), l.map((x) => x.customer_id), l.map((x) => x.type), l.map((x) => x.cause),
        l.map((x) => x.amount_cents), l.map((x) => x.cash_cents), l.map((x) => x.bonus_cents), l.map((x) => x.balance_after_cents),
        l.map((x) => x.applied), l.map((x) => x.reference), l.map((x) => x.description), l.map((x) => x.created_at),
        r.map((x) => x.account_id), r.map((x) => x.mode), r.map((x) => x.balance_cents), r.map((x) => x.paid_cents), r.map((x) => x.bonus_cents),
        r.map((x) => x.spend_day), r.map((x) => x.spend_day_cents), r.map((x) => x.spend_month), r.map((x) => x.spend_month_cents),
        r.map((x) => x.low_balance_stage),
        s.map((x) => x.customerId), s.map((x) => x.cents), w.spendDay, w.spendMonth,
        g.map((x) => x.grantId), g.map((x) => x.cents),
      ]);
      return { claimed: rows[0].claimed, lines: rows[0].lines };
    },
  };
}
