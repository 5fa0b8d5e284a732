import test from 'ava';
import { forfeitedBonusCents } from '../../money/rules/top-up-refund.ts';
import { topUpBonusCents } from '../../money/rules/pricing.ts';
import { topUpDescription } from '../../actors/payments/room.ts';
import { eventRetryDelaySeconds } from '../../actors/payments/inbox.ts';

/*
 * The pure rules of card payments: the bonus a refund forfeits (bonus is not refundable: the
 * part the refunded money earned goes, only what is unspent), the bonus tiers a top-up earns
 * (3 % from 50,000, 5 % from 250,000, 8 % from 1,000,000 cents), how a card top-up reads on the
 * ledger, and the inbox's backoff.
 */

test('bonus tiers named literally: 50,000 → 1,500; 250,000 → 12,500; 1,000,000 → 80,000; under 50,000 none', (t) => {
  t.is(topUpBonusCents(49_999), 0);
  t.is(topUpBonusCents(50_000), 1_500);
  t.is(topUpBonusCents(250_000), 12_500);
  t.is(topUpBonusCents(1_000_000), 80_000);
});

test('a whole refund forfeits the whole unspent bonus; half a refund half of it', (t) => {
  const base = { paymentCents: 50_000, bonusCents: 1_500, forfeitedBeforeCents: 0, unspentCents: 1_500 };
  t.is(forfeitedBonusCents({ ...base, refundedCents: 50_000 }), 1_500);
  t.is(forfeitedBonusCents({ ...base, refundedCents: 25_000 }), 750);
  t.is(forfeitedBonusCents({ ...base, refundedCents: 1 }), 0, 'rounded down');
});

test('a second refund forfeits only what the first did not; never more than is unspent', (t) => {
  t.is(forfeitedBonusCents({ paymentCents: 50_000, bonusCents: 1_500, refundedCents: 50_000, forfeitedBeforeCents: 750, unspentCents: 750 }), 750);
  // 25,000 then 10,000 of a 50,000 top-up: the second earned 1,050 in all, of which 750 went with the first.
  t.is(forfeitedBonusCents({ paymentCents: 50_000, bonusCents: 1_500, refundedCents: 35_000, forfeitedBeforeCents: 750, unspentCents: 750 }), 300);
  t.is(forfeitedBonusCents({ paymentCents: 50_000, bonusCents: 1_500, refundedCents: 50_000, forfeitedBeforeCents: 0, unspentCents: 200 }), 200, 'bonus already spent stays spent');
  t.is(forfeitedBonusCents({ paymentCents: 50_000, bonusCents: 0, refundedCents: 50_000, forfeitedBeforeCents: 0, unspentCents: 0 }), 0, 'no bonus, nothing to forfeit');
  t.is(forfeitedBonusCents({ paymentCents: 50_000, bonusCents: 1_500, refundedCents: 70_000, forfeitedBeforeCents: 0, unspentCents: 1_500 }), 1_500, 'never more than the bonus');
});

test('a card top-up reads with its card on the ledger; the automatic one says so', (t) => {
  t.is(topUpDescription('checkout', { brand: 'visa', last4: '4242' }), 'Top-up by card (visa ending 4242)');
  t.is(topUpDescription('automatic', { brand: 'mastercard', last4: '4444' }), 'Automatic top-up by card (mastercard ending 4444)');
  t.is(topUpDescription('checkout', null), 'Top-up by card');
});

test('the inbox backs off 5 s, 15 s, 30 s, 1 min, 2 min, then every 5 min', (t) => {
  t.deepEqual([1, 2, 3, 4, 5, 6, 7, 50].map(eventRetryDelaySeconds), [5, 15, 30, 60, 120, 300, 300, 300]);
});
