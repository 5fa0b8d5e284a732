import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Import cycles between actor folders (issue 12, "Also"): a folder that imports another which
 * imports it back cannot be read, tested or moved on its own. Checked at two levels: files (a
 * cycle of modules) and folders (an arrow each way, even through different files).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Pairs of actor folders that must not import each other both ways. */
const APART: [string, string][] = [['actors/account', 'actors/call']];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

/** The project files `file` imports (types too: a type-only cycle still ties the folders together). */
function importsOf(file: string): string[] {
  const source = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.[^'"\n]+)\1/g)].map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(file), m[2])));
}

/** The module graph of the source tree (everything but tests, bench and node_modules). */
function graph(): Map<string, string[]> {
  const files = ['actors', 'runtime', 'db', 'http', 'telephony'].flatMap(sourceFiles);
  const known = new Set(files);
  return new Map(files.map((f) => [f, importsOf(f).filter((target) => known.has(target))]));
}

/** Strongly connected components with more than one file: each is an import cycle (Tarjan). */
function cycles(edges: Map<string, string[]>): string[][] {
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
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = ''; w !== v; ) {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      }
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

const inFolder = (file: string, folder: string) => file.startsWith(`${folder}/`);

test('cycles finds a cycle of files and nothing in a chain', (t) => {
  const edges = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  t.deepEqual(cycles(edges), [['a.ts', 'b.ts', 'c.ts']]);
  t.deepEqual(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', []]])), []);
});

for (const [one, other] of APART) {
  test(`no import cycle between ${one} and ${other}, by file or by folder`, (t) => {
    const edges = graph();
    t.true(edges.size > 100, 'the scan reads the tree');
    const tying = cycles(edges).filter((c) => c.some((f) => inFolder(f, one)) && c.some((f) => inFolder(f, other)));
    t.deepEqual(tying, []);
    const arrows = (from: string, to: string) =>
      [...edges].flatMap(([file, targets]) => (inFolder(file, from) ? targets.filter((x) => inFolder(x, to)).map((x) => `${file} → ${x}`) : []));
    const there = arrows(one, other);
    const back = arrows(other, one);
    t.true(there.length === 0 || back.length === 0, `both ways:\n${[...there, ...back].join('\n')}`);
  });
}
