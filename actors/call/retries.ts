import type { Queryable } from '../../db/pool.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { callSettingsOf } from '../customer/call-settings.ts';
import { callingZones, isOpen, nextOpening } from '../scheduler/calling-windows.ts';

/**
 * Retries (issue 23 §4): a request is not a call. When an attempt ends unanswered (no answer,
 * busy, a machine, a carrier failure) and the request has attempts left under the customer's
 * policy (`call_settings.retries`), its next attempt is queued as a call of its own under the same
 * request: its own hold, charge, `call.completed` and compliance record, and every gate of the
 * dialler again (do-not-call right before the dial, consent, no redial after a hang-up, readiness,
 * frequency caps, the calling window, balance). `decideRetry` is the pure rule;
 * `planNextAttempt` is the one call in call-end.ts `finish`, inside its transaction.
 */

/** Outcomes after which the request tries again: nobody (or only a machine) took the call, or the carrier failed. */
export const RETRYABLE_OUTCOMES: ReadonlySet<string> = new Set(['no_answer', 'busy', 'voicemail', 'failed']);

/** Least distance between the local times of day of two attempts of one request, ms ("at different times of day"). */
export const MIN_TIME_OF_DAY_APART_MS = 2 * 3600_000;

/** The step the planner moves a candidate time by when it is too near an earlier attempt's time of day, ms. */
const STEP_MS = 15 * 60_000;

const DAY_MS = 86_400_000;

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

/** The minute of the day at `at` in `zone` (0–1439). */
function minuteOfDay(at: Date, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? '0');
  return get('hour') * 60 + get('minute');
}

/** Whether `at`'s local time of day is at least MIN_TIME_OF_DAY_APART_MS from every earlier attempt's, in every zone the number may be in. */
function apartFromEarlier(at: Date, earlier: readonly Date[], zones: readonly string[]): boolean {
  const minApart = MIN_TIME_OF_DAY_APART_MS / 60_000;
  return zones.every((zone) => {
    const m = minuteOfDay(at, zone);
    return earlier.every((e) => {
      const d = Math.abs(m - minuteOfDay(e, zone));
      return Math.min(d, 1440 - d) >= minApart;
    });
  });
}

/**
 * Whether and when the request tries again after an attempt ended. The next attempt is due at the
 * earliest instant that is (1) at least `min_gap_hours` after this attempt ended, (2) inside the
 * called number's calling window, (3) at a local time of day (the number's zones, as calling
 * windows read them) at least 2 hours from every earlier attempt's, and (4) before `dial_before`.
 * None: no retry. Pure.
 */
export function decideRetry(f: RetryFacts): RetryDecision {
  if (!f.outcome || !RETRYABLE_OUTCOMES.has(f.outcome)) return { retry: false, reason: 'outcome_final' };
  if (f.attempt >= f.policy.max_attempts) return { retry: false, reason: 'attempts_used' };
  if (f.doNotCall) return { retry: false, reason: 'do_not_call_listed' };
  const zones = callingZones(f.to, f.toCountry);
  const limit = Math.min(f.dialBefore.getTime(), f.endedAt.getTime() + 31 * DAY_MS);
  let at = new Date(f.endedAt.getTime() + f.policy.min_gap_hours * 3600_000);
  while (at.getTime() < limit) {
    if (!isOpen(f.to, f.toCountry, at)) {
      try {
        at = nextOpening(f.to, f.toCountry, at);
      } catch {
        return { retry: false, reason: 'past_deadline' };
      }
      continue;
    }
    if (apartFromEarlier(at, f.attemptTimes, zones)) return { retry: true, at };
    at = new Date(at.getTime() + STEP_MS);
  }
  return { retry: false, reason: 'past_deadline' };
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
export async function planNextAttempt(db: Queryable, ended: CallRow, now: Date): Promise<CallRow> {
  const calls = createCallRepository(db);
  const facts = await calls.retryFacts(ended.id);
  if (!facts) return ended;
  const policy = callSettingsOf({ call_settings: facts.call_settings }).retries;
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
