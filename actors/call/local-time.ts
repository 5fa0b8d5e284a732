import { ZoneFormats } from '../shared/zone-formats.ts';

/**
 * One formatter per zone: building one costs far more than formatting with it (the dialler's
 * compliance record writes a local time per zone of every call). A zone the runtime does not know
 * throws when its formatter is built, as before, and is not kept; at most ZONE_FORMATS_KEPT are
 * kept (actors/shared/zone-formats.ts: a customer's timezone may be spelt in any case).
 */
export const localTimeFormats = new ZoneFormats('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** "2026-11-24 10:00" in `timezone` (an appointment's start, as the agent says it and the summary writes it). */
export function localTime(at: Date, timezone: string): string {
  const parts = localTimeFormats.get(timezone).formatToParts(at);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}
