import type { BlockerCode, Party, ReadinessAssessment } from './readiness.ts';

/**
 * Provisioning: the steps that make a customer callable and who owes each next move. Pure, and
 * built on the readiness assessment so `ready` here can never disagree with the call path.
 */

export const PROVISIONING_STEPS = ['number', 'script', 'agent', 'calendar'] as const;
export type ProvisioningStep = (typeof PROVISIONING_STEPS)[number];

/** Steps requested when POST provisioning names none: the ones the call path needs. */
export const DEFAULT_STEPS: readonly ProvisioningStep[] = ['number', 'script', 'agent'];

export type ProvisioningBlocker = BlockerCode | 'no_calendar_connected';

interface StepRule {
  step: ProvisioningStep;
  waitingOn: Party;
  blocker: ProvisioningBlocker;
}

const STEP_RULES: readonly StepRule[] = [
  { step: 'number', waitingOn: 'service', blocker: 'no_number_in_country' },
  { step: 'script', waitingOn: 'service', blocker: 'script_uncertified' },
  { step: 'agent', waitingOn: 'service', blocker: 'human_speech_gate_closed' },
  { step: 'calendar', waitingOn: 'customer', blocker: 'no_calendar_connected' },
];

export interface ProvisioningFacts {
  readiness: ReadinessAssessment;
  calendarConnected: boolean;
  /** Every step ever requested for this customer (calendar counts only once requested). */
  requestedSteps: readonly string[];
}

export interface ProvisioningView {
  state: string;
  ready: boolean;
  waiting_on: Party | 'nobody';
  blockers: ProvisioningBlocker[];
  steps: { step: ProvisioningStep; done: boolean; waiting_on: Party; blocker: ProvisioningBlocker | null }[];
}

export function assessProvisioning(f: ProvisioningFacts): ProvisioningView {
  const calendarRequested = f.requestedSteps.includes('calendar');
  const steps = STEP_RULES.filter((r) => r.step !== 'calendar' || calendarRequested).map((r) => {
    const done = r.step === 'calendar' ? f.calendarConnected : stepPasses(r.step, f.readiness);
    return { step: r.step, done, waiting_on: r.waitingOn, blocker: done ? null : r.blocker };
  });

  const blockers: ProvisioningBlocker[] = f.readiness.blockers.map((b) => b.code);
  const calendarStep = steps.find((s) => s.step === 'calendar');
  if (calendarStep && !calendarStep.done) blockers.push('no_calendar_connected');

  // The state names the first thing still missing, service work first, then the customer, then the reseller.
  const firstStep = steps.find((s) => !s.done);
  const customerBlocker = f.readiness.blockers.find((b) => b.owner === 'customer');
  const resellerBlocker = f.readiness.blockers.find((b) => b.owner === 'reseller');
  let state = 'ready';
  let waitingOn: Party | 'nobody' = 'nobody';
  if (firstStep) {
    state = `awaiting_${firstStep.step}`;
    waitingOn = firstStep.waiting_on;
  } else if (customerBlocker) {
    state = 'awaiting_customer';
    waitingOn = 'customer';
  } else if (resellerBlocker) {
    state = 'awaiting_reseller';
    waitingOn = 'reseller';
  }
  return { state, ready: blockers.length === 0, waiting_on: waitingOn, blockers, steps };
}

/** A step is done when the readiness check it provides passes. */
function stepPasses(step: ProvisioningStep, r: ReadinessAssessment): boolean {
  switch (step) {
    case 'number':
      return r.checks.number_in_country;
    case 'script':
      return r.checks.script_certified;
    case 'agent':
      return r.checks.speech_certified_for_language;
    case 'calendar':
      return false;
  }
}
