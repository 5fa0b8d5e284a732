import type { Client } from '../../db/pool.ts';
import type { HoldRow } from '../../db/money/holds.ts';
import type { LedgerRow } from '../../db/money/ledger.ts';
import type { Mode } from '../../runtime/types.ts';
import type { RefusalReason } from '../rules/hold-rules.ts';

/** The money writer's words, shared by its parts and re-exported by money/writer.ts for its callers. */

/** A recurring charge of a customer's item (money/writer/recurring.ts). */
export interface RecurringCharge {
  accountId: string;
  mode: Mode;
  customerId: string;
  /** What recurs: the line's cause. */
  item: 'number' | 'caller_id' | 'website_hosting';
  /** The item's own id (a number's, a website's). */
  itemId: string;
  amountCents: number;
  /** The period paid for: [start, end), UTC days as YYYY-MM-DD. */
  periodStart: string;
  periodEnd: string;
  /** The ledger line's description (what the reseller reads on its statement). */
  description: string;
  now: Date;
}

/**
 * What became of a recurring charge: `charged` (the line written; in test mode priced with
 * `applied: false`), `already_charged` (the period was claimed before: nothing written), or
 * `insufficient_balance` (the live balance, less what running calls hold, cannot cover it:
 * nothing written, nothing claimed), or `awaiting_top_up` (the money is short but a working
 * automatic top-up was asked for: nothing written, nothing claimed; try again next round, no
 * countdown).
 */
export type RecurringChargeResult = { outcome: 'charged'; line: LedgerRow } | { outcome: 'already_charged' | 'insufficient_balance' | 'awaiting_top_up' };

/** What other rooms do when money moves, in the same transaction. */
export interface MoneyReactions {
  /**
   * The account's spendable live balance crossed one call's hold (either way): readiness's
   * `balance_loaded` flipped, so its customers are re-assessed (a top-up can make them ready).
   */
  spendableCrossedCallReserve(db: Client, accountId: string, now: Date): Promise<void>;
  /**
   * Money came into the live balance (a top-up): items whose renewal could not be paid are
   * charged now, in the same transaction (the account's money row is locked by then).
   */
  fundsAdded?(db: Client, accountId: string, now: Date): Promise<void>;
  /**
   * The live available balance fell under the automatic top-up's threshold (or a renewal found
   * the money short): the payments room records one automatic card payment to be charged outside
   * this transaction (none while one is open, after a failure less than a day old, or without a
   * saved card). True when a working automatic top-up will bring money (one is open now).
   */
  autoTopUpWanted?(db: Client, accountId: string, now: Date): Promise<boolean>;
}

export type StartCallResult = { ok: true; hold: HoldRow } | { ok: false; reason: RefusalReason };

export interface CallEnd {
  accountId: string;
  reference: string;
  durationSeconds: number;
  now: Date;
}

export interface EndCallResult {
  object: 'call_charge';
  reference: string;
  /** settled: the hold paid for the call; late: the hold had been released, so the call is billed on its own line. */
  outcome: 'settled' | 'late' | 'already_settled';
  minutes: number;
  charged_cents: number;
}
