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
    calendarConnected: false,
    requestedSteps: requested,
    numberOrder,
  });
}

test('why the number order failed shows on the number step only: an open script step keeps its own blocker', (t) => {
  const v = view({ hasNumberInCountry: false, scriptCertified: false, speechCertified: false }, 'no_number_available');
  t.deepEqual(v.steps, [
    { step: 'number', done: false, waiting_on: 'service', blocker: 'no_number_available' },
    { step: 'script', done: false, waiting_on: 'service', blocker: 'script_uncertified' },
    { step: 'agent', done: false, waiting_on: 'service', blocker: 'human_speech_gate_closed' },
  ]);
  t.is(v.state, 'awaiting_number');
});
