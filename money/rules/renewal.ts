/**
 * The calendar of a recurring charge (a number's rent; a website's hosting next): when each
 * period starts, when the early warning goes, and how long an unpaid renewal waits before the
 * item is let go. Pure; dates are UTC calendar days as `YYYY-MM-DD`.
 */

/** A number's rent is due this many days ahead of a renewal the balance will not cover: warned then. */
export const RENEWAL_NOTICE_DAYS = 3;
/** Rent not taken at renewal: the number keeps working this many days, then it is released. */
export const RELEASE_COUNTDOWN_DAYS = 14;

/** `YYYY-MM-DD` of an instant (UTC). */
export function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

function parseDay(day: string): { y: number; m: number; d: number } {
  const [y, m, d] = day.split('-').map(Number);
  return { y, m, d };
}

function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

function format(y: number, m: number, d: number): string {
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** `day` plus `n` days. */
export function addDays(day: string, n: number): string {
  const { y, m, d } = parseDay(day);
  return dayOf(new Date(Date.UTC(y, m - 1, d + n)));
}

/**
 * The renewal after `day` for an item anchored on `anchorDay` of the month: the same day next
 * month, or that month's last day when it is shorter (an item rented on 31 January renews on
 * 28 or 29 February, then on 31 March: the anchor is kept, so the day does not drift).
 */
export function nextRenewal(day: string, anchorDay: number): string {
  const { y, m } = parseDay(day);
  const ny = m === 12 ? y + 1 : y;
  const nm = m === 12 ? 1 : m + 1;
  return format(ny, nm, Math.min(anchorDay, daysInMonth(ny, nm)));
}

/** Whether `today` is on or after `day`. */
export function reached(today: string, day: string): boolean {
  return today >= day;
}

/** Whether the early warning of the renewal on `renewsOn` is due on `today` (the notice window has opened, the renewal not come). */
export function inNoticeWindow(today: string, renewsOn: string): boolean {
  return today >= addDays(renewsOn, -RENEWAL_NOTICE_DAYS) && today < renewsOn;
}

/** The day an unpaid item renewing on `renewsOn` is released. */
export function releaseDueOn(renewsOn: string): string {
  return addDays(renewsOn, RELEASE_COUNTDOWN_DAYS);
}
