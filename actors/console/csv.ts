import { nameSlug } from '../shared/slug.ts';

/**
 * CSV as RFC 4180 writes it (CRLF line ends; a field with a comma, a double quote, CR or LF is
 * quoted and its quotes doubled), safe to open in a spreadsheet: a text cell starting with `=`,
 * `+`, `-`, `@`, a tab or a carriage return is prefixed with a single quote so it is read as text,
 * never as a formula (OWASP, "CSV Injection"). Numbers the service formats itself (integer cents,
 * decimal amounts) are written as numbers. Pure.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** A cell: text (guarded), a number, a numeral the service formatted (`{ numeral: '-40.55' }`), or empty. */
export type CsvValue = string | number | null | { numeral: string };
const NUMERAL = /^-?\d+(?:\.\d+)?$/;

export function csvCell(value: CsvValue): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'object') {
    if (!NUMERAL.test(value.numeral)) throw new Error(`not a numeral: ${value.numeral}`);
    return value.numeral;
  }
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/** Integer cents as a decimal amount with two places: -4055 → "-40.55". Exact (no floating point). */
export function centsToDecimal(cents: number): string {
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** A file-name-safe slug of a name (ASCII letters, digits and dashes), or `fallback` when nothing is left. */
export function fileSlug(name: string, fallback: string): string {
  return nameSlug(name) || fallback;
}
