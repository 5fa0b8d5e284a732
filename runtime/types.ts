/** Shared vocabulary of the whole service. */
export type Mode = 'test' | 'live';

/** ISO 8601 in UTC with milliseconds (spec: Conventions), or null. */
export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** `iso` for a value that is never null. */
export const isoNow = (d: Date): string => d.toISOString();
