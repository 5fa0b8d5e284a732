import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The service's own source, read as text by the tests that check the house's rules like a lint
 * (import directions and cycles, the one money writer, actors' reads). Paths are root-relative
 * with forward slashes.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Folders never scanned: dependencies, the tests themselves, and every hidden folder (git, the
 * embedded database's data, Stryker's instrumented copies in `.stryker-tmp*`, which hold a whole
 * second tree of the service while `npm run mutate` runs or after it was kept).
 */
const SKIPPED = new Set(['node_modules', 'test']);

/** Every .ts and .tsx file under `dir` ('' for the whole tree, tests excepted); none when it does not exist. */
export function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(path.join(ROOT, dir))) return [];
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = dir ? path.posix.join(dir, entry.name) : entry.name;
    if (entry.isDirectory()) return SKIPPED.has(rel) || entry.name.startsWith('.') ? [] : sourceFiles(rel);
    return /\.tsx?$/.test(entry.name) ? [rel] : [];
  });
}

export const readSource = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** Every module a source imports: static (`import … from`, `export … from`, bare `import '…'`) and dynamic (`import('…')`). */
export function importedPaths(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])([^'"\n]+)\1/g)) found.push(m[2]);
  return found;
}

/** The modules of this tree `file` imports, as root-relative paths (`source` defaults to the file's text). */
export function localImports(file: string, source = readSource(file)): string[] {
  return importedPaths(source)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
}
