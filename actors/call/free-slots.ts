/**
 * When a meeting can be booked (issue 24): the customer's business hours in its time zone, less
 * what is taken (the calendar's busy times and the meetings already booked, each widened by the
 * buffer), less what is too soon (the notice) or too far ahead (the horizon), on a 30-minute grid
 * (the meeting's length when shorter), soonest first. Pure: plain values and `now` in.
 */

import { localWallToInstant, zoneOffsetMs } from '../shared/zone-time.ts';
import { WEEKDAYS, minuteOfDay, type BookingSettings, type Weekday } from '../customer/booking-settings.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** The grid slots start on, minutes (the meeting's length when shorter). */
export const SLOT_GRID_MINUTES = 30;
/** Local minute of day from which a slot is `afternoon`. */
const NOON = 12 * 60;

export interface Interval {
  start: Date;
  end: Date;
}

export type PartOfDay = 'morning' | 'afternoon' | 'any';

export interface SlotQuery {
  now: Date;
  settings: BookingSettings;
  /** The customer's IANA time zone: business hours are read on its clock. */
  timezone: string;
  /** The calendar's busy times (any order, may overlap). */
  busy: readonly Interval[];
  /** Meetings already booked for the customer (any order). */
  booked: readonly Interval[];
  /** Only slots starting at or after this instant. */
  after?: Date | null;
  partOfDay?: PartOfDay;
  /** At most this many slots. */
  limit: number;
}

/** Free slots, soonest first. */
export function freeSlots(q: SlotQuery): Interval[] {
  const meetingMs = q.settings.meeting_minutes * MINUTE_MS;
  const step = Math.min(SLOT_GRID_MINUTES, q.settings.meeting_minutes);
  const blocked = widened(q.busy, q.booked, q.settings.buffer_minutes);
  const earliest = Math.max(q.now.getTime() + q.settings.min_notice_minutes * MINUTE_MS, q.after?.getTime() ?? -Infinity);
  const latest = horizonOf(q.now, q.settings).getTime();
  const out: Interval[] = [];
  const firstDay = localClock(q.timezone, q.now.getTime()).day;
  for (let day = firstDay; day <= firstDay + q.settings.max_days_ahead + 1 && out.length < q.limit; day++) {
    for (const [from, to] of spansOf(q.settings, day)) {
      for (let minute = from; minute + q.settings.meeting_minutes <= to && out.length < q.limit; minute += step) {
        if (q.partOfDay === 'morning' && minute >= NOON) break;
        if (q.partOfDay === 'afternoon' && minute < NOON) continue;
        const start = localWallToInstant(q.timezone, day, minute);
        // A wall time a spring-forward skipped comes out at the jump: not the grid's time, skip it.
        if (localClock(q.timezone, start).minute !== minute) continue;
        if (start < earliest || start > latest) continue;
        const end = start + meetingMs;
        if (overlaps(blocked, start, end)) continue;
        out.push({ start: new Date(start), end: new Date(end) });
      }
    }
  }
  return out;
}

/** Why a meeting of the customer's length starting at `start` cannot be booked, or null. */
export function slotProblem(q: Omit<SlotQuery, 'after' | 'partOfDay' | 'limit'> & { start: Date }): 'outside_hours' | 'too_soon' | 'too_far' | 'taken' | null {
  const start = q.start.getTime();
  const end = start + q.settings.meeting_minutes * MINUTE_MS;
  if (start < q.now.getTime() + q.settings.min_notice_minutes * MINUTE_MS) return 'too_soon';
  if (start > horizonOf(q.now, q.settings).getTime()) return 'too_far';
  const { day, minute } = localClock(q.timezone, start);
  const endMinute = minute + q.settings.meeting_minutes;
  // Within one span of its local day (a meeting past midnight would need the next day's span too).
  if (!spansOf(q.settings, day).some(([from, to]) => minute >= from && endMinute <= to)) return 'outside_hours';
  if (overlaps(widened(q.busy, q.booked, q.settings.buffer_minutes), start, end)) return 'taken';
  return null;
}

/** The latest instant a meeting may start. */
export function horizonOf(now: Date, settings: BookingSettings): Date {
  return new Date(now.getTime() + settings.max_days_ahead * DAY_MS);
}

/** What a slot search must read of the calendar: from the soonest start to the horizon's end, with the buffer. */
export function searchRange(now: Date, settings: BookingSettings): Interval {
  const pad = (settings.buffer_minutes + settings.meeting_minutes) * MINUTE_MS;
  return {
    start: new Date(now.getTime() + settings.min_notice_minutes * MINUTE_MS - pad),
    end: new Date(horizonOf(now, settings).getTime() + pad),
  };
}

/** The local spans [from, to) minutes of local day `day` (days since 1970-01-01). */
function spansOf(settings: BookingSettings, day: number): [number, number][] {
  const weekday: Weekday = WEEKDAYS[(weekdayOf(day) + 6) % 7];
  return settings.business_hours[weekday]
    .map((s): [number, number] => [minuteOfDay(s.start)!, minuteOfDay(s.end)!])
    .sort((a, b) => a[0] - b[0]);
}

/** Busy times and booked meetings, each widened by the buffer on both sides, in ms. */
function widened(busy: readonly Interval[], booked: readonly Interval[], bufferMinutes: number): [number, number][] {
  const pad = bufferMinutes * MINUTE_MS;
  return [...busy, ...booked].map((i): [number, number] => [i.start.getTime() - pad, i.end.getTime() + pad]);
}

function overlaps(blocked: readonly [number, number][], start: number, end: number): boolean {
  return blocked.some(([s, e]) => start < e && end > s);
}

// ---- local time -------------------------------------------------------------------------------

/**
 * The first instant the clock of `zone` reads `minute` (minutes after midnight) on the local date
 * `date` (YYYY-MM-DD, a real date); the jump's instant when a spring-forward skips that time.
 */
export function localTimeToInstant(zone: string, date: string, minute: number): Date {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(localWallToInstant(zone, Date.UTC(y, m - 1, d) / DAY_MS, minute));
}

/** The local day (days since 1970-01-01) and minute of day at `ms` in `zone`. */
function localClock(zone: string, ms: number): { day: number; minute: number } {
  const wall = ms + zoneOffsetMs(zone, ms);
  const day = Math.floor(wall / DAY_MS);
  return { day, minute: Math.floor((wall - day * DAY_MS) / MINUTE_MS) };
}

/** 0 = Sunday (1970-01-01 was a Thursday). */
const weekdayOf = (day: number): number => (day + 4) % 7;

