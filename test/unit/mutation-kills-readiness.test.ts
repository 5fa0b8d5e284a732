/**
 * Tests written to kill the mutants `npm run mutate` found alive in actors/customer/readiness.ts
 * and provisioning.ts (docs/decisions.md, "Mutation testing"). Each states the behaviour the spec
 * or the provisioning contract fixes, never the production constant.
 */
import test from 'ava';
import { assessProvisioning } from '../../actors/customer/provisioning.ts';
import { assessReadiness, type ReadinessFacts } from '../../actors/customer/readiness.ts';
import { readyFacts } from '../helpers/readiness-facts.ts';

const requested = ['number', 'script', 'agent'];

function view(overrides: Partial<ReadinessFacts>, numberOrder: string | null) {
  return assessProvisioning({
    readiness: assessReadiness(readyFacts({ requestedSteps: requested, onboardingLinkActive: true, ...overrides })),
    calendar: { status: 'not_connected', failureMessage: null },
    requestedSteps: requested,
    numberOrder,
  });
}

test('why the number order failed shows on the number step only: an open script step keeps its own blocker', (t) => {
  const v = view({ hasNumberInCountry: false, scriptCertified: false, speechCertified: false }, 'no_number_available');
  t.deepEqual(v.steps, [
    { step: 'number', done: false, waiting_on: 'service', blocker: 'no_number_available', message: null },
    { step: 'script', done: false, waiting_on: 'service', blocker: 'script_uncertified', message: null },
    { step: 'agent', done: false, waiting_on: 'service', blocker: 'human_speech_gate_closed', message: null },
  ]);
  t.is(v.state, 'awaiting_number');
});

const blocker = (f: Partial<ReadinessFacts>, code: string) => assessReadiness(readyFacts(f)).live.blockers.find((b) => b.code === code)!;

test('a test customer\'s balance blocker says test calls are never charged, test money cannot be loaded, and where live money is read', (t) => {
  const b = blocker({ mode: 'test', availableCents: 0 }, 'insufficient_balance');
  t.regex(b.message, /test customer/);
  t.regex(b.message, /never charged/);
  t.regex(b.action!.description, /Test money cannot be loaded/);
  t.regex(b.action!.description, /GET \/v1\/balance/);
});

test('the number and script blockers name what is missing, asked for or not', (t) => {
  for (const requestedSteps of [[], ['number', 'script']]) {
    t.regex(blocker({ hasNumberInCountry: false, requestedSteps }, 'no_number_in_country').message, /calling number/, String(requestedSteps));
    t.regex(blocker({ scriptCertified: false, requestedSteps }, 'script_uncertified').message, /script/, String(requestedSteps));
  }
});
