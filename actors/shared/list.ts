import { Refusal } from '../../runtime/refusal.ts';
import { cursorSeq, type CursorScope } from '../../db/pagination.ts';
import type { Queryable } from '../../db/pool.ts';

/** A list object (spec: Conventions): the first `limit` rows and whether more exist. */
export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** Rows are fetched with `limit + 1` so the extra row tells `has_more` without a count. */
export function toList<R, T>(rows: R[], limit: number, view: (row: R) => T): List<T> {
  return { object: 'list', data: rows.slice(0, limit).map(view), has_more: rows.length > limit };
}

/** Paging parameters of every list (spec: Lists): `limit` 1..200 (default 100) and a cursor. */
export interface Page {
  limit: number;
  startingAfter?: string;
}

/**
 * Where a page starts: the `seq` its cursor names inside the list `scope` describes, or null for
 * the first page. A cursor outside that list (another account, customer or mode) is
 * `invalid_cursor`, exactly like one that names nothing.
 */
export async function pageStart(db: Queryable, page: Page, scope: CursorScope): Promise<number | null> {
  if (!page.startingAfter) return null;
  const seq = await cursorSeq(db, scope, page.startingAfter);
  if (seq === null) throw new Refusal('invalid_cursor');
  return seq;
}
