/**
 * RFC 3339 date-times (section 5.6), read strictly: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
 * `Date.parse` is kinder than that and silently rewrites what it is given (`2026-02-30` is
 * March 2, `T24:00:00` the next day, a time without an offset local or UTC as it pleases, years
 * 1 and 9999 pass), so a date that is evidence (a consent's `obtained_at`) is read here instead.
 * Pure.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number): number => [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];

/**
 * The instant `text` names, or null when it is not a real RFC 3339 date-time with an offset: a
 * day the month does not have, hour 24, minute or second 60 (leap seconds are refused: no clock
 * here keeps them), an offset beyond ±23:59, or no offset at all.
 */
export function parseRfc3339(text: string): Date | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const ms = Date.parse(text.toUpperCase());
  return Number.isNaN(ms) ? null : new Date(ms);
}
