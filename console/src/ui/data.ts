import { useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';

/** The rows of an answer that is a list object, a bare array, or absent. */
export function rowsOf<T>(x: { data: T[] } | T[] | null | undefined): T[] {
  if (!x) return [];
  return Array.isArray(x) ? x : (x.data ?? []);
}

/** Marks every cached answer whose path starts with one of `paths` as stale (refetched where shown). */
export function useInvalidate() {
  const client = useQueryClient();
  return (...paths: string[]) =>
    client.invalidateQueries({
      predicate: (q) => {
        const head = q.queryKey[0];
        return typeof head === 'string' && paths.some((p) => head === p || head.startsWith(`${p}/`) || head.startsWith(`${p}?`));
      },
    });
}

/** `<input type="datetime-local">` value → ISO 8601 UTC (the browser's zone), or undefined. */
export function localInputToIso(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** ISO → the value an `<input type="datetime-local">` shows, in the browser's zone. */
export function isoToLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** `<input type="date">` value → start of that day (UTC) as ISO, or its end when `end`. */
export function dayToIso(value: string | undefined, end = false): string | undefined {
  if (!value) return undefined;
  return end ? `${value}T23:59:59.999Z` : `${value}T00:00:00.000Z`;
}

/** A list's filters kept in the page's address (so a filtered view can be shared and reloaded). */
export function useAddressFilters() {
  const [params, setParams] = useSearchParams();
  return {
    get: (name: string) => params.get(name) ?? '',
    set: (name: string, value: string) => {
      const next = new URLSearchParams(params);
      if (value) next.set(name, value);
      else next.delete(name);
      setParams(next, { replace: true });
    },
  };
}
