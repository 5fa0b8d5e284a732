/**
 * What a refund of a card top-up does to the bonus credit that top-up earned (pure). Bonus
 * credit is not refundable; the part of it the refunded money earned is forfeited, in
 * proportion: refunding a whole top-up forfeits its whole bonus, half of it half (rounded
 * down), and only what is still unspent (bonus already spent on calls stays spent).
 */
export function forfeitedBonusCents(r: {
  paymentCents: number;
  /** The bonus the payment earned. */
  bonusCents: number;
  /** Everything refunded of the payment, this refund included. */
  refundedCents: number;
  /** Forfeited by the payment's earlier refunds. */
  forfeitedBeforeCents: number;
  /** What is left unspent (and unexpired) of the payment's grant. */
  unspentCents: number;
}): number {
  if (r.paymentCents <= 0 || r.bonusCents <= 0) return 0;
  const earned = Math.floor((r.bonusCents * Math.min(r.refundedCents, r.paymentCents)) / r.paymentCents);
  return Math.max(0, Math.min(earned - r.forfeitedBeforeCents, r.unspentCents));
}
