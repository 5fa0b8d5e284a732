/**
 * The agent's tool calls, read. Pure: a tool's name and the arguments the speech model sent (any
 * JSON at all: a model may send wrong types, huge strings or text PostgreSQL cannot store) in,
 * either what the call actor does or the reply the agent gets instead. Every value read here fits
 * where it is written, so carrying out a tool call never fails on its arguments.
 */

import { localTimeToInstant } from './free-slots.ts';

/** Longest attendee name and notes of a booked appointment, and reason of a do-not-call request (UTF-16 units). */
export const ATTENDEE_NAME_MAX = 200;
export const NOTES_MAX = 2000;
export const DNC_REASON_MAX = 500;
/** Longest reason the agent gives for ending a call (the declared reasons are single words). */
export const END_REASON_MAX = 200;
/** An appointment's length when the agent gives none (or no whole number), and its bounds, minutes. */
export const DEFAULT_DURATION_MINUTES = 30;
export const MIN_DURATION_MINUTES = 10;
export const MAX_DURATION_MINUTES = 120;
/** The do-not-call reason recorded when the agent gives none. */
export const DEFAULT_DNC_REASON = 'asked not to be called again';

/**
 * Where a slot search starts, as the agent gave it: an instant (a date-time with its offset), or a
 * time on the business's own clock (a bare date is its midnight there, a date-time without an
 * offset its local time), which only the business's zone turns into an instant (`searchStartIn`).
 */
export type SearchStart = { at: Date } | { localDate: string; minute: number };

export type ToolCall =
  | { tool: 'find_free_slots'; after: SearchStart | null; partOfDay: 'morning' | 'afternoon' | 'any' }
  | { tool: 'book_appointment'; startAt: Date; endAt: Date; attendeeName: string | null; notes: string | null }
  | { tool: 'mark_do_not_call'; reason: string }
  | { tool: 'end_call'; reason: string };

/** What to do for the agent's call of `name`: act, or answer at once with `reply`. */
export type ToolDecision = { act: ToolCall } | { reply: Record<string, unknown> };

/** Reads the agent's call of tool `name` with `args` at `now`. */
export function readToolCall(name: string, args: unknown, now: Date): ToolDecision {
  const a: Record<string, unknown> = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  switch (name) {
    case 'find_free_slots': {
      // A date or time the search starts from; anything unreadable searches from now.
      const partOfDay = a.part_of_day === 'morning' || a.part_of_day === 'afternoon' ? a.part_of_day : 'any';
      return { act: { tool: 'find_free_slots', after: typeof a.after === 'string' ? searchStart(a.after) : null, partOfDay } };
    }
    case 'book_appointment': {
      // An exact instant only (the slots find_free_slots gives carry their offset): a time without
      // one would be read on the server's own clock, which is neither the business's nor the callee's.
      const startAt = typeof a.start_at === 'string' && WITH_OFFSET.test(a.start_at.trim()) ? new Date(a.start_at) : null;
      const endAt = startAt && new Date(startAt.getTime() + durationMinutes(a.duration_minutes) * 60_000);
      // An end past the last instant a Date can hold is as unusable as no start at all.
      if (!startAt || !endAt || Number.isNaN(endAt.getTime()) || startAt <= now) {
        return { reply: { booked: false, error: 'start_at must be a future date and time with its offset' } };
      }
      return { act: { tool: 'book_appointment', startAt, endAt, attendeeName: text(a.attendee_name, ATTENDEE_NAME_MAX), notes: text(a.notes, NOTES_MAX) } };
    }
    case 'mark_do_not_call':
      return { act: { tool: 'mark_do_not_call', reason: text(a.reason, DNC_REASON_MAX) ?? DEFAULT_DNC_REASON } };
    case 'end_call':
      return { act: { tool: 'end_call', reason: text(a.reason, END_REASON_MAX) ?? 'other' } };
    default:
      return { reply: { error: `unknown tool ${name}` } };
  }
}

const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?$/;
const WITH_OFFSET = /(?:[Zz]|[+-]\d{2}:?\d{2})$/;

/**
 * The agent's `after`: `YYYY-MM-DD` (that day from midnight on the business's clock),
 * `YYYY-MM-DDTHH:MM[:SS]` (that time on the business's clock), or a date-time with its offset (that
 * instant). A day the month does not have, or a time past 23:59, reads as nothing (null).
 */
function searchStart(text: string): SearchStart | null {
  const m = LOCAL_DATE_TIME.exec(text.trim());
  if (m) {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const real = new Date(Date.UTC(y, mo - 1, d));
    if (real.getUTCFullYear() !== y || real.getUTCMonth() !== mo - 1 || real.getUTCDate() !== d) return null;
    const [h, min] = [Number(m[4] ?? 0), Number(m[5] ?? 0)];
    if (h > 23 || min > 59) return null;
    return { localDate: `${m[1]}-${m[2]}-${m[3]}`, minute: h * 60 + min };
  }
  if (!WITH_OFFSET.test(text.trim())) return null;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? null : { at };
}

/** The instant a slot search starts from, the business's clock being `zone`'s. Pure. */
export function searchStartIn(after: SearchStart | null, zone: string): Date | null {
  if (after === null) return null;
  return 'at' in after ? after.at : localTimeToInstant(zone, after.localDate, after.minute);
}

/** A whole number of minutes held to the bounds; anything else is the default length. */
function durationMinutes(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) return DEFAULT_DURATION_MINUTES;
  return Math.min(MAX_DURATION_MINUTES, Math.max(MIN_DURATION_MINUTES, value));
}

/**
 * A string cut to `max` UTF-16 units and made storable; null for anything else. PostgreSQL refuses
 * NUL, so it is dropped (the statement used to fail, losing a do-not-call request); a surrogate
 * without its pair (also one cut in half) becomes U+FFFD, which is what the driver stored anyway.
 */
function text(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  return value.slice(0, max).replace(/\u0000/g, '').replace(/[\uD800-\uDFFF]/gu, '\uFFFD');
}
