import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import {
  CALL_TIERS,
  billableMinutes,
  dayKey,
  estimatedCallMinutes,
  minutesUsedNow,
  monthKey,
  priceMinutes,
  rateAt,
  splitCharge,
  topUpBonusCents,
} from '../../money/rules/pricing.ts';
import { LOW_BALANCE_STAGES, crossedStages, holdMovesStageOrReadiness, lowBalanceStage, type LowBalanceStage } from '../../money/rules/low-balance.ts';
import { holdRefusal, type HoldFacts, type RefusalReason } from '../../money/rules/hold-rules.ts';

/** -0 and 0 are the same amount of money (and the same JSON); compare cents as numbers. */
const cents = (n: number) => n + 0;

// — top-up bonus —

test('topUpBonusCents: nothing below 50,000; +3 %, +5 %, +8 % from each threshold, on both sides', (t) => {
  const cases: [number, number][] = [
    [0, 0],
    [2_500, 0],
    [49_999, 0],
    [50_000, 1_500],
    [50_001, 1_500],
    [249_999, 7_499],
    [250_000, 12_500],
    [250_001, 12_500],
    [999_999, 49_999],
    [1_000_000, 80_000],
    [1_000_001, 80_000],
    [10_000_000, 800_000],
  ];
  for (const [amount, bonus] of cases) t.is(topUpBonusCents(amount), bonus, `top-up of ${amount}`);
});

test('topUpBonusCents rounds down to whole cents, never up', (t) => {
  t.is(topUpBonusCents(50_033), 1_500, '1,500.99 → 1,500');
  t.is(topUpBonusCents(50_034), 1_501, '1,501.02 → 1,501');
  t.is(topUpBonusCents(250_019), 12_500, '12,500.95 → 12,500');
  t.is(topUpBonusCents(250_020), 12_501, '12,501.00 exactly');
  t.is(topUpBonusCents(1_000_012), 80_000, '80,000.96 → 80,000');
  t.is(topUpBonusCents(1_234_567), 98_765, '98,765.36 → 98,765');
});

test('property: topUpBonusCents is the floor of the tier percentage, an integer, and never falls as the top-up grows', (t) => {
  const percent = (a: number) => (a >= 1_000_000 ? 8n : a >= 250_000 ? 5n : a >= 50_000 ? 3n : 0n);
  const amount = fc.oneof(
    fc.integer({ min: 2_500, max: 20_000_000 }),
    fc.constantFrom(50_000, 250_000, 1_000_000).chain((b) => fc.integer({ min: b - 200, max: b + 200 })),
  );
  t.notThrows(() =>
    fc.assert(
      fc.property(amount, amount, (a, b) => {
        const bonus = topUpBonusCents(a);
        assert.ok(Number.isInteger(bonus));
        // Exact integer arithmetic: floor(a · p / 100).
        assert.equal(BigInt(bonus), (BigInt(a) * percent(a)) / 100n);
        if (a <= b) assert.ok(bonus <= topUpBonusCents(b), `bonus(${a}) > bonus(${b})`);
        // Top-up plus bonus never falls either (no threshold where paying more gives less).
        if (a <= b) assert.ok(a + bonus <= b + topUpBonusCents(b));
      }),
      { numRuns: 2_000 },
    ),
  );
});

// — billable minutes —

test('billableMinutes: whole minutes rounded up, capped at the 20-minute longest call', (t) => {
  const cases: [number, number][] = [
    [0, 0],
    [0.001, 1],
    [1, 1],
    [59, 1],
    [60, 1],
    [60.5, 2],
    [61, 2],
    [119, 2],
    [120, 2],
    [121, 3],
    [1_199, 20],
    [1_200, 20],
    [1_201, 20],
    [5_000, 20],
    [86_400, 20],
  ];
  for (const [seconds, minutes] of cases) t.is(billableMinutes(seconds), minutes, `${seconds} s`);
});

test('billableMinutes: negative, NaN and -Infinity bill nothing', (t) => {
  for (const seconds of [-1, -0.5, -60, -1_200, Number.NaN, Number.NEGATIVE_INFINITY, -0]) t.is(cents(billableMinutes(seconds)), 0, `${seconds}`);
});

test('property: billableMinutes(s) is the least whole number of minutes covering s, up to 20', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), (s) => {
        const m = billableMinutes(s);
        assert.ok(Number.isInteger(m));
        if (s <= 1_200) {
          assert.ok(m * 60 >= s, 'covers the call');
          assert.ok((m - 1) * 60 < s, 'no more than needed');
        } else {
          assert.equal(m, 20);
        }
      }),
      { numRuns: 2_000 },
    ),
  );
});

// — month position and period keys —

test('monthKey and dayKey are UTC, on both sides of day, month and year boundaries', (t) => {
  const cases: [string, string, string][] = [
    ['2026-01-31T23:59:59.999Z', '2026-01-01', '2026-01-31'],
    ['2026-02-01T00:00:00.000Z', '2026-02-01', '2026-02-01'],
    ['2026-12-31T23:59:59.999Z', '2026-12-01', '2026-12-31'],
    ['2027-01-01T00:00:00.000Z', '2027-01-01', '2027-01-01'],
    ['2028-02-28T23:59:59.999Z', '2028-02-01', '2028-02-28'],
    ['2028-02-29T00:00:00.000Z', '2028-02-01', '2028-02-29'],
    ['2028-02-29T23:59:59.999Z', '2028-02-01', '2028-02-29'],
    ['2028-03-01T00:00:00.000Z', '2028-03-01', '2028-03-01'],
    ['2026-09-09T09:09:09.000Z', '2026-09-01', '2026-09-09'],
    // An offset in the input changes nothing: the UTC instant decides.
    ['2026-03-01T00:30:00+01:00', '2026-02-01', '2026-02-28'],
    ['2026-02-28T23:30:00-01:00', '2026-03-01', '2026-03-01'],
    ['2026-12-31T20:00:00-05:00', '2027-01-01', '2027-01-01'],
  ];
  for (const [at, month, day] of cases) {
    t.is(monthKey(new Date(at)), month, `monthKey ${at}`);
    t.is(dayKey(new Date(at)), day, `dayKey ${at}`);
  }
});

test('property: monthKey is the first of dayKey’s month, and the instant lies inside that UTC day and month', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }), (ms) => {
        const now = new Date(ms);
        const day = dayKey(now);
        const month = monthKey(now);
        assert.match(day, /^\d{4}-\d{2}-\d{2}$/);
        assert.equal(month, `${day.slice(0, 8)}01`);
        const dayStart = Date.parse(`${day}T00:00:00Z`);
        assert.ok(dayStart <= ms && ms < dayStart + 86_400_000);
        const monthStart = Date.parse(`${month}T00:00:00Z`);
        const next = new Date(monthStart);
        next.setUTCMonth(next.getUTCMonth() + 1);
        assert.ok(monthStart <= ms && ms < next.getTime());
      }),
      { numRuns: 2_000 },
    ),
  );
});

test('minutesUsedNow: the stored counter in its own month, zero from the first instant of the next', (t) => {
  const counter = { minutesMonth: '2026-01-01', minutesUsed: 4_321 };
  t.is(minutesUsedNow(counter, new Date('2026-01-01T00:00:00.000Z')), 4_321);
  t.is(minutesUsedNow(counter, new Date('2026-01-31T23:59:59.999Z')), 4_321);
  t.is(minutesUsedNow(counter, new Date('2026-02-01T00:00:00.000Z')), 0);
  t.is(minutesUsedNow(counter, new Date('2025-12-31T23:59:59.999Z')), 0, 'another month, even an earlier one');
  t.is(minutesUsedNow(counter, new Date('2027-01-15T12:00:00.000Z')), 0, 'the same month of another year');
  t.is(minutesUsedNow({ minutesMonth: null, minutesUsed: 0 }, new Date('2026-01-15T00:00:00Z')), 0);
  t.is(minutesUsedNow({ minutesMonth: null, minutesUsed: 999 }, new Date('2026-01-15T00:00:00Z')), 0, 'no month: nothing counted');
  t.is(minutesUsedNow({ minutesMonth: '2026-12-01', minutesUsed: 7 }, new Date('2026-12-31T23:59:59.999Z')), 7);
  t.is(minutesUsedNow({ minutesMonth: '2026-12-01', minutesUsed: 7 }, new Date('2027-01-01T00:00:00.000Z')), 0);
});

// — price of minutes —

/** Minute positions near every tier boundary, and anywhere. */
const minutesUsedArb = fc.oneof(
  fc.integer({ min: 0, max: 150_000 }),
  fc.constantFrom(...CALL_TIERS.map((tier) => tier.from_minutes)).chain((b) => fc.integer({ min: Math.max(0, b - 60), max: b + 60 })),
);

test('property: priceMinutes is additive minute by minute: priceMinutes(u, a + b) = priceMinutes(u, a) + priceMinutes(u + a, b)', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(minutesUsedArb, fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 200 }), (u, a, b) => {
        assert.equal(priceMinutes(u, a + b), priceMinutes(u, a) + priceMinutes(u + a, b));
      }),
      { numRuns: 3_000 },
    ),
  );
});

test('property: priceMinutes is the sum of the published rate of each minute', (t) => {
  const published = (position: number) => [...CALL_TIERS].reverse().find((tier) => position >= tier.from_minutes)!.cents_per_minute;
  t.notThrows(() =>
    fc.assert(
      fc.property(minutesUsedArb, fc.integer({ min: 0, max: 120 }), (u, n) => {
        let expected = 0;
        for (let m = 0; m < n; m++) expected += published(u + m);
        assert.equal(priceMinutes(u, n), expected);
      }),
      { numRuns: 2_000 },
    ),
  );
});

// — estimated call minutes —

/** Brute force: spend the balance one minute at a time at each minute's rate. */
function bruteForceMinutes(availableCents: number, minutesUsed: number): number {
  let left = Math.max(0, availableCents);
  let position = minutesUsed;
  let minutes = 0;
  while (left >= rateAt(position)) {
    left -= rateAt(position);
    position++;
    minutes++;
  }
  return minutes;
}

test('estimatedCallMinutes: known values inside and across tiers, and for empty or negative balances', (t) => {
  t.is(estimatedCallMinutes(0, 0), 0);
  t.is(estimatedCallMinutes(19, 0), 0);
  t.is(estimatedCallMinutes(20, 0), 1);
  t.is(estimatedCallMinutes(399, 0), 19);
  t.is(estimatedCallMinutes(400, 0), 20);
  t.is(estimatedCallMinutes(-1, 0), 0);
  t.is(estimatedCallMinutes(-1_000_000, 4_999), 0);
  // 10 minutes at 20, then 18 a minute from minute 5,000.
  t.is(estimatedCallMinutes(10 * 20 + 5 * 18, 4_990), 15);
  t.is(estimatedCallMinutes(10 * 20 + 5 * 18 - 1, 4_990), 14);
  t.is(estimatedCallMinutes(20 + 18, 4_998), 1, 'minute 4,998 costs 20 and leaves 18, short of minute 4,999 at 20');
  t.is(estimatedCallMinutes(37, 4_999), 1, 'minute 4,999 at 20 leaves 17, short of the 18 of the next');
  // All of the first tier, then all of the second: 5,000 × 20 + 20,000 × 18 = 460,000 cents reaches minute 25,000.
  t.is(estimatedCallMinutes(460_015, 0), 25_000);
  t.is(estimatedCallMinutes(460_032, 0), 25_002);
  t.is(estimatedCallMinutes(150, 100_000), 10);
  t.is(estimatedCallMinutes(149, 250_000), 9);
});

test('estimatedCallMinutes: a balance that reaches a tier boundary exactly keeps buying minutes at the cheaper rate', (t) => {
  // Minute 4,999 costs 20 and minute 5,000 costs 18: 38 cents buy two minutes.
  t.is(bruteForceMinutes(38, 4_999), 2);
  t.is(estimatedCallMinutes(38, 4_999), 2);
  t.is(estimatedCallMinutes(39, 4_999), 2);
  // 460,000 cents reach minute 25,000 exactly; 16 more buy minute 25,000 at 16.
  t.is(estimatedCallMinutes(460_016, 0), 25_001);
  t.is(estimatedCallMinutes(16 * 2 + 15, 99_998), 3);
});

/** Balances anywhere, and balances within a few minutes' price of reaching a tier boundary ahead. */
const estimateCaseArb = fc.oneof(
  fc.tuple(
    fc.oneof(fc.integer({ min: -100_000, max: 0 }), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 2_500_000 })),
    minutesUsedArb,
  ),
  fc
    .tuple(fc.constantFrom(5_000, 25_000, 100_000), fc.integer({ min: 1, max: 400 }), fc.integer({ min: -40, max: 60 }))
    .map(([boundary, before, delta]): [number, number] => {
      const used = Math.max(0, boundary - before);
      return [priceMinutes(used, boundary - used) + delta, used];
    }),
);

test('property: estimatedCallMinutes equals a minute-by-minute brute force, across tier boundaries and for balances ≤ 0', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(estimateCaseArb, ([cents, used]) => {
        const estimate = estimatedCallMinutes(cents, used);
        assert.equal(estimate, bruteForceMinutes(cents, used), `${cents} cents after ${used} minutes`);
        // The defining property: the estimate is affordable and one more minute is not.
        assert.ok(priceMinutes(used, estimate) <= Math.max(0, cents));
        assert.ok(priceMinutes(used, estimate + 1) > Math.max(0, cents));
      }),
      { numRuns: 1_000 },
    ),
  );
});

// — bonus first, then cash —

test('splitCharge: bonus first, then cash, both negative', (t) => {
  const cases: [number, number, number, number][] = [
    // charge, bonus available → bonus part, cash part
    [100, 0, 0, -100],
    [100, 30, -30, -70],
    [100, 100, -100, 0],
    [100, 250, -100, 0],
    [100, -50, 0, -100],
    [0, 0, 0, 0],
    [0, 500, 0, 0],
    [1, 1, -1, 0],
  ];
  for (const [charge, bonus, bonusPart, cashPart] of cases) {
    const split = splitCharge(charge, bonus);
    t.is(cents(split.bonusCents), bonusPart, `bonus part of ${charge} with ${bonus}`);
    t.is(cents(split.cashCents), cashPart, `cash part of ${charge} with ${bonus}`);
  }
});

test('property: splitCharge parts add up to the charge and never take more bonus than there is', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: -1_000, max: 10_000_000 }), (charge, bonus) => {
        const { bonusCents, cashCents } = splitCharge(charge, bonus);
        assert.equal(cents(bonusCents + cashCents), cents(-charge));
        assert.ok(bonusCents <= 0 && cashCents <= 0);
        assert.ok(-bonusCents <= Math.max(0, bonus));
        assert.equal(cents(-bonusCents), Math.min(charge, Math.max(0, bonus)), 'bonus is spent first');
      }),
      { numRuns: 2_000 },
    ),
  );
});

// — low-balance stages —

test('lowBalanceStage: exact 25 % and 10 % boundaries of the last top-up', (t) => {
  const cases: [number, number, LowBalanceStage][] = [
    [2_000, 1_000, 'ok'],
    [1_000, 1_000, 'ok'],
    [251, 1_000, 'ok'],
    [250, 1_000, 'ok'], // exactly 25 % is not below it
    [249, 1_000, 'below_25_percent'],
    [101, 1_000, 'below_25_percent'],
    [100, 1_000, 'below_25_percent'], // exactly 10 % is not below it
    [99, 1_000, 'below_10_percent'],
    [1, 1_000, 'below_10_percent'],
    [0, 1_000, 'zero'],
    [-1, 1_000, 'zero'],
    // 25 % of 1,001 is 250.25 and 10 % is 100.1: integer arithmetic must not round them away.
    [251, 1_001, 'ok'],
    [250, 1_001, 'below_25_percent'],
    [101, 1_001, 'below_25_percent'],
    [100, 1_001, 'below_10_percent'],
    // 25 % of 1,003 is 250.75 and 10 % is 100.3.
    [251, 1_003, 'ok'],
    [250, 1_003, 'below_25_percent'],
    [101, 1_003, 'below_25_percent'],
    [100, 1_003, 'below_10_percent'],
    // A reference that floats would not represent exactly (0.1 × 12,345,678,901 …).
    [1_234_567_891, 12_345_678_901, 'below_25_percent'],
    [1_234_567_890, 12_345_678_901, 'below_10_percent'],
    [3_086_419_726, 12_345_678_901, 'ok'],
    [3_086_419_725, 12_345_678_901, 'below_25_percent'],
    [1, 1, 'ok'],
    [1, 4, 'ok'],
    [1, 5, 'below_25_percent'],
    [1, 10, 'below_25_percent'],
    [1, 11, 'below_10_percent'],
  ];
  // A reserve of 1 cent: only the percentages decide above zero.
  for (const [available, reference, stage] of cases) t.is(lowBalanceStage(available, reference, 1), stage, `${available} of ${reference}`);
});

test('lowBalanceStage: before any top-up (null reference) only zero is a stage; zero and negative are zero', (t) => {
  t.is(lowBalanceStage(400, null, 400), 'ok');
  t.is(lowBalanceStage(1_000_000, null, 400), 'ok');
  t.is(lowBalanceStage(0, null, 400), 'zero');
  t.is(lowBalanceStage(-400, null, 400), 'zero');
  t.is(lowBalanceStage(405, 0, 400), 'ok', 'a zero reference has no percentages');
  t.is(lowBalanceStage(0, 0, 400), 'zero');
  t.is(lowBalanceStage(-1, 0, 400), 'zero');
  t.is(lowBalanceStage(0, 2_500, 400), 'zero');
  t.is(lowBalanceStage(-2_500, 2_500, 400), 'zero');
});

test('lowBalanceStage: zero is "no call can start": the spendable balance below one call\'s hold (issue 10 §3)', (t) => {
  // Last top-up 50,000: 25 % is 12,500 and 10 % is 5,000; one call holds 400 at the first tier.
  t.is(lowBalanceStage(401, 50_000, 400), 'below_10_percent');
  t.is(lowBalanceStage(400, 50_000, 400), 'below_10_percent', 'exactly one hold still starts a call');
  t.is(lowBalanceStage(399, 50_000, 400), 'zero');
  t.is(lowBalanceStage(100, 50_000, 400), 'zero', 'the case of the report: 100 cents left, no call can start');
  // At a later tier the hold is smaller (18 c × 20 min).
  t.is(lowBalanceStage(370, 50_000, 360), 'below_10_percent');
  t.is(lowBalanceStage(359, 50_000, 360), 'zero');
  // A small top-up: below one hold is zero even above 10 % of it.
  t.is(lowBalanceStage(399, 2_500, 400), 'zero');
});

test('property: lowBalanceStage matches exact rational comparisons and only deepens as the balance falls', (t) => {
  const expected = (a: number, r: number | null, reserve: number): LowBalanceStage => {
    if (a <= 0 || a < reserve) return 'zero';
    if (r === null || r <= 0) return 'ok';
    const A = BigInt(a);
    const R = BigInt(r);
    if (A * 100n < R * 10n) return 'below_10_percent';
    if (A * 100n < R * 25n) return 'below_25_percent';
    return 'ok';
  };
  const reference = fc.option(fc.integer({ min: 1, max: 2_000_000_000 }), { nil: null });
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: 2_000_000_000 }), fc.integer({ min: 0, max: 1_000_000 }), reference, fc.constantFrom(300, 320, 360, 400), (a, drop, r, reserve) => {
        assert.equal(lowBalanceStage(a, r, reserve), expected(a, r, reserve), `${a} of ${r}`);
        const lower = lowBalanceStage(a - drop, r, reserve);
        assert.ok(LOW_BALANCE_STAGES.indexOf(lower) >= LOW_BALANCE_STAGES.indexOf(lowBalanceStage(a, r, reserve)), 'a lower balance is never a shallower stage');
      }),
      { numRuns: 3_000 },
    ),
  );
});

test('crossedStages: all 16 pairs; one warning per threshold passed downwards, none upwards or staying', (t) => {
  const table: Record<LowBalanceStage, Record<LowBalanceStage, LowBalanceStage[]>> = {
    ok: {
      ok: [],
      below_25_percent: ['below_25_percent'],
      below_10_percent: ['below_25_percent', 'below_10_percent'],
      zero: ['below_25_percent', 'below_10_percent', 'zero'],
    },
    below_25_percent: {
      ok: [],
      below_25_percent: [],
      below_10_percent: ['below_10_percent'],
      zero: ['below_10_percent', 'zero'],
    },
    below_10_percent: {
      ok: [],
      below_25_percent: [],
      below_10_percent: [],
      zero: ['zero'],
    },
    zero: {
      ok: [],
      below_25_percent: [],
      below_10_percent: [],
      zero: [],
    },
  };
  let pairs = 0;
  for (const from of LOW_BALANCE_STAGES) {
    for (const to of LOW_BALANCE_STAGES) {
      t.deepEqual(crossedStages(from, to), table[from][to], `${from} → ${to}`);
      pairs++;
    }
  }
  t.is(pairs, 16);
  t.deepEqual([...LOW_BALANCE_STAGES], ['ok', 'below_25_percent', 'below_10_percent', 'zero']);
});

// — call-start refusals —

/** Facts under which a live hold of 400 is taken: money, room under every cap, free slots. */
function facts(over: { mode?: HoldFacts['mode']; amountCents?: number; availableCents?: number; account?: Partial<HoldFacts['account']>; customer?: Partial<HoldFacts['customer']> } = {}): HoldFacts {
  return {
    mode: over.mode ?? 'live',
    amountCents: over.amountCents ?? 400,
    availableCents: over.availableCents ?? 10_000,
    account: {
      reservedCents: 0,
      openCalls: 0,
      concurrentCalls: 10,
      daySpendCents: 0,
      monthSpendCents: 0,
      dailyCapCents: null,
      monthlyCapCents: null,
      ...over.account,
    },
    customer: {
      reservedCents: 0,
      openCalls: 0,
      maxConcurrentCalls: null,
      daySpendCents: 0,
      monthSpendCents: 0,
      dailyCapCents: null,
      monthlyCapCents: null,
      ...over.customer,
    },
  };
}

/** The spec's order of call-start refusal reasons. */
const SPEC_ORDER: RefusalReason[] = [
  'insufficient_balance',
  'spend_cap_daily',
  'spend_cap_monthly',
  'customer_spend_cap_daily',
  'customer_spend_cap_monthly',
  'concurrency_limit',
];

test('holdRefusal: nothing in the way, no limits set → the hold is taken', (t) => {
  t.is(holdRefusal(facts()), null);
  t.is(holdRefusal(facts({ account: { daySpendCents: 10_000_000, monthSpendCents: 10_000_000 }, customer: { daySpendCents: 9_999_999 } })), null, 'null caps are no limit');
  t.is(holdRefusal(facts({ mode: 'test' })), null);
});

test('holdRefusal: each reason alone, at its exact boundary', (t) => {
  // Money: the whole reserve must fit in the available balance.
  t.is(holdRefusal(facts({ availableCents: 400 })), null);
  t.is(holdRefusal(facts({ availableCents: 399 })), 'insufficient_balance');
  t.is(holdRefusal(facts({ availableCents: 0 })), 'insufficient_balance');
  t.is(holdRefusal(facts({ availableCents: -50 })), 'insufficient_balance');
  // Account daily cap: spent today + running holds + this hold ≤ cap.
  t.is(holdRefusal(facts({ account: { daySpendCents: 600, dailyCapCents: 1_000 } })), null);
  t.is(holdRefusal(facts({ account: { daySpendCents: 601, dailyCapCents: 1_000 } })), 'spend_cap_daily');
  // Account monthly cap.
  t.is(holdRefusal(facts({ account: { monthSpendCents: 4_600, monthlyCapCents: 5_000 } })), null);
  t.is(holdRefusal(facts({ account: { monthSpendCents: 4_601, monthlyCapCents: 5_000 } })), 'spend_cap_monthly');
  // Customer daily cap.
  t.is(holdRefusal(facts({ customer: { daySpendCents: 100, dailyCapCents: 500 } })), null);
  t.is(holdRefusal(facts({ customer: { daySpendCents: 101, dailyCapCents: 500 } })), 'customer_spend_cap_daily');
  // Customer monthly cap.
  t.is(holdRefusal(facts({ customer: { monthSpendCents: 1_600, monthlyCapCents: 2_000 } })), null);
  t.is(holdRefusal(facts({ customer: { monthSpendCents: 1_601, monthlyCapCents: 2_000 } })), 'customer_spend_cap_monthly');
  // A zero cap refuses every call.
  t.is(holdRefusal(facts({ account: { dailyCapCents: 0 } })), 'spend_cap_daily');
  t.is(holdRefusal(facts({ customer: { monthlyCapCents: 0 } })), 'customer_spend_cap_monthly');
  // Account concurrency.
  t.is(holdRefusal(facts({ account: { openCalls: 9, concurrentCalls: 10 } })), null);
  t.is(holdRefusal(facts({ account: { openCalls: 10, concurrentCalls: 10 } })), 'concurrency_limit');
  t.is(holdRefusal(facts({ account: { openCalls: 0, concurrentCalls: 0 } })), 'concurrency_limit');
  // Customer concurrency.
  t.is(holdRefusal(facts({ customer: { openCalls: 1, maxConcurrentCalls: 2 } })), null);
  t.is(holdRefusal(facts({ customer: { openCalls: 2, maxConcurrentCalls: 2 } })), 'concurrency_limit');
  t.is(holdRefusal(facts({ customer: { openCalls: 0, maxConcurrentCalls: 0 } })), 'concurrency_limit');
});

test('holdRefusal: caps count settled spend plus every running hold plus the new one', (t) => {
  // Account caps count the account's reserved money.
  t.is(holdRefusal(facts({ account: { reservedCents: 600, dailyCapCents: 1_000 } })), null, '0 + 600 + 400 = 1,000');
  t.is(holdRefusal(facts({ account: { reservedCents: 601, dailyCapCents: 1_000 } })), 'spend_cap_daily');
  t.is(holdRefusal(facts({ account: { daySpendCents: 300, reservedCents: 300, dailyCapCents: 1_000 } })), null);
  t.is(holdRefusal(facts({ account: { daySpendCents: 300, reservedCents: 301, dailyCapCents: 1_000 } })), 'spend_cap_daily');
  t.is(holdRefusal(facts({ account: { monthSpendCents: 200, reservedCents: 400, monthlyCapCents: 1_000 } })), null);
  t.is(holdRefusal(facts({ account: { monthSpendCents: 200, reservedCents: 401, monthlyCapCents: 1_000 } })), 'spend_cap_monthly');
  // The new hold itself counts: a cap one cent under the hold refuses with nothing spent.
  t.is(holdRefusal(facts({ amountCents: 400, account: { dailyCapCents: 399 } })), 'spend_cap_daily');
  t.is(holdRefusal(facts({ amountCents: 360, account: { dailyCapCents: 360 } })), null);
  // Customer caps count the customer's own holds, not the rest of the account's.
  t.is(holdRefusal(facts({ account: { reservedCents: 50_000 }, customer: { reservedCents: 0, dailyCapCents: 400 } })), null);
  t.is(holdRefusal(facts({ customer: { reservedCents: 400, dailyCapCents: 799 } })), 'customer_spend_cap_daily');
  t.is(holdRefusal(facts({ customer: { reservedCents: 400, dailyCapCents: 800 } })), null);
  t.is(holdRefusal(facts({ customer: { reservedCents: 800, monthSpendCents: 100, monthlyCapCents: 1_299 } })), 'customer_spend_cap_monthly');
  t.is(holdRefusal(facts({ customer: { reservedCents: 800, monthSpendCents: 100, monthlyCapCents: 1_300 } })), null);
});

test('holdRefusal: test mode is never insufficient_balance, but caps and concurrency still apply', (t) => {
  for (const availableCents of [0, -1, -1_000_000, 399]) {
    t.is(holdRefusal(facts({ mode: 'test', availableCents })), null, `available ${availableCents}`);
  }
  t.is(holdRefusal(facts({ mode: 'test', availableCents: 0, account: { dailyCapCents: 100 } })), 'spend_cap_daily');
  t.is(holdRefusal(facts({ mode: 'test', availableCents: 0, customer: { monthlyCapCents: 100 } })), 'customer_spend_cap_monthly');
  t.is(holdRefusal(facts({ mode: 'test', availableCents: 0, account: { openCalls: 10 } })), 'concurrency_limit');
  t.is(holdRefusal(facts({ mode: 'test', availableCents: 0, customer: { openCalls: 1, maxConcurrentCalls: 1 } })), 'concurrency_limit');
});

test('holdRefusal: a customer maximum above the account ceiling never raises it', (t) => {
  t.is(holdRefusal(facts({ account: { openCalls: 2, concurrentCalls: 2 }, customer: { openCalls: 0, maxConcurrentCalls: 10 } })), 'concurrency_limit');
  t.is(holdRefusal(facts({ account: { openCalls: 2, concurrentCalls: 2 }, customer: { openCalls: 2, maxConcurrentCalls: 50 } })), 'concurrency_limit');
  t.is(holdRefusal(facts({ account: { openCalls: 1, concurrentCalls: 2 }, customer: { openCalls: 1, maxConcurrentCalls: 50 } })), null);
  t.is(holdRefusal(facts({ account: { openCalls: 0, concurrentCalls: 0 }, customer: { maxConcurrentCalls: 5 } })), 'concurrency_limit');
  // A lower customer maximum does apply.
  t.is(holdRefusal(facts({ account: { openCalls: 1, concurrentCalls: 10 }, customer: { openCalls: 1, maxConcurrentCalls: 1 } })), 'concurrency_limit');
});

/**
 * Facts where exactly the conditions in `mask` fail (bit i is SPEC_ORDER[i]; bit 5 is the
 * account's concurrency, bit 6 the customer's), each failing on its own terms.
 */
function factsFailing(mask: number, mode: HoldFacts['mode'] = 'live'): HoldFacts {
  const on = (i: number) => Boolean(mask & (1 << i));
  return facts({
    mode,
    amountCents: 400,
    availableCents: on(0) ? 399 : 400,
    account: {
      reservedCents: 200,
      daySpendCents: 100,
      monthSpendCents: 1_000,
      dailyCapCents: on(1) ? 699 : 700,
      monthlyCapCents: on(2) ? 1_599 : 1_600,
      openCalls: 3,
      concurrentCalls: on(5) ? 3 : 4,
    },
    customer: {
      reservedCents: 400,
      daySpendCents: 50,
      monthSpendCents: 500,
      dailyCapCents: on(3) ? 849 : 850,
      monthlyCapCents: on(4) ? 1_299 : 1_300,
      openCalls: 1,
      maxConcurrentCalls: on(6) ? 1 : 2,
    },
  });
}

test('holdRefusal: when several apply, the first in the spec’s order is named (all 128 combinations, both modes)', (t) => {
  const reasonOfBit: RefusalReason[] = [...SPEC_ORDER, 'concurrency_limit'];
  let cases = 0;
  for (const mode of ['live', 'test'] as const) {
    for (let mask = 0; mask < 1 << 7; mask++) {
      const failing = reasonOfBit.filter((_, i) => mask & (1 << i)).filter((r) => !(mode === 'test' && r === 'insufficient_balance'));
      t.is(holdRefusal(factsFailing(mask, mode)), failing[0] ?? null, `${mode} mask ${mask.toString(2).padStart(7, '0')}`);
      cases++;
    }
  }
  t.is(cases, 256);
});

test('property: holdRefusal names the first failing condition in the spec’s order, or null when none fails', (t) => {
  const cap = fc.option(fc.integer({ min: 0, max: 20_000 }), { nil: null, freq: 2 });
  const arb = fc.record({
    mode: fc.constantFrom('live' as const, 'test' as const),
    amountCents: fc.constantFrom(300, 320, 360, 380, 400),
    availableCents: fc.integer({ min: -1_000, max: 5_000 }),
    account: fc.record({
      reservedCents: fc.integer({ min: 0, max: 4_000 }),
      openCalls: fc.integer({ min: 0, max: 12 }),
      concurrentCalls: fc.integer({ min: 0, max: 12 }),
      daySpendCents: fc.integer({ min: 0, max: 8_000 }),
      monthSpendCents: fc.integer({ min: 0, max: 15_000 }),
      dailyCapCents: cap,
      monthlyCapCents: cap,
    }),
    customer: fc.record({
      reservedCents: fc.integer({ min: 0, max: 4_000 }),
      openCalls: fc.integer({ min: 0, max: 12 }),
      maxConcurrentCalls: fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }),
      daySpendCents: fc.integer({ min: 0, max: 8_000 }),
      monthSpendCents: fc.integer({ min: 0, max: 15_000 }),
      dailyCapCents: cap,
      monthlyCapCents: cap,
    }),
  });
  t.notThrows(() =>
    fc.assert(
      fc.property(arb, (f) => {
        const a = f.account;
        const c = f.customer;
        const over = (spent: number, capCents: number | null) => capCents !== null && spent > capCents;
        // Concurrency, stated directly: the account has a free slot and the customer has a free slot.
        const slotFree = a.openCalls < a.concurrentCalls && (c.maxConcurrentCalls === null || c.openCalls < c.maxConcurrentCalls);
        const fails: [RefusalReason, boolean][] = [
          ['insufficient_balance', f.mode === 'live' && f.availableCents < f.amountCents],
          ['spend_cap_daily', over(a.daySpendCents + a.reservedCents + f.amountCents, a.dailyCapCents)],
          ['spend_cap_monthly', over(a.monthSpendCents + a.reservedCents + f.amountCents, a.monthlyCapCents)],
          ['customer_spend_cap_daily', over(c.daySpendCents + c.reservedCents + f.amountCents, c.dailyCapCents)],
          ['customer_spend_cap_monthly', over(c.monthSpendCents + c.reservedCents + f.amountCents, c.monthlyCapCents)],
          ['concurrency_limit', !slotFree],
        ];
        const expected = fails.find(([, failing]) => failing)?.[0] ?? null;
        assert.equal(holdRefusal(f), expected);
      }),
      { numRuns: 5_000 },
    ),
  );
});

test('a hold is looked after when it moves the low-balance stage from the recorded one, or takes the spendable balance across one call\'s reserve either way', (t) => {
  // Last top-up $100.00, one call's reserve $2.00: 25 % is $25.00, 10 % is $10.00.
  t.true(holdMovesStageOrReadiness(3_000, 2_400, 'ok', 10_000, 200), 'under 25 % of the last top-up');
  t.false(holdMovesStageOrReadiness(2_400, 2_300, 'below_25_percent', 10_000, 200), 'the stage recorded already');
  t.true(holdMovesStageOrReadiness(1_100, 900, 'below_25_percent', 10_000, 200), 'under 10 %');
  t.true(holdMovesStageOrReadiness(300, 150, 'below_10_percent', 10_000, 200), 'under one call: zero');
  // A stage recorded as zero against a dearer reserve: the stage stays, readiness is still crossed.
  t.true(holdMovesStageOrReadiness(250, 150, 'zero', 10_000, 200), 'one call\'s reserve crossed');
  t.false(holdMovesStageOrReadiness(200, 200, 'zero', 10_000, 250), 'nothing crossed');
  t.false(holdMovesStageOrReadiness(150, 100, 'zero', 10_000, 200), 'under the reserve before and after');
  // The spec: "the minimum call reserve must fit", so a balance of exactly one reserve is loaded.
  t.true(holdMovesStageOrReadiness(200, 150, 'zero', 10_000, 200), 'exactly one call\'s reserve before fits: crossed');
});
