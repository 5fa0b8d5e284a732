import test from 'ava';
import fc from 'fast-check';
import {
  DEFAULT_RETRY_MS,
  RETRY_MS,
  afterHoldRefused,
  decide,
  type Admission,
  type AdmissionFacts,
  type Capacity,
} from '../../actors/scheduler/admission.ts';
import { BLOCKER_CODES, assessReadiness, type ReadinessFacts } from '../../actors/customer/readiness.ts';
import { EMERGENCY_JURISDICTIONS, emergencyClosure, isOpen, nextOpening } from '../../actors/scheduler/calling-windows.ts';
import { checkCaps, type PastAttempt } from '../../actors/scheduler/frequency-caps.ts';
import { consentMeets, requiredConsent } from '../../actors/scheduler/consent.ts';
import { readinessFactsArb as readinessArb, readyFacts as ready } from '../helpers/readiness-facts.ts';
import type { RefusalReason } from '../../money/rules/hold-rules.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const at = (iso: string): Date => new Date(iso);
const plus = (d: Date, ms: number): Date => new Date(d.getTime() + ms);

const NY = '+12125550123';
/** Tuesday 15 June 2027, 11:00 in New York: inside the US window. */
const OPEN = at('2027-06-15T15:00:00Z');
/** Monday 14 June 2027, 23:00 in New York: closed until 08:00. */
const CLOSED = at('2027-06-15T03:00:00Z');
const FREE: Capacity = { liveCalls: 0, maxCalls: 2 };
const FULL: Capacity = { liveCalls: 2, maxCalls: 2 };

/** A requested call (written) that never expires: meets every rule, so the consent gate never decides. */
const CONSENTED: AdmissionFacts['consent'] = { held: 'requested_call', expiresAt: null, lineType: 'mobile' };

/** A request every gate lets through at OPEN. */
function facts(overrides: Partial<AdmissionFacts> = {}): AdmissionFacts {
  return { dialBefore: plus(OPEN, DAY_MS), to: NY, toCountry: 'US', emergencyClosures: new Set(), doNotCall: null, readiness: ready(), callerId: '+12025550100', attempts: [], consent: CONSENTED, earlierOutcomes: [], ...overrides };
}

/** A Miami number: Florida caps three attempts in 24 hours. */
const MIAMI = '+13055550123';
/** Three unanswered attempts `hoursAgo` hours before `now`. */
const threeAttempts = (now: Date, ...hoursAgo: number[]): PastAttempt[] =>
  hoursAgo.map((h) => ({ at: plus(now, -h * 3600_000), outcome: 'no_answer', endedAt: plus(now, -h * 3600_000 + 30_000) }));

// ---- examples: one per gate --------------------------------------------------------------------

test('every gate passed: dial from the caller ID', (t) => {
  t.deepEqual(decide(facts(), OPEN, FREE), { kind: 'dial', from: '+12025550100' });
});

test('a request at or past its deadline ends expired, even one that could be dialled', (t) => {
  t.deepEqual(decide(facts({ dialBefore: OPEN }), OPEN, FREE), { kind: 'end', status: 'expired', outcome: 'expired' });
  t.deepEqual(decide(facts({ dialBefore: plus(OPEN, -1) }), OPEN, FREE), { kind: 'end', status: 'expired', outcome: 'expired' });
  t.is(decide(facts({ dialBefore: plus(OPEN, 1) }), OPEN, FREE).kind, 'dial');
});

test('a number on a do-not-call list ends blocked, from the account list or a national registry', (t) => {
  for (const doNotCall of ['account_list', 'national_registry'] as const) {
    t.deepEqual(decide(facts({ doNotCall }), OPEN, FREE), { kind: 'end', status: 'blocked', outcome: 'do_not_call_listed' });
  }
});

test('readiness: the first blocker of the customer’s own question is the reason; a customer gone waits as not_ready', (t) => {
  const until = plus(OPEN, 10 * MINUTE_MS);
  t.deepEqual(decide(facts({ readiness: ready({ kybStatus: 'pending', scriptCertified: false }) }), OPEN, FREE), {
    kind: 'wait', reason: 'kyb_incomplete', until, logRefusal: false, detail: 'Business verification of your account is not finished.',
  });
  t.deepEqual(decide(facts({ readiness: null }), OPEN, FREE), { kind: 'wait', reason: 'not_ready', until, logRefusal: false });
  // A test customer is decided on the test question: live money and live status do not hold it back.
  const testCustomer = ready({ mode: 'test', accountMode: 'test', kybStatus: 'pending', agreementSigned: false, availableCents: 0 });
  t.is(decide(facts({ readiness: testCustomer }), OPEN, FREE).kind, 'dial');
  t.like(decide(facts({ readiness: { ...testCustomer, termsAccepted: false } }), OPEN, FREE), { kind: 'wait', reason: 'customer_not_attested' });
  // The same facts on a live customer are held back by the first live gate.
  t.like(decide(facts({ readiness: { ...testCustomer, mode: 'live' } }), OPEN, FREE), { kind: 'wait', reason: 'reseller_not_live' });
});

test('a national do-not-call registry of the country never loaded or loaded more than 31 days ago holds the request, naming it and since when', (t) => {
  const registry = { id: 'US-NDNC', name: 'US National Do Not Call Registry', country: 'US', maxAgeDays: 31 };
  const never = decide(facts({ readiness: ready({ mode: 'test', accountMode: 'test', staleDncRegistries: [{ ...registry, importedAt: null, staleSince: null }] }) }), OPEN, FREE);
  t.like(never, { kind: 'wait', reason: 'dnc_registry_stale', until: plus(OPEN, 10 * MINUTE_MS) });
  t.regex((never as { detail: string }).detail, /US National Do Not Call Registry \(US-NDNC\) has never been loaded/);
  const loaded = at('2027-05-01T00:00:00Z');
  const old = decide(facts({ readiness: ready({ staleDncRegistries: [{ ...registry, importedAt: loaded, staleSince: at('2027-06-01T00:00:00Z') }] }) }), OPEN, FREE);
  t.like(old, { kind: 'wait', reason: 'dnc_registry_stale' });
  t.regex((old as { detail: string }).detail, /US-NDNC\) was last loaded on 2027-05-01.*31 days.*since 2027-06-01T00:00:00.000Z/);
});

test('outside the window: wait for the next opening, or the deadline if that comes first', (t) => {
  const opening = at('2027-06-15T12:00:00Z');
  t.deepEqual(nextOpening(NY, 'US', CLOSED), opening);
  t.deepEqual(decide(facts(), CLOSED, FREE), { kind: 'wait', reason: 'outside_calling_window', until: opening, logRefusal: false });
  const deadline = plus(CLOSED, 3600_000);
  t.deepEqual(decide(facts({ dialBefore: deadline }), CLOSED, FREE), { kind: 'wait', reason: 'outside_calling_window', until: deadline, logRefusal: false });
});

test('a frequency cap: wait until the oldest counted attempt leaves the window, or the deadline; before the window is asked', (t) => {
  const attempts = threeAttempts(OPEN, 20, 5, 1);
  t.deepEqual(decide(facts({ to: MIAMI, attempts }), OPEN, FREE), { kind: 'wait', reason: 'frequency_cap', until: plus(OPEN, 4 * 3600_000), logRefusal: false });
  t.like(decide(facts({ to: MIAMI, attempts, dialBefore: plus(OPEN, 3600_000) }), OPEN, FREE), { reason: 'frequency_cap', until: plus(OPEN, 3600_000) });
  // Outside the window too: the cap is the reason, so the request sleeps until it frees, not until each opening.
  t.like(decide(facts({ to: MIAMI, attempts: threeAttempts(CLOSED, 20, 5, 1), dialBefore: plus(CLOSED, 3 * DAY_MS) }), CLOSED, FREE), { reason: 'frequency_cap' });
  // Two attempts, or a New York number (no cap in New York): dialled.
  t.is(decide(facts({ to: MIAMI, attempts: attempts.slice(1) }), OPEN, FREE).kind, 'dial');
  t.is(decide(facts({ attempts }), OPEN, FREE).kind, 'dial');
});

test('an emergency closure of a jurisdiction the number may be in: wait 15 minutes, before the window is asked', (t) => {
  const closed = { emergencyClosures: new Set(['US-NY']) };
  t.deepEqual(decide(facts(closed), OPEN, FREE), { kind: 'wait', reason: 'emergency_closure', until: plus(OPEN, 15 * MINUTE_MS), logRefusal: false });
  t.like(decide(facts(closed), CLOSED, FREE), { reason: 'emergency_closure' }, 'the closure is the first reason given');
  t.is(decide(facts({ emergencyClosures: new Set(['US-LA']) }), OPEN, FREE).kind, 'dial', 'another state closed');
  t.like(decide(facts({ ...closed, readiness: null }), OPEN, FREE), { reason: 'not_ready' }, 'readiness comes first');
  const deadline = plus(OPEN, MINUTE_MS);
  t.like(decide(facts({ ...closed, dialBefore: deadline }), OPEN, FREE), { reason: 'emergency_closure', until: deadline }, 'never past the deadline');
});

test('this process at capacity: wait 10 s, and the refusal is logged', (t) => {
  t.deepEqual(decide(facts(), OPEN, FULL), { kind: 'wait', reason: 'platform_at_capacity', until: plus(OPEN, 10_000), logRefusal: true });
  t.like(decide(facts(), OPEN, { liveCalls: 5, maxCalls: 2 }), { reason: 'platform_at_capacity' });
  t.is(decide(facts(), OPEN, { liveCalls: 1, maxCalls: 2 }).kind, 'dial');
});

test('no caller ID in the customer’s country: wait 10 minutes', (t) => {
  t.deepEqual(decide(facts({ callerId: null }), OPEN, FREE), { kind: 'wait', reason: 'no_number_in_country', until: plus(OPEN, 10 * MINUTE_MS), logRefusal: false });
});

test('the money start’s refusals: each waits its own time, never past the deadline; the account logs them itself', (t) => {
  const deadline = plus(OPEN, DAY_MS);
  const table: [RefusalReason, number][] = [
    ['insufficient_balance', 10 * MINUTE_MS],
    ['spend_cap_daily', 30 * MINUTE_MS],
    ['spend_cap_monthly', 6 * 3600_000],
    ['customer_spend_cap_daily', 30 * MINUTE_MS],
    ['customer_spend_cap_monthly', 6 * 3600_000],
    ['concurrency_limit', 15_000],
  ];
  for (const [reason, ms] of table) {
    t.deepEqual(afterHoldRefused(reason, OPEN, deadline), { kind: 'wait', reason, until: plus(OPEN, ms), logRefusal: false }, reason);
  }
  t.deepEqual(afterHoldRefused('spend_cap_monthly', OPEN, plus(OPEN, 3600_000)).until, plus(OPEN, 3600_000));
  // A reason without a row of its own (even one named like an Object property) waits a minute.
  for (const reason of ['something_new', 'constructor', '__proto__', 'toString']) {
    t.deepEqual(afterHoldRefused(reason, OPEN, deadline).until, plus(OPEN, DEFAULT_RETRY_MS), reason);
  }
});

// ---- exhaustive: every combination of the gates' facts -----------------------------------------

/** Readiness cases: gone, ready (live and test customers), and held back by one or two blockers. */
const READINESS_CASES: [string, ReadinessFacts | null, string | null][] = [
  ['gone', null, 'not_ready'],
  ['ready live', ready(), null],
  ['ready test (live gates failing)', ready({ mode: 'test', accountMode: 'test', kybStatus: 'pending', agreementSigned: false, availableCents: 0 }), null],
  ['live, not live yet', ready({ accountMode: 'test' }), 'reseller_not_live'],
  ['live, short of money', ready({ availableCents: 399 }), 'insufficient_balance'],
  ['test, no number', ready({ mode: 'test', hasNumberInCountry: false }), 'no_number_in_country'],
  ['live, script and terms', ready({ scriptCertified: false, termsAccepted: false }), 'script_uncertified'],
  ['test, speech gate', ready({ mode: 'test', speechCertified: false, termsAccepted: false }), 'human_speech_gate_closed'],
];

test('exhaustive: deadline × do-not-call × readiness × caps × emergency closure × window × capacity × caller ID, in the documented order', (t) => {
  let cases = 0;
  for (const expired of [false, true])
    for (const doNotCall of [null, 'account_list', 'national_registry'] as const)
      for (const [label, readiness, blocker] of READINESS_CASES)
        for (const capped of [false, true])
          for (const closed of [new Set<string>(), new Set(['US-FL'])])
            for (const now of [OPEN, CLOSED])
              for (const capacity of [FREE, FULL])
                for (const callerId of [null, '+12025550100']) {
              const attempts = threeAttempts(now, 20, 5, ...(capped ? [1] : []));
              const f = facts({ dialBefore: expired ? now : plus(now, 3 * DAY_MS), doNotCall, readiness, callerId, to: MIAMI, attempts, emergencyClosures: closed });
              const d = decide(f, now, capacity);
              const what = `${expired} ${doNotCall} ${label} ${capped} ${[...closed]} ${now.toISOString()} ${capacity.liveCalls} ${callerId}`;
              cases++;
              // The documented order, restated gate by gate.
              if (expired) t.deepEqual(d, { kind: 'end', status: 'expired', outcome: 'expired' }, what);
              else if (doNotCall) t.deepEqual(d, { kind: 'end', status: 'blocked', outcome: 'do_not_call_listed' }, what);
              else if (blocker) t.deepEqual(d, { kind: 'wait', reason: blocker, until: plus(now, 10 * MINUTE_MS), logRefusal: false, ...('detail' in d ? { detail: d.detail } : {}) }, what);
              else if (capped) t.deepEqual(d, { kind: 'wait', reason: 'frequency_cap', until: plus(now, 4 * 3600_000), logRefusal: false }, what);
              else if (closed.size > 0) t.deepEqual(d, { kind: 'wait', reason: 'emergency_closure', until: plus(now, 15 * MINUTE_MS), logRefusal: false }, what);
              else if (now === CLOSED) t.deepEqual(d, { kind: 'wait', reason: 'outside_calling_window', until: nextOpening(MIAMI, 'US', now), logRefusal: false }, what);
              else if (capacity === FULL) t.deepEqual(d, { kind: 'wait', reason: 'platform_at_capacity', until: plus(now, 10_000), logRefusal: true }, what);
              else if (!callerId) t.deepEqual(d, { kind: 'wait', reason: 'no_number_in_country', until: plus(now, 10 * MINUTE_MS), logRefusal: false }, what);
              else t.deepEqual(d, { kind: 'dial', from: callerId }, what);
            }
  t.is(cases, 2 * 3 * READINESS_CASES.length * 2 * 2 * 2 * 2 * 2);
});

// ---- properties over random facts --------------------------------------------------------------

/** Numbers in every calling country, a few in several zones. */
const NUMBERS: [string, string][] = [
  ['US', NY], ['US', '+18505550123'], ['US', '+19995550123'], ['US', '+12075550123'], ['US', '+12065550123'], ['US', '+14055550123'],
  ['US', '+14105550123'], ['CA', '+14165550123'], ['CA', '+16045550123'], ['AU', '+61390001234'], ['AU', '+61412345678'],
  ['GB', '+442079460000'], ['IE', '+35312345678'], ['DE', '+4930123456'], ['FR', '+33142000000'], ['ES', '+34928123456'], ['NL', '+31201234567'],
];

/** The facts of each gate after the deadline, drawn on their own so a test can redraw one gate's. */
const gateArbs = {
  doNotCall: fc.constantFrom(null, 'account_list' as const, 'national_registry' as const),
  // Mostly ready, so the later gates are reached often.
  readiness: fc.oneof(fc.constant(null), readinessArb, readinessArb.map((r) => ready({ mode: r.mode, requestedSteps: r.requestedSteps }))),
  number: fc.constantFrom(...NUMBERS),
  // Mostly none, so the window is reached often.
  emergencyClosures: fc.oneof(fc.constant([] as string[]), fc.uniqueArray(fc.constantFrom('US', 'US-NY', 'US-FL', 'US-LA', 'CA-ON', 'ES-CN', 'FR', ...EMERGENCY_JURISDICTIONS), { maxLength: 3 })),
  capacity: fc.record({ liveCalls: fc.integer({ min: 0, max: 4 }), maxCalls: fc.integer({ min: 1, max: 4 }) }),
  callerId: fc.option(fc.constantFrom('+12025550100', '+442079460001'), { nil: null }),
  // Earlier attempts, as ms before now, and how each ended: often enough to reach a cap.
  attempts: fc.array(
    fc.record({ agoMs: fc.integer({ min: 0, max: 70 * DAY_MS }), outcome: fc.constantFrom('no_answer', 'completed', 'not_interested', 'do_not_call', 'busy') }),
    { maxLength: 6 },
  ),
};
type Drawn = { [K in keyof typeof gateArbs]: typeof gateArbs[K] extends fc.Arbitrary<infer T> ? T : never };

const inputArb = fc.record({
  now: fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2028, 11, 31) }).map((ms) => new Date(ms)),
  // Before, at and after now: the deadline boundary is drawn often.
  deadlineMs: fc.oneof(fc.constant(0), fc.integer({ min: -3 * DAY_MS, max: 0 }), fc.integer({ min: 1, max: 40 * DAY_MS }), fc.integer({ min: 1, max: 5 * MINUTE_MS })),
  ...gateArbs,
});
type Input = { now: Date; deadlineMs: number } & Drawn;

function run(i: Input): { f: AdmissionFacts; d: Admission } {
  const f: AdmissionFacts = {
    dialBefore: plus(i.now, i.deadlineMs),
    to: i.number[1],
    toCountry: i.number[0],
    emergencyClosures: new Set(i.emergencyClosures),
    doNotCall: i.doNotCall,
    readiness: i.readiness,
    callerId: i.callerId,
    attempts: i.attempts.map((a) => ({ at: plus(i.now, -a.agoMs), outcome: a.outcome, endedAt: plus(i.now, -a.agoMs + 60_000) })),
    consent: CONSENTED,
    earlierOutcomes: [],
  };
  return { f, d: decide(f, i.now, i.capacity) };
}

/**
 * Which gate a decision was made by, in order (6 = every gate passed). `no_number_in_country` is
 * both a readiness blocker and the caller-ID gate's reason: the readiness facts tell them apart.
 */
function gateOf(d: Admission, f: AdmissionFacts): number {
  if (d.kind === 'end') return d.status === 'expired' ? 0 : 1;
  if (d.kind === 'dial') return 7;
  const ready = f.readiness !== null && assessReadiness(f.readiness).ready;
  if (!ready && (d.reason === 'not_ready' || (BLOCKER_CODES as readonly string[]).includes(d.reason))) return 2;
  return { frequency_cap: 3, emergency_closure: 4, outside_calling_window: 4, platform_at_capacity: 5, no_number_in_country: 6 }[d.reason as string] ?? -1;
}
/** The facts each gate reads, in gate order (the deadline is gate 0); the window reads the number, drawn with the caps'. */
const GATE_FACTS: (keyof Drawn)[][] = [[], ['doNotCall'], ['readiness'], ['number', 'attempts'], ['emergencyClosures'], ['capacity'], ['callerId']];

test('property: a wait moves forward and never past the deadline; only the readiness, caps, window, capacity and caller-ID gates wait', (t) => {
  fc.assert(
    fc.property(inputArb, (i) => {
      const { f, d } = run(i);
      if (d.kind !== 'wait') return true;
      return d.until > i.now && d.until <= f.dialBefore && [2, 3, 4, 5, 6].includes(gateOf(d, f)) && d.logRefusal === (d.reason === 'platform_at_capacity');
    }),
    { numRuns: 3_000, seed: 20270615 },
  );
  t.pass();
});

test('property: a request at or past its deadline is never dialled, and a listed number never, whatever else holds', (t) => {
  fc.assert(
    fc.property(inputArb, (i) => {
      const { f, d } = run(i);
      if (f.dialBefore <= i.now) return d.kind === 'end' && d.status === 'expired';
      if (f.doNotCall) return d.kind === 'end' && d.status === 'blocked' && d.outcome === 'do_not_call_listed';
      return d.kind !== 'end';
    }),
    { numRuns: 3_000, seed: 20270616 },
  );
  t.pass();
});

test('property: dialled only when every gate holds, from the caller ID, under every cap, inside the window', (t) => {
  fc.assert(
    fc.property(inputArb, (i) => {
      const { f, d } = run(i);
      const everyGate =
        f.dialBefore > i.now &&
        f.doNotCall === null &&
        f.readiness !== null &&
        assessReadiness(f.readiness).ready &&
        checkCaps(f.to, f.toCountry, f.attempts, i.now).allowed &&
        emergencyClosure(f.to, f.toCountry, f.emergencyClosures) === null &&
        isOpen(f.to, f.toCountry, i.now) &&
        i.capacity.liveCalls < i.capacity.maxCalls &&
        f.callerId !== null;
      if (d.kind !== 'dial') return true;
      return everyGate && d.from === f.callerId;
    }),
    { numRuns: 3_000, seed: 20270617 },
  );
  t.pass();
});

test('property: the gates are in order: redrawing the facts of any later gate never changes a decision', (t) => {
  fc.assert(
    fc.property(inputArb, fc.record(gateArbs), (i, other) => {
      const { f, d: first } = run(i);
      const gate = gateOf(first, f);
      if (gate < 0) return false;
      // Every gate after the deciding one gets other facts; the decision stands.
      for (let g = gate + 1; g < GATE_FACTS.length; g++) {
        for (const key of GATE_FACTS[g]) {
          const again = run({ ...i, [key]: other[key] } as Input).d;
          if (JSON.stringify(again) !== JSON.stringify(first)) return false;
        }
      }
      return true;
    }),
    { numRuns: 2_000, seed: 20270618 },
  );
  t.pass();
});

test('property: decide reads its facts and changes none of them', (t) => {
  fc.assert(
    fc.property(inputArb, (i) => {
      const before = JSON.stringify(i);
      const a = run(i).d;
      const b = run(i).d;
      return JSON.stringify(i) === before && JSON.stringify(a) === JSON.stringify(b);
    }),
    { numRuns: 500, seed: 20270619 },
  );
  t.pass();
});

test('property: a money refusal waits forward, its own time or the deadline, whatever the reason', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(fc.constantFrom(...Object.keys(RETRY_MS)), fc.string()),
      fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2028, 11, 31) }),
      fc.integer({ min: 1, max: 10 * DAY_MS }),
      (reason, nowMs, deadlineMs) => {
        const now = new Date(nowMs);
        const w = afterHoldRefused(reason, now, plus(now, deadlineMs));
        const own = Object.hasOwn(RETRY_MS, reason) ? RETRY_MS[reason] : DEFAULT_RETRY_MS;
        return w.reason === reason && w.until.getTime() === nowMs + Math.min(own, deadlineMs) && !w.logRefusal;
      },
    ),
    { numRuns: 2_000, seed: 20270620 },
  );
  t.pass();
});

// ---- the consent gate (actors/scheduler/consent.ts), right after do-not-call ----

test('consent that expired before the dial ends the request blocked / consent_expired', (t) => {
  const consent = { held: 'prior_express_written' as const, expiresAt: OPEN, lineType: 'mobile' as const };
  t.deepEqual(decide(facts({ consent }), OPEN, FREE), { kind: 'end', status: 'blocked', outcome: 'consent_expired' });
  t.is(decide(facts({ consent: { ...consent, expiresAt: plus(OPEN, 1) } }), OPEN, FREE).kind, 'dial');
  // Expired consent a business landline never needed does not stop the call.
  t.is(decide(facts({ consent: { ...consent, lineType: 'business_landline' } }), OPEN, FREE).kind, 'dial');
});

test('consent the rule asks for at the dial and the request lacks ends it blocked / consent_required', (t) => {
  t.deepEqual(decide(facts({ consent: { held: 'prior_express', expiresAt: null, lineType: 'mobile' } }), OPEN, FREE), {
    kind: 'end',
    status: 'blocked',
    outcome: 'consent_required',
  });
  // A request older than the gate (no line type) is read as a mobile.
  t.is(decide(facts({ consent: { held: 'none', expiresAt: null, lineType: null } }), OPEN, FREE).kind, 'end');
  t.is(decide(facts({ consent: { held: 'none', expiresAt: null, lineType: 'business_landline' } }), OPEN, FREE).kind, 'dial');
  // France: a business line needs none (Tuesday 10:00 in Paris, inside the window); a mobile does.
  const paris = { to: '+33612345678', toCountry: 'FR', callerId: '+33142000000' };
  const none = { held: 'none' as const, expiresAt: null };
  t.is(decide(facts({ ...paris, consent: { ...none, lineType: 'business_landline' } }), at('2026-08-11T08:00:00Z'), FREE).kind, 'dial');
  t.like(decide(facts({ ...paris, consent: { ...none, lineType: 'mobile' } }), at('2026-08-11T08:00:00Z'), FREE), { outcome: 'consent_required' });
});

test('the consent gate comes after the deadline and do-not-call, before readiness', (t) => {
  const lacking = { held: 'none' as const, expiresAt: null, lineType: 'mobile' as const };
  t.like(decide(facts({ consent: lacking, dialBefore: OPEN }), OPEN, FREE), { outcome: 'expired' });
  t.like(decide(facts({ consent: lacking, doNotCall: 'account_list' }), OPEN, FREE), { outcome: 'do_not_call_listed' });
  t.like(decide(facts({ consent: lacking, readiness: null }), CLOSED, FREE), { kind: 'end', outcome: 'consent_required' });
});

test('property: no dial without the consent the rule asks for at that moment', (t) => {
  fc.assert(
    fc.property(
      fc.constantFrom('requested_call', 'prior_express_written', 'prior_express', 'existing_business_relationship', 'none' as const),
      fc.constantFrom('mobile', 'landline', 'business_landline', 'voip', 'unknown', null),
      fc.option(fc.integer({ min: -2 * DAY_MS, max: 2 * DAY_MS })),
      fc.constantFrom(NY, '+13055550123', '+18015550123', '+12025550123', '+12065550123', '+12075550123', '+16015550123', '+17025550123'),
      (held, lineType, expiresIn, to) => {
        const consent = { held, expiresAt: expiresIn === null ? null : plus(OPEN, expiresIn), lineType };
        const d = decide(facts({ to, consent }), OPEN, FREE);
        if (d.kind !== 'dial') return true;
        const requirement = requiredConsent(to, 'US', lineType ?? 'unknown', OPEN);
        const effective = consent.expiresAt !== null && consent.expiresAt <= OPEN ? 'none' : held;
        return consentMeets(effective, requirement);
      },
    ),
  );
  t.pass();
});

// ---- state auto-dialler laws at the dial (issue 20 §1) ----

/** Tuesday 2027-06-15 19:00 UTC: 12:00 in Seattle and Las Vegas, 15:00 in Maine; every window open. */
const NOON_WEST = at('2027-06-15T19:00:00Z');

test('Washington and Maine at the dial: anything but a requested call ends the request blocked / requested_call_only', (t) => {
  for (const to of ['+12065550123', '+12075550123', '+19995550123']) {
    for (const held of ['prior_express_written', 'prior_express', 'existing_business_relationship', 'none'] as const) {
      t.deepEqual(decide(facts({ to, consent: { held, expiresAt: null, lineType: 'business_landline' } }), NOON_WEST, FREE), { kind: 'end', status: 'blocked', outcome: 'requested_call_only' }, `${to} ${held}`);
    }
  }
  t.is(decide(facts({ to: '+12065550123', consent: { held: 'requested_call', expiresAt: null, lineType: 'mobile' } }), NOON_WEST, FREE).kind, 'dial');
  // Expired, a requested call is no consent: consent_expired, as for any other.
  t.like(decide(facts({ to: '+12065550123', consent: { held: 'requested_call', expiresAt: NOON_WEST, lineType: 'mobile' } }), NOON_WEST, FREE), { outcome: 'consent_expired' });
});

test('Mississippi at the dial: a business line without consent ends blocked / consent_required', (t) => {
  t.like(decide(facts({ to: '+16015550123', consent: { held: 'none', expiresAt: null, lineType: 'business_landline' } }), NOON_WEST, FREE), { kind: 'end', outcome: 'consent_required' });
  t.is(decide(facts({ to: '+16015550123', consent: { held: 'prior_express', expiresAt: null, lineType: 'business_landline' } }), NOON_WEST, FREE).kind, 'dial');
});

test('Nevada at the dial: after an earlier call the callee ended, the request ends blocked / no_redial_after_hang_up', (t) => {
  const nv = { to: '+17025550123', consent: { held: 'prior_express' as const, expiresAt: null, lineType: 'business_landline' as const } };
  for (const o of ['completed', 'not_interested', 'do_not_call']) {
    t.deepEqual(decide(facts({ ...nv, earlierOutcomes: ['no_answer', o] }), NOON_WEST, FREE), { kind: 'end', status: 'blocked', outcome: 'no_redial_after_hang_up' }, o);
  }
  for (const o of ['no_answer', 'busy', 'failed', 'voicemail', 'call_back_later', 'appointment_booked', 'time_limit']) {
    t.is(decide(facts({ ...nv, earlierOutcomes: [o] }), NOON_WEST, FREE).kind, 'dial', o);
  }
  // Elsewhere a hang-up does not stop a later call.
  t.is(decide(facts({ to: NY, consent: CONSENTED, earlierOutcomes: ['completed'] }), NOON_WEST, FREE).kind, 'dial');
  // The gate comes after consent: consent that fails is reported first.
  t.like(decide(facts({ ...nv, consent: { ...nv.consent, held: 'none' }, earlierOutcomes: ['completed'] }), NOON_WEST, FREE), { outcome: 'consent_required' });
});
