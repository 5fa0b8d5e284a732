import { Refusal } from '../../runtime/refusal.ts';
import { parseRfc3339 } from '../shared/rfc3339.ts';

/**
 * The rules of a test clock (issue 21), pure: where a clock may start and where an advance takes
 * it. As Stripe's: forward only, at most two years at a time.
 */

/** Earliest and latest frozen time a clock may have (beyond them dates stop meaning anything here). */
export const EARLIEST_FROZEN_TIME = new Date('2000-01-01T00:00:00Z');
export const LATEST_FROZEN_TIME = new Date('2100-01-01T00:00:00Z');

/** Two calendar years after `from` (UTC): the farthest one advance goes. */
export function twoYearsAfter(from: Date): Date {
  const d = new Date(from.getTime());
  d.setUTCFullYear(d.getUTCFullYear() + 2);
  return d;
}

/** A new clock's frozen time: `frozen_time` (RFC 3339) if given, else `now`. */
export function startTime(frozenTime: string | undefined, now: Date): Date {
  if (frozenTime === undefined) return now;
  const at = parseRfc3339(frozenTime);
  if (!at || at < EARLIEST_FROZEN_TIME || at >= LATEST_FROZEN_TIME) {
    throw new Refusal('invalid_parameter', 'frozen_time must be an RFC 3339 date-time with an offset, in the years 2000 to 2099.');
  }
  return at;
}

/**
 * Where an advance takes a clock frozen at `frozen`: to `to` (RFC 3339) or `seconds` later, exactly
 * one of them; after `frozen` (never back, never standing still) and at most two years on.
 */
export function advanceTarget(frozen: Date, by: { to?: string; seconds?: number }): Date {
  if ((by.to === undefined) === (by.seconds === undefined)) throw new Refusal('parameter_missing', 'Send exactly one of to (an RFC 3339 date-time) or seconds.');
  let target: Date;
  if (by.to !== undefined) {
    const at = parseRfc3339(by.to);
    if (!at) throw new Refusal('invalid_parameter', 'to must be an RFC 3339 date-time with an offset, such as 2026-12-01T09:00:00Z.');
    target = at;
  } else {
    if (!Number.isInteger(by.seconds)) throw new Refusal('invalid_parameter', 'seconds must be a whole number.');
    target = new Date(frozen.getTime() + by.seconds! * 1000);
  }
  if (target <= frozen) {
    throw new Refusal('test_clock_not_forward', `A test clock only moves forward: ${target.toISOString()} is not after its frozen_time ${frozen.toISOString()}.`);
  }
  if (target > twoYearsAfter(frozen)) {
    throw new Refusal('test_clock_advance_too_far', `A test clock moves at most two years at a time: at most to ${twoYearsAfter(frozen).toISOString()}.`);
  }
  if (target >= LATEST_FROZEN_TIME) throw new Refusal('test_clock_advance_too_far', 'A test clock cannot go past the year 2099.');
  return target;
}
