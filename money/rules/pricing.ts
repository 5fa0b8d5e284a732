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

/** The rate table and the longest call, as the money statements price holds inside PostgreSQL (db/money/price-sql.ts). */
export const CALL_TARIFF = { tiers: CALL_TIERS, maxCallMinutes: MAX_CALL_MINUTES } as const;

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

/** Monthly and per-item prices (spec: Pricing and balance rules), in cents. */
export const ITEM_PRICES = {
  number_cents_per_month: 1_500,
  caller_id_cents_per_month: 1_200,
  chat_message_cents: 2,
  prospect_cents: 4,
  website_build_cents: 35_000,
  website_hosting_cents_per_month: 2_000,
} as const;

export const MINIMUM_TOP_UP_CENTS = 2_500;
/** Largest single top-up by card, cents. */
export const MAXIMUM_TOP_UP_CENTS = 5_000_000;
/** A live customer below this monthly spend is topped up to it after the month closes. */
export const MONTHLY_MINIMUM_CENTS = 1_000;
/** Bonus credit expires twelve months after it is granted. */
export const BONUS_LIFETIME_MONTHS = 12;

/** Bonus tiers of a top-up: from 50,000 cents +3 %, from 250,000 +5 %, from 1,000,000 +8 %. */
export const BONUS_TIERS: readonly { fromCents: number; percent: number }[] = [
  { fromCents: 1_000_000, percent: 8 },
  { fromCents: 250_000, percent: 5 },
  { fromCents: 50_000, percent: 3 },
];

/** Bonus credit granted with a top-up of `amountCents`, rounded down to whole cents. */
export function topUpBonusCents(amountCents: number): number {
  const tier = BONUS_TIERS.find((t) => amountCents >= t.fromCents);
  return tier ? Math.floor((amountCents * tier.percent) / 100) : 0;
}

/** Whole minutes billed for a call of `seconds`: rounded up, never more than the longest call. */
export function billableMinutes(seconds: number): number {
  if (!(seconds > 0)) return 0;
  return Math.min(MAX_CALL_MINUTES, Math.ceil(seconds / 60));
}

/** First day of the UTC month of `now`, as YYYY-MM-DD (the month key of counters). */
export function monthKey(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

/** The UTC day of `now` as YYYY-MM-DD. */
export function dayKey(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Settled spend of the current UTC day and month, from counters kept per period (a past period counts 0). */
export function settledSpend(c: { day: string | null; dayCents: number; month: string | null; monthCents: number }, now: Date) {
  return { todayCents: c.day === dayKey(now) ? c.dayCents : 0, monthCents: c.month === monthKey(now) ? c.monthCents : 0 };
}

/** Minutes used this month: the stored counter if it belongs to this month, else 0 (reset at the month's start). */
export function minutesUsedNow(counter: { minutesMonth: string | null; minutesUsed: number }, now: Date): number {
  return counter.minutesMonth === monthKey(now) ? counter.minutesUsed : 0;
}

/** How many whole call minutes `availableCents` buys from the month's position, tier by tier. */
export function estimatedCallMinutes(availableCents: number, minutesUsed: number): number {
  let cents = Math.max(0, availableCents);
  let used = minutesUsed;
  let minutes = 0;
  for (;;) {
    const rate = rateAt(used);
    const next = CALL_TIERS.find((t) => t.from_minutes > used);
    const span = next ? next.from_minutes - used : Infinity;
    const affordable = Math.floor(cents / rate);
    if (affordable < span) return minutes + affordable;
    minutes += span;
    used += span;
    cents -= span * rate;
  }
}

/**
 * How a charge of `cents` is paid: bonus credit first (up to `bonusAvailable`), then cash.
 * Both parts are negative amounts, like the charge.
 */
export function splitCharge(cents: number, bonusAvailable: number): { bonusCents: number; cashCents: number } {
  const fromBonus = Math.min(Math.max(0, bonusAvailable), cents);
  return { bonusCents: fromBonus ? -fromBonus : 0, cashCents: cents - fromBonus ? -(cents - fromBonus) : 0 };
}
