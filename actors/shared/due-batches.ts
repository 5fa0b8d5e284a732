import { withTransaction, type Client, type Pool } from '../../db/pool.ts';

/**
 * A renewal job's walk: the rows `page` finds due, `batch` at a time in `seq` order (keyset, so a
 * row the job leaves as it was is not read twice), each handled by `each` in a transaction of its
 * own. Returns how many `each` said it acted on. Numbers' rent and sites' hosting use it.
 */
export async function eachDueInOwnTransaction(
  pool: Pool,
  batch: number,
  page: (after: number) => Promise<ReadonlyArray<{ id: string; seq: number }>>,
  each: (client: Client, id: string) => Promise<boolean>,
): Promise<number> {
  let done = 0;
  let after = 0;
  for (;;) {
    const due = await page(after);
    for (const { id, seq } of due) {
      after = seq;
      if (await withTransaction(pool, (client) => each(client, id))) done++;
    }
    if (due.length < batch) return done;
  }
}
