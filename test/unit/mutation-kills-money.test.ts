/**
 * Tests written to kill the mutants `npm run mutate` found alive in money/rules (docs/decisions.md,
 * "Mutation testing"). Each names the spec's value or the behaviour itself (interface spec,
 * "Pricing and balance rules"), never the production constant.
 */
import test from 'ava';
import {
  BONUS_LIFETIME_MONTHS,
  CALL_TARIFF,
  ITEM_PRICES,
  MINIMUM_TOP_UP_CENTS,
  MONTHLY_MINIMUM_CENTS,
  settledSpend,
} from '../../money/rules/pricing.ts';
import { CAP_WAITS } from '../../money/rules/hold-rules.ts';
import { applyLine, type MoneyCounters } from '../../money/rules/apply-line.ts';
import { lowBalanceStage, lowBalanceStageOf } from '../../money/rules/low-balance.ts';

test('the spec\'s item prices: number 1,500 a month, caller ID 1,200, message 2, prospect 4, build 35,000, hosting 2,000 a month', (t) => {
  t.deepEqual(
    { ...ITEM_PRICES },
    {
      number_cents_per_month: 1_500,
      caller_id_cents_per_month: 1_200,
      chat_message_cents: 2,
      prospect_cents: 4,
      website_build_cents: 35_000,
      website_hosting_cents_per_month: 2_000,
    },
  );
});

test('top-ups start at 2,500 cents, the monthly minimum is 10 dollars, bonus credit lives twelve months', (t) => {
  t.is(MINIMUM_TOP_UP_CENTS, 2_500);
  t.is(MONTHLY_MINIMUM_CENTS, 1_000);
  t.is(BONUS_LIFETIME_MONTHS, 12);
});

test('the tariff the database prices holds with: the published tiers and the 20-minute longest call', (t) => {
  t.deepEqual(JSON.parse(JSON.stringify(CALL_TARIFF)), {
    tiers: [
      { from_minutes: 0, cents_per_minute: 20 },
      { from_minutes: 5_000, cents_per_minute: 18 },
      { from_minutes: 25_000, cents_per_minute: 16 },
      { from_minutes: 100_000, cents_per_minute: 15 },
    ],
    maxCallMinutes: 20,
  });
});

test('settledSpend: a day\'s and a month\'s counters count only inside their own UTC day and month', (t) => {
  const counters = { day: '2026-03-31', dayCents: 700, month: '2026-03-01', monthCents: 9_100 };
  t.deepEqual(settledSpend(counters, new Date('2026-03-31T23:59:59.999Z')), { todayCents: 700, monthCents: 9_100 });
  // The next UTC day, same month: today starts from nothing, the month keeps its spend.
  t.deepEqual(settledSpend({ ...counters, day: '2026-03-30' }, new Date('2026-03-31T00:00:00.000Z')), { todayCents: 0, monthCents: 9_100 });
  // The first instant of April: both reset.
  t.deepEqual(settledSpend(counters, new Date('2026-04-01T00:00:00.000Z')), { todayCents: 0, monthCents: 0 });
  // Never spent: nothing.
  t.deepEqual(settledSpend({ day: null, dayCents: 0, month: null, monthCents: 0 }, new Date('2026-03-31T12:00:00Z')), { todayCents: 0, monthCents: 0 });
});

test('a changed cap or concurrency ceiling wakes the requests its four spend caps and the concurrency limit held, never a balance wait', (t) => {
  t.deepEqual(
    [...CAP_WAITS].sort(),
    ['concurrency_limit', 'customer_spend_cap_daily', 'customer_spend_cap_monthly', 'spend_cap_daily', 'spend_cap_monthly'],
  );
  t.false(CAP_WAITS.includes('insufficient_balance'));
});

const EMPTY: MoneyCounters = {
  balance_cents: 5_000,
  paid_cents: 5_000,
  bonus_cents: 0,
  spend_day: null,
  spend_day_cents: 0,
  spend_month: null,
  spend_month_cents: 0,
  minutes_month: null,
  minutes_used: 0,
};

test('a ledger line records whose money it is, what it pays for, its references and when, as given', (t) => {
  const now = new Date('2027-05-20T08:30:00Z');
  const { line } = applyLine(EMPTY, {
    accountId: 'acct-1',
    mode: 'live',
    customerId: 'cust-7',
    type: 'refund',
    cause: 'website_build',
    amountCents: 35_000,
    description: 'Website build refunded',
    reference: 'build-42',
    paymentReference: 'pay-9',
    now,
  });
  t.deepEqual(line, {
    account_id: 'acct-1',
    mode: 'live',
    customer_id: 'cust-7',
    type: 'refund',
    cause: 'website_build',
    amount_cents: 35_000,
    cash_cents: 35_000,
    bonus_cents: 0,
    balance_after_cents: 40_000,
    applied: true,
    minutes: null,
    reference: 'build-42',
    payment_reference: 'pay-9',
    description: 'Website build refunded',
    created_at: now,
  });
});

test('a line without references or minutes stores null for each, and a charge without minutes leaves the month\'s minutes alone', (t) => {
  const now = new Date('2027-05-20T08:30:00Z');
  const { next, line } = applyLine(
    { ...EMPTY, minutes_month: '2027-05-01', minutes_used: 12 },
    { accountId: 'acct-1', mode: 'test', customerId: null, type: 'usage', cause: 'prospect', amountCents: -4, description: 'Prospect', now },
  );
  t.is(line.reference, null);
  t.is(line.payment_reference, null);
  t.is(line.minutes, null);
  t.is(line.mode, 'test');
  t.false(line.applied);
  t.is(next.minutes_used, 12);
  t.is(next.minutes_month, '2027-05-01');
  // Test lines never move the balance: the balance after is the balance before.
  t.is(line.balance_after_cents, 5_000);
});

test('a spendable balance of zero or less is the zero stage whatever one call would hold', (t) => {
  // The spec's third warning is "zero": no balance is zero even if a call's hold were nothing.
  t.is(lowBalanceStage(0, 10_000, 0), 'zero');
  t.is(lowBalanceStage(-1, 10_000, 0), 'zero');
  t.is(lowBalanceStage(0, null, 0), 'zero');
  // One cent with nothing to hold is above every threshold of no top-up.
  t.is(lowBalanceStage(1, null, 0), 'ok');
});

test('a money row\'s stage: money held by running calls is not spendable, and one call\'s hold follows the month\'s tier', (t) => {
  const march = new Date('2026-03-15T12:00:00Z');
  const row = { balance_cents: 1_000, reserved_cents: 0, last_top_up_cents: 1_000, minutes_month: '2026-03-01', minutes_used: 0 };
  t.is(lowBalanceStageOf(row, march), 'ok');
  // 700 held by running calls leave 300 spendable, below the 400 one call at 20 cents a minute holds for 20 minutes.
  t.is(lowBalanceStageOf({ ...row, reserved_cents: 700 }, march), 'zero');
  // From minute 100,000 a minute costs 15: one call holds 300, so 350 spendable still starts one.
  const busy = { ...row, balance_cents: 350, last_top_up_cents: 1_000, minutes_used: 100_000 };
  t.is(lowBalanceStageOf(busy, march), 'ok');
  // April: the month's minutes start again at 20 cents, so the same 350 no longer covers a call.
  t.is(lowBalanceStageOf(busy, new Date('2026-04-01T00:00:00Z')), 'zero');
});

test('charges on the same UTC day and month add up in the day\'s and the month\'s spend', (t) => {
  const now = new Date('2027-05-20T18:00:00Z');
  const today = { ...EMPTY, spend_day: '2027-05-20', spend_day_cents: 700, spend_month: '2027-05-01', spend_month_cents: 2_000 };
  const { next, spendCents } = applyLine(today, { accountId: 'a', mode: 'live', customerId: 'c', type: 'usage', cause: 'call', amountCents: -100, description: 'Call', now });
  t.is(spendCents, 100);
  t.like(next, { spend_day: '2027-05-20', spend_day_cents: 800, spend_month: '2027-05-01', spend_month_cents: 2_100 });
});
