import test from 'ava';
import { tickBatch } from '../../actors/call/tick-batch.ts';

test('calls made in one turn go in one batch, each answered with its own result, in order', async (t) => {
  const batches: number[][] = [];
  const alone: number[] = [];
  const double = tickBatch(
    async (items: number[]) => {
      batches.push(items);
      return items.map((i) => i * 2);
    },
    async (i: number) => {
      alone.push(i);
      return i * 2;
    },
  );
  t.deepEqual(await Promise.all([1, 2, 3].map(double)), [2, 4, 6]);
  t.deepEqual(batches, [[1, 2, 3]]);
  // A call alone in its turn is run alone; the next turn is a batch of its own.
  t.is(await double(4), 8);
  t.deepEqual(alone, [4]);
  t.deepEqual(await Promise.all([5, 6].map(double)), [10, 12]);
  t.deepEqual(batches, [[1, 2, 3], [5, 6]]);
});

test('a failed batch runs each item alone: one item’s failure stays its own', async (t) => {
  const f = tickBatch(
    async () => {
      throw new Error('the batch failed');
    },
    async (i: number) => {
      if (i === 2) throw new Error('two fails');
      return i;
    },
  );
  const results = await Promise.allSettled([1, 2, 3].map(f));
  t.deepEqual(
    results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
    [1, 'two fails', 3],
  );
});

test('a batch that reaches its bound goes at once; the rest wait for the turn', async (t) => {
  const batches: number[][] = [];
  const f = tickBatch(
    async (items: number[]) => {
      batches.push(items);
      return items;
    },
    async (i: number) => {
      batches.push([i]);
      return i;
    },
    2,
  );
  t.deepEqual(await Promise.all([1, 2, 3, 4, 5].map(f)), [1, 2, 3, 4, 5]);
  t.deepEqual(batches, [[1, 2], [3, 4], [5]]);
});
