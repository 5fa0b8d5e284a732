import type { Queryable } from './pool.ts';

/**
 * `UPDATE <table> SET <the changed columns>, updated_at = now WHERE id = … RETURNING *`, for the
 * columns of `change` that `allowed` names (anything else is ignored, so a caller cannot set an
 * id, a mode or a price by passing it). `table` and `allowed` are the repository's own constants.
 */
export async function updateColumns<T>(db: Queryable, table: string, allowed: ReadonlySet<string>, id: string, change: object, now: Date): Promise<T> {
  const keys = Object.keys(change).filter((k) => allowed.has(k));
  const sets = keys.map((k, i) => `${k} = $${i + 3}`);
  const { rows } = await db.query(`UPDATE ${table} SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1 RETURNING *`, [
    id,
    now,
    ...keys.map((k) => (change as Record<string, unknown>)[k]),
  ]);
  return rows[0];
}
