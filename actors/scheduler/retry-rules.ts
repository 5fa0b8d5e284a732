import { callingZones, isOpen, nextOpening } from './calling-windows.ts';
import { ZoneFormats } from '../shared/zone-formats.ts';
import type { RetryDecision, RetryFacts } from '../call/retries.ts';

/**
 * When a request tries again (issue 23 §4), pure: the rule of actors/call/retries.ts, here because
 * it reads the calling windows (the call room cannot import this one; app/ hands it in).
 */

/** Outcomes after which the request tries again: nobody (or only a machine) took the call, or the carrier failed. */
export const RETRYABLE_OUTCOMES: ReadonlySet<string> = new Set(['no_answer', 'busy', 'voicemail', 'failed']);

/** Least distance between the local times of day of two attempts of one request, ms ("at different times of day"). */
export const MIN_TIME_OF_DAY_APART_MS = 2 * 3600_000;

/** The step the planner moves a candidate time by when it is too near an earlier attempt's time of day, ms. */
const STEP_MS = 15 * 60_000;

const DAY_MS = 86_400_000;

/** One formatter per zone: building one costs far more than formatting with it (CPU profile of the dialler bench). */
const hourMinute = new ZoneFormats('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** The minute of the day at `at` in `zone` (0–1439). */
function minuteOfDay(at: Date, zone: string): number {
  const parts = hourMinute.get(zone).formatToParts(at);
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
