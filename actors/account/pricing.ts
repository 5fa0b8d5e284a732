/**
 * Prices (spec: Pricing and balance rules). Pure: plain numbers in, integer cents out.
 */

/** Call rate by call minutes already used in the UTC calendar month. */
export const CALL_TIERS: readonly { from_minutes: number; cents_per_minute: number }[] = [
  { from_minutes: 0, cents_per_minute: 20 },
  { from_minutes: 5_000, cents_per_minute: 18 },
  { from_minutes: 25_000, cents_per_minute: 16 },
  { from_minutes: 100_000, cents_per_minute: 15 },
];

/** Longest call (spec: single call length 20 minutes). */
export const MAX_CALL_MINUTES = 20;

/** Rate of the next minute after `minutesUsed` minutes this month. */
export function rateAt(minutesUsed: number): number {
  let rate = CALL_TIERS[0].cents_per_minute;
  for (const tier of CALL_TIERS) if (minutesUsed >= tier.from_minutes) rate = tier.cents_per_minute;
  return rate;
}

/**
 * Price of `minutes` whole minutes starting after `minutesUsed` minutes this month, minute by
 * minute, so a call that crosses a tier boundary pays the new rate from the minute it crosses.
 */
export function priceMinutes(minutesUsed: number, minutes: number): number {
  let cents = 0;
  for (let m = 0; m < minutes; m++) cents += rateAt(minutesUsed + m);
  return cents;
}

/** What a call start holds: the price of the longest call at the month's position. */
export function callReserveCents(minutesUsed: number): number {
  return priceMinutes(minutesUsed, MAX_CALL_MINUTES);
}
