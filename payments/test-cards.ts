/**
 * Stripe's test cards, as one table: what each number does when it pays, and the checks Stripe
 * makes on the card fields before it tries (number, expiry, security code), with Stripe's own
 * error codes and messages. Pure: used by the fake Stripe of the tests (test/fakes/stripe.ts)
 * and by the simulated processor of test mode (actors/payments/simulated-provider.ts), so both
 * answer a card exactly as Stripe's test mode does.
 *
 * Only the numbers of the table pay; any other well-formed number is refused as Stripe's test
 * mode refuses a real card (card_declined, decline code `test_mode_live_card`).
 */

/** What a test card does when it pays. */
export type TestCardBehaviour =
  | { kind: 'succeeds' }
  | { kind: 'declined'; code: 'card_declined' | 'expired_card' | 'incorrect_cvc' | 'processing_error'; declineCode: string }
  /** 3-D Secure: on-session it succeeds once its holder authenticates; charged off-session it fails with authentication_required. */
  | { kind: 'authentication' };

export interface TestCard {
  number: string;
  brand: string;
  behaviour: TestCardBehaviour;
}

/** Stripe's test card numbers (https://docs.stripe.com/testing), the ones this service knows. */
export const TEST_CARDS: readonly TestCard[] = [
  { number: '4242424242424242', brand: 'visa', behaviour: { kind: 'succeeds' } },
  { number: '5555555555554444', brand: 'mastercard', behaviour: { kind: 'succeeds' } },
  { number: '4000000000000002', brand: 'visa', behaviour: { kind: 'declined', code: 'card_declined', declineCode: 'generic_decline' } },
  { number: '4000000000009995', brand: 'visa', behaviour: { kind: 'declined', code: 'card_declined', declineCode: 'insufficient_funds' } },
  { number: '4000000000000069', brand: 'visa', behaviour: { kind: 'declined', code: 'expired_card', declineCode: 'expired_card' } },
  { number: '4000002500003155', brand: 'visa', behaviour: { kind: 'authentication' } },
];

/** A refusal as Stripe words it: a `card_error` with its code, decline code, message and the field it names. */
export interface CardError {
  code: string;
  declineCode: string | null;
  message: string;
  /** The card field at fault (`number`, `exp_month`, `exp_year`, `cvc`), when one is. */
  param: string | null;
}

/** Stripe's messages, word for word (they are safe to show the card holder). */
const DECLINE_MESSAGES: Record<string, string> = {
  generic_decline: 'Your card was declined.',
  insufficient_funds: 'Your card has insufficient funds.',
  expired_card: 'Your card has expired.',
  incorrect_cvc: "Your card's security code is incorrect.",
  processing_error: 'An error occurred while processing your card. Try again in a little bit.',
  authentication_required: 'Your card was declined. This transaction requires authentication.',
  test_mode_live_card: 'Your card was declined. Your request was in test mode, but used a non test card.',
};

/** The digits of a card number as typed (spaces and dashes allowed between them), or null when something else is in it. */
export function cardDigits(number: string): string | null {
  const digits = number.replace(/[\s-]/g, '');
  return /^\d+$/.test(digits) ? digits : null;
}

/** The Luhn checksum every card number carries. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** The card network by its number's prefix (Stripe's `card.brand` names). */
export function cardBrand(digits: string): string {
  const known = TEST_CARDS.find((c) => c.number === digits);
  if (known) return known.brand;
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|2(2[2-9][1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720))/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(digits)) return 'discover';
  if (/^35(2[89]|[3-8]\d)/.test(digits)) return 'jcb';
  if (/^3(0[0-5]|[68])/.test(digits)) return 'diners';
  if (/^62/.test(digits)) return 'unionpay';
  return 'unknown';
}

export interface CardFields {
  number: string;
  expMonth: number;
  /** Four digits, or two (taken as 20YY, as Stripe does). */
  expYear: number;
  cvc: string;
}

/** The card as a receipt shows it, once its fields check out. */
export interface CheckedCard {
  digits: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

/**
 * Stripe's checks of the card fields, in Stripe's order: the number (`invalid_number` when it is
 * not a card number at all, `incorrect_number` when its checksum fails), the expiry
 * (`invalid_expiry_month`, `invalid_expiry_year`; a past date is refused the same way), and the
 * security code (`invalid_cvc`: 3 digits, 4 for amex).
 */
export function checkCardFields(f: CardFields, now: Date): { ok: true; card: CheckedCard } | { ok: false; error: CardError } {
  const refuse = (code: string, message: string, param: string) => ({ ok: false as const, error: { code, declineCode: null, message, param } });
  const digits = cardDigits(f.number);
  if (digits === null || digits.length < 12 || digits.length > 19) return refuse('invalid_number', 'Your card number is invalid.', 'number');
  if (!luhnValid(digits)) return refuse('incorrect_number', 'Your card number is incorrect.', 'number');
  const month = f.expMonth;
  if (!Number.isInteger(month) || month < 1 || month > 12) return refuse('invalid_expiry_month', "Your card's expiration month is invalid.", 'exp_month');
  const year = Number.isInteger(f.expYear) && f.expYear >= 0 && f.expYear < 100 ? 2000 + f.expYear : f.expYear;
  const thisYear = now.getUTCFullYear();
  if (!Number.isInteger(year) || year < thisYear || year > thisYear + 50) return refuse('invalid_expiry_year', "Your card's expiration year is invalid.", 'exp_year');
  if (year === thisYear && month < now.getUTCMonth() + 1) return refuse('invalid_expiry_month', "Your card's expiration month is invalid.", 'exp_month');
  const brand = cardBrand(digits);
  const cvcLength = brand === 'amex' ? 4 : 3;
  if (!new RegExp(`^\\d{${cvcLength}}$`).test(f.cvc.trim())) return refuse('invalid_cvc', "Your card's security code is invalid.", 'cvc');
  return { ok: true, card: { digits, brand, last4: digits.slice(-4), expMonth: month, expYear: year } };
}

/** The table's entry for a number, or null for a number Stripe's test mode does not know. */
export function testCard(digits: string): TestCard | null {
  return TEST_CARDS.find((c) => c.number === digits) ?? null;
}

/**
 * What happens when a checked card pays: null when the payment succeeds, else Stripe's card error.
 * `offSession`: a saved card charged without its holder present (automatic top-up).
 */
export function chargeOutcome(digits: string, c: { offSession: boolean }): CardError | null {
  const card = testCard(digits);
  if (!card) return { code: 'card_declined', declineCode: 'test_mode_live_card', message: DECLINE_MESSAGES.test_mode_live_card!, param: null };
  const b = card.behaviour;
  switch (b.kind) {
    case 'succeeds':
      return null;
    case 'authentication':
      return c.offSession
        ? { code: 'authentication_required', declineCode: 'authentication_required', message: DECLINE_MESSAGES.authentication_required!, param: null }
        : null;
    case 'declined':
      return { code: b.code, declineCode: b.declineCode, message: DECLINE_MESSAGES[b.declineCode] ?? DECLINE_MESSAGES.generic_decline!, param: b.code === 'incorrect_cvc' ? 'cvc' : null };
  }
}
