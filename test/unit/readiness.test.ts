import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { readinessFactsArb as factsArb, readyFacts as facts } from '../helpers/readiness-facts.ts';
import { assessReadiness, type Blocker, type BlockerCode, type CheckName, type Party, type ReadinessFacts } from '../../actors/customer/readiness.ts';

interface Gate {
  check: CheckName;
  blocker: BlockerCode;
  /** Who owes the move with nothing asked for and no onboarding link out (the `facts()` default). */
  waitingOn: Party;
  liveOnly: boolean;
  /** The one change that fails this gate and no other. */
  failing: Partial<ReadinessFacts>;
}

/** The US registry, never loaded (issue 20 §1). */
const NEVER_LOADED = { id: 'US-NDNC', name: 'US National Do Not Call Registry', country: 'US', maxAgeDays: 31, importedAt: null, staleSince: null };

/** The documented gates, in reporting order. */
const GATES: Gate[] = [
  { check: 'account_live', blocker: 'reseller_not_live', waitingOn: 'reseller', liveOnly: true, failing: { accountMode: 'test' } },
  { check: 'business_verified', blocker: 'kyb_incomplete', waitingOn: 'reseller', liveOnly: true, failing: { kybStatus: 'pending' } },
  { check: 'agreement_signed', blocker: 'agreement_unsigned', waitingOn: 'reseller', liveOnly: true, failing: { agreementSigned: false } },
  { check: 'balance_loaded', blocker: 'insufficient_balance', waitingOn: 'reseller', liveOnly: true, failing: { availableCents: 0 } },
  { check: 'carrier_configured', blocker: 'carrier_not_configured', waitingOn: 'service', liveOnly: true, failing: { liveCarrierConfigured: false } },
  { check: 'speech_certified_for_language', blocker: 'human_speech_gate_closed', waitingOn: 'service', liveOnly: false, failing: { speechCertified: false } },
  { check: 'number_in_country', blocker: 'no_number_in_country', waitingOn: 'reseller', liveOnly: false, failing: { hasNumberInCountry: false } },
  { check: 'script_certified', blocker: 'script_uncertified', waitingOn: 'reseller', liveOnly: false, failing: { scriptCertified: false } },
  { check: 'customer_accepted_terms', blocker: 'customer_not_attested', waitingOn: 'reseller', liveOnly: false, failing: { termsAccepted: false } },
  { check: 'dnc_registries_current', blocker: 'dnc_registry_stale', waitingOn: 'service', liveOnly: false, failing: { staleDncRegistries: [NEVER_LOADED] } },
];
const LIVE_ONLY = GATES.filter((g) => g.liveOnly).map((g) => g.blocker);
const TEST_GATES = GATES.filter((g) => !g.liveOnly).map((g) => g.blocker);
const MODES = ['live', 'test'] as const;

const allChecks = (value: boolean) => Object.fromEntries(GATES.map((g) => [g.check, value]));
const codes = (blockers: Blocker[]) => blockers.map((b) => b.code);
const find = (blockers: Blocker[], code: BlockerCode) => blockers.find((b) => b.code === code);

test('a live customer with every fact in place is ready for live and test calls', (t) => {
  const r = assessReadiness(facts());
  t.true(r.ready);
  t.deepEqual(r.live, { ready: true, blockers: [] });
  t.deepEqual(r.test, { ready: true, blockers: [] });
  t.deepEqual(r.checks, allChecks(true));
});

test('the assessment has both questions, the call path answer and exactly the ten documented checks', (t) => {
  for (const mode of MODES) {
    t.deepEqual(Object.keys(assessReadiness(facts({ mode }))).sort(), ['blockers', 'checks', 'live', 'ready', 'test']);
    t.deepEqual(Object.keys(assessReadiness(facts({ mode })).checks).sort(), GATES.map((g) => g.check).sort());
  }
});

for (const gate of GATES) {
  for (const mode of MODES) {
    test(`${mode} customer: failing ${gate.check} alone gives exactly ${gate.blocker} to live calls${gate.liveOnly ? ', nothing to test calls' : ' and to test calls'}`, (t) => {
      const r = assessReadiness(facts({ mode, ...gate.failing }));
      t.deepEqual(r.checks, { ...allChecks(true), [gate.check]: false });
      // The live question is the same for every customer: the false check has its blocker.
      t.false(r.live.ready);
      t.deepEqual(codes(r.live.blockers), [gate.blocker]);
      const [b] = r.live.blockers;
      t.is(b.waitingOn, gate.waitingOn);
      t.true(b.message.length > 0);
      // The test question leaves out live money and live status.
      t.is(r.test.ready, gate.liveOnly);
      t.deepEqual(codes(r.test.blockers), gate.liveOnly ? [] : [gate.blocker]);
      // The customer's own calls are decided on its mode's question.
      t.deepEqual({ ready: r.ready, blockers: r.blockers }, mode === 'live' ? r.live : r.test);
    });
  }
}

test('with every fact missing: all ten blockers to live calls in either mode, the five service/customer ones to test calls', (t) => {
  for (const mode of MODES) {
    const r = assessReadiness(facts({ mode, ...Object.assign({}, ...GATES.map((g) => g.failing)) }));
    t.false(r.ready);
    t.deepEqual(r.checks, allChecks(false));
    t.deepEqual(codes(r.live.blockers), GATES.map((g) => g.blocker));
    t.deepEqual(r.live.blockers.map((b) => b.waitingOn), GATES.map((g) => g.waitingOn));
    t.is(new Set(r.live.blockers.map((b) => b.message)).size, 10, 'each blocker has its own message');
    t.deepEqual(codes(r.test.blockers), TEST_GATES);
    t.deepEqual(r.test.blockers, r.live.blockers.slice(5), 'a blocker reads the same in both answers');
  }
});

// --- who moves next, and what clears it ---

test('the account gates wait on the reseller, who acts in the console', (t) => {
  for (const gate of GATES.filter((g) => g.liveOnly && g.check !== 'carrier_configured')) {
    const b = assessReadiness(facts(gate.failing)).live.blockers[0];
    t.is(b.waitingOn, 'reseller');
    t.is(b.action?.type, 'console', gate.blocker);
    t.true((b.action?.description.length ?? 0) > 10);
  }
});

test('the calling language is the service\'s move: no action, asked for or not', (t) => {
  for (const requestedSteps of [[], ['agent'], ['number', 'script', 'agent']]) {
    const b = find(assessReadiness(facts({ speechCertified: false, requestedSteps })).blockers, 'human_speech_gate_closed');
    t.like(b, { waitingOn: 'service', action: null });
  }
});

for (const [step, code, failing] of [
  ['number', 'no_number_in_country', { hasNumberInCountry: false }],
  ['script', 'script_uncertified', { scriptCertified: false }],
] as const) {
  test(`the ${step} step waits on the reseller until asked for (the action asks), then on the service`, (t) => {
    const unasked = find(assessReadiness(facts({ ...failing, requestedSteps: ['calendar'] })).blockers, code)!;
    t.is(unasked.waitingOn, 'reseller');
    t.deepEqual(unasked.action, {
      type: 'api', method: 'POST', path: '/v1/customers/{id}/provisioning', body: { steps: [step] }, description: unasked.action!.description,
    });
    const asked = find(assessReadiness(facts({ ...failing, requestedSteps: [step] })).blockers, code)!;
    t.like(asked, { waitingOn: 'service', action: null });
    t.not(asked.message, unasked.message);
  });
}

test('a country not opened: the number waits on the service even before anything is asked', (t) => {
  const r = assessReadiness(facts({ countryOpened: false }));
  t.like(find(r.blockers, 'no_number_in_country'), { waitingOn: 'service', action: null });
  t.like(find(r.blockers, 'human_speech_gate_closed'), { waitingOn: 'service', action: null });
});

test('the terms wait on the reseller until a link is out, then on the customer; the action sends a link', (t) => {
  const unsent = find(assessReadiness(facts({ termsAccepted: false })).blockers, 'customer_not_attested')!;
  t.like(unsent, { waitingOn: 'reseller', action: { type: 'api', method: 'POST', path: '/v1/customers/{id}/onboarding_link' } });
  const sent = find(assessReadiness(facts({ termsAccepted: false, onboardingLinkActive: true })).blockers, 'customer_not_attested')!;
  t.like(sent, { waitingOn: 'customer', action: { type: 'api', method: 'POST', path: '/v1/customers/{id}/onboarding_link' } });
  t.not(sent.message, unsent.message);
});

test('a test customer\'s balance blocks only live calls, and says live money is on the live balance', (t) => {
  const test = assessReadiness(facts({ mode: 'test', availableCents: 0 }));
  const live = assessReadiness(facts({ mode: 'live', availableCents: 0 }));
  const b = find(test.live.blockers, 'insufficient_balance')!;
  t.regex(b.message, /live balance/);
  t.regex(b.message, /live key/);
  t.regex(b.action!.description, /live key/);
  t.not(b.message, find(live.live.blockers, 'insufficient_balance')!.message);
  t.is(find(test.test.blockers, 'insufficient_balance'), undefined);
  t.true(test.ready, 'test calls never wait on money');
});

// --- the facts behind each check ---

test('balance: exactly the reserve passes, one cent less fails', (t) => {
  t.true(assessReadiness(facts({ availableCents: 400, callReserveCents: 400 })).checks.balance_loaded);
  t.true(assessReadiness(facts({ availableCents: 400, callReserveCents: 400 })).ready);
  const short = assessReadiness(facts({ availableCents: 399, callReserveCents: 400 }));
  t.false(short.checks.balance_loaded);
  t.deepEqual(codes(short.blockers), ['insufficient_balance']);
  t.false(assessReadiness(facts({ availableCents: -1, callReserveCents: 0 })).checks.balance_loaded);
  t.true(assessReadiness(facts({ availableCents: 0, callReserveCents: 0 })).checks.balance_loaded);
});

test('only kybStatus "verified" passes business verification', (t) => {
  for (const kybStatus of ['pending', 'rejected', '', 'VERIFIED', 'verified ']) {
    t.false(assessReadiness(facts({ kybStatus })).checks.business_verified, kybStatus);
  }
  t.true(assessReadiness(facts({ kybStatus: 'verified' })).checks.business_verified);
});

test('a country not opened fails the speech and number checks even when both facts are set', (t) => {
  for (const mode of MODES) {
    const r = assessReadiness(facts({ mode, countryOpened: false, speechCertified: true, hasNumberInCountry: true }));
    t.false(r.checks.speech_certified_for_language);
    t.false(r.checks.number_in_country);
    t.deepEqual(codes(r.blockers), ['human_speech_gate_closed', 'no_number_in_country']);
  }
});

// --- every combination of facts ---

/** The documented meaning of each check, written independently of the module. */
function expectedChecks(f: ReadinessFacts): Record<CheckName, boolean> {
  return {
    account_live: f.accountMode === 'live',
    business_verified: f.kybStatus === 'verified',
    agreement_signed: f.agreementSigned,
    balance_loaded: f.availableCents >= f.callReserveCents,
    carrier_configured: f.liveCarrierConfigured,
    speech_certified_for_language: f.countryOpened && f.speechCertified,
    number_in_country: f.countryOpened && f.hasNumberInCountry,
    script_certified: f.scriptCertified,
    customer_accepted_terms: f.termsAccepted,
    dnc_registries_current: f.staleDncRegistries.length === 0,
  };
}

/**
 * Every invariant of one assessment. A live call is turned away when any check fails; a test
 * call when any of the four service/customer checks fails (the call path's gates, restated).
 */
function assertInvariants(f: ReadinessFacts) {
  const r = assessReadiness(f);
  const checks = expectedChecks(f);
  assert.deepEqual(r.checks, checks);
  const liveRefusals = GATES.filter((g) => !checks[g.check]);
  const testRefusals = liveRefusals.filter((g) => !g.liveOnly);
  // checks ↔ blockers: every false check has its blocker and every blocker its false check.
  assert.deepEqual(codes(r.live.blockers), liveRefusals.map((g) => g.blocker));
  assert.deepEqual(codes(r.test.blockers), testRefusals.map((g) => g.blocker));
  // Never ready while a call would be turned away, and never held back when it would not.
  assert.equal(r.live.ready, liveRefusals.length === 0);
  assert.equal(r.live.ready, r.live.blockers.length === 0);
  assert.equal(r.test.ready, testRefusals.length === 0);
  assert.equal(r.test.ready, r.test.blockers.length === 0);
  // Live calls are held back by everything that holds back test calls, with the same words.
  for (const b of r.test.blockers) assert.deepEqual(find(r.live.blockers, b.code), b);
  assert.ok(!r.test.blockers.some((b) => LIVE_ONLY.includes(b.code)));
  // The customer's own calls are decided on its mode's answer.
  assert.deepEqual({ ready: r.ready, blockers: r.blockers }, f.mode === 'live' ? r.live : r.test);
  for (const b of r.live.blockers) {
    assert.ok(['service', 'customer', 'reseller'].includes(b.waitingOn));
    // No action exactly where only the service can move.
    assert.equal(b.action === null, b.waitingOn === 'service', b.code);
    assert.ok(b.message.length > 0 && (b.action === null || b.action.description.length > 0));
  }
}

test('property: both answers agree with the call path and checks agree with blockers, for every combination in both modes', (t) => {
  t.notThrows(() => fc.assert(fc.property(factsArb, assertInvariants), { numRuns: 5_000 }));
});

test('exhaustive: every combination of two-valued facts, customer and account mode', (t) => {
  // 2 customer modes × 2^13 facts, the balance either exactly the reserve or one cent short.
  let cases = 0;
  for (const mode of MODES) {
    for (let mask = 0; mask < 1 << 13; mask++) {
      const bit = (i: number) => Boolean(mask & (1 << i));
      assertInvariants({
        mode,
        accountMode: bit(0) ? 'live' : 'test',
        kybStatus: bit(1) ? 'verified' : 'pending',
        agreementSigned: bit(2),
        availableCents: bit(3) ? 400 : 399,
        callReserveCents: 400,
        countryOpened: bit(4),
        speechCertified: bit(5),
        hasNumberInCountry: bit(6),
        scriptCertified: bit(7),
        termsAccepted: bit(8),
        requestedSteps: bit(9) ? ['number', 'script'] : [],
        onboardingLinkActive: bit(10),
        liveCarrierConfigured: bit(11),
        staleDncRegistries: bit(12) ? [NEVER_LOADED] : [],
      });
      cases++;
    }
  }
  t.is(cases, 16384);
});

test('no carrier for live mode: carrier_not_configured to live calls of every customer, the service\'s move with no action; test calls are not held back', (t) => {
  for (const mode of MODES) {
    const r = assessReadiness(facts({ mode, liveCarrierConfigured: false }));
    t.false(r.checks.carrier_configured);
    t.deepEqual(codes(r.live.blockers), ['carrier_not_configured']);
    t.like(r.live.blockers[0], { waitingOn: 'service', action: null });
    t.true(r.test.ready);
  }
});
