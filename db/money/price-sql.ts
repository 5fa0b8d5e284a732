/**
 * A tariff as the money statements need it: the call rate tiers and the longest call. The rate
 * table itself is a rule (money/rules/pricing.ts `CALL_TARIFF`); the writer hands it in, so
 * nothing under db/ imports the rules and the SQL text stays here.
 */
export interface Tariff {
  /** Call rate by call minutes already used in the UTC calendar month, ascending. */
  readonly tiers: readonly { readonly from_minutes: number; readonly cents_per_minute: number }[];
  /** The longest call, minutes: what a call start holds the price of. */
  readonly maxCallMinutes: number;
}

/**
 * `priceMinutes` (money/rules/pricing.ts) as a SQL expression over two integer SQL expressions,
 * built from the tariff's tiers: the minutes of [used, used + minutes) inside each tier, times its
 * rate. The money statements price inside PostgreSQL with it, at the position of the row they
 * lock; a property test compares the two on PostgreSQL.
 */
export function priceMinutesSql(tiers: Tariff['tiers'], used: string, minutes: string): string {
  const end = `(${used}) + (${minutes})`;
  const parts = tiers.map((tier, i) => {
    const next = tiers[i + 1];
    const upTo = next ? `LEAST(${end}, ${next.from_minutes})` : end;
    return `${tier.cents_per_minute} * GREATEST(0, ${upTo} - GREATEST((${used}), ${tier.from_minutes}))`;
  });
  return `(${parts.join(' + ')})`;
}
