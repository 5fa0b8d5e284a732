import test from 'ava';
import { readSource, sourceFiles } from '../helpers/source-tree.ts';

/**
 * A message an actor declares a read skips its mailbox once the actor is loaded
 * (runtime/actor-system.ts). Only reads may: a write marked as a read would run beside the
 * actor's other writes, and the mailbox would no longer be the write queue it claims to be
 * (docs/decisions.md, "Per-entity write queues and plain modules"). Read messages are named
 * get_… or list_…, and this test holds every declaration to that.
 */

/**
 * The message types a behaviour file declares as reads: `isRead: (msg) => SET.has(msg.type)` with
 * that set's literal, or an inline `msg.type === '…'`. Null for a file that declares none.
 */
export function declaredReads(source: string): string[] | null {
  const isRead = /isRead: \(msg\) => ([^\n]+)/.exec(source);
  if (!isRead) return null;
  const named = /^(\w+)\.has\(msg\.type\)/.exec(isRead[1]);
  const text = named ? new RegExp(`const ${named[1]} = new Set<[^>]+>\\(\\[([^\\]]*)\\]\\)`).exec(source)?.[1] : isRead[1];
  if (text === undefined) throw new Error(`isRead uses ${named![1]}, whose literal was not found`);
  return [...text.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]);
}

test('declaredReads reads a READS set and an inline comparison', (t) => {
  t.deepEqual(declaredReads("const CONCURRENT = new Set<M['type']>([\n  'get_a',\n  // x\n  'send_b',\n]);\n isRead: (msg) => CONCURRENT.has(msg.type),"), ['get_a', 'send_b']);
  t.deepEqual(declaredReads("isRead: (msg) => msg.type === 'get_live',"), ['get_live']);
  t.is(declaredReads('const x = 1;'), null);
});

test('every message an actor lets skip its mailbox is a read (get_… or list_…)', (t) => {
  const declared = sourceFiles('actors').flatMap((file) => {
    const reads = declaredReads(readSource(file));
    return reads ? reads.map((type) => `${file}: ${type}`) : [];
  });
  t.true(declared.length >= 15, `the scan finds the actors' reads (${declared.length})`);
  t.deepEqual(
    declared.filter((d) => !/: (get|list)_[a-z_]+$/.test(d)),
    [],
  );
});
