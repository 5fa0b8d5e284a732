import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { applyLine, type LineInput, type LineType } from '../../money/rules/apply-line.ts';
import type { MoneyRow } from '../../db/money/balances.ts';
import { dayKey, monthKey } from '../../money/rules/pricing.ts';

/** -0 and 0 are the same amount of money; compare cents as numbers. */
const cents = (n: number) => n + 0;

const NOW = new Date('2027-03-15T12:00:00Z');

function row(fields: Partial<MoneyRow> = {}): MoneyRow {
  return {
    account_id: '00000000-0000-4000-8000-000000000001',
    mode: 'live',
    balance_cents: 10_000,
    paid_cents: 9_000,
    bonus_cents: 1_000,
    reserved_cents: 0,
    open_calls: 0,
    spend_day: null,
    spend_day_cents: 0,
    spend_month: null,
    spend_month_cents: 0,
    minutes_month: null,
    minutes_used: 0,
    last_top_up_cents: 10_000,
    low_balance_stage: 'ok',
    auto_top_up_threshold_cents: null,
    auto_top_up_amount_cents: null,
    ...fields,
  };
}

function input(fields: Partial<LineInput> = {}): LineInput {
  return {
    accountId: '00000000-0000-4000-8000-000000000001',
    mode: 'live',
    customerId: null,
    type: 'usage',
    cause: 'call',
    amountCents: -300,
    description: 'Call, 3 min',
    now: NOW,
    ...fields,
  };
}

test('applyLine: a live charge is worked out as cash (the money change moves what bonus can pay), and the line says so', (t) => {
  const { next, line, spendCents } = applyLine(row(), input({ amountCents: -300, minutes: 3 }));
  t.like(next, { balance_cents: 9_700, bonus_cents: 1_000, paid_cents: 8_700 });
  t.like(line, { amount_cents: -300, bonus_cents: 0, cash_cents: -300, balance_after_cents: 9_700, applied: true, minutes: 3 });
  t.is(spendCents, 300);
});

test('applyLine: a test-mode line is priced (spend, minutes) but leaves the balance, cash and bonus alone', (t) => {
  const before = row({ mode: 'test' });
  const { next, line, spendCents } = applyLine(before, input({ mode: 'test', amountCents: -300, minutes: 3 }));
  t.like(next, { balance_cents: 10_000, paid_cents: 9_000, bonus_cents: 1_000, minutes_used: 3, spend_day_cents: 300 });
  t.like(line, { applied: false, cash_cents: -300, bonus_cents: 0, balance_after_cents: 10_000 });
  t.is(spendCents, 300);
});

test('applyLine: top-ups and refunds are cash, a bonus line and an expiry are bonus; none of them is spend', (t) => {
  t.like(applyLine(row(), input({ type: 'top_up', cause: 'top_up', amountCents: 5_000 })).line, { cash_cents: 5_000, bonus_cents: 0 });
  t.like(applyLine(row(), input({ type: 'refund', cause: 'refund', amountCents: 200 })).line, { cash_cents: 200, bonus_cents: 0 });
  t.like(applyLine(row(), input({ type: 'bonus', cause: 'bonus', amountCents: 150 })).next, { bonus_cents: 1_150, paid_cents: 9_000 });
  const expiry = applyLine(row(), input({ type: 'bonus_expired', cause: 'bonus_expiry', amountCents: -400 }));
  t.like(expiry.next, { bonus_cents: 600, paid_cents: 9_000, balance_cents: 9_600 });
  t.is(expiry.spendCents, 0, 'credit expiring is not spend');
  t.is(applyLine(row(), input({ type: 'top_up', cause: 'top_up', amountCents: 5_000 })).spendCents, 0);
});

test('applyLine: spend counters roll over at the UTC day and month; minutes at the month', (t) => {
  const yesterday = row({ spend_day: '2027-03-14', spend_day_cents: 700, spend_month: '2027-03-01', spend_month_cents: 2_000, minutes_month: '2027-03-01', minutes_used: 40 });
  t.like(applyLine(yesterday, input({ amountCents: -100, minutes: 1 })).next, {
    spend_day: '2027-03-15',
    spend_day_cents: 100,
    spend_month: '2027-03-01',
    spend_month_cents: 2_100,
    minutes_used: 41,
  });
  const lastMonth = row({ spend_day: '2027-02-28', spend_day_cents: 700, spend_month: '2027-02-01', spend_month_cents: 2_000, minutes_month: '2027-02-01', minutes_used: 40 });
  t.like(applyLine(lastMonth, input({ amountCents: -100, minutes: 1 })).next, {
    spend_day_cents: 100,
    spend_month: '2027-03-01',
    spend_month_cents: 100,
    minutes_month: '2027-03-01',
    minutes_used: 1,
  });
  t.like(applyLine(lastMonth, input({ type: 'minimum', cause: 'monthly_minimum', amountCents: -500 })).next, { spend_month_cents: 500, minutes_used: 40 }, 'a minimum is spend, not minutes');
});

const types: LineType[] = ['usage', 'top_up', 'bonus', 'refund', 'minimum', 'bonus_expired', 'top_up_refund'];
const SIGN: Record<LineType, 1 | -1> = { usage: -1, minimum: -1, bonus_expired: -1, top_up_refund: -1, top_up: 1, bonus: 1, refund: 1 };

test('property: a live line moves the balance by its amount, keeps balance = cash + bonus, and its parts add up', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.constantFrom(...types),
      fc.integer({ min: 0, max: 100_000 }),
      fc.constantFrom<'live' | 'test'>('live', 'test'),
      (paid, bonus, type, size, mode) => {
        const before = row({ mode, paid_cents: paid, bonus_cents: bonus, balance_cents: paid + bonus });
        const amount = SIGN[type] * size;
        const charge = amount < 0 && type !== 'bonus_expired' && type !== 'top_up_refund' ? -amount : 0;
        const { next, line, spendCents } = applyLine(before, input({ mode, type, amountCents: amount }));
        assert.equal(cents(line.cash_cents + line.bonus_cents), cents(amount));
        assert.equal(next.balance_cents, next.paid_cents + next.bonus_cents);
        assert.equal(line.balance_after_cents, next.balance_cents);
        assert.equal(line.applied, mode === 'live');
        assert.equal(next.balance_cents, mode === 'live' ? before.balance_cents + amount : before.balance_cents);
        // A charge is cash until the money change moves what bonus can pay (db/money/ledger.ts).
        if (charge > 0) assert.equal(cents(line.bonus_cents), 0);
        assert.equal(spendCents, (type === 'usage' || type === 'minimum') && amount < 0 ? -amount : 0);
        assert.equal(next.spend_day, spendCents > 0 ? dayKey(NOW) : null);
        assert.equal(next.spend_month, spendCents > 0 ? monthKey(NOW) : null);
      },
    ),
  );
  t.pass();
});
