import type { Queryable } from '../db/pool.ts';
import { balanceReads } from '../db/money/balances.ts';
import { grantReads } from '../db/money/grants.ts';
import { createAccountRepository } from '../db/accounts.ts';
import { workingAutoTopUpCents } from '../db/payments.ts';
import type { Mode } from '../runtime/types.ts';
import { iso } from '../runtime/types.ts';
import { CALL_TIERS, ITEM_PRICES, MINIMUM_TOP_UP_CENTS, callReserveCents, estimatedCallMinutes, minutesUsedNow, rateAt, settledSpend } from './rules/pricing.ts';
import { lowBalanceStage } from './rules/low-balance.ts';

/**
 * The `balance` object (spec: Balance) of one account in one mode. Test mode has no money: its
 * balance and available amount are 0 and its reserved and spend are priced, never charged.
 * `now` is the schedule clock (spend days and months); `realNow` real time, on which bonus
 * credit expires.
 */
export async function buildBalance(db: Queryable, accountId: string, mode: Mode, now: Date, realNow: Date) {
  // One query at a time: `db` may be a transaction's client.
  const row = await balanceReads(db).get(accountId, mode);
  const account = await createAccountRepository(db).get(accountId);
  const bonusExpiresAt = mode === 'live' ? await grantReads(db).earliestBonusExpiry(accountId, realNow) : null;
  if (!row || !account) throw new Error(`no money row for account ${accountId}`);
  const live = mode === 'live';
  const available = live ? row.balance_cents - row.reserved_cents : 0;
  const minutesUsed = minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, now);
  const settled = settledSpend({ day: row.spend_day, dayCents: row.spend_day_cents, month: row.spend_month, monthCents: row.spend_month_cents }, now);
  return {
    object: 'balance' as const,
    currency: 'usd' as const,
    mode,
    available_cents: available,
    balance_cents: row.balance_cents,
    paid_cents: row.paid_cents,
    bonus_cents: row.bonus_cents,
    bonus_expires_at: iso(bonusExpiresAt),
    reserved_cents: row.reserved_cents,
    minimum_top_up_cents: MINIMUM_TOP_UP_CENTS,
    low_balance: live ? lowBalanceStage(available, row.last_top_up_cents, callReserveCents(minutesUsed)) : 'ok',
    rates: {
      call_cents_per_minute: rateAt(minutesUsed),
      minutes_used_this_month: minutesUsed,
      estimated_call_minutes_remaining: estimatedCallMinutes(available, minutesUsed),
      number_cents_per_month: ITEM_PRICES.number_cents_per_month,
      caller_id_cents_per_month: ITEM_PRICES.caller_id_cents_per_month,
      chat_message_cents: ITEM_PRICES.chat_message_cents,
      prospect_cents: ITEM_PRICES.prospect_cents,
      website_build_cents: ITEM_PRICES.website_build_cents,
      website_hosting_cents_per_month: ITEM_PRICES.website_hosting_cents_per_month,
      call_tiers: CALL_TIERS.map((t) => ({ ...t })),
    },
    spend: {
      today_cents: settled.todayCents + row.reserved_cents,
      month_cents: settled.monthCents + row.reserved_cents,
      daily_cap_cents: account.daily_spend_cap_cents,
      monthly_cap_cents: account.monthly_spend_cap_cents,
    },
    auto_top_up:
      live && row.auto_top_up_threshold_cents !== null
        ? { threshold_cents: row.auto_top_up_threshold_cents, amount_cents: row.auto_top_up_amount_cents }
        : null,
  };
}

/**
 * What an account's balance of `mode` can spend now: the live balance less what running calls
 * hold. Test money never runs short (test lines are priced, not applied), so test mode is unbounded.
 */
export async function spendableCents(db: Queryable, accountId: string, mode: Mode): Promise<number> {
  if (mode === 'test') return Number.POSITIVE_INFINITY;
  const row = await balanceReads(db).get(accountId, 'live');
  return row ? row.balance_cents - row.reserved_cents : 0;
}

/**
 * What an account's balance of `mode` can pay for soon: `spendableCents`, plus the automatic
 * top-up's amount when a working one exists (a live processor configured, on, a saved card, not
 * failing at `realNow`, real time like the failure's `retry_after`): a renewal it will cover needs
 * no warning. The same rule the payments room asks a charge by (`workingAutoTopUpCents`). Test
 * mode is unbounded.
 */
export async function fundableCents(db: Queryable, accountId: string, mode: Mode, autoTopUp: { liveProcessor: boolean; realNow: Date }): Promise<number> {
  const spendable = await spendableCents(db, accountId, mode);
  if (mode === 'test' || !autoTopUp.liveProcessor) return spendable;
  return spendable + ((await workingAutoTopUpCents(db, accountId, autoTopUp.realNow)) ?? 0);
}
