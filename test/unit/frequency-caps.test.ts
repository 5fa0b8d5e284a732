import test from 'ava';
import fc from 'fast-check';
import {
  CAP_LOOKBACK_MS,
  CAP_RULES,
  capJurisdictions,
  capRules,
  checkCaps,
  refusalOf,
  ruleFreesAt,
  type CapRule,
  type PastAttempt,
} from '../../actors/scheduler/frequency-caps.ts';
import { decide } from '../../actors/scheduler/admission.ts';
import { isOpen } from '../../actors/scheduler/calling-windows.ts';
import { readyFacts } from '../helpers/readiness-facts.ts';
import { CONSENT_TYPES, consentMeets, requiredConsent } from '../../actors/scheduler/consent.ts';
import { LINE_TYPES } from '../../runtime/types.ts';
import type { AdmissionFacts } from '../../actors/scheduler/admission.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const T0 = new Date('2027-03-02T15:00:00Z');
const plus = (d: Date, ms: number): Date => new Date(d.getTime() + ms);

/** An attempt `agoMs` before `now` that ended a minute later with `outcome`. */
const attempt = (now: Date, agoMs: number, outcome = 'no_answer'): PastAttempt => ({ at: plus(now, -agoMs), outcome, endedAt: plus(now, -agoMs + 60_000) });

/** A number in each jurisdiction with a cap, and some with none. */
const NUMBERS = {
  FL: ['US', '+13055550123'],
  OK: ['US', '+14055550123'],
  MD: ['US', '+14105550123'],
  ME: ['US', '+12075550123'],
  WA: ['US', '+12065550123'],
  NY: ['US', '+12125550123'],
  US_UNKNOWN: ['US', '+19995550123'],
  BC: ['CA', '+16045550123'],
  ON: ['CA', '+14165550123'],
  FR: ['FR', '+33142000000'],
  GB: ['GB', '+442079460000'],
  DE: ['DE', '+4930123456'],
} as const;

// ---- the table ------------------------------------------------------------------------------------

test('every rule carries its citation, where it was read and the date it was last checked', (t) => {
  t.true(CAP_RULES.length >= 8);
  for (const r of CAP_RULES) {
    t.true(r.citation.trim().length > 5, `${r.id}: citation`);
    t.regex(r.url, /^https:\/\/\S+$/, `${r.id}: url`);
    t.regex(r.checked, /^\d{4}-\d{2}-\d{2}$/, `${r.id}: checked`);
    t.false(Number.isNaN(Date.parse(`${r.checked}T00:00:00Z`)), `${r.id}: checked is a date`);
    if (r.kind === 'count') t.true(Number.isInteger(r.max) && r.max >= 1 && r.windowMs > 0, r.id);
    else t.true(r.refusals.length > 0 && r.quietMs > 0, r.id);
  }
});

test('the issue’s caps are all there, each where it applies', (t) => {
  const rule = (id: string, kind: CapRule['kind']) => CAP_RULES.find((r) => r.id === id && r.kind === kind);
  for (const id of ['US-FL', 'US-OK', 'US-MD']) t.like(rule(id, 'count'), { max: 3, windowMs: DAY_MS }, id);
  t.like(rule('US-ME', 'count'), { max: 1, windowMs: 8 * HOUR_MS });
  t.like(rule('CA-BC', 'count'), { max: 1, windowMs: 30 * DAY_MS });
  t.like(rule('FR', 'count'), { max: 4 });
  t.true((rule('FR', 'count') as { windowMs: number }).windowMs >= 30 * DAY_MS);
  t.like(rule('FR', 'quiet_after_refusal'), { refusals: ['declined', 'do_not_call'] });
  t.true((rule('FR', 'quiet_after_refusal') as { quietMs: number }).quietMs >= 60 * DAY_MS);
  t.like(rule('US-WA', 'quiet_after_refusal'), { refusals: ['do_not_call'] });
  t.true((rule('US-WA', 'quiet_after_refusal') as { quietMs: number }).quietMs >= 365 * DAY_MS);
  t.is(CAP_LOOKBACK_MS, 367 * DAY_MS, 'the look-back covers the longest rule and a call’s length');
});

test('refusals are read from the call outcomes: not interested declines, do_not_call asks never again; nothing else refuses', (t) => {
  t.is(refusalOf('not_interested'), 'declined');
  t.is(refusalOf('do_not_call'), 'do_not_call');
  for (const outcome of [null, 'appointment_booked', 'call_back_later', 'voicemail', 'time_limit', 'completed', 'no_answer', 'busy', 'failed', 'constructor', '__proto__']) {
    t.is(refusalOf(outcome), null, String(outcome));
  }
});

test('jurisdictions follow the NANP area code; an unknown one gets every state or province cap of its country', (t) => {
  t.deepEqual(capJurisdictions(...rev(NUMBERS.FL)), ['US', 'US-FL']);
  t.deepEqual(capJurisdictions(...rev(NUMBERS.BC)), ['CA', 'CA-BC']);
  t.deepEqual(capJurisdictions(...rev(NUMBERS.FR)), ['FR']);
  t.deepEqual(capRules(...rev(NUMBERS.NY)), []);
  t.deepEqual(capRules(...rev(NUMBERS.ON)), []);
  t.deepEqual(capRules(...rev(NUMBERS.GB)), []);
  t.deepEqual(new Set(capRules(...rev(NUMBERS.US_UNKNOWN)).map((r) => r.id)), new Set(['US-FL', 'US-OK', 'US-MD', 'US-ME', 'US-WA']));
  t.deepEqual(capRules('+16045550123', 'CA').map((r) => r.id), ['CA-BC']);
});

function rev(n: readonly [string, string]): [string, string] {
  return [n[1], n[0]];
}

// ---- examples, one per rule -----------------------------------------------------------------------

test('Florida, Oklahoma, Maryland: the fourth attempt in 24 hours waits until the first leaves the window', (t) => {
  for (const key of ['FL', 'OK', 'MD'] as const) {
    const [country, to] = NUMBERS[key];
    const three = [attempt(T0, 23 * HOUR_MS), attempt(T0, 2 * HOUR_MS), attempt(T0, HOUR_MS, 'appointment_booked')];
    const held = checkCaps(to, country, three, T0);
    t.like(held, { allowed: false, until: plus(T0, HOUR_MS), rule: { id: `US-${key}` } }, key);
    t.deepEqual(checkCaps(to, country, three, plus(T0, HOUR_MS)), { allowed: true }, key);
    t.deepEqual(checkCaps(to, country, three.slice(1), T0), { allowed: true }, `${key}: two`);
    // An attempt exactly 24 hours ago has left the window.
    t.deepEqual(checkCaps(to, country, [attempt(T0, DAY_MS), ...three.slice(1)], T0), { allowed: true }, `${key}: boundary`);
  }
});

test('Maine: one attempt per 8 hours, whatever its outcome', (t) => {
  const [country, to] = NUMBERS.ME;
  t.like(checkCaps(to, country, [attempt(T0, 3 * HOUR_MS, 'busy')], T0), { allowed: false, until: plus(T0, 5 * HOUR_MS) });
  t.deepEqual(checkCaps(to, country, [attempt(T0, 8 * HOUR_MS, 'busy')], T0), { allowed: true });
});

test('Washington: a year of silence after "do not call", and none after a mere "not interested"', (t) => {
  const [country, to] = NUMBERS.WA;
  const refused = attempt(T0, 10 * DAY_MS, 'do_not_call');
  const held = checkCaps(to, country, [refused], T0);
  t.like(held, { allowed: false, until: plus(refused.endedAt!, 366 * DAY_MS), rule: { id: 'US-WA' } });
  t.deepEqual(checkCaps(to, country, [attempt(T0, 10 * DAY_MS, 'not_interested')], T0), { allowed: true });
  t.deepEqual(checkCaps(to, country, [refused], plus(refused.endedAt!, 366 * DAY_MS)), { allowed: true });
});

test('British Columbia: once per 30 days', (t) => {
  const [country, to] = NUMBERS.BC;
  t.like(checkCaps(to, country, [attempt(T0, 29 * DAY_MS)], T0), { allowed: false, until: plus(T0, DAY_MS), rule: { id: 'CA-BC' } });
  t.deepEqual(checkCaps(to, country, [attempt(T0, 30 * DAY_MS)], T0), { allowed: true });
});

test('France: four attempts per 30 calendar days (31 rolling), and 60 calendar days (61 rolling) after a refusal', (t) => {
  const [country, to] = NUMBERS.FR;
  const four = [25, 10, 5, 1].map((d) => attempt(T0, d * DAY_MS));
  t.like(checkCaps(to, country, four, T0), { allowed: false, until: plus(T0, 6 * DAY_MS), rule: { id: 'FR', kind: 'count' } });
  t.deepEqual(checkCaps(to, country, four.slice(1), T0), { allowed: true });
  const declined = attempt(T0, DAY_MS, 'not_interested');
  t.like(checkCaps(to, country, [declined], T0), { allowed: false, until: plus(declined.endedAt!, 61 * DAY_MS), rule: { id: 'FR', kind: 'quiet_after_refusal' } });
  t.like(checkCaps(to, country, [attempt(T0, DAY_MS, 'do_not_call')], T0), { allowed: false, rule: { kind: 'quiet_after_refusal' } });
  t.deepEqual(checkCaps(to, country, [attempt(T0, DAY_MS, 'call_back_later')], T0), { allowed: true });
});

test('the rule that holds longest is named, and the number is free only when every cap frees it', (t) => {
  const [country, to] = NUMBERS.FR;
  // Four in the month (frees in 6 days) and a refusal yesterday (frees in 60 days).
  const history = [25, 10, 5].map((d) => attempt(T0, d * DAY_MS)).concat(attempt(T0, DAY_MS, 'not_interested'));
  const held = checkCaps(to, country, history, T0);
  t.like(held, { allowed: false, rule: { kind: 'quiet_after_refusal' } });
  t.deepEqual((held as { until: Date }).until, plus(T0, 60 * DAY_MS + 60_000));
});

// ---- properties: jurisdictions × attempt histories × clock positions --------------------------------

const numberArb = fc.constantFrom(...Object.values(NUMBERS));
const outcomeArb = fc.constantFrom('no_answer', 'busy', 'completed', 'voicemail', 'not_interested', 'do_not_call', 'call_back_later', 'failed', null);
/** Gaps between moments, mostly short so caps are reached, sometimes weeks. */
const gapArb = fc.oneof(fc.integer({ min: 0, max: 3 * HOUR_MS }), fc.integer({ min: 0, max: 2 * DAY_MS }), fc.integer({ min: 0, max: 90 * DAY_MS }));
const historyArb = fc.array(fc.record({ agoMs: fc.integer({ min: 0, max: 400 * DAY_MS }), lengthMs: fc.integer({ min: 0, max: 20 * 60_000 }), outcome: outcomeArb }), { maxLength: 8 });
const history = (now: Date, h: { agoMs: number; lengthMs: number; outcome: string | null }[]): PastAttempt[] =>
  h.map((a) => ({ at: plus(now, -a.agoMs), outcome: a.outcome, endedAt: a.outcome === null ? null : plus(now, -a.agoMs + a.lengthMs) }));

/** Whether `attempts` (oldest first) keep every cap that reaches the number: checked directly from the table. */
function violations(to: string, country: string, attempts: readonly PastAttempt[]): string[] {
  const found: string[] = [];
  for (const rule of capRules(to, country)) {
    for (const [i, a] of attempts.entries()) {
      if (rule.kind === 'count') {
        const within = attempts.filter((b) => b.at >= a.at && b.at.getTime() < a.at.getTime() + rule.windowMs).length;
        if (within > rule.max) found.push(`${rule.id} ${within} from ${a.at.toISOString()}`);
      } else if (refusalOf(a.outcome) && rule.refusals.includes(refusalOf(a.outcome)!)) {
        const refused = (a.endedAt ?? a.at).getTime();
        for (const b of attempts.slice(i + 1)) if (b.at.getTime() < refused + rule.quietMs) found.push(`${rule.id} ${b.at.toISOString()} after a refusal`);
      }
    }
  }
  return found;
}

test('property: a dialler that dials whenever the gate allows (and often exactly when it frees) never exceeds a cap', (t) => {
  fc.assert(
    fc.property(
      numberArb,
      fc.array(fc.record({ gapMs: gapArb, dial: fc.boolean(), jumpToUntil: fc.boolean(), lengthMs: fc.integer({ min: 0, max: 20 * 60_000 }), outcome: outcomeArb }), { minLength: 1, maxLength: 40 }),
      ([country, to], steps) => {
        const attempts: PastAttempt[] = [];
        let now = T0;
        for (const s of steps) {
          const check = checkCaps(to, country, attempts, now);
          if (check.allowed && s.dial) {
            // One call at a time: the next moment is after this call ended.
            const endedAt = plus(now, s.lengthMs);
            attempts.push({ at: now, outcome: s.outcome ?? 'no_answer', endedAt });
            now = plus(endedAt, s.gapMs);
          } else if (!check.allowed && s.jumpToUntil) now = check.until;
          else now = plus(now, Math.max(1, s.gapMs));
        }
        const found = violations(to, country, attempts);
        if (found.length > 0) throw new Error(found.join('; '));
        return true;
      },
    ),
    { numRuns: 1_500, seed: 20261125 },
  );
  t.pass();
});

test('property: a held number frees exactly at `until`: allowed then, not a millisecond before; never held when no cap reaches it', (t) => {
  fc.assert(
    fc.property(numberArb, historyArb, fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2028, 11, 31) }), ([country, to], h, nowMs) => {
      const now = new Date(nowMs);
      const attempts = history(now, h);
      const check = checkCaps(to, country, attempts, now);
      if (capRules(to, country).length === 0) return check.allowed;
      if (check.allowed) return true;
      return check.until > now && checkCaps(to, country, attempts, check.until).allowed && !checkCaps(to, country, attempts, plus(check.until, -1)).allowed;
    }),
    { numRuns: 3_000, seed: 20261126 },
  );
  t.pass();
});

test('property: a count cap at its limit frees exactly when its oldest counted attempt leaves the window', (t) => {
  const countRules = CAP_RULES.filter((r): r is Extract<CapRule, { kind: 'count' }> => r.kind === 'count');
  fc.assert(
    fc.property(fc.constantFrom(...countRules), fc.array(fc.double({ min: 0, max: 0.999_999, noNaN: true }), { minLength: 1, maxLength: 6 }), fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2028, 11, 31) }), (rule, fractions, nowMs) => {
      const now = new Date(nowMs);
      // Exactly `max` attempts inside the window, at random places in it.
      const inWindow = fractions.slice(0, rule.max);
      while (inWindow.length < rule.max) inWindow.push(0.5);
      const attempts = inWindow.map((f) => attempt(now, Math.floor(f * rule.windowMs)));
      const oldest = Math.min(...attempts.map((a) => a.at.getTime()));
      return ruleFreesAt(rule, attempts, now).getTime() === oldest + rule.windowMs;
    }),
    { numRuns: 2_000, seed: 20261127 },
  );
  t.pass();
});

test('property: the caps only look back CAP_LOOKBACK_MS: older attempts never change an answer', (t) => {
  fc.assert(
    fc.property(numberArb, historyArb, historyArb, ([country, to], recent, old) => {
      const attempts = history(T0, recent.map((a) => ({ ...a, agoMs: a.agoMs % (CAP_LOOKBACK_MS - DAY_MS) })));
      const older = history(T0, old.map((a) => ({ ...a, agoMs: CAP_LOOKBACK_MS + a.agoMs })));
      return JSON.stringify(checkCaps(to, country, attempts, T0)) === JSON.stringify(checkCaps(to, country, [...older, ...attempts], T0));
    }),
    { numRuns: 1_000, seed: 20261128 },
  );
  t.pass();
});

test('a simulated year through the admission rule, for a number in every jurisdiction with a cap: no dial over a cap, none outside the window, none without the consent the rule requires', (t) => {
  // Requests arrive one after another (one open per customer and number), each due within a
  // week; the dialler looks when the rule says, and every call ends after a few minutes with an
  // outcome drawn from the list. Deterministic: a small linear congruential generator.
  let seed = 20261125;
  const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const OUTCOMES = ['no_answer', 'busy', 'completed', 'voicemail', 'not_interested', 'call_back_later', 'do_not_call'];
  // Each request carries a consent drawn at random (mostly written, sometimes weaker, expiring or
  // none) and a line type, as the reseller's leads and the carrier's lookups would.
  const drawConsent = (now: Date): AdmissionFacts['consent'] => ({
    held: rand() < 0.6 ? 'prior_express_written' : CONSENT_TYPES[Math.floor(rand() * CONSENT_TYPES.length)],
    expiresAt: rand() < 0.2 ? plus(now, Math.floor(rand() * 10 * DAY_MS)) : null,
    lineType: LINE_TYPES[Math.floor(rand() * LINE_TYPES.length)],
  });
  let dials = 0;
  let held = 0;
  let refused = 0;
  for (const [country, to] of Object.values(NUMBERS)) {
    const attempts: PastAttempt[] = [];
    let now = T0;
    const end = plus(T0, 365 * DAY_MS);
    let dialBefore = plus(now, 7 * DAY_MS);
    let consent = drawConsent(now);
    while (now < end) {
      const d = decide({ dialBefore, to, toCountry: country, emergencyClosures: new Set(), doNotCall: null, readiness: readyFacts(), callerId: '+12025550100', attempts, consent, earlierOutcomes: [] }, now, { liveCalls: 0, maxCalls: 1 });
      if (d.kind === 'dial') {
        t.true(isOpen(to, country, now), `${to} dialled outside its window at ${now.toISOString()}`);
        const requirement = requiredConsent(to, country, consent.lineType ?? 'unknown', now);
        const expired = consent.expiresAt !== null && consent.expiresAt <= now && requirement.required !== 'none';
        t.true(consentMeets(consent.held, requirement) && !expired, `${to} dialled with ${consent.held} (${consent.lineType}) where ${requirement.required} is required`);
        const endedAt = plus(now, Math.floor(rand() * 15 * 60_000));
        attempts.push({ at: now, outcome: OUTCOMES[Math.floor(rand() * OUTCOMES.length)], endedAt });
        dials++;
        // The next request comes minutes to days later.
        now = plus(endedAt, Math.floor(rand() * (rand() < 0.7 ? 3 * HOUR_MS : 5 * DAY_MS)));
        dialBefore = plus(now, Math.floor(1 + rand() * 7 * DAY_MS));
        consent = drawConsent(now);
      } else if (d.kind === 'wait') {
        if (d.reason === 'frequency_cap') held++;
        now = d.until;
      } else {
        // Expired at its deadline, or ended for its consent: the next request.
        if (d.status === 'blocked') refused++;
        now = plus(now, Math.floor(rand() * DAY_MS));
        dialBefore = plus(now, Math.floor(1 + rand() * 7 * DAY_MS));
        consent = drawConsent(now);
      }
    }
    t.deepEqual(violations(to, country, attempts), [], to);
  }
  t.true(dials > 1_000, `${dials} dials`);
  t.true(held > 100, `${held} waits on a cap`);
  t.true(refused > 100, `${refused} requests ended for their consent`);
});
