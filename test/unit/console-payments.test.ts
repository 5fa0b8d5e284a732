/**
 * The console's card payment words (console/src/ui/payments.ts): amounts typed in dollars become
 * integer cents without floating point, and the bonus the Add funds form shows for an amount is
 * the one the ledger writes (money/rules/pricing.ts) with the tiers the setup route answers.
 */
import test from 'ava';
import { bonusFor, cardWords, dollarsToCents, nextTier, tiersInWords, tierFor } from '../../console/src/ui/payments.ts';
import { topUpBonusCents } from '../../money/rules/pricing.ts';

/** The tiers of `GET /console/api/billing/payments` (CONTRACT-22), in the order it lists them. */
const TIERS = [
  { from_cents: 50000, percent: 3 },
  { from_cents: 250000, percent: 5 },
  { from_cents: 1000000, percent: 8 },
];

test('dollars typed in the amount field become whole cents', (t) => {
  t.is(dollarsToCents('25'), 2500);
  t.is(dollarsToCents('25.5'), 2550);
  t.is(dollarsToCents('25.05'), 2505);
  t.is(dollarsToCents(' $1,250.00 '), 125000);
  t.is(dollarsToCents('0.29'), 29, 'no floating point drift (0.29 * 100 is 28.999…)');
  t.is(dollarsToCents('.5'), 50);
  t.is(dollarsToCents('100.'), 10000);
  for (const bad of ['', '.', 'ten', '25.001', '-25', '1e3', '25,00.0.0', '$']) t.is(dollarsToCents(bad), null, bad);
});

test('the bonus shown for an amount is the bonus the ledger writes, at and around each tier', (t) => {
  const amounts = [2500, 49999, 50000, 50001, 60000, 123457, 249999, 250000, 250033, 999999, 1000000, 1234567, 5000000];
  for (const a of amounts) t.is(bonusFor(TIERS, a), topUpBonusCents(a), `${a} cents`);
  t.is(bonusFor(TIERS, 60000), 1800, '3 % of $600.00');
  t.is(bonusFor(TIERS, 250033), 12501, '5 %, rounded down');
  t.is(tierFor(TIERS, 49999), null);
  t.is(tierFor([...TIERS].reverse(), 1000000)?.percent, 8, 'whatever order the tiers come in');
});

test('the next tier and the tiers in words', (t) => {
  t.deepEqual(nextTier(TIERS, 10000), { from_cents: 50000, percent: 3 });
  t.deepEqual(nextTier(TIERS, 250000), { from_cents: 1000000, percent: 8 });
  t.is(nextTier(TIERS, 1000000), null);
  t.is(tiersInWords(TIERS), '3 % from $500.00, 5 % from $2,500.00 and 8 % from $10,000.00');
});

test('a card in words: brand and last four', (t) => {
  t.is(cardWords({ brand: 'visa', last4: '4242' }), 'Visa ending in 4242');
  t.is(cardWords({ brand: 'amex', last4: '0005' }), 'American Express ending in 0005');
  t.is(cardWords(null), '—');
});
