/**
 * Wall-clock time in an IANA zone, for the rooms that reason in local time (the calling windows,
 * the free slots of a booking, the callee's zone): one implementation of the offset and of the
 * wall time → instant rule, so a daylight-saving change is read the same way by the dialler and
 * the agent's calendar. Pure.
 */

import { ZoneFormats } from './zone-formats.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Formatters per zone, at most ZONE_FORMATS_KEPT (a customer's timezone may be spelt in any case). */
export const offsetFormats = new ZoneFormats('en-US', { hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });

/** Offset of `zone` from UTC at instant `ms`, in ms (local wall clock = ms + offset). */
export function zoneOffsetMs(zone: string, ms: number): number {
  const f = offsetFormats.get(zone);
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(ms / 1000) * 1000;
}

/**
 * The first instant at which the clock of `zone` reads at least `minute` on local day `day` (days
 * since 1970-01-01): the wall time itself when it exists (its first occurrence when a fall-back
 * repeats it), the moment the clock jumps when a spring-forward skips it.
 */
export function localWallToInstant(zone: string, day: number, minute: number): number {
  const wall = day * DAY_MS + minute * MINUTE_MS;
  const offsets = [...new Set([zoneOffsetMs(zone, wall - DAY_MS), zoneOffsetMs(zone, wall), zoneOffsetMs(zone, wall + DAY_MS)])];
  const valid = offsets.map((o) => wall - o).filter((t) => zoneOffsetMs(zone, t) === wall - t);
  if (valid.length > 0) return Math.min(...valid);
  // Skipped by a spring-forward: find the jump between the two candidate instants.
  let lo = Math.min(...offsets.map((o) => wall - o));
  let hi = Math.max(...offsets.map((o) => wall - o));
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid + zoneOffsetMs(zone, mid) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}
