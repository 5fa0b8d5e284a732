/** Amounts, dates and durations as people read them. Money is integer cents everywhere. */

export function money(cents: number | null | undefined, currency = 'USD'): string {
  if (cents === null || cents === undefined) return '—';
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
  } catch {
    return `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;
  }
}

export function dateTime(iso: string | null | undefined, timeZone?: string): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  try {
    // dateStyle cannot be combined with timeZoneName: the fields one by one when a zone is named.
    const options: Intl.DateTimeFormatOptions = timeZone
      ? { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone, timeZoneName: 'short' }
      : { dateStyle: 'medium', timeStyle: 'short' };
    return new Intl.DateTimeFormat(undefined, options).format(d);
  } catch {
    return d.toISOString();
  }
}

export function date(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' }).format(d);
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return m ? `${m} min ${s.toString().padStart(2, '0')} s` : `${s} s`;
}

/** `snake_case` codes as words: "insufficient_balance" → "Insufficient balance". */
export function words(code: string | null | undefined): string {
  if (!code) return '—';
  const s = code.replace(/[_.]/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}
