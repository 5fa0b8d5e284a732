// @ts-check
/**
 * `npm run mutate`: a mutation run over the pure rules (money, the scheduler's calling rules,
 * readiness and provisioning), not part of CI. Stryker changes one thing at a time in these files
 * (a comparison, a constant, a branch) and runs the rules' unit tests, which need no database;
 * a change no test notices is a "survivor". Score and what is left: docs/decisions.md,
 * "Mutation testing". The HTML report lands in reports/mutation/ (ignored by git).
 *
 * Stryker has no ava runner, so the command runner runs one narrow ava command per mutant, with
 * the mutant chosen by the environment; coverage analysis is therefore off, and the command itself
 * picks the rule tests that import the mutated file (test/mutation/run-rule-tests.mjs). One mutant at a time
 * (concurrency 1): the machine is shared, and ava already runs the files in parallel.
 */

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'command',
  commandRunner: {
    // ava, failing fast, on the rule tests that import the mutated file (the list is in the script).
    command: 'node test/mutation/run-rule-tests.mjs',
  },
  coverageAnalysis: 'off',
  concurrency: 1,
  mutate: [
    'money/rules/**/*.ts',
    'actors/scheduler/admission.ts',
    'actors/scheduler/calling-windows.ts',
    'actors/scheduler/consent.ts',
    'actors/scheduler/es-regions.ts',
    'actors/scheduler/frequency-caps.ts',
    'actors/scheduler/window-rules.ts',
    'actors/customer/readiness.ts',
    'actors/customer/provisioning.ts',
  ],
  // The sandbox copy needs only what the rule tests read.
  ignorePatterns: ['bench', 'reports', 'logs', '.switchboard', '/.stryker-tmp*', 'test/e2e', 'test/integration'],
  // tsx runs the mutated TypeScript without type checks (a mutant that would not compile still runs).
  disableTypeChecks: true,
  // Stryker rewrites tsconfig.json's paths through the TypeScript API, which TypeScript 7 (native)
  // no longer has; the sandbox keeps tsconfig.json as it is (it extends nothing outside), so the
  // rewrite is turned off by naming no file.
  tsconfigFile: '',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: process.env.STRYKER_KEEP ? false : 'always',
  // A mutant that loops forever (a loop counter turned around) is stopped this long after the
  // unmutated run's time; it counts as detected ("timeout").
  timeoutMS: 10000,
};
