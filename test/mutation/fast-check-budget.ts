/**
 * Loaded before each rule test under `npm run mutate` (test/mutation/run-rule-tests.mjs): Stryker's
 * instrumented copies run the rules some fifty times slower, so every property stops after its
 * time budget instead of its full number of runs. An interrupted property passes with the runs it
 * made; a mutant it would have caught only later survives (docs/decisions.md, "Mutation testing").
 */
import fc from 'fast-check';

fc.configureGlobal({ interruptAfterTimeLimit: Number(process.env.MUTATE_PROPERTY_MS ?? 500), markInterruptAsFailure: false });
