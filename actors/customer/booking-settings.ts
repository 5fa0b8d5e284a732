/**
 * A customer's booking rules (issue 24): when the business takes meetings (hours per weekday in
 * its time zone), how long a meeting is, the gap kept around every meeting, how soon and how far
 * ahead one may be booked. The reseller sets any of them (docs/api.md, "Booking settings"); the
 * rest are the documented defaults. Stored as set (customers.booking_settings, migration 046; null:
 * every default), read through `bookingSettingsOf`. Pure.
 */

import { Refusal } from '../../runtime/refusal.ts';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A span of the business's day, local wall time 'HH:MM' (24 h; '24:00' ends a day). */
export interface HoursSpan {
  start: string;
  end: string;
}

export interface BookingSettings {
  /** Per weekday, the spans the business takes meetings in (none: closed that day). */
  business_hours: Record<Weekday, HoursSpan[]>;
  meeting_minutes: number;
  /** Kept free before and after every meeting and busy time. */
  buffer_minutes: number;
  /** The soonest a meeting may start, minutes from now. */
  min_notice_minutes: number;
  /** The furthest a meeting may start, days from now. */
  max_days_ahead: number;
}

/** The bounds the API enforces (inclusive). */
export const BOOKING_BOUNDS = {
  meeting_minutes: { min: 10, max: 240 },
  buffer_minutes: { min: 0, max: 120 },
  min_notice_minutes: { min: 0, max: 10_080 },
  max_days_ahead: { min: 1, max: 365 },
  /** Spans per weekday. */
  spans: { max: 6 },
} as const;

const WORKDAY: HoursSpan[] = [{ start: '09:00', end: '17:00' }];

export const DEFAULT_BOOKING_SETTINGS: BookingSettings = {
  business_hours: { mon: WORKDAY, tue: WORKDAY, wed: WORKDAY, thu: WORKDAY, fri: WORKDAY, sat: [], sun: [] },
  meeting_minutes: 30,
  buffer_minutes: 15,
  min_notice_minutes: 120,
  max_days_ahead: 30,
};

/** What a create or an update sends: any field; null resets it (or, for `booking: null`, everything) to the default. */
export interface BookingSettingsPatch {
  business_hours?: Partial<Record<Weekday, HoursSpan[] | null>> | null;
  meeting_minutes?: number | null;
  buffer_minutes?: number | null;
  min_notice_minutes?: number | null;
  max_days_ahead?: number | null;
}

const NUMBERS = ['meeting_minutes', 'buffer_minutes', 'min_notice_minutes', 'max_days_ahead'] as const;

/** 'HH:MM' → minutes of the day; null when not a time (00:00–24:00). */
export function minuteOfDay(hhmm: string): number | null {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(hhmm);
  if (!m) return null;
  const minutes = Number(m[1]) * 60 + Number(m[2]);
  return minutes <= 1440 ? minutes : null;
}

/**
 * The settings in force: what was stored over the defaults. Values are checked when the API
 * stores them; a stored value of the wrong shape (never written by this code) is ignored.
 */
export function bookingSettingsOf(customer: { booking_settings?: unknown }): BookingSettings {
  const stored = isRecord(customer.booking_settings) ? customer.booking_settings : {};
  const out: BookingSettings = { ...DEFAULT_BOOKING_SETTINGS, business_hours: { ...DEFAULT_BOOKING_SETTINGS.business_hours } };
  for (const k of NUMBERS) if (Number.isInteger(stored[k])) out[k] = stored[k] as number;
  if (isRecord(stored.business_hours)) {
    for (const day of WEEKDAYS) {
      const spans = stored.business_hours[day];
      if (Array.isArray(spans) && problemOfDay(spans) === null) out.business_hours[day] = spans.map((s) => ({ start: s.start, end: s.end }));
    }
  }
  return out;
}

/**
 * The stored settings after `patch` (checked): the settings in force with the patch applied, or
 * null when everything is back to the defaults. `booking_settings_invalid`-style problems are
 * refused as `invalid_parameter` naming the field.
 */
export function mergeBookingSettings(stored: unknown, patch: BookingSettingsPatch | null | undefined): BookingSettings | null {
  if (patch === null) return null;
  const current = bookingSettingsOf({ booking_settings: stored });
  if (patch === undefined) return isRecord(stored) ? current : null;
  if (!isRecord(patch)) throw invalid('booking', 'must be an object or null');
  const next: BookingSettings = { ...current, business_hours: { ...current.business_hours } };
  for (const key of Object.keys(patch)) {
    if (key !== 'business_hours' && !(NUMBERS as readonly string[]).includes(key)) throw invalid(`booking.${key}`, 'is not a booking setting');
  }
  for (const k of NUMBERS) {
    const v = patch[k];
    if (v === undefined) continue;
    if (v === null) {
      next[k] = DEFAULT_BOOKING_SETTINGS[k];
      continue;
    }
    const b = BOOKING_BOUNDS[k];
    if (!Number.isInteger(v) || v < b.min || v > b.max) throw invalid(`booking.${k}`, `must be a whole number from ${b.min} to ${b.max}`);
    next[k] = v;
  }
  if (patch.business_hours === null) next.business_hours = { ...DEFAULT_BOOKING_SETTINGS.business_hours };
  else if (patch.business_hours !== undefined) {
    if (!isRecord(patch.business_hours)) throw invalid('booking.business_hours', 'must be an object of weekdays');
    for (const [day, spans] of Object.entries(patch.business_hours)) {
      if (!(WEEKDAYS as readonly string[]).includes(day)) throw invalid(`booking.business_hours.${day}`, `is not a weekday (${WEEKDAYS.join(', ')})`);
      const d = day as Weekday;
      if (spans === null) {
        next.business_hours[d] = DEFAULT_BOOKING_SETTINGS.business_hours[d];
        continue;
      }
      const problem = Array.isArray(spans) ? problemOfDay(spans) : 'must be a list of {start, end}';
      if (problem) throw invalid(`booking.business_hours.${d}`, problem);
      next.business_hours[d] = (spans as HoursSpan[]).map((s) => ({ start: s.start, end: s.end }));
    }
  }
  if (next.meeting_minutes > 0 && !WEEKDAYS.some((d) => next.business_hours[d].some((s) => minuteOfDay(s.end)! - minuteOfDay(s.start)! >= next.meeting_minutes))) {
    throw invalid('booking.business_hours', `no span is as long as a meeting (${next.meeting_minutes} minutes)`);
  }
  return next;
}

/** Why a weekday's spans cannot stand, or null: each HH:MM, start before end, none overlapping. */
function problemOfDay(spans: unknown[]): string | null {
  if (spans.length > BOOKING_BOUNDS.spans.max) return `at most ${BOOKING_BOUNDS.spans.max} spans a day`;
  const read: [number, number][] = [];
  for (const s of spans) {
    if (!isRecord(s) || typeof s.start !== 'string' || typeof s.end !== 'string') return 'each span is {start: "HH:MM", end: "HH:MM"}';
    if (Object.keys(s).some((k) => k !== 'start' && k !== 'end')) return 'each span is {start: "HH:MM", end: "HH:MM"}';
    const start = minuteOfDay(s.start);
    const end = minuteOfDay(s.end);
    if (start === null || end === null) return 'times are HH:MM, 00:00 to 24:00';
    if (start >= end) return `${s.start}–${s.end}: the start must be before the end`;
    read.push([start, end]);
  }
  read.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < read.length; i++) if (read[i][0] < read[i - 1][1]) return 'spans must not overlap';
  return null;
}

function invalid(field: string, problem: string): Refusal {
  return new Refusal('invalid_parameter', `${field} ${problem}.`);
}

function isRecord(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
