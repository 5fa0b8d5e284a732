import { prepared, type Queryable } from '../pool.ts';
import type { Mode } from '../../runtime/types.ts';
import type { MoneyRow } from './balances.ts';

/**
 * The ledger (`ledger_entries`, append-only) and the money change: the one statement that writes
 * a line with everything it moves (money row, customer spend, a settled hold, bonus grants).
 * Reads are anyone's; the money change is money/writer.ts's alone.
 */

export interface LedgerRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  customer_id: string | null;
  type: string;
  cause: string;
  amount_cents: number;
  cash_cents: number;
  bonus_cents: number;
  balance_after_cents: number;
  applied: boolean;
  minutes: number | null;
  reference: string | null;
  payment_reference: string | null;
  description: string;
  created_at: Date;
}

export type NewLedgerLine = Omit<LedgerRow, 'id' | 'seq'>;

/**
 * A whole money change: the money row's new values, the customer's deltas, the hold's charge and
 * the line. `next` and `line` are computed as if the whole charge came from cash; the statement
 * itself then pays what it can of `bonusEligibleCents` from unexpired bonus grants (earliest
 * expiry first) and moves that much from cash to bonus on the row and the line. The split is made
 * there, and only there, because only that statement is sure to see the grants as they are under
 * the money row lock: a read made before the lock was granted (the settlement's claim, whose
 * snapshot predates its wait behind another settlement) can be stale, and a stale split spent
 * bonus credit that was already gone (issue 10 §1).
 */
export interface MoneyChange {
  next: MoneyRow;
  customer: { id: string; reservedReleasedCents: number; callsEnded: number; spendCents: number } | null;
  /** A hold resolved by this change: settled with its charge (the same single write of the hold). */
  holdCharge: { holdId: string; chargedCents: number } | null;
  line: NewLedgerLine | null;
  /** How much of this change's charge bonus credit may pay (0 for test lines and money in). */
  bonusEligibleCents: number;
  /** The change's date (a settled hold's `resolved_at`): the schedule clock. */
  now: Date;
  /** Real time, on which bonus grants expire (live facts are never on a test clock). */
  realNow: Date;
}

/** What the money change did beyond its inputs. */
export interface AppliedChange {
  line: LedgerRow | null;
  /** Bonus credit the change spent (already moved from cash to bonus on the row and the line). */
  bonusTakenCents: number;
  /** Expired grants of the account still hold credit: they are written off next. */
  expiredBonusLeft: boolean;
}

const APPLY_CHANGE = prepared(
  'apply_money_change',
  `WITH t AS (
     SELECT id, LEAST(remaining_cents, GREATEST(0, $35::bigint - before)) AS take
       FROM (SELECT id, remaining_cents, sum(remaining_cents) OVER (ORDER BY expires_at, id) - remaining_cents AS before
               FROM bonus_grants WHERE account_id = $1 AND remaining_cents > 0 AND expires_at > $36 AND $35::bigint > 0) r
   ), bt AS (
     SELECT COALESCE(sum(take), 0)::bigint AS taken FROM t
   ), m AS (
     UPDATE account_money SET balance_cents = $3, paid_cents = $4 + bt.taken, bonus_cents = $5 - bt.taken, reserved_cents = $6, open_calls = $7,
            spend_day = $8::date, spend_day_cents = $9, spend_month = $10::date, spend_month_cents = $11,
            minutes_month = $12::date, minutes_used = $13, low_balance_stage = $14
       FROM bt
      WHERE account_id = $1 AND mode = $2
   ), c AS (
     UPDATE customers SET reserved_cents = reserved_cents - $16, open_calls = open_calls - $17,
            spend_day_cents = CASE WHEN $18::bigint = 0 THEN spend_day_cents
                                   ELSE CASE WHEN spend_day = $8::date THEN spend_day_cents ELSE 0 END + $18 END,
            spend_day = CASE WHEN $18::bigint = 0 THEN spend_day ELSE $8::date END,
            spend_month_cents = CASE WHEN $18::bigint = 0 THEN spend_month_cents
                                     ELSE CASE WHEN spend_month = $10::date THEN spend_month_cents ELSE 0 END + $18 END,
            spend_month = CASE WHEN $18::bigint = 0 THEN spend_month ELSE $10::date END
      WHERE id = $15::uuid
   ), h AS (
     UPDATE holds SET status = 'settled', resolved_at = $34, charged_cents = $20 WHERE id = $19::uuid AND status = 'open'
     RETURNING id
   ), g AS (
     UPDATE bonus_grants b SET remaining_cents = b.remaining_cents - t.take FROM t WHERE b.id = t.id AND t.take > 0
   ), l AS (
     INSERT INTO ledger_entries (account_id, mode, customer_id, type, cause, amount_cents, cash_cents, bonus_cents,
                                 balance_after_cents, applied, minutes, reference, payment_reference, description, created_at)
     SELECT $1, $2, $21::uuid, $22, $23, $24, $25 + bt.taken, $26 - bt.taken, $27, $28, $29, $30, $31, $32, $33 FROM bt WHERE $22::text IS NOT NULL
     RETURNING *
   )
   SELECT (SELECT to_jsonb(l) FROM l) AS line, (SELECT count(*) FROM h)::int AS settled, (SELECT taken FROM bt) AS bonus_taken,
          $35::bigint > 0 AND EXISTS (SELECT 1 FROM bonus_grants WHERE account_id = $1 AND remaining_cents > 0 AND expires_at <= $36) AS expired_left`,
);

export function ledgerReads(db: Queryable) {
  return {
    async listLines(accountId: string, mode: Mode, limit: number, beforeSeq: number | null, customerId: string | null): Promise<LedgerRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM ledger_entries WHERE account_id = $1 AND mode = $2 AND ($4::bigint IS NULL OR seq < $4)
            AND ($5::uuid IS NULL OR customer_id = $5) ORDER BY seq DESC LIMIT $3`,
        [accountId, mode, limit, beforeSeq, customerId],
      );
      return rows;
    },

    /** The top-up line of a payment (its payment intent), if it was credited. */
    async topUpLine(accountId: string, paymentReference: string): Promise<LedgerRow | null> {
      const { rows } = await db.query(`SELECT * FROM ledger_entries WHERE account_id = $1 AND type = 'top_up' AND payment_reference = $2`, [accountId, paymentReference]);
      return rows[0] ?? null;
    },

    /**
     * A page of the ledger, newest first, narrowed by customer, line type and period (`from`
     * inclusive, `to` exclusive), each line with its customer's name: the console's ledger and its CSV.
     */
    async listFiltered(f: LedgerFilter & { accountId: string; mode: Mode; limit: number; beforeSeq: number | null }): Promise<(LedgerRow & { customer_name: string | null })[]> {
      const { rows } = await db.query(
        `SELECT l.*, c.name AS customer_name
           FROM ledger_entries l LEFT JOIN customers c ON c.id = l.customer_id
          WHERE l.account_id = $1 AND l.mode = $2 AND ($3::bigint IS NULL OR l.seq < $3)
            AND ($4::uuid IS NULL OR l.customer_id = $4) AND ($5::text IS NULL OR l.type = $5)
            AND ($6::timestamptz IS NULL OR l.created_at >= $6) AND ($7::timestamptz IS NULL OR l.created_at < $7)
          ORDER BY l.seq DESC LIMIT $8`,
        [f.accountId, f.mode, f.beforeSeq, f.customerId, f.type, f.from, f.to, f.limit],
      );
      return rows;
    },
  };
}

/** What the console's ledger may be narrowed by (null: not narrowed). */
export interface LedgerFilter {
  customerId: string | null;
  type: string | null;
  from: Date | null;
  to: Date | null;
}

export function ledgerWrites(db: Queryable) {
  return {
    /** Writes a whole money change in one statement (see MoneyChange for the bonus split). */
    async apply(change: MoneyChange): Promise<AppliedChange> {
      const n = change.next;
      const c = change.customer;
      const l = change.line;
      const { rows } = await db.query(
        APPLY_CHANGE([
          n.account_id, n.mode, n.balance_cents, n.paid_cents, n.bonus_cents, n.reserved_cents, n.open_calls,
          n.spend_day, n.spend_day_cents, n.spend_month, n.spend_month_cents, n.minutes_month, n.minutes_used, n.low_balance_stage,
          c?.id ?? null, c?.reservedReleasedCents ?? 0, c?.callsEnded ?? 0, c?.spendCents ?? 0,
          change.holdCharge?.holdId ?? null, change.holdCharge?.chargedCents ?? null,
          l?.customer_id ?? null, l?.type ?? null, l?.cause ?? null, l?.amount_cents ?? null, l?.cash_cents ?? null, l?.bonus_cents ?? null,
          l?.balance_after_cents ?? null, l?.applied ?? null, l?.minutes ?? null, l?.reference ?? null, l?.payment_reference ?? null,
          l?.description ?? null, l?.created_at ?? null, change.now, change.bonusEligibleCents, change.realNow,
        ]),
      );
      // The caller locked the open hold, so it settles here; if it did not, nothing may be written.
      if (change.holdCharge && rows[0].settled !== 1) throw new Error(`hold ${change.holdCharge.holdId} was not open when its charge was written`);
      const line = rows[0].line;
      return {
        line: line ? { ...line, created_at: new Date(line.created_at) } : null,
        bonusTakenCents: Number(rows[0].bonus_taken),
        expiredBonusLeft: rows[0].expired_left,
      };
    },
  };
}
