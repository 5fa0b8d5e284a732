import { callReserveCents, minutesUsedNow } from './pricing.ts';

/**
 * Low-balance warnings (spec: balance.low). The reference is the last top-up: spendable balance
 * (available_cents) crossing 25 %, 10 % of it, and zero, are the three warnings. "Zero" is the
 * point where no new call can start: the spendable balance no longer covers one call's hold (the
 * spec: "at zero no new call starts"). Calls stop there, so the balance itself seldom reaches 0;
 * a stage at 0 cents would never fire (issue 10 §3). Pure.
 */

export const LOW_BALANCE_STAGES = ['ok', 'below_25_percent', 'below_10_percent', 'zero'] as const;
export type LowBalanceStage = (typeof LOW_BALANCE_STAGES)[number];

/**
 * The stage of `availableCents` against the last top-up (`referenceCents`, null before any), where
 * `callReserveCents` is what one call start holds now (pricing.callReserveCents).
 */
export function lowBalanceStage(availableCents: number, referenceCents: number | null, callReserveCents: number): LowBalanceStage {
  if (availableCents <= 0 || availableCents < callReserveCents) return 'zero';
  if (!referenceCents || referenceCents <= 0) return 'ok';
  // Integer comparisons: available < 10 % of reference ⇔ 10 · available < reference.
  if (availableCents * 10 < referenceCents) return 'below_10_percent';
  if (availableCents * 4 < referenceCents) return 'below_25_percent';
  return 'ok';
}

/**
 * The warnings a move from stage `from` to stage `to` crosses, in order: one per threshold
 * passed downwards, none when the balance rose or stayed.
 */
export function crossedStages(from: LowBalanceStage, to: LowBalanceStage): LowBalanceStage[] {
  const a = LOW_BALANCE_STAGES.indexOf(from);
  const b = LOW_BALANCE_STAGES.indexOf(to);
  return b > a ? LOW_BALANCE_STAGES.slice(a + 1, b + 1) : [];
}

/** The stage of a money row at `now`: its spendable balance against its last top-up and one call's hold at the month's tier. */
export function lowBalanceStageOf(
  row: { balance_cents: number; reserved_cents: number; last_top_up_cents: number | null; minutes_month: string | null; minutes_used: number },
  now: Date,
): LowBalanceStage {
  const reserve = callReserveCents(minutesUsedNow({ minutesMonth: row.minutes_month, minutesUsed: row.minutes_used }, now));
  return lowBalanceStage(row.balance_cents - row.reserved_cents, row.last_top_up_cents, reserve);
}

/**
 * Whether a hold that took the spendable balance from `beforeCents` to `afterCents` must be looked
 * after (money/writer/calls.ts `afterHoldsTaken`): the stage it leaves differs from the one
 * `recorded`, or it crossed one call's reserve (`callReserveCents`) either way (readiness).
 */
export function holdMovesStageOrReadiness(
  beforeCents: number,
  afterCents: number,
  recorded: string,
  referenceCents: number | null,
  callReserveCents: number,
): boolean {
  return lowBalanceStage(afterCents, referenceCents, callReserveCents) !== recorded || beforeCents >= callReserveCents !== afterCents >= callReserveCents;
}
