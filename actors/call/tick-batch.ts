/**
 * Gathers the calls made in one turn of the event loop into one batch: each caller gets its own
 * result, and the batch runs once every caller of the turn has asked (at `setImmediate`), so
 * what it reads is read after each of them asked, as a call of its own would be. The dialler's
 * round dials its calls side by side, so their do-not-call re-checks, dial records and progress
 * reports come in the same turns; one statement then serves them all.
 *
 * `run` answers the items in order. If the batch fails, each item is run alone (`one`), so an
 * item's failure stays its own and the others are not lost with it. A single item is run alone.
 */
export function tickBatch<T, R>(run: (items: T[]) => Promise<R[]>, one: (item: T) => Promise<R>, max = 500): (item: T) => Promise<R> {
  type Waiting = { item: T; resolve: (r: R) => void; reject: (err: unknown) => void };
  let waiting: Waiting[] = [];
  const alone = (w: Waiting) => one(w.item).then(w.resolve, w.reject);
  async function flush(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return alone(batch[0]);
    let results: R[];
    try {
      results = await run(batch.map((w) => w.item));
    } catch {
      await Promise.all(batch.map(alone));
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i]));
  }
  const take = () => {
    const batch = waiting;
    waiting = [];
    return batch;
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (waiting.length === 1) setImmediate(() => waiting.length > 0 && void flush(take()));
      else if (waiting.length >= max) void flush(take());
    });
}
