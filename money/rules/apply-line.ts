import type { Mode } from '../../runtime/types.ts';
import { dayKey, monthKey, minutesUsedNow } from './pricing.ts';

/**
 * The ledger's arithmetic (spec: Pricing and balance rules): what one line does to an account's
 * money. Pure. The shapes here are the rules' own; the rows of db/money/ have the same fields,
 * so the writer hands them over as they are, and nothing under db/ imports the rules.
 */

export type LineType = 'usage' | 'top_up' | 'bonus' | 'refund' | 'minimum' | 'bonus_expired' | 'top_up_refund';

export interface LineInput {
  accountId: string;
  mode: Mode;
  customerId: string | null;
  type: LineType;
  /** What the line pays for or comes from: call, chat_message, number, caller_id, prospect, website_build, website_hosting, top_up, bonus, refund, monthly_minimum, bonus_expiry, bonus_forfeited, top_up_refund. */
  cause: string;
  /** Signed: negative is money out. */
  amountCents: number;
  description: string;
  reference?: string | null;
  paymentReference?: string | null;
  /** Call minutes this line bills (moves the month's tier position). */
  minutes?: number;
  now: Date;
}

/** The counters of a money row a line moves (period keys are YYYY-MM-DD text, null before any). */
export interface MoneyCounters {
  balance_cents: number;
  paid_cents: number;
  bonus_cents: number;
  spend_day: string | null;
  spend_day_cents: number;
  spend_month: string | null;
  spend_month_cents: number;
  minutes_month: string | null;
  minutes_used: number;
}

/** A ledger line as the rules make it, before it is stored (it then gets its id and seq). */
export interface LineDraft {
  account_id: string;
  mode: Mode;
  customer_id: string | null;
  type: LineType;
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

const COUNTS_AS_SPEND = new Set<LineType>(['usage', 'minimum']);

/**
 * The money row after `input`, the line to write and the customer spend it adds. Live lines move
 * balance, cash and bonus; test lines are priced (spend, minutes) but leave the balance alone. A
 * live charge is worked out as if cash paid it all: the money-change statement then moves what
 * unexpired bonus credit can pay from cash to bonus, under the row's lock (db/money/ledger.ts,
 * decisions.md "The bonus split is made by the money change itself").
 */
export function applyLine<R extends MoneyCounters>(row: R, input: LineInput): { next: R; line: LineDraft; spendCents: number } {
  const live = input.mode === 'live';
  const amount = input.amountCents;
  const bonusPart = live && (input.type === 'bonus_expired' || input.type === 'bonus') ? amount : 0;
  const cashPart = amount - bonusPart;
  const next: R = { ...row };
  if (live) {
    next.paid_cents = row.paid_cents + cashPart;
    next.bonus_cents = row.bonus_cents + bonusPart;
    next.balance_cents = row.balance_cents + amount;
  }
  const spendCents = COUNTS_AS_SPEND.has(input.type) && amount < 0 ? -amount : 0;
  if (spendCents > 0) {
    const day = dayKey(input.now);
    const month = monthKey(input.now);
    next.spend_day_cents = (row.spend_day === day ? row.spend_day_cents : 0) + spendCents;
    next.spend_day = day;
    next.spend_month_cents = (row.spend_month === month ? row.spend_month_cents : 0) + spendCents;
    next.spend_month = month;
  }
  if (input.minutes) {
    next.minutes_used = minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, input.now) + input.minutes;
    next.minutes_month = monthKey(input.now);
  }
  const line: LineDraft = {
    account_id: input.accountId,
    mode: input.mode,
    customer_id: input.customerId,
    type: input.type,
    cause: input.cause,
    amount_cents: amount,
    cash_cents: live ? cashPart : amount,
    bonus_cents: live ? bonusPart : 0,
    balance_after_cents: next.balance_cents,
    applied: live,
    minutes: input.minutes ?? null,
    reference: input.reference ?? null,
    payment_reference: input.paymentReference ?? null,
    description: input.description,
    created_at: input.now,
  };
  return { next, line, spendCents };
}
