import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ROOT, sourceFiles } from '../helpers/source-tree.ts';

// A Stryker sandbox (`.stryker-tmp/sandbox-…`) holds a second copy of the service; the house-rule
// lints (one money writer, import directions) once read it as the service's own code and failed
// while `npm run mutate` ran beside `npm test`.
test('the source the house-rule lints read leaves out hidden folders such as a Stryker sandbox', (t) => {
  const hidden = `.stryker-tmp-${crypto.randomBytes(4).toString('hex')}`;
  const file = path.join(ROOT, hidden, 'sandbox', 'db', 'money', 'ledger.ts');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  t.teardown(() => fs.rmSync(path.join(ROOT, hidden), { recursive: true, force: true }));
  fs.writeFileSync(file, 'export const x = 1;\n');
  const files = sourceFiles('');
  t.false(files.some((f) => f.startsWith(hidden)), 'nothing under a hidden folder');
  t.true(files.includes('money/writer.ts'), 'the service itself is read');
  t.true(files.includes('db/money/ledger.ts'));
});
