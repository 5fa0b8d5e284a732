/**
 * The test command of `npm run mutate` (stryker.config.mjs, command runner). Stryker names the
 * mutant it switched on in `__STRYKER_ACTIVE_MUTANT__`; this runs ava, failing fast, on only the
 * rule tests that import (directly or through other modules) the file that mutant lives in, so a
 * mutant in money/rules does not wait for the calling-window tests. Without a mutant (Stryker's
 * first, unmutated run) it runs every rule test. Plain JavaScript: it runs in Stryker's sandbox
 * before tsx is loaded.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The unit tests of the pure rules: they need no database, so plain ava runs them. */
export const RULE_TESTS = [
  'test/unit/admission.test.ts',
  'test/unit/calling-window-rules.test.ts',
  'test/unit/calling-windows.test.ts',
  'test/unit/compliance-doc.test.ts',
  'test/unit/consent.test.ts',
  'test/unit/frequency-caps.test.ts',
  'test/unit/ledger-rules.test.ts',
  'test/unit/money-rules.test.ts',
  'test/unit/monthly-minimum.test.ts',
  'test/unit/pricing.test.ts',
  'test/unit/provisioning.test.ts',
  'test/unit/readiness.test.ts',
  'test/unit/renewal.test.ts',
];

/** Every rule test: the list above and the ones written to kill mutants. */
function ruleTests() {
  const kills = fs.readdirSync('test/unit').filter((f) => /^mutation-kills-.*\.test\.ts$/.test(f));
  return [...RULE_TESTS, ...kills.map((f) => `test/unit/${f}`)];
}

/** Relative imports of a source file (values and types alike: over-selecting only costs time). */
function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const found = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) found.push(path.normalize(path.join(path.dirname(file), m[1])));
  return found.filter((f) => fs.existsSync(f));
}

/** Does `test` reach `target` through relative imports? */
function reaches(test, target) {
  const seen = new Set();
  const stack = [test];
  while (stack.length) {
    const file = stack.pop();
    if (file === target) return true;
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...importsOf(file));
  }
  return false;
}

/** The mutated file holding mutant `id` (the instrumented copies name each id once or more). */
function fileOfMutant(id) {
  const cache = '.stryker-mutant-files.json';
  let map;
  try {
    map = JSON.parse(fs.readFileSync(cache, 'utf8'));
  } catch {
    map = {};
    const files = spawnSync('grep', ['-rlE', '--include=*.ts', 'stryMutAct_[0-9a-f]+\\(', 'money', 'actors'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    for (const file of files) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/stryMutAct_[0-9a-f]+\("(\d+)"\)/g)) map[m[1]] = path.normalize(file);
    }
    fs.writeFileSync(`${cache}.${process.pid}`, JSON.stringify(map));
    fs.renameSync(`${cache}.${process.pid}`, cache);
  }
  return map[id];
}

const mutant = process.env.__STRYKER_ACTIVE_MUTANT__;
const all = ruleTests();
const file = mutant === undefined ? undefined : fileOfMutant(mutant);
const tests = file ? all.filter((t) => reaches(t, file)) : all;
const ava = path.join('node_modules', 'ava', 'entrypoints', 'cli.mjs');
const run = spawnSync(process.execPath, [ava, '--fail-fast', '--node-arguments=--import=./test/mutation/fast-check-budget.ts', ...(tests.length ? tests : all)], { stdio: 'inherit' });
// MUTATE_LOG=<file>: one line per mutant (id, file, ava's exit status: 0 means it survived), to
// follow a long run before Stryker's report at its end.
if (process.env.MUTATE_LOG) fs.appendFileSync(process.env.MUTATE_LOG, `${mutant ?? '-'} ${file ?? '-'} ${run.status}\n`);
process.exit(run.status ?? 1);
