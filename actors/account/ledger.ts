import crypto from 'node:crypto';
import type { Client } from '../../db/pool.ts';
import { createMoneyRepository, type LedgerRow, type MoneyRow } from '../../db/money.ts';
import { recordEvent } from '../../db/events.ts';
import type { Mode } from '../../runtime/types.ts';
import { BONUS_LIFETIME_MONTHS, dayKey, monthKey, minutesUsedNow, topUpBonusCents } from './pricing.ts';
import { crossedStages, lowBalanceStage, type LowBalanceStage } from './low-balance.ts';
import { buildBalance } from './balance-view.ts';

/**
 * The ledger: the one place money moves. Every line goes through `postLine`, which locks the
 * account's money row, splits charges between bonus credit and cash, moves the balance, counts
 * spend and minutes, writes the immutable line, and raises low-balance warnings, all in the
 * caller's transaction.
 */

export type LineType = 'usage' | 'top_up' | 'bonus' | 'refund' | 'minimum' | 'bonus_expired';
/** What a line pays for or comes from (usage lines: call, chat_message, number, caller_id, prospect, website_build, website_hosting). */
export type LineCause = string;

export interface LineInput {
  accountId: string;
  mode: Mode;
  customerId: string | null;
  type: LineType;
  cause: LineCause;
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

/** Applies one line. Test-mode lines are priced and recorded but never move the balance. */
export async function postLine(client: Client, input: LineInput): Promise<LedgerRow> {
  const money = createMoneyRepository(client);
  const row = await money.lock(input.accountId, input.mode);
  if (!row) throw new Error(`no money row for account ${input.accountId} (${input.mode})`);
  const { now, amountCents } = input;
  const live = input.mode === 'live';

  let bonusPart = 0;
  if (live && amountCents < 0) {
    bonusPart = input.type === 'bonus_expired' ? amountCents : -(await spendBonus(client, input.accountId, -amountCents, now));
  } else if (live && input.type === 'bonus') {
    bonusPart = amountCents;
  }
  const cashPart = live ? amountCents - bonusPart : amountCents;
  const fields: Partial<MoneyRow> = {};
  if (live) {
    fields.paid_cents = row.paid_cents + cashPart;
    fields.bonus_cents = row.bonus_cents + bonusPart;
    fields.balance_cents = row.balance_cents + amountCents;
  }
  const day = dayKey(now);
  const month = monthKey(now);
  if (COUNTS_AS_SPEND.has(input.type) && amountCents < 0) {
    fields.spend_day_cents = (row.spend_day === day ? row.spend_day_cents : 0) - amountCents;
    fields.spend_day = day;
    fields.spend_month_cents = (row.spend_month === month ? row.spend_month_cents : 0) - amountCents;
    fields.spend_month = month;
    if (input.customerId) await money.addCustomerSpend(input.customerId, -amountCents, day, month);
  }
  if (input.minutes) {
    fields.minutes_used = minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, now) + input.minutes;
    fields.minutes_month = month;
  }
  await money.update(input.accountId, input.mode, fields);
  const line = await money.insertLine({
    account_id: input.accountId,
    mode: input.mode,
    customer_id: input.customerId,
    type: input.type,
    cause: input.cause,
    amount_cents: amountCents,
    cash_cents: cashPart,
    bonus_cents: live ? bonusPart : 0,
    balance_after_cents: live ? row.balance_cents + amountCents : row.balance_cents,
    applied: live,
    minutes: input.minutes ?? null,
    reference: input.reference ?? null,
    payment_reference: input.paymentReference ?? null,
    description: input.description,
    created_at: now,
  });
  if (live) {
    await checkLowBalance(client, input.accountId, now);
    if (amountCents < 0) await maybeAutoTopUp(client, input.accountId, now);
  }
  return line;
}

/** Takes up to `cents` from unexpired bonus grants, earliest expiry first; returns what it took. */
async function spendBonus(client: Client, accountId: string, cents: number, now: Date): Promise<number> {
  const money = createMoneyRepository(client);
  let left = cents;
  for (const grant of await money.lockSpendableGrants(accountId, now)) {
    if (left === 0) break;
    const take = Math.min(grant.remaining_cents, left);
    await money.setGrantRemaining(grant.id, grant.remaining_cents - take);
    left -= take;
  }
  return cents - left;
}

/**
 * Compares the spendable balance with the last top-up and records one `balance.low` per
 * threshold crossed downwards since the last look. A rise only moves the stage back.
 */
export async function checkLowBalance(client: Client, accountId: string, now: Date): Promise<void> {
  const money = createMoneyRepository(client);
  const row = await money.lock(accountId, 'live');
  if (!row) return;
  const stage = lowBalanceStage(row.balance_cents - row.reserved_cents, row.last_top_up_cents);
  if (stage === row.low_balance_stage) return;
  await money.update(accountId, 'live', { low_balance_stage: stage });
  const crossed = crossedStages(row.low_balance_stage as LowBalanceStage, stage);
  if (crossed.length === 0) return;
  const balance = await buildBalance(client, accountId, 'live', now);
  for (const crossedStage of crossed) {
    await recordEvent(client, { accountId, mode: 'live', type: 'balance.low', data: { ...balance, low_balance: crossedStage }, now });
  }
}

/** The console's card charge: a top-up line with a payment reference, and its bonus credit. */
export async function topUp(
  client: Client,
  t: { accountId: string; amountCents: number; paymentReference: string; description: string; now: Date },
): Promise<LedgerRow[]> {
  const money = createMoneyRepository(client);
  const bonus = topUpBonusCents(t.amountCents);
  // The last top-up (with its bonus) is the reference of the low-balance warnings.
  await money.lock(t.accountId, 'live');
  await money.update(t.accountId, 'live', { last_top_up_cents: t.amountCents + bonus });
  const lines = [
    await postLine(client, {
      accountId: t.accountId,
      mode: 'live',
      customerId: null,
      type: 'top_up',
      cause: 'top_up',
      amountCents: t.amountCents,
      paymentReference: t.paymentReference,
      description: t.description,
      now: t.now,
    }),
  ];
  if (bonus > 0) {
    const expiresAt = new Date(t.now);
    expiresAt.setUTCMonth(expiresAt.getUTCMonth() + BONUS_LIFETIME_MONTHS);
    await money.insertGrant(t.accountId, bonus, t.now, expiresAt);
    lines.push(
      await postLine(client, {
        accountId: t.accountId,
        mode: 'live',
        customerId: null,
        type: 'bonus',
        cause: 'bonus',
        amountCents: bonus,
        reference: lines[0].id,
        description: `Bonus credit on a top-up of ${(t.amountCents / 100).toFixed(2)} USD (expires ${expiresAt.toISOString().slice(0, 10)}, not refundable)`,
        now: t.now,
      }),
    );
  }
  return lines;
}

/** Automatic top-up: when a charge leaves the spendable balance under the threshold, charge the card. */
async function maybeAutoTopUp(client: Client, accountId: string, now: Date): Promise<void> {
  const row = await createMoneyRepository(client).lock(accountId, 'live');
  if (!row || row.auto_top_up_threshold_cents === null || row.auto_top_up_amount_cents === null) return;
  if (row.balance_cents - row.reserved_cents >= row.auto_top_up_threshold_cents) return;
  await topUp(client, {
    accountId,
    amountCents: row.auto_top_up_amount_cents,
    paymentReference: `auto_${crypto.randomUUID()}`,
    description: 'Automatic top-up (card)',
    now,
  });
}

