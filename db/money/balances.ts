import { prepared, type Queryable } from '../pool.ts';
import type { Mode } from '../../runtime/types.ts';

/**
 * The money rows (`account_money`): one per account and mode. Reads are anyone's; the writes and
 * the lock belong to money/writer.ts alone (test/unit/money-writer.test.ts checks it).
 */

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

/** Dates as YYYY-MM-DD text, so period keys compare as the strings the rules use. */
export const MONEY_COLUMNS = `account_id, mode, balance_cents, paid_cents, bonus_cents, reserved_cents, open_calls,
  spend_day::text AS spend_day, spend_day_cents, spend_month::text AS spend_month, spend_month_cents,
  minutes_month::text AS minutes_month, minutes_used, last_top_up_cents, low_balance_stage,
  auto_top_up_threshold_cents, auto_top_up_amount_cents`;

const GET_MONEY = prepared('get_money', `SELECT ${MONEY_COLUMNS} FROM account_money WHERE account_id = $1 AND mode = $2`);

const LOCK_MONEY = prepared('lock_money', `SELECT ${MONEY_COLUMNS} FROM account_money WHERE account_id = $1 AND mode = $2 FOR NO KEY UPDATE`);

export function balanceReads(db: Queryable) {
  return {
    async get(accountId: string, mode: Mode): Promise<MoneyRow | null> {
      const { rows } = await db.query(GET_MONEY([accountId, mode]));
      return rows[0] ?? null;
    },
  };
}

export function balanceWrites(db: Queryable) {
  return {
    /** Both modes' money rows of a new account. */
    async createRows(accountId: string): Promise<void> {
      await db.query(`INSERT INTO account_money (account_id, mode) VALUES ($1, 'test'), ($1, 'live') ON CONFLICT DO NOTHING`, [accountId]);
    },

    /** Locks the row for the rest of the transaction: every balance change of the account waits here. */
    async lock(accountId: string, mode: Mode): Promise<MoneyRow | null> {
      const { rows } = await db.query(LOCK_MONEY([accountId, mode]));
      return rows[0] ?? null;
    },

    async update(accountId: string, mode: Mode, fields: Partial<MoneyRow>): Promise<void> {
      const entries = Object.entries(fields);
      if (entries.length === 0) return;
      const sets = entries.map(([k], i) => `${k} = $${i + 3}`).join(', ');
      await db.query(`UPDATE account_money SET ${sets} WHERE account_id = $1 AND mode = $2`, [accountId, mode, ...entries.map(([, v]) => v)]);
    },
  };
}
