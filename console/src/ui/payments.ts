/** Card payments as people read them: amounts typed in dollars, the bonus an amount earns, a card in words. */
import type { BonusTier, CardBrief, CardPayment, SavedCard } from '../types.ts';
import { money } from './format.ts';

/** The most a single top-up may be (CONTRACT-22: amount_cents <= 5,000,000). */
export const MAXIMUM_TOP_UP_CENTS = 5_000_000;

/**
 * "25", "25.5", "$1,250.00" → integer cents; null for anything else (more than two decimals,
 * letters, negative). Cents are counted from the digits, never through floating point.
 */
export function dollarsToCents(text: string): number | null {
  const s = text.trim().replace(/^\$/, '').replace(/,/g, '').trim();
  const m = /^(\d{0,9})(?:\.(\d{0,2}))?$/.exec(s);
  if (!m || (m[1] === '' && !m[2])) return null;
  return Number(m[1] || '0') * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** Cents as the text of an amount field ("25.00"). */
export function centsToInput(cents: number): string {
  return (cents / 100).toFixed(2);
}

/** The tier an amount falls in (the highest whose floor it reaches), or null. */
export function tierFor(tiers: readonly BonusTier[], amountCents: number): BonusTier | null {
  let best: BonusTier | null = null;
  for (const t of tiers) if (amountCents >= t.from_cents && (!best || t.from_cents > best.from_cents)) best = t;
  return best;
}

/** The bonus a top-up of `amountCents` earns, rounded down to whole cents (as the ledger writes it). */
export function bonusFor(tiers: readonly BonusTier[], amountCents: number): number {
  const tier = tierFor(tiers, amountCents);
  return tier ? Math.floor((amountCents * tier.percent) / 100) : 0;
}

/** The next tier above `amountCents`, to say how much more earns a bigger bonus. */
export function nextTier(tiers: readonly BonusTier[], amountCents: number): BonusTier | null {
  return [...tiers].sort((a, b) => a.from_cents - b.from_cents).find((t) => t.from_cents > amountCents) ?? null;
}

/** "3 % from $500.00, 5 % from $2,500.00 and 8 % from $10,000.00". */
export function tiersInWords(tiers: readonly BonusTier[]): string {
  const parts = [...tiers].sort((a, b) => a.from_cents - b.from_cents).map((t) => `${t.percent} % from ${money(t.from_cents)}`);
  return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}` : (parts[0] ?? '');
}

const BRANDS: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
  diners: 'Diners Club',
  jcb: 'JCB',
  unionpay: 'UnionPay',
};

export function brandName(brand: string | null): string {
  if (!brand) return 'Card';
  return BRANDS[brand.toLowerCase()] ?? brand.charAt(0).toUpperCase() + brand.slice(1);
}

/** "Visa ending in 4242", or a dash. */
export function cardWords(card: CardBrief | null | undefined): string {
  if (!card || (!card.brand && !card.last4)) return '—';
  return card.last4 ? `${brandName(card.brand)} ending in ${card.last4}` : brandName(card.brand);
}

/** "08/2030", or a dash when the processor did not say. */
export function expiryWords(card: Pick<SavedCard, 'exp_month' | 'exp_year'>): string {
  if (card.exp_month === null || card.exp_year === null) return '—';
  return `${String(card.exp_month).padStart(2, '0')}/${card.exp_year}`;
}

/** Whether a card's expiry month has passed (a card works through the end of it). */
export function cardExpired(card: Pick<SavedCard, 'exp_month' | 'exp_year'>, now = Date.now()): boolean {
  if (card.exp_month === null || card.exp_year === null) return false;
  return Date.UTC(card.exp_year, card.exp_month, 1) <= now;
}

export const PAYMENT_STATUS_WORDS: Record<CardPayment['status'], string> = {
  pending: 'Pending',
  succeeded: 'Paid',
  failed: 'Failed',
  canceled: 'Canceled',
};

export const PAYMENT_KIND_WORDS: Record<CardPayment['kind'], string> = {
  checkout: 'Added in the console',
  automatic: 'Automatic top-up',
};

/** A card payment's refund state in words. */
export function refundWords(p: Pick<CardPayment, 'refunded_cents' | 'amount_cents'>): string {
  if (!p.refunded_cents) return '—';
  return p.refunded_cents >= p.amount_cents ? `${money(p.refunded_cents)} (all)` : money(p.refunded_cents);
}

/** The address of a payment's receipt (and return) page in the console. */
export function receiptPath(p: Pick<CardPayment, 'id' | 'mode'>): string {
  return `/billing/top-ups/${encodeURIComponent(p.id)}?mode=${p.mode}`;
}
