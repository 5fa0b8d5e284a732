import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The house's arrows, checked like a lint: the domain and the kernel below `http/` never import
 * from it (docs/decisions.md, "Refusals, crashes and supervision"). The domain refuses with a
 * `Refusal` (runtime/refusal.ts); only `http/` makes API errors and picks statuses.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BELOW_HTTP = ['actors', 'runtime', 'db', 'telephony'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

/** Every module a file imports: static (`import … from`, `export … from`, bare `import '…'`) and dynamic (`import('…')`). */
function importedPaths(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])([^'"\n]+)\1/g)) found.push(m[2]);
  return found;
}

/** The http/ modules `file` (relative to the root) imports, as root-relative paths. */
function httpImports(file: string): string[] {
  const source = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return importedPaths(source)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)))
    .filter((target) => target === 'http' || target.startsWith('http/'));
}

test('importedPaths finds static, re-exported, bare and dynamic imports', (t) => {
  const source = [
    "import { a } from '../../http/errors.ts';",
    "import type { B } from \"../http/types.ts\";",
    "export { c } from '../http/c.ts';",
    "import '../http/side-effect.ts';",
    "const d = await import('../http/d.ts');",
    "import {\n  e,\n} from '../http/e.ts';",
  ].join('\n');
  t.deepEqual(importedPaths(source), ['../../http/errors.ts', '../http/types.ts', '../http/c.ts', '../http/side-effect.ts', '../http/d.ts', '../http/e.ts']);
});

test('nothing under actors/, runtime/, db/ or telephony/ imports from http/', (t) => {
  const files = BELOW_HTTP.flatMap(sourceFiles);
  t.true(files.length > 50, 'the scan reads the tree');
  const arrows = files.flatMap((f) => httpImports(f).map((target) => `${f} → ${target}`));
  t.deepEqual(arrows, []);
});
