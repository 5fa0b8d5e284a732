import { prepared, type Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';
import { MAX_CALL_MINUTES, priceMinutesSql } from '../actors/account/pricing.ts';

/** The money state of one account in one mode (see 002_money.sql). */
export interface MoneyRow {
  account_id: string;
  mode: Mode;
  balance_cents: number;
  paid_cents: number;
  bonus_cents: number;
  reserved_cents: number;
  open_calls: number;
  spend_day: string | null;
  spend_day_cents: number;
  spend_month: string | null;
  spend_month_cents: number;
  minutes_month: string | null;
  minutes_used: number;
  last_top_up_cents: number | null;
  low_balance_stage: string;
  auto_top_up_threshold_cents: number | null;
  auto_top_up_amount_cents: number | null;
}

export interface HoldRow {
  id: string;
  account_id: string;
  mode: Mode;
  customer_id: string;
  reference: string;
  amount_cents: number;
  status: 'open' | 'settled' | 'released';
  charged_cents: number | null;
  created_at: Date;
  expires_at: Date;
  resolved_at: Date | null;
}

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

/** Dates as YYYY-MM-DD text, so period keys compare as the strings the rules use. */
const MONEY_COLUMNS = `account_id, mode, balance_cents, paid_cents, bonus_cents, reserved_cents, open_calls,
  spend_day::text AS spend_day, spend_day_cents, spend_month::text AS spend_month, spend_month_cents,
  minutes_month::text AS minutes_month, minutes_used, last_top_up_cents, low_balance_stage,
  auto_top_up_threshold_cents, auto_top_up_amount_cents`;

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
  now: Date;
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
               FROM bonus_grants WHERE account_id = $1 AND remaining_cents > 0 AND expires_at > $34 AND $35::bigint > 0) r
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
          $35::bigint > 0 AND EXISTS (SELECT 1 FROM bonus_grants WHERE account_id = $1 AND remaining_cents > 0 AND expires_at <= $34) AS expired_left`,
);

/** The month's call-minute position of money row `m` (0 once the month in `month` has begun). */
const POSITION_OF_M = (month: string) => `(CASE WHEN m.minutes_month = ${month}::date THEN m.minutes_used ELSE 0 END)`;

const OPEN_HOLD = prepared(
  'open_hold',
  `WITH locked AS (
     SELECT ${priceMinutesSql(POSITION_OF_M('$6'), String(MAX_CALL_MINUTES))}::bigint AS amount
       FROM account_money m WHERE account_id = $1 AND mode = $2 FOR NO KEY UPDATE
   ), cust AS (
     SELECT reserved_cents, open_calls, daily_spend_cap_cents, monthly_spend_cap_cents, max_concurrent_calls,
            CASE WHEN spend_day = $5::date THEN spend_day_cents ELSE 0 END AS day_cents,
            CASE WHEN spend_month = $6::date THEN spend_month_cents ELSE 0 END AS month_cents
       FROM customers WHERE id = $3 AND account_id = $1 AND mode = $2 AND EXISTS (SELECT 1 FROM locked) FOR NO KEY UPDATE
   ), money AS (
     UPDATE account_money m SET reserved_cents = m.reserved_cents + l.amount, open_calls = m.open_calls + 1
       FROM accounts a, cust c, locked l
      WHERE m.account_id = $1 AND m.mode = $2 AND a.id = m.account_id
        AND ($2 = 'test' OR m.balance_cents - m.reserved_cents >= l.amount)
        AND (a.daily_spend_cap_cents IS NULL
             OR (CASE WHEN m.spend_day = $5::date THEN m.spend_day_cents ELSE 0 END) + m.reserved_cents + l.amount <= a.daily_spend_cap_cents)
        AND (a.monthly_spend_cap_cents IS NULL
             OR (CASE WHEN m.spend_month = $6::date THEN m.spend_month_cents ELSE 0 END) + m.reserved_cents + l.amount <= a.monthly_spend_cap_cents)
        AND (c.daily_spend_cap_cents IS NULL OR c.day_cents + c.reserved_cents + l.amount <= c.daily_spend_cap_cents)
        AND (c.monthly_spend_cap_cents IS NULL OR c.month_cents + c.reserved_cents + l.amount <= c.monthly_spend_cap_cents)
        AND m.open_calls < a.concurrent_calls
        AND (c.max_concurrent_calls IS NULL OR c.open_calls < c.max_concurrent_calls)
     RETURNING m.*
   ), cust_update AS (
     UPDATE customers SET reserved_cents = reserved_cents + (SELECT amount FROM locked), open_calls = open_calls + 1
      WHERE id = $3 AND EXISTS (SELECT 1 FROM money)
   ), hold AS (
     INSERT INTO holds (account_id, mode, customer_id, reference, amount_cents, created_at, expires_at)
     SELECT $1, $2, $3, $4, l.amount, $7, $8 FROM money, locked l
     RETURNING *
   )
   SELECT to_jsonb(hold) AS hold,
          (SELECT jsonb_build_object('balance_cents', balance_cents, 'reserved_cents', reserved_cents,
                  'low_balance_stage', low_balance_stage, 'last_top_up_cents', last_top_up_cents,
                  'minutes_month', minutes_month::text, 'minutes_used', minutes_used) FROM money) AS money
     FROM hold`,
);

/** MONEY_COLUMNS qualified with `m.`. */
const MONEY_COLUMNS_OF_M = MONEY_COLUMNS.replace(/(^|,\s*)([a-z_]+)/g, (_all, sep, col) => `${sep}m.${col}`);

const SETTLE_HOLD = prepared(
  'settle_hold',
  `SELECT to_jsonb(h) AS hold, ${MONEY_COLUMNS_OF_M}
     FROM holds h JOIN account_money m ON m.account_id = h.account_id AND m.mode = h.mode
    WHERE h.account_id = $1 AND h.reference = $2 AND h.status = 'open'
      FOR NO KEY UPDATE OF h, m`,
);
const GET_MONEY = prepared('get_money', `SELECT ${MONEY_COLUMNS} FROM account_money WHERE account_id = $1 AND mode = $2`);

const LOCK_MONEY = prepared('lock_money', `SELECT ${MONEY_COLUMNS} FROM account_money WHERE account_id = $1 AND mode = $2 FOR NO KEY UPDATE`);

export function createMoneyRepository(db: Queryable) {
  return {
    /** Both modes' money rows of a new account. */
    async createRows(accountId: string): Promise<void> {
      await db.query(`INSERT INTO account_money (account_id, mode) VALUES ($1, 'test'), ($1, 'live') ON CONFLICT DO NOTHING`, [accountId]);
    },

    async get(accountId: string, mode: Mode): Promise<MoneyRow | null> {
      const { rows } = await db.query(GET_MONEY([accountId, mode]));
      return rows[0] ?? null;
    },

    /** Locks the row for the rest of the transaction: every balance change of the account waits here. */
    async lock(accountId: string, mode: Mode): Promise<MoneyRow | null> {
      const { rows } = await db.query(LOCK_MONEY([accountId, mode]));
      return rows[0] ?? null;
    },

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
          l?.description ?? null, l?.created_at ?? null, change.now, change.bonusEligibleCents,
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

    async update(accountId: string, mode: Mode, fields: Partial<MoneyRow>): Promise<void> {
      const entries = Object.entries(fields);
      if (entries.length === 0) return;
      const sets = entries.map(([k], i) => `${k} = $${i + 3}`).join(', ');
      await db.query(`UPDATE account_money SET ${sets} WHERE account_id = $1 AND mode = $2`, [accountId, mode, ...entries.map(([, v]) => v)]);
    },

    /**
     * Takes a hold if, and only if, every condition holds at this instant: one statement, so any
     * number of processes starting calls on one account stay exact. It locks the money row, then
     * the customer row (the lock order of every money path), prices the hold at the locked row's
     * minute position (the longest call at the month's tier), then changes the money row only
     * where balance, caps and concurrency allow; the customer's counters and the hold follow only
     * if it did.
     */
    async openHold(h: {
      accountId: string;
      mode: Mode;
      customerId: string;
      reference: string;
      day: string;
      month: string;
      now: Date;
      expiresAt: Date;
    }): Promise<{ hold: HoldRow; money: Pick<MoneyRow, 'balance_cents' | 'reserved_cents' | 'low_balance_stage' | 'last_top_up_cents' | 'minutes_month' | 'minutes_used'> } | null> {
      const { rows } = await db.query(OPEN_HOLD([h.accountId, h.mode, h.customerId, h.reference, h.day, h.month, h.now, h.expiresAt]));
      if (!rows[0]) return null;
      const hold = rows[0].hold;
      return {
        hold: { ...hold, created_at: new Date(hold.created_at), expires_at: new Date(hold.expires_at), resolved_at: null },
        money: rows[0].money,
      };
    },

    /**
     * Claims an open hold for settlement: locks it and then its money row (the lock order of every
     * money path), so the sweeper skips it and a second end report waits and then finds it
     * settled. Null if the hold was not open. The money change resolves the hold.
     */
    async settleHold(accountId: string, reference: string): Promise<{ hold: HoldRow; money: MoneyRow } | null> {
      const { rows } = await db.query(SETTLE_HOLD([accountId, reference]));
      if (!rows[0]) return null;
      const { hold, ...money } = rows[0];
      return {
        hold: { ...hold, created_at: new Date(hold.created_at), expires_at: new Date(hold.expires_at), resolved_at: null },
        money,
      };
    },

    /** Records the late charge of a released hold, once; false if another end report did it first. */
    async claimLateCharge(holdId: string, chargedCents: number): Promise<boolean> {
      const { rowCount } = await db.query(
        `UPDATE holds SET charged_cents = $2 WHERE id = $1 AND status = 'released' AND charged_cents IS NULL`,
        [holdId, chargedCents],
      );
      return rowCount === 1;
    },

    async findHold(accountId: string, reference: string): Promise<HoldRow | null> {
      const { rows } = await db.query(`SELECT * FROM holds WHERE account_id = $1 AND reference = $2`, [accountId, reference]);
      return rows[0] ?? null;
    },

    /** Claims up to `limit` holds past their expiry as released; other sweepers skip these rows. */
    async releaseExpired(now: Date, limit: number): Promise<HoldRow[]> {
      const { rows } = await db.query(
        `UPDATE holds SET status = 'released', resolved_at = $1
          WHERE id IN (SELECT id FROM holds WHERE status = 'open' AND expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [now, limit],
      );
      return rows;
    },

    /** Gives a resolved hold's money and call slot back, on the account and on the customer. */
    async returnHold(hold: HoldRow): Promise<void> {
      await db.query(
        `UPDATE account_money SET reserved_cents = reserved_cents - $3, open_calls = open_calls - 1 WHERE account_id = $1 AND mode = $2`,
        [hold.account_id, hold.mode, hold.amount_cents],
      );
      await db.query(`UPDATE customers SET reserved_cents = reserved_cents - $2, open_calls = open_calls - 1 WHERE id = $1`, [
        hold.customer_id,
        hold.amount_cents,
      ]);
    },

    async listLines(accountId: string, mode: Mode, limit: number, beforeSeq: number | null, customerId: string | null): Promise<LedgerRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM ledger_entries WHERE account_id = $1 AND mode = $2 AND ($4::bigint IS NULL OR seq < $4)
            AND ($5::uuid IS NULL OR customer_id = $5) ORDER BY seq DESC LIMIT $3`,
        [accountId, mode, limit, beforeSeq, customerId],
      );
      return rows;
    },

    // — bonus credit —
    async insertGrant(accountId: string, cents: number, now: Date, expiresAt: Date): Promise<void> {
      await db.query(`INSERT INTO bonus_grants (account_id, granted_cents, remaining_cents, granted_at, expires_at) VALUES ($1, $2, $2, $3, $4)`, [
        accountId,
        cents,
        now,
        expiresAt,
      ]);
    },

    /** Writes a grant off (its expiry). */
    async clearGrant(id: string): Promise<void> {
      await db.query(`UPDATE bonus_grants SET remaining_cents = 0 WHERE id = $1`, [id]);
    },

    /** One account's grants past expiry with credit left, locked (the caller holds its money row). */
    async lockExpiredGrantsOf(accountId: string, now: Date): Promise<{ id: string; account_id: string; remaining_cents: number }[]> {
      const { rows } = await db.query(
        `SELECT id, account_id, remaining_cents FROM bonus_grants WHERE account_id = $1 AND remaining_cents > 0 AND expires_at <= $2 FOR NO KEY UPDATE`,
        [accountId, now],
      );
      return rows;
    },

    /** Accounts with grants past expiry and credit left (not locked: the write-off locks in money-row order). */
    async accountsWithExpiredBonus(now: Date, limit: number): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT DISTINCT account_id FROM bonus_grants WHERE remaining_cents > 0 AND expires_at <= $1 LIMIT $2`,
        [now, limit],
      );
      return rows.map((r) => r.account_id);
    },

    async earliestBonusExpiry(accountId: string, now: Date): Promise<Date | null> {
      const { rows } = await db.query(
        `SELECT min(expires_at) AS at FROM bonus_grants WHERE account_id = $1 AND remaining_cents > 0 AND expires_at > $2`,
        [accountId, now],
      );
      return rows[0]?.at ?? null;
    },

    /** Everything `holdRefusal` decides on, read in one statement (to name why a hold was refused). */
    async holdFacts(accountId: string, mode: Mode, customerId: string, day: string, month: string) {
      const { rows } = await db.query(
        `SELECT m.balance_cents - m.reserved_cents AS available_cents, m.reserved_cents, m.open_calls,
                CASE WHEN m.spend_day = $4::date THEN m.spend_day_cents ELSE 0 END AS day_cents,
                CASE WHEN m.spend_month = $5::date THEN m.spend_month_cents ELSE 0 END AS month_cents,
                a.concurrent_calls, a.daily_spend_cap_cents, a.monthly_spend_cap_cents,
                c.reserved_cents AS c_reserved_cents, c.open_calls AS c_open_calls, c.max_concurrent_calls,
                CASE WHEN c.spend_day = $4::date THEN c.spend_day_cents ELSE 0 END AS c_day_cents,
                CASE WHEN c.spend_month = $5::date THEN c.spend_month_cents ELSE 0 END AS c_month_cents,
                c.daily_spend_cap_cents AS c_daily_cap, c.monthly_spend_cap_cents AS c_monthly_cap
           FROM account_money m JOIN accounts a ON a.id = m.account_id JOIN customers c ON c.id = $3 AND c.account_id = a.id
          WHERE m.account_id = $1 AND m.mode = $2`,
        [accountId, mode, customerId, day, month],
      );
      return rows[0] ?? null;
    },

    // — activity log —
    async logActivity(a: { accountId: string; mode: Mode; customerId: string | null; kind: string; reason: string | null; reference: string | null; detail?: unknown; now: Date }) {
      await db.query(
        `INSERT INTO activity_log (account_id, mode, customer_id, kind, reason, reference, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [a.accountId, a.mode, a.customerId, a.kind, a.reason, a.reference, a.detail === undefined ? null : JSON.stringify(a.detail), a.now],
      );
    },

    async listActivity(accountId: string, limit: number) {
      const { rows } = await db.query(`SELECT * FROM activity_log WHERE account_id = $1 ORDER BY seq DESC LIMIT $2`, [accountId, limit]);
      return rows as { id: string; mode: Mode; customer_id: string | null; kind: string; reason: string | null; reference: string | null; detail: unknown; created_at: Date }[];
    },

    // — monthly minimum —
    /** Live customers taken live before `monthStart` and what each spent in [monthStart, nextMonthStart). */
    async minimumCandidates(monthStart: Date, nextMonthStart: Date) {
      const { rows } = await db.query(
        `SELECT c.id, c.account_id,
                COALESCE((SELECT sum(-l.amount_cents) FROM ledger_entries l
                           WHERE l.customer_id = c.id AND l.type = 'usage' AND l.created_at >= $1 AND l.created_at < $2), 0)::bigint AS spent_cents
           FROM customers c
          WHERE c.mode = 'live' AND c.first_ready_at IS NOT NULL AND c.first_ready_at < $1
            AND NOT EXISTS (SELECT 1 FROM monthly_minimums mm WHERE mm.customer_id = c.id AND mm.month = $1::date)`,
        [monthStart, nextMonthStart],
      );
      return rows as { id: string; account_id: string; spent_cents: number }[];
    },

    /** When the first live customer was taken live (null while none has been). */
    async earliestTakenLive(): Promise<Date | null> {
      const { rows } = await db.query(`SELECT min(first_ready_at) AS at FROM customers WHERE mode = 'live'`);
      return rows[0]?.at ?? null;
    },

    /** Records the month's minimum for a customer; false if it was already recorded (by any process). */
    async claimMinimum(customerId: string, monthStart: Date, cents: number): Promise<boolean> {
      const { rowCount } = await db.query(
        `INSERT INTO monthly_minimums (customer_id, month, charged_cents) VALUES ($1, $2::date, $3) ON CONFLICT DO NOTHING`,
        [customerId, monthStart, cents],
      );
      return rowCount === 1;
    },
  };
}
