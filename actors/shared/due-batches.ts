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

/**
 * A renewal job's walk in batches: `claimPage` locks the next `batch` rows due after a `seq`
 * (skipping rows another transaction holds), and `each` handles them one after another in ONE
 * transaction per batch, so a batch costs one commit instead of one per row (or `all` handles the
 * whole page at once in that transaction, set-based, as `each` would one after another). Returns
 * how many rows were acted on.
 *
 * Each row stays all-or-nothing: `each` (and `all`) works only inside the batch's transaction, so a row is
 * either wholly handled or not at all. If any row's `each` throws (or the database aborts the
 * batch: a deadlock, a lost connection; or `all` throws), the whole batch is rolled back and its rows are walked
 * again one transaction each, re-claimed through `claimOne`: every other row of the batch is
 * handled and kept, and the failing row's error then stops the run. A job killed mid-batch has committed nothing of that batch; run again, it finds
 * those rows still due (what a row pays is claimed once per period, so nothing is charged twice).
 */
export async function eachDueInBatches<R extends { id: string; seq: number }>(
  pool: Pool,
  batch: number,
  claimPage: (client: Client, after: number) => Promise<R[]>,
  claimOne: (client: Client, id: string) => Promise<R | null>,
  each: (client: Client, row: R) => Promise<boolean>,
  all: (client: Client, rows: R[]) => Promise<number> = async (client, rows) => {
    let acted = 0;
    for (const row of rows) if (await each(client, row)) acted++;
    return acted;
  },
): Promise<number> {
  let done = 0;
  let after = 0;
  for (;;) {
    let page: R[] = [];
    try {
      done += await withTransaction(pool, async (client) => {
        page = await claimPage(client, after);
        return all(client, page);
      });
    } catch (err) {
      if (page.length === 0) throw err;
      // Walked again a row per transaction: every row but the failing ones is handled, then the
      // first failure stops the run (the rows after this batch wait for the next run).
      let failure: unknown = null;
      for (const { id } of page) {
        try {
          const acted = await withTransaction(pool, async (client) => {
            const row = await claimOne(client, id);
            return row ? each(client, row) : false;
          });
          if (acted) done++;
        } catch (itemErr) {
          failure ??= itemErr;
        }
      }
      if (failure) throw failure;
    }
    if (page.length < batch) return done;
    after = page[page.length - 1].seq;
  }
}
