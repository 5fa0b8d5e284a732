/**
 * The time zone a callee most likely keeps, from the number called, and how a meeting's time is
 * said to them (issue 24): in their own zone when its clock differs from the business's, else in
 * the business's. Pure.
 *
 * +1 numbers: the area code's first zone (actors/shared/nanp-area-codes.ts lists the zone most of
 * its subscribers keep first). Other countries of the calling windows: the zone most of the
 * country keeps (Australia and Spain keep several; the agent names the zone it says, so a callee
 * elsewhere can correct it). Unknown: null (the business's zone is said).
 */

import { nanpAreaOf } from '../shared/nanp-area-codes.ts';
import { zoneOffsetMs } from '../shared/zone-time.ts';

const BY_CALLING_CODE: readonly [string, string][] = [
  ['+44', 'Europe/London'],
  ['+353', 'Europe/Dublin'],
  ['+49', 'Europe/Berlin'],
  ['+33', 'Europe/Paris'],
  ['+31', 'Europe/Amsterdam'],
  ['+34', 'Europe/Madrid'],
];

/** Australian geographic area codes (the digit after +61) and the zone most of each keeps. */
const AU_AREAS: Readonly<Record<string, string>> = { '2': 'Australia/Sydney', '3': 'Australia/Melbourne', '7': 'Australia/Brisbane', '8': 'Australia/Adelaide' };

export function calleeZone(e164: string): string | null {
  if (e164.startsWith('+1')) return nanpAreaOf(e164)?.zones[0] ?? null;
  if (e164.startsWith('+61')) return AU_AREAS[e164[3]] ?? null;
  return BY_CALLING_CODE.find(([code]) => e164.startsWith(code))?.[1] ?? null;
}

/**
 * How the agent says `at`: "Tuesday 1 December 2026, 10:00 (America/New_York)". In the callee's
 * zone when its clock differs from the business's at that instant, marked "your time".
 */
export function sayTime(at: Date, businessZone: string, calleeZoneName: string | null): string {
  const zone = sayZone(at, businessZone, calleeZoneName);
  const differs = zone !== businessZone;
  const text = new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  return differs ? `${text} your time (${zone})` : `${text} (${zone})`;
}

/** The zone `sayTime` says `at` in: the callee's when its clock differs from the business's then, else the business's. */
export function sayZone(at: Date, businessZone: string, calleeZoneName: string | null): string {
  const differs = calleeZoneName !== null && zoneOffsetMs(calleeZoneName, at.getTime()) !== zoneOffsetMs(businessZone, at.getTime());
  return differs ? calleeZoneName! : businessZone;
}
