import { MONTHLY_MINIMUM_CENTS, monthKey } from './pricing.ts';

/**
 * The monthly minimum (spec: a live customer below the minimum monthly spend is charged the
 * difference after the month closes). Pure: which months are due and what each customer owes.
 */

/** The instant a month key ('2027-03-01') starts, UTC. */
export const startOfMonth = (key: string) => new Date(`${key}T00:00:00Z`);

/** The start of the UTC month after the month starting at `month`. */
export const monthAfter = (month: Date) => new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));

/**
 * The closed months whose minimums are still to record, oldest first: from the first month not
 * done (`openFrom`, a month key) or, never run, from the month after the first customer was taken
 * live (its first month is free), up to the month of `now`, which is still open.
 */
export function monthsToClose(done: { openFrom: string | null; earliestTakenLive: Date | null }, now: Date): Date[] {
  const current = startOfMonth(monthKey(now));
  let from = current;
  if (done.openFrom) from = startOfMonth(done.openFrom);
  else if (done.earliestTakenLive) from = monthAfter(startOfMonth(monthKey(done.earliestTakenLive)));
  const months: Date[] = [];
  for (let month = from; month < current; month = monthAfter(month)) months.push(month);
  return months;
}

/** What a customer that spent `spentCents` on calls in a closed month owes: up to the minimum, never less than 0. */
export function minimumShortfallCents(spentCents: number): number {
  return Math.max(0, MONTHLY_MINIMUM_CENTS - spentCents);
}
