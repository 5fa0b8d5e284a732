import crypto from 'node:crypto';
import type { Client } from '../../db/pool.ts';
import { createMoneyRepository, type LedgerRow, type MoneyRow, type NewLedgerLine } from '../../db/money.ts';
import { recordEvent } from '../../db/events.ts';
import { createCallRepository } from '../../db/calls.ts';
import type { Mode } from '../../runtime/types.ts';
import { BONUS_LIFETIME_MONTHS, callReserveCents, dayKey, monthKey, minutesUsedNow, topUpBonusCents } from './pricing.ts';
import { refreshReadiness } from '../customer/readiness-check.ts';
import { crossedStages, lowBalanceStage, type LowBalanceStage } from './low-balance.ts';
import { buildBalance } from './balance-view.ts';

/**
 * The ledger: the one place money moves. `postLine` locks the account's money row, works out the
 * whole change with the pure `applyLine`, and writes it (money row, customer spend, line, and a
 * settled hold's return) in one statement, in the caller's transaction. Low-balance warnings and
 * automatic top-up follow from the new values.
 */

export type LineType = 'usage' | 'top_up' | 'bonus' | 'refund' | 'minimum' | 'bonus_expired';

export interface LineInput {
  accountId: string;
  mode: Mode;
  customerId: string | null;
  type: LineType;
  /** What the line pays for or comes from: call, chat_message, number, caller_id, prospect, website_build, website_hosting, top_up, bonus, refund, monthly_minimum, bonus_expiry. */
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

const COUNTS_AS_SPEND = new Set<LineType>(['usage', 'minimum']);

/**
 * Pure: the money row after `input`, the line to write and the customer spend it adds. Live lines
 * move balance, cash and bonus (`bonusTakenCents` of a charge came from bonus credit); test lines
 * are priced (spend, minutes) but leave the balance alone.
 */
export function applyLine(row: MoneyRow, input: LineInput, bonusTakenCents: number): { next: MoneyRow; line: NewLedgerLine; spendCents: number } {
  const live = input.mode === 'live';
  const amount = input.amountCents;
  let bonusPart = 0;
  if (live && input.type === 'bonus_expired') bonusPart = amount;
  else if (live && input.type === 'bonus') bonusPart = amount;
  else if (live && amount < 0) bonusPart = -bonusTakenCents;
  const cashPart = amount - bonusPart;
  const next: MoneyRow = { ...row };
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
  const line: NewLedgerLine = {
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

/** A settled hold whose money and call slot go back in the same write as its charge. */
export interface ReturnedHold {
  holdId: string;
  customerId: string;
  amountCents: number;
  chargedCents: number;
}

/**
 * Applies one line (or, with `line` null, only a hold's return) on a row already locked by the
 * caller or locked here. Returns the line written, if any.
 */
export async function postLine(
  client: Client,
  input: LineInput,
  opts: { row?: MoneyRow; hold?: ReturnedHold; noLine?: boolean } = {},
): Promise<LedgerRow | null> {
  const money = createMoneyRepository(client);
  const row = opts.row ?? (await money.lock(input.accountId, input.mode));
  if (!row) throw new Error(`no money row for account ${input.accountId} (${input.mode})`);
  const live = input.mode === 'live';
  const charge = input.amountCents < 0 && input.type !== 'bonus_expired' ? -input.amountCents : 0;
  // The line is worked out as if cash paid it all; the money change itself then pays what it can
  // from unexpired bonus credit, earliest expiry first (bonus before cash: see MoneyChange).
  const { next, line, spendCents } = opts.noLine ? { next: { ...row }, line: null, spendCents: 0 } : applyLine(row, input, 0);
  if (opts.hold) {
    next.reserved_cents -= opts.hold.amountCents;
    next.open_calls -= 1;
  }
  const before = row.low_balance_stage as LowBalanceStage;
  if (live) next.low_balance_stage = stageOf(next, input.now);
  const customerId = opts.hold?.customerId ?? input.customerId;
  const written = await money.apply({
    next,
    customer: customerId
      ? { id: customerId, reservedReleasedCents: opts.hold?.amountCents ?? 0, callsEnded: opts.hold ? 1 : 0, spendCents }
      : null,
    holdCharge: opts.hold ? { holdId: opts.hold.holdId, chargedCents: opts.hold.chargedCents } : null,
    line,
    bonusEligibleCents: live && line && row.bonus_cents > 0 ? charge : 0,
    now: input.now,
  });
  // Expired credit found on the way is written off right after this line.
  if (written.expiredBonusLeft) await writeOffExpiredBonus(client, input.accountId, input.now);
  if (live) {
    await recordLowBalance(client, input.accountId, before, next.low_balance_stage as LowBalanceStage, input.now);
    await balanceMoved(client, input.accountId, row.balance_cents - row.reserved_cents, next, input.now);
    const available = next.balance_cents - next.reserved_cents;
    if (charge > 0 && next.auto_top_up_threshold_cents !== null && next.auto_top_up_amount_cents !== null && available < next.auto_top_up_threshold_cents) {
      await topUp(client, {
        accountId: input.accountId,
        amountCents: next.auto_top_up_amount_cents,
        paymentReference: `auto_${crypto.randomUUID()}`,
        description: 'Automatic top-up (card)',
        now: input.now,
      });
    }
  }
  return written.line;
}

/** The low-balance stage of a money row at `now` (the call reserve at the month's tier position). */
function stageOf(row: Pick<MoneyRow, 'balance_cents' | 'reserved_cents' | 'last_top_up_cents' | 'minutes_month' | 'minutes_used'>, now: Date): LowBalanceStage {
  const reserve = callReserveCents(minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, now));
  return lowBalanceStage(row.balance_cents - row.reserved_cents, row.last_top_up_cents, reserve);
}

/**
 * Readiness's `balance_loaded` flips where the spendable balance crosses one call's reserve:
 * then the account's customers are re-assessed (a top-up can make them ready: customer.ready).
 */
export async function balanceMoved(
  client: Client,
  accountId: string,
  availableBefore: number,
  after: Pick<MoneyRow, 'balance_cents' | 'reserved_cents' | 'minutes_month' | 'minutes_used'>,
  now: Date,
): Promise<void> {
  const reserve = callReserveCents(minutesUsedNow({ minutesMonth: after.minutes_month, minutesUsed: after.minutes_used }, now));
  const availableAfter = after.balance_cents - after.reserved_cents;
  if (availableBefore >= reserve !== availableAfter >= reserve) await refreshReadiness(client, { accountId }, now);
}

/** Writes off what is left of an expired grant: the grant emptied and a `bonus_expired` line. */
async function writeOffGrant(client: Client, grant: { id: string; account_id: string; remaining_cents: number }, now: Date): Promise<void> {
  await createMoneyRepository(client).clearGrant(grant.id);
  await postLine(client, {
    accountId: grant.account_id,
    mode: 'live',
    customerId: null,
    type: 'bonus_expired',
    cause: 'bonus_expiry',
    amountCents: -grant.remaining_cents,
    reference: grant.id,
    description: 'Bonus credit expired (twelve months after grant)',
    now,
  });
}

/** Writes off an account's expired bonus grants; returns how many. The caller holds the account's money row lock. */
export async function writeOffExpiredBonus(client: Client, accountId: string, now: Date): Promise<number> {
  const grants = await createMoneyRepository(client).lockExpiredGrantsOf(accountId, now);
  for (const grant of grants) await writeOffGrant(client, grant, now);
  return grants.length;
}

/** One `balance.low` per threshold crossed downwards between two stages (the stage itself is already written). */
async function recordLowBalance(client: Client, accountId: string, from: LowBalanceStage, to: LowBalanceStage, now: Date): Promise<void> {
  const crossed = crossedStages(from, to);
  if (crossed.length === 0) return;
  const balance = await buildBalance(client, accountId, 'live', now);
  for (const stage of crossed) {
    await recordEvent(client, { accountId, mode: 'live', type: 'balance.low', data: { ...balance, low_balance: stage }, now });
  }
}

/** Re-evaluates the low-balance stage after a change made outside postLine (a hold taken). */
export async function checkLowBalance(client: Client, accountId: string, now: Date): Promise<void> {
  const row = await createMoneyRepository(client).lock(accountId, 'live');
  if (!row) return;
  const stage = stageOf(row, now);
  if (stage === row.low_balance_stage) return;
  await createMoneyRepository(client).update(accountId, 'live', { low_balance_stage: stage });
  await recordLowBalance(client, accountId, row.low_balance_stage as LowBalanceStage, stage, now);
}

/** The console's card charge: a top-up line with a payment reference, and its bonus credit. */
export async function topUp(
  client: Client,
  t: { accountId: string; amountCents: number; paymentReference: string; description: string; now: Date },
): Promise<LedgerRow[]> {
  const money = createMoneyRepository(client);
  const bonus = topUpBonusCents(t.amountCents);
  const row = await money.lock(t.accountId, 'live');
  if (!row) throw new Error(`no money row for account ${t.accountId}`);
  // The last top-up (with its bonus) is the reference of the low-balance warnings.
  const top = await postLine(
    client,
    { accountId: t.accountId, mode: 'live', customerId: null, type: 'top_up', cause: 'top_up', amountCents: t.amountCents, paymentReference: t.paymentReference, description: t.description, now: t.now },
    { row: { ...row, last_top_up_cents: t.amountCents + bonus } },
  );
  await money.update(t.accountId, 'live', { last_top_up_cents: t.amountCents + bonus });
  // Requests held back for money try again at once rather than at their next retry.
  await createCallRepository(client).wakeWaiting({ accountId: t.accountId, mode: 'live', reasons: ['insufficient_balance'], now: t.now });
  const lines = [top!];
  if (bonus > 0) {
    const expiresAt = new Date(t.now);
    expiresAt.setUTCMonth(expiresAt.getUTCMonth() + BONUS_LIFETIME_MONTHS);
    await money.insertGrant(t.accountId, bonus, t.now, expiresAt);
    const bonusLine = await postLine(client, {
      accountId: t.accountId,
      mode: 'live',
      customerId: null,
      type: 'bonus',
      cause: 'bonus',
      amountCents: bonus,
      reference: top!.id,
      description: `Bonus credit on a top-up of ${(t.amountCents / 100).toFixed(2)} USD (expires ${dayKey(expiresAt)}, not refundable)`,
      now: t.now,
    });
    lines.push(bonusLine!);
  }
  return lines;
}
