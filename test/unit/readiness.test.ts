import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { assessReadiness, type BlockerCode, type CheckName, type ReadinessFacts } from '../../actors/customer/readiness.ts';

/** A live customer for whom every check passes; each test changes what it is about. */
function facts(overrides: Partial<ReadinessFacts> = {}): ReadinessFacts {
  return {
    mode: 'live',
    accountMode: 'live',
    kybStatus: 'verified',
    agreementSigned: true,
    availableCents: 10_000,
    callReserveCents: 400,
    countryOpened: true,
    speechCertified: true,
    hasNumberInCountry: true,
    scriptCertified: true,
    termsAccepted: true,
    ...overrides,
  };
}

interface Gate {
  check: CheckName;
  blocker: BlockerCode;
  owner: 'reseller' | 'service' | 'customer';
  liveOnly: boolean;
  /** The one change that fails this gate and no other. */
  failing: Partial<ReadinessFacts>;
}

/** The documented gates, in reporting order. */
const GATES: Gate[] = [
  { check: 'account_live', blocker: 'reseller_not_live', owner: 'reseller', liveOnly: true, failing: { accountMode: 'test' } },
  { check: 'business_verified', blocker: 'kyb_incomplete', owner: 'reseller', liveOnly: true, failing: { kybStatus: 'pending' } },
  { check: 'agreement_signed', blocker: 'agreement_unsigned', owner: 'reseller', liveOnly: true, failing: { agreementSigned: false } },
  { check: 'balance_loaded', blocker: 'insufficient_balance', owner: 'reseller', liveOnly: true, failing: { availableCents: 0 } },
  { check: 'speech_certified_for_language', blocker: 'human_speech_gate_closed', owner: 'service', liveOnly: false, failing: { speechCertified: false } },
  { check: 'number_in_country', blocker: 'no_number_in_country', owner: 'service', liveOnly: false, failing: { hasNumberInCountry: false } },
  { check: 'script_certified', blocker: 'script_uncertified', owner: 'service', liveOnly: false, failing: { scriptCertified: false } },
  { check: 'customer_accepted_terms', blocker: 'customer_not_attested', owner: 'customer', liveOnly: false, failing: { termsAccepted: false } },
];
const LIVE_ONLY = GATES.filter((g) => g.liveOnly).map((g) => g.blocker);

const allChecks = (value: boolean) => Object.fromEntries(GATES.map((g) => [g.check, value]));

test('a live customer with every fact in place is ready', (t) => {
  const r = assessReadiness(facts());
  t.true(r.ready);
  t.deepEqual(r.blockers, []);
  t.deepEqual(r.checks, allChecks(true));
});

test('checks always has exactly the eight documented names', (t) => {
  for (const mode of ['live', 'test'] as const) {
    t.deepEqual(Object.keys(assessReadiness(facts({ mode }))).sort(), ['blockers', 'checks', 'ready']);
    t.deepEqual(Object.keys(assessReadiness(facts({ mode })).checks).sort(), GATES.map((g) => g.check).sort());
  }
});

for (const gate of GATES) {
  test(`live: failing ${gate.check} alone gives exactly ${gate.blocker}`, (t) => {
    const r = assessReadiness(facts(gate.failing));
    t.false(r.ready);
    t.deepEqual(r.checks, { ...allChecks(true), [gate.check]: false });
    t.is(r.blockers.length, 1);
    t.is(r.blockers[0].code, gate.blocker);
    t.is(r.blockers[0].owner, gate.owner);
    t.true(r.blockers[0].message.length > 0);
  });

  test(`test mode: failing ${gate.check} alone ${gate.liveOnly ? 'blocks nothing' : `gives exactly ${gate.blocker}`}`, (t) => {
    const r = assessReadiness(facts({ mode: 'test', ...gate.failing }));
    // The check is still reported as it stands; only the blocker depends on the mode.
    t.deepEqual(r.checks, { ...allChecks(true), [gate.check]: false });
    if (gate.liveOnly) {
      t.true(r.ready);
      t.deepEqual(r.blockers, []);
    } else {
      t.false(r.ready);
      t.deepEqual(r.blockers.map((b) => b.code), [gate.blocker]);
    }
  });
}

test('with every fact missing, a live customer gets all eight blockers in order', (t) => {
  const everythingMissing = facts(Object.assign({}, ...GATES.map((g) => g.failing)));
  const r = assessReadiness(everythingMissing);
  t.false(r.ready);
  t.deepEqual(r.checks, allChecks(false));
  t.deepEqual(r.blockers.map((b) => b.code), GATES.map((g) => g.blocker));
  t.deepEqual(r.blockers.map((b) => b.owner), GATES.map((g) => g.owner));
  t.is(new Set(r.blockers.map((b) => b.message)).size, 8, 'each blocker has its own message');
});

test('with every fact missing, a test customer gets only the four non-live blockers', (t) => {
  const r = assessReadiness(facts({ mode: 'test', ...Object.assign({}, ...GATES.map((g) => g.failing)) }));
  t.deepEqual(r.blockers.map((b) => b.code), ['human_speech_gate_closed', 'no_number_in_country', 'script_uncertified', 'customer_not_attested']);
});

test('balance: exactly the reserve passes, one cent less fails', (t) => {
  t.true(assessReadiness(facts({ availableCents: 400, callReserveCents: 400 })).checks.balance_loaded);
  t.true(assessReadiness(facts({ availableCents: 400, callReserveCents: 400 })).ready);
  const short = assessReadiness(facts({ availableCents: 399, callReserveCents: 400 }));
  t.false(short.checks.balance_loaded);
  t.deepEqual(short.blockers.map((b) => b.code), ['insufficient_balance']);
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
  for (const mode of ['live', 'test'] as const) {
    const r = assessReadiness(facts({ mode, countryOpened: false, speechCertified: true, hasNumberInCountry: true }));
    t.false(r.checks.speech_certified_for_language);
    t.false(r.checks.number_in_country);
    t.deepEqual(r.blockers.map((b) => b.code), ['human_speech_gate_closed', 'no_number_in_country']);
  }
});

// --- every combination of facts ---

const factsArb: fc.Arbitrary<ReadinessFacts> = fc.record({
  mode: fc.constantFrom('test' as const, 'live' as const),
  accountMode: fc.constantFrom('test' as const, 'live' as const),
  kybStatus: fc.constantFrom('pending', 'verified', 'rejected'),
  agreementSigned: fc.boolean(),
  availableCents: fc.integer({ min: -1_000, max: 1_000 }),
  callReserveCents: fc.integer({ min: 0, max: 1_000 }),
  countryOpened: fc.boolean(),
  speechCertified: fc.boolean(),
  hasNumberInCountry: fc.boolean(),
  scriptCertified: fc.boolean(),
  termsAccepted: fc.boolean(),
});

/** The documented meaning of each check, written independently of the module. */
function expectedChecks(f: ReadinessFacts): Record<CheckName, boolean> {
  return {
    account_live: f.accountMode === 'live',
    business_verified: f.kybStatus === 'verified',
    agreement_signed: f.agreementSigned,
    balance_loaded: f.availableCents >= f.callReserveCents,
    speech_certified_for_language: f.countryOpened && f.speechCertified,
    number_in_country: f.countryOpened && f.hasNumberInCountry,
    script_certified: f.scriptCertified,
    customer_accepted_terms: f.termsAccepted,
  };
}

test('property: checks, blockers and ready agree with the documented rules for every combination', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(factsArb, (f) => {
        const r = assessReadiness(f);
        const checks = expectedChecks(f);
        const expectedBlockers = GATES.filter((g) => !checks[g.check] && (f.mode === 'live' || !g.liveOnly)).map((g) => g.blocker);
        assert.deepEqual(r.checks, checks);
        assert.deepEqual(r.blockers.map((b) => b.code), expectedBlockers);
        assert.equal(r.ready, r.blockers.length === 0);
        if (f.mode === 'test') assert.ok(!r.blockers.some((b) => LIVE_ONLY.includes(b.code)));
      }),
      { numRuns: 2_000 },
    ),
  );
});

test('exhaustive: every combination of two-valued facts, in both modes', (t) => {
  // 2 modes × 2^9 facts, the balance either exactly the reserve or one cent short.
  let cases = 0;
  for (const mode of ['test', 'live'] as const) {
    for (let mask = 0; mask < 1 << 9; mask++) {
      const bit = (i: number) => Boolean(mask & (1 << i));
      const f: ReadinessFacts = {
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
      };
      const r = assessReadiness(f);
      const checks = expectedChecks(f);
      const blocking = GATES.filter((g) => !checks[g.check] && (mode === 'live' || !g.liveOnly)).map((g) => g.blocker);
      t.deepEqual(r.checks, checks);
      t.deepEqual(r.blockers.map((b) => b.code), blocking);
      t.is(r.ready, blocking.length === 0);
      cases++;
    }
  }
  t.is(cases, 1024);
});
