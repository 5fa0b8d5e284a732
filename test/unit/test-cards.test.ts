/** payments/test-cards.ts: Stripe's test cards and Stripe's checks of the card fields, with Stripe's codes and messages. */
import test from 'ava';
import { cardBrand, chargeOutcome, checkCardFields, luhnValid } from '../../payments/test-cards.ts';

const now = new Date('2026-11-27T12:00:00Z');
const fields = (o: Partial<{ number: string; expMonth: number; expYear: number; cvc: string }> = {}) => ({ number: '4242 4242 4242 4242', expMonth: 12, expYear: 2030, cvc: '123', ...o });

test('the table: what each of Stripe\'s test numbers does on-session and off-session', (t) => {
  t.is(chargeOutcome('4242424242424242', { offSession: false }), null);
  t.is(chargeOutcome('5555555555554444', { offSession: true }), null);
  t.deepEqual(chargeOutcome('4000000000000002', { offSession: false }), { code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.', param: null });
  t.deepEqual(chargeOutcome('4000000000009995', { offSession: true }), { code: 'card_declined', declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.', param: null });
  t.deepEqual(chargeOutcome('4000000000000069', { offSession: false }), { code: 'expired_card', declineCode: 'expired_card', message: 'Your card has expired.', param: null });
  t.is(chargeOutcome('4000002500003155', { offSession: false }), null, 'on-session: succeeds after authentication');
  t.like(chargeOutcome('4000002500003155', { offSession: true }), { code: 'authentication_required', declineCode: 'authentication_required' });
  t.like(chargeOutcome('4111111111111111', { offSession: false }), { code: 'card_declined', declineCode: 'test_mode_live_card' }, 'a number not in the table');
});

test('brands by number', (t) => {
  t.is(cardBrand('4242424242424242'), 'visa');
  t.is(cardBrand('5555555555554444'), 'mastercard');
  t.is(cardBrand('2223003122003222'), 'mastercard');
  t.is(cardBrand('378282246310005'), 'amex');
  t.is(cardBrand('6011111111111117'), 'discover');
});

test('Luhn', (t) => {
  t.true(luhnValid('4242424242424242'));
  t.false(luhnValid('4242424242424241'));
  t.true(luhnValid('378282246310005'));
});

test("the field checks answer Stripe's codes, in Stripe's order", (t) => {
  t.like(checkCardFields(fields(), now), { ok: true, card: { digits: '4242424242424242', brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } });
  const code = (o: Parameters<typeof fields>[0]) => {
    const r = checkCardFields(fields(o), now);
    return r.ok ? null : [r.error.code, r.error.param, r.error.message];
  };
  t.deepEqual(code({ number: '4242 4242 4242 4241' }), ['incorrect_number', 'number', 'Your card number is incorrect.']);
  t.deepEqual(code({ number: '4242-abcd' }), ['invalid_number', 'number', 'Your card number is invalid.']);
  t.deepEqual(code({ number: '42' }), ['invalid_number', 'number', 'Your card number is invalid.']);
  t.deepEqual(code({ expMonth: 13 }), ['invalid_expiry_month', 'exp_month', "Your card's expiration month is invalid."]);
  t.deepEqual(code({ expYear: 2025 }), ['invalid_expiry_year', 'exp_year', "Your card's expiration year is invalid."]);
  t.deepEqual(code({ expYear: 2026, expMonth: 10 }), ['invalid_expiry_month', 'exp_month', "Your card's expiration month is invalid."], 'a past month of this year');
  t.is(code({ expYear: 2026, expMonth: 11 }), null, 'this month is still good');
  t.is(code({ expYear: 31 }), null, 'two-digit years are 20YY');
  t.deepEqual(code({ cvc: '12' }), ['invalid_cvc', 'cvc', "Your card's security code is invalid."]);
  t.deepEqual(code({ number: '378282246310005', cvc: '123' }), ['invalid_cvc', 'cvc', "Your card's security code is invalid."], 'amex has 4 digits');
  t.is(code({ number: '378282246310005', cvc: '1234' }), null);
});
