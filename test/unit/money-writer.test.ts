import test from 'ava';
import path from 'node:path';
import { localImports, readSource as read, sourceFiles } from '../helpers/source-tree.ts';

/**
 * Money has one writer (docs/decisions.md, "The money room"): SQL that writes a money table lives
 * only under db/money/, each db/money/ module keeps its writes apart from its reads (a `…Writes`
 * factory), and only the writer takes the writes: money/writer.ts, which assembles the one
 * `MoneyWriter`, and its parts under money/writer/ (one per cause). Read like a lint, over the source text.
 * Tests are not scanned: some of them tamper with money rows on purpose.
 */

const MONEY_TABLES = ['account_money', 'holds', 'ledger_entries', 'bonus_grants', 'activity_log', 'monthly_minimums', 'recurring_charges'];
const WRITER = 'money/writer.ts';
/** The writer: its assembling module and its parts. */
const isWriter = (file: string) => file === WRITER || file.startsWith('money/writer/');
/** Written on purpose outside the writer, each with why. The test fails if an entry no longer writes (drop it then). */
const ALLOWED_SQL_WRITES: Record<string, string> = {
  'bench/money.ts': "the baseline: a bare UPDATE … RETURNING of a money row, the yardstick the money path is measured against",
};

/** The money tables `text` writes with SQL (INSERT INTO, UPDATE, DELETE FROM, TRUNCATE). */
function tablesWritten(text: string): string[] {
  return MONEY_TABLES.filter((table) => new RegExp(`\\b(INSERT\\s+INTO|UPDATE|DELETE\\s+FROM|TRUNCATE(\\s+TABLE)?)\\s+${table}\\b`, 'i').test(text));
}

/** SQL that writes a money table, or locks rows for a write. */
const WRITE_SIDE = (text: string) => tablesWritten(text).length > 0 || /\bFOR\s+(NO\s+KEY\s+)?UPDATE\b/i.test(text);

/** Names imported from a db/money/ module, with the module, for every import in `file`. */
function moneyDbImports(file: string): { names: string[]; target: string }[] {
  const found: { names: string[]; target: string }[] = [];
  const source = read(file);
  // Static imports with their names, and dynamic ones destructured: `const { a, b } = await import('…')`.
  const patterns = [/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*(['"])([^'"]+)\2/g, /const\s*\{([^}]*)\}\s*=\s*await\s+import\(\s*(['"])([^'"]+)\2\s*\)/g];
  for (const pattern of patterns) {
    for (const m of source.matchAll(pattern)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[3]));
      if (!/^db\/money(\.ts$|\/)/.test(target)) continue;
      const names = m[1].split(',').map((n) => n.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]).filter(Boolean);
      found.push({ names, target });
    }
  }
  return found;
}

/** The body of `export function name(` up to the next top-level export, or '' if there is none. */
function exportedFunction(source: string, name: string): string {
  const start = source.indexOf(`export function ${name}(`);
  if (start < 0) return '';
  const next = source.indexOf('\nexport ', start + 1);
  return source.slice(start, next < 0 ? undefined : next);
}

test('no module outside db/money/ writes a money table with SQL', (t) => {
  const files = sourceFiles('');
  t.true(files.length > 100, `the scan reads the tree (${files.length} files)`);
  const offenders = files
    .filter((f) => !f.startsWith('db/money/') && !(f in ALLOWED_SQL_WRITES))
    .flatMap((f) => tablesWritten(read(f)).map((table) => `${f} writes ${table}`));
  t.deepEqual(offenders, []);
  for (const file of Object.keys(ALLOWED_SQL_WRITES)) t.true(tablesWritten(read(file)).length > 0, `${file} still writes a money table`);
});

test('db/money/ writes every money table, and each module keeps its write-side SQL out of its reads', (t) => {
  const modules = sourceFiles('db/money');
  t.true(modules.length >= 6, 'db/money/ is split by table');
  const written = new Set(modules.flatMap((f) => tablesWritten(read(f))));
  t.deepEqual([...written].sort(), [...MONEY_TABLES].sort(), 'the scan recognises every money table');
  for (const file of modules) {
    const source = read(file);
    const factories = [...source.matchAll(/export function (\w+)\(/g)].map((m) => m[1]);
    // Module-level statements that write or lock: a reads factory must not use them.
    const writeConstants = [...source.matchAll(/^(?:const|function) (\w+)([\s\S]*?)(?=^(?:const |function |export |\/\*\*)|$(?![\s\S]))/gm)]
      .filter((m) => WRITE_SIDE(m[2]))
      .map((m) => m[1]);
    for (const reads of factories.filter((n) => n.endsWith('Reads'))) {
      const body = exportedFunction(source, reads);
      t.false(WRITE_SIDE(body), `${file} ${reads} writes or locks`);
      for (const name of writeConstants) t.false(new RegExp(`\\b${name}\\b`).test(body), `${file} ${reads} uses ${name}`);
    }
    if (tablesWritten(source).length > 0) t.true(factories.some((n) => n.endsWith('Writes')), `${file} has a writes factory`);
  }
});

test(`only ${WRITER} and its parts under money/writer/ import the write side of db/money/`, (t) => {
  const files = sourceFiles('').filter((f) => !f.startsWith('db/money/'));
  const imports = files.flatMap((f) => moneyDbImports(f).map((i) => ({ ...i, file: f })));
  t.true(imports.some((i) => isWriter(i.file) && i.names.some((n) => n.endsWith('Writes'))), 'the writer is found importing the writes');
  t.true(sourceFiles('money/writer').length >= 5, 'the writer is split by cause under money/writer/');
  const offenders = imports
    .filter((i) => !isWriter(i.file))
    .flatMap((i) => i.names.filter((n) => !/^[A-Z]/.test(n) && !n.endsWith('Reads')).map((n) => `${i.file} imports ${n} from ${i.target}`));
  t.deepEqual(offenders, []);
});

test('money/ imports no actor, no route and no carrier; db/ imports nothing from money/; the rules import no I/O', (t) => {
  const arrows = (dir: string, forbidden: RegExp) =>
    sourceFiles(dir).flatMap((file) =>
      localImports(file)
        .filter((target) => forbidden.test(target))
        .map((target) => `${file} → ${target}`),
    );
  t.true(sourceFiles('money').length >= 8, 'the scan reads money/');
  t.deepEqual(arrows('money', /^(actors|http|telephony|app)\//), []);
  t.deepEqual(arrows('db', /^money\//), []);
  t.deepEqual(arrows('money/rules', /^(db|http|telephony|actors|app|money\/(?!rules\/))/), []);
});
