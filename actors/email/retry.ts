/**
 * When a failed email is tried again: 30 s, 2 min, 10 min, 1 h, 6 h, then every 6 h while the
 * waits add up to no more than 3 days; after that it is dead. Counted in attempts, not dates, so
 * neither a test clock on the row nor a sender's restart moves the schedule. Pure.
 */

/** Wait after the n-th failed attempt (1-based), seconds; the last repeats. */
export const EMAIL_RETRY_SECONDS = [30, 120, 600, 3600, 21_600] as const;
/** Longest the waits may add up to before an email is given up, seconds. */
export const EMAIL_RETRY_SPAN_SECONDS = 3 * 24 * 3600;

export const retryWaitSeconds = (attempt: number): number => EMAIL_RETRY_SECONDS[Math.min(Math.max(attempt, 1), EMAIL_RETRY_SECONDS.length) - 1];

/** The waits after attempts 1..attempt, summed, seconds. */
function waitedSeconds(attempt: number): number {
  let sum = 0;
  for (let n = 1; n <= attempt; n++) sum += retryWaitSeconds(n);
  return sum;
}

/** After the `attempt`-th attempt failed (transiently): when to try again, or dead. */
export function nextEmailAttempt(attempt: number, now: Date): { state: 'retry'; at: Date } | { state: 'dead' } {
  if (waitedSeconds(attempt) > EMAIL_RETRY_SPAN_SECONDS) return { state: 'dead' };
  return { state: 'retry', at: new Date(now.getTime() + retryWaitSeconds(attempt) * 1000) };
}
