import test from 'ava';
import { CALL_TIERS, MAX_CALL_MINUTES, callReserveCents, priceMinutes, rateAt } from '../../money/rules/pricing.ts';

test('tiers as published', (t) => {
  t.deepEqual(CALL_TIERS, [
    { from_minutes: 0, cents_per_minute: 20 },
    { from_minutes: 5_000, cents_per_minute: 18 },
    { from_minutes: 25_000, cents_per_minute: 16 },
    { from_minutes: 100_000, cents_per_minute: 15 },
  ]);
  t.is(MAX_CALL_MINUTES, 20);
});

test('rateAt on both sides of every tier boundary', (t) => {
  const cases: [number, number][] = [
    [0, 20],
    [1, 20],
    [4_999, 20],
    [5_000, 18],
    [5_001, 18],
    [24_999, 18],
    [25_000, 16],
    [99_999, 16],
    [100_000, 15],
    [1_000_000, 15],
  ];
  for (const [used, cents] of cases) t.is(rateAt(used), cents, `after ${used} minutes`);
});

test('rateAt never rises as usage grows', (t) => {
  let previous = rateAt(0);
  for (let used = 0; used <= 101_000; used += 7) {
    const rate = rateAt(used);
    t.true(rate <= previous, `rate rose at ${used}`);
    previous = rate;
  }
});

test('priceMinutes inside one tier is minutes × rate', (t) => {
  t.is(priceMinutes(0, 1), 20);
  t.is(priceMinutes(0, 10), 200);
  t.is(priceMinutes(6_000, 10), 180);
  t.is(priceMinutes(30_000, 10), 160);
  t.is(priceMinutes(200_000, 10), 150);
});

test('zero minutes cost nothing', (t) => {
  t.is(priceMinutes(0, 0), 0);
  t.is(priceMinutes(99_999, 0), 0);
});

test('a call crossing a tier boundary pays the new rate from the minute it crosses', (t) => {
  t.is(priceMinutes(4_990, 20), 10 * 20 + 10 * 18);
  t.is(priceMinutes(4_999, 2), 20 + 18);
  t.is(priceMinutes(24_995, 10), 5 * 18 + 5 * 16);
  t.is(priceMinutes(99_990, 20), 10 * 16 + 10 * 15);
});

test('pricing is additive: a call split in two costs the same', (t) => {
  for (const start of [0, 4_985, 4_999, 24_990, 99_995]) {
    for (let split = 0; split <= 20; split++) {
      t.is(priceMinutes(start, 20), priceMinutes(start, split) + priceMinutes(start + split, 20 - split), `${start}+${split}`);
    }
  }
});

test('the call reserve is the price of the longest call at the month position', (t) => {
  t.is(callReserveCents(0), 400);
  t.is(callReserveCents(4_990), 380);
  t.is(callReserveCents(5_000), 360);
  t.is(callReserveCents(25_000), 320);
  t.is(callReserveCents(100_000), 300);
  for (const used of [0, 4_990, 24_985, 99_999]) t.is(callReserveCents(used), priceMinutes(used, MAX_CALL_MINUTES));
});

test('prices are whole cents', (t) => {
  for (const used of [0, 4_981, 24_987, 99_983]) t.true(Number.isInteger(callReserveCents(used)));
});
