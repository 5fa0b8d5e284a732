import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { importedPaths, localImports, readSource, ROOT, sourceFiles } from '../helpers/source-tree.ts';

/**
 * The house's arrows, checked like a lint (docs/decisions.md, "The composition root"): the domain
 * and the kernel below `http/` never import from it; `runtime/` is the kernel and imports only
 * itself and the database's connection module; `app/` composes everything and nothing imports it
 * but the command line's entry (`bin/`), tests and benchmarks; routes ask rooms, never open their
 * repositories. The domain refuses with a `Refusal` (runtime/refusal.ts); only `http/` makes API
 * errors and picks statuses.
 */

const BELOW_HTTP = ['actors', 'runtime', 'db', 'telephony', 'payments', 'calendars', 'email'];
/** Every folder of the service's own code (tests, benchmarks and bin/ may import anything). */
const SERVICE = ['actors', 'runtime', 'db', 'telephony', 'payments', 'calendars', 'email', 'http', 'app', 'money'].filter((d) => fs.existsSync(path.join(ROOT, d)));

const inFolder = (target: string, folder: string) => target === folder || target.startsWith(`${folder}/`);

/** `file → target` for every import of `file` that `refused` rejects. */
function arrows(files: string[], refused: (target: string) => boolean): string[] {
  return files.flatMap((f) => localImports(f).filter(refused).map((target) => `${f} → ${target}`));
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
  t.deepEqual(
    arrows(files, (target) => inFolder(target, 'http')),
    [],
  );
});

test('runtime/ is the kernel: it imports nothing of the house but itself', (t) => {
  const files = sourceFiles('runtime');
  t.true(files.length > 10, 'the scan reads runtime/');
  t.deepEqual(
    arrows(files, (target) => !inFolder(target, 'runtime')),
    [],
  );
});

test('nothing but app/ itself imports from app/ (bin/, tests and benchmarks may)', (t) => {
  const files = SERVICE.filter((d) => d !== 'app').flatMap(sourceFiles);
  t.true(files.length > 100, 'the scan reads the tree');
  t.true(sourceFiles('app').length > 3, 'app/ exists');
  t.deepEqual(
    arrows(files, (target) => inFolder(target, 'app')),
    [],
  );
});

test('no route or page opens a repository: it asks the room that owns the data', (t) => {
  // Plugins (authentication, rate limits, idempotency) keep their own tables: infrastructure, not a room's data.
  const files = ['http/routes', 'http/pages'].flatMap(sourceFiles);
  t.true(files.length > 15, 'the scan reads the routes');
  const opened = files.flatMap((f) => [...readSource(f).matchAll(/\bcreate\w*Repository\b/g)].map((m) => `${f}: ${m[0]}`));
  t.deepEqual(opened, []);
});

test('SQL lives under db/: the rooms, money, app/ and http/ run no statement of their own (savepoints aside)', (t) => {
  const files = ['actors', 'money', 'app', 'http'].flatMap(sourceFiles);
  t.true(files.length > 60, 'the scan reads the rooms');
  const statements = files.flatMap((f) =>
    [...readSource(f).matchAll(/\.query\(\s*[`'"]([^`'"]{0,40})/g)].filter((m) => !/^(?:SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO SAVEPOINT)\b/.test(m[1])).map((m) => `${f}: ${m[1]}`),
  );
  t.deepEqual(statements, []);
});

/** The lower rooms of the map (docs/decisions.md, "Map of the house") and the only rooms each may import. */
const LOWER_ROOMS: Record<string, string[]> = {
  db: ['db', 'runtime'],
  telephony: ['telephony', 'runtime'],
  money: ['money', 'db', 'runtime'],
  email: ['email', 'runtime'],
  payments: ['payments', 'runtime'],
  calendars: ['calendars', 'db', 'runtime'],
};

for (const [room, allowed] of Object.entries(LOWER_ROOMS)) {
  test(`${room}/ imports only ${allowed.map((a) => `${a}/`).join(', ')}`, (t) => {
    const files = sourceFiles(room);
    t.true(files.length >= 3, `the scan reads ${room}/`);
    t.deepEqual(
      arrows(files, (target) => !allowed.some((a) => inFolder(target, a))),
      [],
    );
  });
}
