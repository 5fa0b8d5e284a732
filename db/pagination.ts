import type { Queryable } from './pool.ts';

/** Tables whose lists page by `starting_after=<id>`. */
type PagedTable = 'customers' | 'onboarding_links' | 'accounts' | 'api_keys';

/**
 * The position (`seq`) of the object a `starting_after` cursor names, within the rows `scope`
 * allows (its account), or null when there is no such object there.
 */
export async function cursorSeq(db: Queryable, table: PagedTable, id: string, accountId: string | null): Promise<number | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const column = table === 'accounts' ? 'id' : 'account_id';
  const { rows } = await db.query(
    `SELECT seq FROM ${table} WHERE id = $1 AND ($2::uuid IS NULL OR ${column} = $2::uuid)`,
    [id, accountId],
  );
  return rows[0]?.seq ?? null;
}
