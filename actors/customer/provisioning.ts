import type { BlockerCode, Party, ReadinessAssessment } from './readiness.ts';

/**
 * Provisioning: the steps that make a customer callable and who owes each next move. Pure, and
 * built on the readiness assessment so `ready` here can never disagree with the call path.
 */

export const PROVISIONING_STEPS = ['number', 'script', 'agent', 'calendar'] as const;
export type ProvisioningStep = (typeof PROVISIONING_STEPS)[number];

/** Steps requested when POST provisioning names none: the ones the call path needs. */
export const DEFAULT_STEPS: readonly ProvisioningStep[] = ['number', 'script', 'agent'];

/**
 * Why the service's last try of the number step rented nothing (actors/numbers/numbers.ts
 * `NumberOrderBlocker`): the carrier wants a regulatory bundle or an address the service has not
 * filed, has no stock, could not be reached, or the balance could not cover the first month.
 */
export const NUMBER_ORDER_BLOCKERS = [
  'number_regulatory_bundle_required',
  'number_address_required',
  'no_number_available',
  'carrier_unavailable',
  'insufficient_balance',
] as const;
export type NumberOrderBlocker = (typeof NUMBER_ORDER_BLOCKERS)[number];

export type ProvisioningBlocker = BlockerCode | 'no_calendar_connected' | 'calendar_connection_failed' | NumberOrderBlocker;

/**
 * The customer's calendar as the calendar step sees it (issue 24): never connected, a working
 * connection, or one that stopped working (`failureMessage` says why, in the customer's terms).
 */
export interface CalendarStepFacts {
  status: 'not_connected' | 'working' | 'failing';
  failureMessage: string | null;
}

interface StepRule {
  step: ProvisioningStep;
  blocker: ProvisioningBlocker;
}

const STEP_RULES: readonly StepRule[] = [
  { step: 'number', blocker: 'no_number_in_country' },
  { step: 'script', blocker: 'script_uncertified' },
  { step: 'agent', blocker: 'human_speech_gate_closed' },
  { step: 'calendar', blocker: 'no_calendar_connected' },
];

export interface ProvisioningFacts {
  readiness: ReadinessAssessment;
  calendar: CalendarStepFacts;
  /** Every step ever requested for this customer (calendar counts only once requested). */
  requestedSteps: readonly string[];
  /** Why the service's last try of the number step rented nothing, or null (none failed, or one succeeded since). */
  numberOrder?: string | null;
}

export interface ProvisioningView {
  state: string;
  ready: boolean;
  waiting_on: Party | 'nobody';
  blockers: ProvisioningBlocker[];
  /** `message` says why a step is not done (the calendar step's); null otherwise. */
  steps: { step: ProvisioningStep; done: boolean; waiting_on: Party; blocker: ProvisioningBlocker | null; message: string | null }[];
}

/**
 * Decided on the blockers of the customer's own calls (`readiness.blockers`). A readiness step is
 * done when its blocker is absent, and while open it waits on whoever readiness says its blocker
 * waits on (the reseller until it asked for the step), so the two answers cannot disagree.
 */
export function assessProvisioning(f: ProvisioningFacts): ProvisioningView {
  const calendarRequested = f.requestedSteps.includes('calendar');
  const steps = STEP_RULES.filter((r) => r.step !== 'calendar' || calendarRequested).map((r) => {
    // The calendar is no readiness gate: once requested, connecting it is the customer's move,
    // and only a working connection does it.
    if (r.step === 'calendar') return { step: r.step, waiting_on: 'customer' as const, ...calendarStep(f.calendar) };
    const open = f.readiness.blockers.find((b) => b.code === r.blocker);
    // The number step the service tried and could not finish names why, and who moves next:
    // the reseller for money, the service for the carrier's requirements.
    const order = r.step === 'number' && open && f.numberOrder ? numberOrderBlocker(f.numberOrder) : null;
    if (order) return { step: r.step, done: false, waiting_on: order === 'insufficient_balance' ? ('reseller' as const) : ('service' as const), blocker: order, message: null };
    // A done step names who did its work: the service.
    return { step: r.step, done: !open, waiting_on: open?.waitingOn ?? 'service', blocker: open?.code ?? null, message: null };
  });

  const blockers: ProvisioningBlocker[] = f.readiness.blockers.map((b) => b.code);
  // Stryker disable next-line ConditionalExpression: the number step is always the first step (STEP_RULES order), so any find finds it
  const numberStep = steps.find((s) => s.step === 'number');
  // Stryker disable next-line OptionalChaining: the number step is always there (only the calendar step is ever left out)
  if (numberStep?.blocker && numberStep.blocker !== 'no_number_in_country') blockers.push(numberStep.blocker);
  const calendar = steps.find((s) => s.step === 'calendar');
  if (calendar?.blocker) blockers.push(calendar.blocker);

  // The state names the first thing still missing: steps first, then the customer's terms, then
  // the account's gates.
  const firstStep = steps.find((s) => !s.done);
  // Stryker disable next-line MethodExpression: read only when every step is done, and then no step's blocker is among readiness's
  const beyondSteps = f.readiness.blockers.filter((b) => !STEP_RULES.some((r) => r.blocker === b.code));
  const next = beyondSteps.find((b) => b.code === 'customer_not_attested') ?? beyondSteps[0];
  let state = 'ready';
  let waitingOn: Party | 'nobody' = 'nobody';
  if (firstStep) {
    state = `awaiting_${firstStep.step}`;
    waitingOn = firstStep.waiting_on;
  } else if (next) {
    state = next.code === 'customer_not_attested' ? 'awaiting_customer' : 'awaiting_reseller';
    waitingOn = next.waitingOn;
  }
  return { state, ready: blockers.length === 0, waiting_on: waitingOn, blockers, steps };
}

/** The calendar step: done only with a working connection; a failing one says why. */
function calendarStep(c: CalendarStepFacts): { done: boolean; blocker: ProvisioningBlocker | null; message: string | null } {
  if (c.status === 'working') return { done: true, blocker: null, message: null };
  if (c.status === 'failing') {
    const why = c.failureMessage ? ` (${c.failureMessage.replace(/[.\s]+$/, '')})` : '';
    return { done: false, blocker: 'calendar_connection_failed', message: `The customer's calendar connection stopped working${why}; no times are offered from it until the customer connects it again through a calendar link.` };
  }
  return { done: false, blocker: 'no_calendar_connected', message: 'The customer has not connected a calendar yet; send them a calendar link to connect it.' };
}

function numberOrderBlocker(code: string): NumberOrderBlocker | null {
  return (NUMBER_ORDER_BLOCKERS as readonly string[]).includes(code) ? (code as NumberOrderBlocker) : null;
}
