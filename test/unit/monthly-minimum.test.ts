import test from 'ava';
import fc from 'fast-check';
import { MONTHLY_MINIMUM_CENTS, callReserveCents, monthKey } from '../../money/rules/pricing.ts';
import { minimumShortfallCents, monthAfter, monthsToClose, startOfMonth } from '../../money/rules/monthly-minimum.ts';
import { lowBalanceStage, lowBalanceStageOf } from '../../money/rules/low-balance.ts';

const NOW = new Date('2027-03-15T12:00:00Z');

test('monthsToClose: never run and nobody live yet, nothing is due', (t) => {
  t.deepEqual(monthsToClose({ openFrom: null, earliestTakenLive: null }, NOW), []);
});

test('monthsToClose: never run, from the month after the first customer went live (its first month is free) to the last closed month', (t) => {
  const months = monthsToClose({ openFrom: null, earliestTakenLive: new Date('2026-12-20T08:00:00Z') }, NOW);
  t.deepEqual(months.map((m) => m.toISOString()), ['2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z']);
});

test('monthsToClose: from the first month not done; the month of now is still open', (t) => {
  t.deepEqual(monthsToClose({ openFrom: '2027-03-01', earliestTakenLive: null }, NOW), []);
  t.deepEqual(
    monthsToClose({ openFrom: '2026-11-01', earliestTakenLive: new Date('2020-01-01T00:00:00Z') }, NOW).map((m) => monthKey(m)),
    ['2026-11-01', '2026-12-01', '2027-01-01', '2027-02-01'],
    'the mark wins over the first live date',
  );
});

const instant = fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-12-31T23:59:59Z'), noInvalidDate: true });

test('property: monthsToClose gives consecutive month starts, all before the month of now', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(instant, instant, (live, now) => {
        const months = monthsToClose({ openFrom: null, earliestTakenLive: live }, now);
        const current = startOfMonth(monthKey(now));
        for (const [i, month] of months.entries()) {
          if (month.getUTCDate() !== 1 || month.getUTCHours() !== 0 || !(month < current)) return false;
          if (i > 0 && month.getTime() !== monthAfter(months[i - 1]).getTime()) return false;
        }
        return months.length === 0 || monthAfter(months[months.length - 1]).getTime() === current.getTime();
      }),
    ),
  );
});

test('minimumShortfallCents: up to the minimum, never negative', (t) => {
  t.is(minimumShortfallCents(0), MONTHLY_MINIMUM_CENTS);
  t.is(minimumShortfallCents(MONTHLY_MINIMUM_CENTS - 1), 1);
  t.is(minimumShortfallCents(MONTHLY_MINIMUM_CENTS), 0);
  t.is(minimumShortfallCents(MONTHLY_MINIMUM_CENTS * 5), 0);
});

test('lowBalanceStageOf reads a money row as lowBalanceStage does, at the month of now', (t) => {
  const row = { balance_cents: 5_000, reserved_cents: 400, last_top_up_cents: 10_000, minutes_month: '2027-03-01', minutes_used: 6_000 };
  t.is(lowBalanceStageOf(row, NOW), lowBalanceStage(4_600, 10_000, callReserveCents(6_000)));
  t.is(lowBalanceStageOf({ ...row, minutes_month: '2027-02-01' }, NOW), lowBalanceStage(4_600, 10_000, callReserveCents(0)), 'last month’s minutes do not count');
});
