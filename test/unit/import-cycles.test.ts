import test from 'ava';
import { localImports, readSource, sourceFiles } from '../helpers/source-tree.ts';

/**
 * No import cycle, between files or between rooms (issue 12). A room is a folder of the house
 * (docs/decisions.md, "Map of the house"): `actors/<kind>` for each kind of actor, and each other
 * top-level folder as a whole. Type-only imports count: a cycle of types is still two rooms that
 * cannot be read or changed apart.
 */

const SOURCE_DIRS = ['actors', 'app', 'db', 'http', 'money', 'runtime', 'telephony', 'email'];

function roomOf(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'actors' && parts.length > 2 ? `actors/${parts[1]}` : parts[0];
}

/** Strongly connected components of more than one node (or a node importing itself), by Tarjan's algorithm. */
export function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

function graphs() {
  const files = new Map<string, Set<string>>();
  const rooms = new Map<string, Set<string>>();
  for (const file of SOURCE_DIRS.flatMap(sourceFiles)) {
    const targets = localImports(file, readSource(file)).filter((t) => /\.tsx?$/.test(t));
    files.set(file, new Set(targets));
    const room = roomOf(file);
    if (!rooms.has(room)) rooms.set(room, new Set());
    for (const t of targets) if (roomOf(t) !== room) rooms.get(room)!.add(roomOf(t));
  }
  return { files, rooms };
}

test('cycles finds a loop, a self-import and nothing in a tree', (t) => {
  const g = (edges: [string, string][]) => {
    const m = new Map<string, Set<string>>();
    for (const [a, b] of edges) {
      if (!m.has(a)) m.set(a, new Set());
      if (!m.has(b)) m.set(b, new Set());
      m.get(a)!.add(b);
    }
    return m;
  };
  t.deepEqual(cycles(g([['a', 'b'], ['b', 'c'], ['c', 'a'], ['c', 'd']])), [['a', 'b', 'c']]);
  t.deepEqual(cycles(g([['a', 'a'], ['a', 'b']])), [['a']]);
  t.deepEqual(cycles(g([['a', 'b'], ['a', 'c'], ['b', 'c']])), []);
  t.deepEqual(localImports('actors/chat/coach.ts', "import type { A } from './assistant.ts';\nimport x from 'openai';"), ['actors/chat/assistant.ts']);
});

test('no two source files import each other, directly or around a loop', (t) => {
  const { files } = graphs();
  t.true(files.size > 100, 'the scan reads the tree');
  t.deepEqual(cycles(files), []);
});

test('no two rooms import each other, directly or around a loop', (t) => {
  const { rooms } = graphs();
  t.true(rooms.has('actors/call') && rooms.has('db') && rooms.has('http'), 'the rooms are found');
  t.deepEqual(cycles(rooms), []);
});
