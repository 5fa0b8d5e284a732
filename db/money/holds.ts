import { prepared, type Queryable } from '../pool.ts';
import type { Mode } from '../../runtime/types.ts';
import { MONEY_COLUMNS, type MoneyRow } from './balances.ts';
import { onClock, type TestClockScope } from '../test-clocks.ts';
import { priceMinutesSql, type Tariff } from './price-sql.ts';
import { CALL_COLUMNS, type CallRow } from '../calls.ts';

/**
 * Holds (`holds`): the price of a running call's longest length, taken at its start and settled
 * or released once. Reads are anyone's; the writes and the claims are money/writer.ts's alone.
 */

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

/** The month's call-minute position of money row `m` (0 once the month in `month` has begun). */
const POSITION_OF_M = (month: string) => `(CASE WHEN m.minutes_month = ${month}::date THEN m.minutes_used ELSE 0 END)`;

/**
 * The call-start statement, priced by `tariff`'s tiers. Built once per tariff: a named statement
 * is prepared once per connection, so a process prices with one tariff.
 */
/**
 * A named statement whose text depends on a tariff (its prices are written into the SQL), built
 * once per tariff: a named statement is prepared once per connection, so a process prices with
 * one tariff.
 */
export function preparedPerTariff(name: string, text: (tariff: Tariff) => string): (tariff: Tariff) => ReturnType<typeof prepared> {
  const built = new WeakMap<Tariff, ReturnType<typeof prepared>>();
  return (tariff) => {
    let statement = built.get(tariff);
    if (!statement) built.set(tariff, (statement = prepared(name, text(tariff))));
    return statement;
  };
}

const openHoldStatement = preparedPerTariff(
  'open_hold',
  (tariff) => `WITH locked AS (
     SELECT ${priceMinutesSql(tariff.tiers, POSITION_OF_M('$6'), String(tariff.maxCallMinutes))}::bigint AS amount
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
/** An open hold claimed for settlement, with its money row, both locked (`settleHold`, `lockCallAndClaimHold`). */
export interface ClaimedHold {
  hold: HoldRow;
  money: MoneyRow;
}

/**
 * A call's end takes its row lock and its open hold's claim in one statement: the call row first
 * (the materialized CTE runs before the join), then the hold and its money row, the order of
 * `calls.lock` followed by `settleHold`. The call's own hold is the one of its account whose
 * reference is its id. Explicit columns, so a column added to calls leaves the named statement's
 * row shape as it was (db/calls.ts CALL_COLUMNS).
 */
const LOCK_CALL_AND_CLAIM_HOLD = prepared(
  'call_lock_and_hold',
  `WITH c AS MATERIALIZED (
     SELECT ${CALL_COLUMNS.join(', ')} FROM calls WHERE id = $1 FOR NO KEY UPDATE
   )
   SELECT c.*, s.claimed_hold, s.claimed_money
     FROM c LEFT JOIN LATERAL (
       SELECT to_jsonb(h) AS claimed_hold, to_jsonb(m) AS claimed_money
         FROM holds h JOIN account_money m ON m.account_id = h.account_id AND m.mode = h.mode
        WHERE h.account_id = c.account_id AND h.reference = c.id::text AND h.status = 'open'
          FOR NO KEY UPDATE OF h, m
     ) s ON true`,
);

export function holdReads(db: Queryable) {
  return {
    async findHold(accountId: string, reference: string): Promise<HoldRow | null> {
      const { rows } = await db.query(`SELECT * FROM holds WHERE account_id = $1 AND reference = $2`, [accountId, reference]);
      return rows[0] ?? null;
    },

    /**
     * Everything `holdRefusal` decides on, read in one statement (to name why a hold was refused);
     * null when the customer is not the account's in that mode.
     */
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
           FROM account_money m JOIN accounts a ON a.id = m.account_id JOIN customers c ON c.id = $3 AND c.account_id = a.id AND c.mode = m.mode
          WHERE m.account_id = $1 AND m.mode = $2`,
        [accountId, mode, customerId, day, month],
      );
      return rows[0] ?? null;
    },
  };
}

export function holdWrites(db: Queryable) {
  return {
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
      /** Prices the hold: the longest call at the locked row's tier position. */
      tariff: Tariff;
    }): Promise<{ hold: HoldRow; money: Pick<MoneyRow, 'balance_cents' | 'reserved_cents' | 'low_balance_stage' | 'last_top_up_cents' | 'minutes_month' | 'minutes_used'> } | null> {
      const { rows } = await db.query(openHoldStatement(h.tariff)([h.accountId, h.mode, h.customerId, h.reference, h.day, h.month, h.now, h.expiresAt]));
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
    async settleHold(accountId: string, reference: string): Promise<ClaimedHold | null> {
      const { rows } = await db.query(SETTLE_HOLD([accountId, reference]));
      if (!rows[0]) return null;
      const { hold, ...money } = rows[0];
      return {
        hold: { ...hold, created_at: new Date(hold.created_at), expires_at: new Date(hold.expires_at), resolved_at: null },
        money,
      };
    },

    /**
     * Locks call `callId` and claims its open hold with the hold's money row (as `settleHold`
     * does), in one statement. Null if there is no such call; `claim` null if it has no open hold.
     */
    async lockCallAndClaimHold(callId: string): Promise<{ call: CallRow; claim: ClaimedHold | null } | null> {
      const { rows } = await db.query(LOCK_CALL_AND_CLAIM_HOLD([callId]));
      if (!rows[0]) return null;
      const { claimed_hold: hold, claimed_money: money, ...call } = rows[0];
      return {
        call: call as CallRow,
        claim: hold ? { hold: { ...hold, created_at: new Date(hold.created_at), expires_at: new Date(hold.expires_at), resolved_at: null }, money } : null,
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

    /** Claims up to `limit` holds past their expiry as released; other sweepers skip these rows. */
    async releaseExpired(now: Date, limit: number, clock: TestClockScope | null = null): Promise<HoldRow[]> {
      // The holds of customers on no test clock expire on `now`; those of a clock's customers on its time.
      const { rows } = await db.query(
        `UPDATE holds SET status = 'released', resolved_at = $1
          WHERE id IN (SELECT id FROM holds WHERE status = 'open' AND expires_at <= $4 AND ${onClock('holds.customer_id', '$3')}
                        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [now, limit, clock?.clockId ?? null, clock?.time ?? now],
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
  };
}
