import type { Mode } from '../../runtime/types.ts';

/**
 * Whether a call may start, and if not, why (spec: call-start refusals). The database enforces
 * the same conditions in one conditional statement (db/money/holds.ts `openHold`); this pure function
 * names the reason when that statement refuses, and the two are tested against each other.
 */

export type RefusalReason =
  | 'insufficient_balance'
  | 'spend_cap_daily'
  | 'spend_cap_monthly'
  | 'customer_spend_cap_daily'
  | 'customer_spend_cap_monthly'
  | 'concurrency_limit';

/** The refusals a changed cap or concurrency ceiling may lift: their requests are woken when one changes. */
export const CAP_WAITS: readonly RefusalReason[] = [
  'spend_cap_daily',
  'spend_cap_monthly',
  'customer_spend_cap_daily',
  'customer_spend_cap_monthly',
  'concurrency_limit',
];

export interface HoldFacts {
  mode: Mode;
  /** The hold being asked for. */
  amountCents: number;
  /** Live: balance − reserved. Ignored in test mode (priced, never charged). */
  availableCents: number;
  account: {
    reservedCents: number;
    openCalls: number;
    concurrentCalls: number;
    daySpendCents: number;
    monthSpendCents: number;
    dailyCapCents: number | null;
    monthlyCapCents: number | null;
  };
  customer: {
    reservedCents: number;
    openCalls: number;
    maxConcurrentCalls: number | null;
    daySpendCents: number;
    monthSpendCents: number;
    dailyCapCents: number | null;
    monthlyCapCents: number | null;
  };
}

const within = (spent: number, cap: number | null) => cap === null || spent <= cap;

/** Null when the hold may be taken; otherwise the first reason, in the spec's order. */
export function holdRefusal(f: HoldFacts): RefusalReason | null {
  const a = f.account;
  const c = f.customer;
  if (f.mode === 'live' && f.availableCents < f.amountCents) return 'insufficient_balance';
  // Caps count settled spend plus every running call's hold plus this one.
  if (!within(a.daySpendCents + a.reservedCents + f.amountCents, a.dailyCapCents)) return 'spend_cap_daily';
  if (!within(a.monthSpendCents + a.reservedCents + f.amountCents, a.monthlyCapCents)) return 'spend_cap_monthly';
  if (!within(c.daySpendCents + c.reservedCents + f.amountCents, c.dailyCapCents)) return 'customer_spend_cap_daily';
  if (!within(c.monthSpendCents + c.reservedCents + f.amountCents, c.monthlyCapCents)) return 'customer_spend_cap_monthly';
  // The customer's own ceiling never raises the account's.
  if (a.openCalls >= a.concurrentCalls) return 'concurrency_limit';
  if (c.maxConcurrentCalls !== null && c.openCalls >= c.maxConcurrentCalls) return 'concurrency_limit';
  return null;
}
