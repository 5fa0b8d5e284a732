import type { Queryable } from '../../db/pool.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { CALL_SETTING_BOUNDS, callSettingsOf } from '../customer/call-settings.ts';

/**
 * Retries (issue 23 §4): a request is not a call. When an attempt ends unanswered (no answer,
 * busy, a machine, a carrier failure) and the request has attempts left under the customer's
 * policy (`call_settings.retries`), its next attempt is queued as a call of its own under the same
 * request: its own hold, charge, `call.completed` and compliance record, and every gate of the
 * dialler again (do-not-call right before the dial, consent, no redial after a hang-up, readiness,
 * frequency caps, the calling window, balance). The pure rule is the scheduler's
 * (actors/scheduler/retry-rules.ts, handed in through `CallDeps.decideRetry`, since the scheduler
 * imports this room); `planNextAttempt` is the one call in call-end.ts `finish`, in its transaction.
 */

/** What the rule decides on, all on the request's schedule time (a test clock's, for a customer on one). */
export interface RetryFacts {
  outcome: string | null;
  /** This attempt's number (1 for the request's first call). */
  attempt: number;
  /** The customer's policy in force when the attempt ended. */
  policy: { max_attempts: number; min_gap_hours: number };
  /** When this attempt ended. */
  endedAt: Date;
  /** When each attempt of the request so far was dialled (this one included). */
  attemptTimes: readonly Date[];
  to: string;
  toCountry: string;
  dialBefore: Date;
  /** The number is on the account's do-not-call list or a national registry now. */
  doNotCall: boolean;
}

export type RetryDecision =
  | { retry: true; at: Date }
  | { retry: false; reason: 'outcome_final' | 'attempts_used' | 'do_not_call_listed' | 'past_deadline' };

/** The rule (actors/scheduler/retry-rules.ts `decideRetry`, handed in by app/: the scheduler owns calling windows). */
export type RetryRule = (facts: RetryFacts) => RetryDecision;

/**
 * The retry policy of a customer's stored call settings (`customers.call_settings`): its
 * `retries` over the defaults, read inside CALL_SETTING_BOUNDS (the API stores only values inside
 * them; a row written otherwise is not trusted further). Pure.
 */
export function retryPolicyOf(callSettings: unknown): RetryFacts['policy'] {
  const stored = callSettingsOf({ call_settings: callSettings }).retries;
  const { max_attempts, min_gap_hours } = CALL_SETTING_BOUNDS.retries;
  const within = (v: number, b: { min: number; max: number }) => (Number.isFinite(v) ? Math.min(b.max, Math.max(b.min, v)) : b.min);
  return { max_attempts: within(Math.floor(stored.max_attempts), max_attempts), min_gap_hours: within(stored.min_gap_hours, min_gap_hours) };
}

/** Why the next attempt waits until it is due, in words (`waiting_detail`). */
function plannedDetail(prev: CallRow, next: number, max: number): string {
  const why = { no_answer: 'nobody answered', busy: 'the line was busy', voicemail: 'a machine answered', failed: 'the carrier could not connect it' }[prev.outcome ?? ''] ?? 'it was not answered';
  return `Attempt ${next} of ${max}: attempt ${prev.attempt} ended because ${why}.`;
}

/**
 * The hook of call-end.ts `finish` (its transaction `db`): after `ended` (an attempt just written
 * as finished, with its outcome) queues the request's next attempt when `decideRetry` says so, and
 * returns the ended attempt with `retry_at` set, so its `call.completed` says a retry is planned.
 * On a customer's test clock the schedule is the clock's: the attempt ended at its frozen time.
 */
export async function planNextAttempt(db: Queryable, decideRetry: RetryRule, ended: CallRow, now: Date): Promise<CallRow> {
  const calls = createCallRepository(db);
  const facts = await calls.retryFacts(ended.id);
  if (!facts) return ended;
  const policy = retryPolicyOf(facts.call_settings);
  const decision = decideRetry({
    outcome: ended.outcome,
    attempt: ended.attempt,
    policy,
    endedAt: facts.clock_now ?? ended.ended_at ?? now,
    attemptTimes: facts.attempt_times,
    to: ended.to_e164,
    toCountry: ended.to_country,
    dialBefore: ended.dial_before,
    doNotCall: facts.do_not_call,
  });
  if (!decision.retry) return ended;
  const next = await calls.insertNextAttempt(ended.id, { dueAt: decision.at, now, reason: 'retry_scheduled', detail: plannedDetail(ended, ended.attempt + 1, policy.max_attempts) });
  // Another open request for the number (never expected: this attempt held the number until now) keeps it: no retry.
  if (!next) return ended;
  return calls.update(ended.id, { retry_at: decision.at });
}
