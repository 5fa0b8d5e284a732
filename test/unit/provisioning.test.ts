import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { assessProvisioning, DEFAULT_STEPS, PROVISIONING_STEPS, type CalendarStepFacts, type ProvisioningView } from '../../actors/customer/provisioning.ts';
import { assessReadiness, type ReadinessFacts } from '../../actors/customer/readiness.ts';
import { readyFacts } from '../helpers/readiness-facts.ts';

/** A live customer with every readiness fact in place; each test changes what it is about. */
function readinessFacts(overrides: Partial<ReadinessFacts> = {}): ReadinessFacts {
  return readyFacts({ requestedSteps: [...DEFAULT_STEPS], onboardingLinkActive: true, ...overrides });
}

/** By default the reseller has asked for the default steps and sent an onboarding link. */
function provisioning(
  overrides: Partial<ReadinessFacts> = {},
  opts: { calendarConnected?: boolean; calendar?: CalendarStepFacts; requestedSteps?: string[]; numberOrder?: string | null } = {},
): ProvisioningView {
  const requestedSteps = opts.requestedSteps ?? [...DEFAULT_STEPS];
  return assessProvisioning({
    readiness: assessReadiness(readinessFacts({ requestedSteps, ...overrides })),
    calendar: opts.calendar ?? { status: opts.calendarConnected ? 'working' : 'not_connected', failureMessage: null },
    requestedSteps,
    numberOrder: opts.numberOrder ?? null,
  });
}

const summary = (v: ProvisioningView) => ({ state: v.state, ready: v.ready, waiting_on: v.waiting_on, blockers: v.blockers });

test('step names and the default request', (t) => {
  t.deepEqual([...PROVISIONING_STEPS], ['number', 'script', 'agent', 'calendar']);
  t.deepEqual([...DEFAULT_STEPS], ['number', 'script', 'agent']);
});

test('everything in place and no calendar requested: ready, waiting on nobody', (t) => {
  const v = provisioning();
  t.deepEqual(summary(v), { state: 'ready', ready: true, waiting_on: 'nobody', blockers: [] });
  t.deepEqual(v.steps, [
    { step: 'number', done: true, waiting_on: 'service', blocker: null, message: null },
    { step: 'script', done: true, waiting_on: 'service', blocker: null, message: null },
    { step: 'agent', done: true, waiting_on: 'service', blocker: null, message: null },
  ]);
});

test('no number: awaiting_number, waiting on the service', (t) => {
  const v = provisioning({ hasNumberInCountry: false });
  t.deepEqual(summary(v), { state: 'awaiting_number', ready: false, waiting_on: 'service', blockers: ['no_number_in_country'] });
  t.deepEqual(v.steps[0], { step: 'number', done: false, waiting_on: 'service', blocker: 'no_number_in_country', message: null });
});

test('a number step the service could not finish names why: money waits on the reseller, the carrier on the service', (t) => {
  const poor = provisioning({ hasNumberInCountry: false }, { numberOrder: 'insufficient_balance' });
  t.deepEqual(summary(poor), { state: 'awaiting_number', ready: false, waiting_on: 'reseller', blockers: ['no_number_in_country', 'insufficient_balance'] });
  t.deepEqual(poor.steps[0], { step: 'number', done: false, waiting_on: 'reseller', blocker: 'insufficient_balance', message: null });
  for (const code of ['number_regulatory_bundle_required', 'number_address_required', 'no_number_available', 'carrier_unavailable']) {
    const v = provisioning({ hasNumberInCountry: false }, { numberOrder: code });
    t.deepEqual(v.steps[0], { step: 'number', done: false, waiting_on: 'service', blocker: code, message: null }, code);
    t.is(v.waiting_on, 'service', code);
    t.true(v.blockers.includes(code as never), code);
  }
  // A number got since: the old try no longer shows; an unknown record is not shown either.
  t.deepEqual(provisioning({}, { numberOrder: 'insufficient_balance' }).steps[0], { step: 'number', done: true, waiting_on: 'service', blocker: null, message: null });
  t.deepEqual(provisioning({ hasNumberInCountry: false }, { numberOrder: 'something_else' }).steps[0].blocker, 'no_number_in_country');
});

test('nothing asked for yet: the number and the script wait on the reseller, the calling language on the service', (t) => {
  const v = provisioning({ hasNumberInCountry: false, scriptCertified: false, speechCertified: false }, { requestedSteps: [] });
  t.deepEqual(summary(v), {
    state: 'awaiting_number', ready: false, waiting_on: 'reseller', blockers: ['human_speech_gate_closed', 'no_number_in_country', 'script_uncertified'],
  });
  t.deepEqual(v.steps, [
    { step: 'number', done: false, waiting_on: 'reseller', blocker: 'no_number_in_country', message: null },
    { step: 'script', done: false, waiting_on: 'reseller', blocker: 'script_uncertified', message: null },
    { step: 'agent', done: false, waiting_on: 'service', blocker: 'human_speech_gate_closed', message: null },
  ]);
});

test('each step moves to the service once it is asked for, and only that step', (t) => {
  const failing = { hasNumberInCountry: false, scriptCertified: false };
  t.deepEqual(provisioning(failing, { requestedSteps: ['number'] }).steps.map((s) => s.waiting_on), ['service', 'reseller', 'service']);
  t.deepEqual(provisioning(failing, { requestedSteps: ['script'] }).steps.map((s) => s.waiting_on), ['reseller', 'service', 'service']);
  t.is(provisioning(failing, { requestedSteps: ['script'] }).waiting_on, 'reseller', 'the first open step is the unasked number');
});

test('a country not opened: the number waits on the service even before it is asked for', (t) => {
  const v = provisioning({ countryOpened: false }, { requestedSteps: [] });
  t.like(v, { state: 'awaiting_number', waiting_on: 'service' });
});

test('no certified script: awaiting_script', (t) => {
  const v = provisioning({ scriptCertified: false });
  t.deepEqual(summary(v), { state: 'awaiting_script', ready: false, waiting_on: 'service', blockers: ['script_uncertified'] });
  t.deepEqual(v.steps[1], { step: 'script', done: false, waiting_on: 'service', blocker: 'script_uncertified', message: null });
});

test('speech gate closed: awaiting_agent', (t) => {
  const v = provisioning({ speechCertified: false });
  t.deepEqual(summary(v), { state: 'awaiting_agent', ready: false, waiting_on: 'service', blockers: ['human_speech_gate_closed'] });
  t.deepEqual(v.steps[2], { step: 'agent', done: false, waiting_on: 'service', blocker: 'human_speech_gate_closed', message: null });
});

test('the state names the first missing step in step order', (t) => {
  t.is(provisioning({ hasNumberInCountry: false, scriptCertified: false, speechCertified: false }).state, 'awaiting_number');
  t.is(provisioning({ scriptCertified: false, speechCertified: false }).state, 'awaiting_script');
  // A country not opened fails both the number and the agent step.
  const closed = provisioning({ countryOpened: false });
  t.is(closed.state, 'awaiting_number');
  t.deepEqual(closed.steps.filter((s) => !s.done).map((s) => s.step), ['number', 'agent']);
});

test('terms not accepted: awaiting_customer', (t) => {
  const v = provisioning({ termsAccepted: false });
  t.deepEqual(summary(v), { state: 'awaiting_customer', ready: false, waiting_on: 'customer', blockers: ['customer_not_attested'] });
  t.true(v.steps.every((s) => s.done));
});

test('terms not accepted and no onboarding link out: the reseller owes the link', (t) => {
  const v = provisioning({ termsAccepted: false, onboardingLinkActive: false });
  t.deepEqual(summary(v), { state: 'awaiting_customer', ready: false, waiting_on: 'reseller', blockers: ['customer_not_attested'] });
});

test('a reseller-side blocker of a live customer: awaiting_reseller', (t) => {
  for (const [overrides, code] of [
    [{ accountMode: 'test' }, 'reseller_not_live'],
    [{ kybStatus: 'pending' }, 'kyb_incomplete'],
    [{ agreementSigned: false }, 'agreement_unsigned'],
    [{ availableCents: 0 }, 'insufficient_balance'],
  ] as const) {
    const v = provisioning(overrides);
    t.deepEqual(summary(v), { state: 'awaiting_reseller', ready: false, waiting_on: 'reseller', blockers: [code] }, code);
  }
});

test('service work outranks the customer, and the customer outranks the reseller', (t) => {
  const all = provisioning({ hasNumberInCountry: false, termsAccepted: false, accountMode: 'test' });
  t.is(all.state, 'awaiting_number');
  t.deepEqual(all.blockers, ['reseller_not_live', 'no_number_in_country', 'customer_not_attested']);
  const customerAndReseller = provisioning({ termsAccepted: false, accountMode: 'test' });
  t.is(customerAndReseller.state, 'awaiting_customer');
  t.is(customerAndReseller.waiting_on, 'customer');
});

test('a test customer is not held back by reseller-side facts', (t) => {
  const v = provisioning({ mode: 'test', accountMode: 'test', kybStatus: 'pending', agreementSigned: false, availableCents: 0 });
  t.deepEqual(summary(v), { state: 'ready', ready: true, waiting_on: 'nobody', blockers: [] });
});

// --- calendar ---

test('the calendar step appears only once requested', (t) => {
  t.false(provisioning({}, { requestedSteps: ['number'] }).steps.some((s) => s.step === 'calendar'));
  t.false(provisioning({}, { requestedSteps: [], calendarConnected: true }).steps.some((s) => s.step === 'calendar'));
  const steps = provisioning({}, { requestedSteps: ['calendar'] }).steps.map((s) => s.step);
  t.deepEqual(steps, ['number', 'script', 'agent', 'calendar']);
});

test('a requested, unconnected calendar: awaiting_calendar, waiting on the customer, no_calendar_connected', (t) => {
  const v = provisioning({}, { requestedSteps: ['number', 'calendar'], calendarConnected: false });
  t.deepEqual(summary(v), { state: 'awaiting_calendar', ready: false, waiting_on: 'customer', blockers: ['no_calendar_connected'] });
  t.deepEqual(v.steps[3], {
    step: 'calendar',
    done: false,
    waiting_on: 'customer',
    blocker: 'no_calendar_connected',
    message: 'The customer has not connected a calendar yet; send them a calendar link to connect it.',
  });
});

test('a requested, connected calendar is done and blocks nothing', (t) => {
  const v = provisioning({}, { requestedSteps: ['calendar'], calendarConnected: true });
  t.deepEqual(summary(v), { state: 'ready', ready: true, waiting_on: 'nobody', blockers: [] });
  t.deepEqual(v.steps[3], { step: 'calendar', done: true, waiting_on: 'customer', blocker: null, message: null });
});

test('a calendar connection that stopped working: the step is not done, calendar_connection_failed, and the message says why', (t) => {
  const v = provisioning({}, { requestedSteps: ['calendar'], calendar: { status: 'failing', failureMessage: 'the calendar server refused the user name or password' } });
  t.deepEqual(summary(v), { state: 'awaiting_calendar', ready: false, waiting_on: 'customer', blockers: ['calendar_connection_failed'] });
  t.deepEqual(v.steps[3], {
    step: 'calendar',
    done: false,
    waiting_on: 'customer',
    blocker: 'calendar_connection_failed',
    message:
      "The customer's calendar connection stopped working (the calendar server refused the user name or password); no times are offered from it until the customer connects it again through a calendar link.",
  });
});

test('a failing calendar that was never requested blocks nothing', (t) => {
  const v = provisioning({}, { requestedSteps: ['number'], calendar: { status: 'failing', failureMessage: 'x' } });
  t.deepEqual(summary(v), { state: 'ready', ready: true, waiting_on: 'nobody', blockers: [] });
});

test('service steps come before the calendar; the calendar blocker comes after the readiness blockers', (t) => {
  const v = provisioning({ scriptCertified: false, termsAccepted: false }, { requestedSteps: [...DEFAULT_STEPS, 'calendar'] });
  t.is(v.state, 'awaiting_script');
  t.is(v.waiting_on, 'service');
  t.deepEqual(v.blockers, ['script_uncertified', 'customer_not_attested', 'no_calendar_connected']);
});

test('a missing calendar outranks the customer and reseller blockers', (t) => {
  const v = provisioning({ termsAccepted: false, agreementSigned: false }, { requestedSteps: ['calendar'] });
  t.is(v.state, 'awaiting_calendar');
  t.is(v.waiting_on, 'customer');
});

test('the calendar blocks test customers too', (t) => {
  const v = provisioning({ mode: 'test' }, { requestedSteps: ['calendar'] });
  t.deepEqual(summary(v), { state: 'awaiting_calendar', ready: false, waiting_on: 'customer', blockers: ['no_calendar_connected'] });
});

// --- every combination ---

const factsArb: fc.Arbitrary<ReadinessFacts> = fc.record({
  mode: fc.constantFrom('test' as const, 'live' as const),
  accountMode: fc.constantFrom('test' as const, 'live' as const),
  kybStatus: fc.constantFrom('pending', 'verified', 'rejected'),
  agreementSigned: fc.boolean(),
  availableCents: fc.integer({ min: 0, max: 800 }),
  callReserveCents: fc.constant(400),
  countryOpened: fc.boolean(),
  speechCertified: fc.boolean(),
  hasNumberInCountry: fc.boolean(),
  liveCarrierConfigured: fc.boolean(),
  scriptCertified: fc.boolean(),
  termsAccepted: fc.boolean(),
  requestedSteps: fc.constant([]),
  onboardingLinkActive: fc.boolean(),
  staleDncRegistries: fc.constant([]),
});
const requestedArb = fc.subarray(['number', 'script', 'agent', 'calendar']);
const STATES = ['awaiting_number', 'awaiting_script', 'awaiting_agent', 'awaiting_calendar', 'awaiting_customer', 'awaiting_reseller', 'ready'];

test('property: without a calendar request, provisioning agrees with readiness', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(factsArb, requestedArb, fc.boolean(), (facts, requested, calendarConnected) => {
        const requestedSteps = requested.filter((s) => s !== 'calendar');
        const readiness = assessReadiness({ ...facts, requestedSteps });
        const v = assessProvisioning({ readiness, calendar: { status: calendarConnected ? 'working' : 'not_connected', failureMessage: null }, requestedSteps });
        assert.equal(v.ready, readiness.ready);
        assert.deepEqual(v.blockers, readiness.blockers.map((b) => b.code));
        assert.equal(v.steps.length, 3);
      }),
      { numRuns: 1_000 },
    ),
  );
});

test('property: ready, state and waiting_on are consistent for every combination', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(factsArb, requestedArb, fc.boolean(), (facts, requestedSteps, calendarConnected) => {
        const readiness = assessReadiness({ ...facts, requestedSteps });
        const v = assessProvisioning({ readiness, calendar: { status: calendarConnected ? 'working' : 'not_connected', failureMessage: null }, requestedSteps });
        const calendarMissing = requestedSteps.includes('calendar') && !calendarConnected;
        assert.ok(STATES.includes(v.state), v.state);
        assert.equal(v.ready, readiness.ready && !calendarMissing);
        assert.equal(v.ready, v.blockers.length === 0);
        assert.equal(v.state === 'ready', v.ready);
        assert.equal(v.waiting_on === 'nobody', v.ready);
        assert.equal(v.blockers.includes('no_calendar_connected'), calendarMissing);
        for (const s of v.steps) assert.equal(s.blocker === null, s.done);
        // An open step waits on whoever readiness says its blocker waits on.
        for (const s of v.steps.filter((s) => !s.done && s.step !== 'calendar')) {
          assert.equal(s.waiting_on, readiness.blockers.find((b) => b.code === s.blocker)?.waitingOn);
        }
        // Nothing asked for in an opened country: the step is the reseller's move.
        for (const s of v.steps.filter((s) => !s.done && (s.step === 'number' || s.step === 'script'))) {
          const reseller = !requestedSteps.includes(s.step) && (s.step === 'script' || facts.countryOpened);
          assert.equal(s.waiting_on, reseller ? 'reseller' : 'service', s.step);
        }
        // The state's step is the first one not done.
        const firstOpen = v.steps.find((s) => !s.done);
        if (firstOpen) {
          assert.equal(v.state, `awaiting_${firstOpen.step}`);
          assert.equal(v.waiting_on, firstOpen.waiting_on);
        }
      }),
      { numRuns: 2_000 },
    ),
  );
});
