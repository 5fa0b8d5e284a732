/**
 * Values as the emails write them. Pure.
 */

const USD = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Integer cents as dollars: 123456 → `$1,234.56`, -1200 → `-$12.00` (every email, whatever its language). */
export function formatCents(cents: number): string {
  return USD.format(Math.round(cents) / 100);
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A day (`2026-12-01` or a timestamp) in `lang`, in UTC: `1 December 2026`, `1. Dezember 2026`. Null for a value that is not a date. */
export function formatDay(value: string | null | undefined, lang = 'en'): string | null {
  if (!value) return null;
  const d = new Date(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(d.getTime())) return null;
  return new Intl.DateTimeFormat(lang === 'en' ? 'en-GB' : lang, { dateStyle: 'long', timeZone: 'UTC' }).format(d);
}

/** A moment in English, in UTC: `1 December 2026 at 14:05 UTC`. */
export function formatMoment(value: string | null | undefined): string | null {
  if (!value) return null;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return null;
  const day = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'UTC' }).format(d);
  const time = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' }).format(d);
  return `${day} at ${time} UTC`;
}

/** `{name}` slots filled from `values` (missing ones stay as written). */
export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (slot, key: string) => values[key] ?? slot);
}

/** A field of an email's data read as text, or `fallback`. */
export function text(data: Record<string, unknown>, key: string, fallback = ''): string {
  const v = data[key];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : fallback;
}

/** A field of an email's data read as a number, or null. */
export function number(data: Record<string, unknown>, key: string): number | null {
  const v = data[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
