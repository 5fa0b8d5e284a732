import test from 'ava';
import fc from 'fast-check';
import {
  CONSENT_RULES,
  CONSENT_RULES_CHECKED,
  CONSENT_TYPES,
  LINE_TYPES,
  NO_CONSENT_RULE_FOUND,
  NO_REDIAL_RULES,
  consentExpired,
  consentNotices,
  noRedialRule,
  consentExplanation,
  consentMeets,
  requiredConsent,
  usStateOf,
  type ConsentRequirement,
  type ConsentType,
  type LineType,
  type RequiredConsent,
} from '../../actors/scheduler/consent.ts';
import { CALLING_COUNTRIES } from '../../actors/scheduler/calling-windows.ts';
import { NANP_AREA_CODES } from '../../actors/shared/nanp-area-codes.ts';
import { simulatedLineType } from '../../telephony/simulated/scenarios.ts';

const at = (iso: string): Date => new Date(iso);
const NOW = at('2026-11-25T12:00:00Z');
const STRENGTH: Record<RequiredConsent, number> = { none: 0, prior_express: 1, prior_express_written: 2, requested_call: 3 };
const US_CODES = Object.entries(NANP_AREA_CODES).filter(([, c]) => c.country === 'US').map(([npa]) => npa);
const CA_CODES = Object.entries(NANP_AREA_CODES).filter(([, c]) => c.country === 'CA').map(([npa]) => npa);
/** A number of each area code's state (the first listed). */
const IN_STATE: Record<string, string> = {};
for (const npa of US_CODES) IN_STATE[NANP_AREA_CODES[npa].region] ??= `+1${npa}5550123`;

const ADAD_IDS = ['US-WA', 'US-ME', 'US-MS', 'US-OK-adad', 'US-MN', 'US-CA', 'US-NV', 'US-MI'];

const req = (e164: string, country: string, line: LineType, when = NOW) => requiredConsent(e164, country, line, when);

// ---- the table itself ----

test('every rule carries a citation and the day it was checked; ids are unique', (t) => {
  for (const r of CONSENT_RULES) {
    t.true(r.citation.trim().length > 10, `${r.id} has no citation`);
    // Issue 13's rules were read on 2026-11-25, the state auto-dialler rules of issue 20 on 2026-11-27.
    t.is(r.checked, ADAD_IDS.includes(r.id) ? '2026-11-27' : CONSENT_RULES_CHECKED, `${r.id} has no checked date`);
    t.regex(r.checked, /^\d{4}-\d{2}-\d{2}$/);
    t.true(r.lineTypes.length > 0, r.id);
    if (r.from !== null) t.regex(r.from, /^\d{4}-\d{2}-\d{2}$/);
  }
  t.is(new Set(CONSENT_RULES.map((r) => r.id)).size, CONSENT_RULES.length);
});

test('every opened country has a rule or is listed as having none found', (t) => {
  for (const c of CALLING_COUNTRIES) t.true(CONSENT_RULES.some((r) => r.country === c) || NO_CONSENT_RULE_FOUND.includes(c), c);
});

// ---- the documented table (docs/compliance.md ("Consent for AI-voice calls")), row by row ----

const TABLE: [string, string, string, LineType, RequiredConsent, boolean][] = [
  // [what, e164, country, line type, required, EBR accepted]
  ['DC mobile: TCPA', '+12025550123', 'US', 'mobile', 'prior_express_written', false],
  ['DC residential: TCPA', '+12025550123', 'US', 'landline', 'prior_express_written', false],
  ['DC VoIP read as mobile', '+12025550123', 'US', 'voip', 'prior_express_written', false],
  ['DC unknown read as mobile', '+12025550123', 'US', 'unknown', 'prior_express_written', false],
  ['DC business landline: outside 227(b)', '+12025550123', 'US', 'business_landline', 'none', false],
  ['New York business landline', '+12125550123', 'US', 'business_landline', 'none', false],
  ['Florida business landline', IN_STATE.FL, 'US', 'business_landline', 'prior_express_written', false],
  ['Oklahoma business landline', IN_STATE.OK, 'US', 'business_landline', 'prior_express_written', false],
  ['Maryland business landline', IN_STATE.MD, 'US', 'business_landline', 'prior_express_written', false],
  ['Utah business landline: consent or EBR', IN_STATE.UT, 'US', 'business_landline', 'prior_express', true],
  ['Utah mobile: federal written consent wins, no EBR', IN_STATE.UT, 'US', 'mobile', 'prior_express_written', false],
  ['Rhode Island business landline', IN_STATE.RI, 'US', 'business_landline', 'prior_express', false],
  ['Massachusetts business landline', IN_STATE.MA, 'US', 'business_landline', 'prior_express', false],
  ['unlisted US area code: every state could apply (Washington and Maine take only requested calls)', '+19995550123', 'US', 'business_landline', 'requested_call', false],
  // State auto-dialler (ADAD) laws, issue 20 §1
  ['Washington business landline: RCW 80.36.400(2)', '+12065550123', 'US', 'business_landline', 'requested_call', false],
  ['Washington mobile: RCW 80.36.400(2) over the TCPA', '+12065550123', 'US', 'mobile', 'requested_call', false],
  ['Washington residential landline', '+15095550123', 'US', 'landline', 'requested_call', false],
  ['Maine business landline: 10 M.R.S. § 1498 (unlisted cannot be told)', '+12075550123', 'US', 'business_landline', 'requested_call', false],
  ['Maine mobile: 10 M.R.S. § 1498(2)(B)', '+12075550123', 'US', 'mobile', 'requested_call', false],
  ['Mississippi business landline: 77-3-723(2)', '+16015550123', 'US', 'business_landline', 'prior_express', false],
  ['Oklahoma business landline: 775C and 755.1(C)(3), written wins', '+14055550123', 'US', 'business_landline', 'prior_express_written', false],
  ['Minnesota business landline: 325E.27', '+16125550123', 'US', 'business_landline', 'prior_express', false],
  ['California business landline: Pub. Util. Code 2874', '+14155550123', 'US', 'business_landline', 'prior_express', false],
  ['Nevada business landline: NRS 597.814(1),(3), a preexisting relationship stands in', '+17025550123', 'US', 'business_landline', 'prior_express', true],
  ['Michigan business landline: MCL 445.111a(1)', '+13135550123', 'US', 'business_landline', 'prior_express', true],
  ['Michigan mobile: federal written consent wins', '+13135550123', 'US', 'mobile', 'prior_express_written', false],
  ['GB corporate subscriber: PECR reg. 19', '+442079460000', 'GB', 'business_landline', 'prior_express', false],
  ['GB mobile', '+447700900001', 'GB', 'mobile', 'prior_express', false],
  ['DE business: § 7(2) Nr. 2 UWG', '+4930123456', 'DE', 'business_landline', 'prior_express', false],
  ['NL business', '+31201234567', 'NL', 'business_landline', 'prior_express', false],
  ['CA business: ADAD rules', '+14165550123', 'CA', 'business_landline', 'prior_express', false],
  ['ES business: art. 66.1(a)', '+34928123456', 'ES', 'business_landline', 'prior_express', false],
  ['IE mobile: natural persons', '+353861234567', 'IE', 'mobile', 'prior_express', false],
  ['IE business landline: not a natural person', '+35312345678', 'IE', 'business_landline', 'none', false],
  ['FR mobile: L34-5', '+33612345678', 'FR', 'mobile', 'prior_express', false],
  ['FR business landline', '+33142000000', 'FR', 'business_landline', 'none', false],
  ['AU: no rule found', '+61412345678', 'AU', 'mobile', 'none', false],
];

for (const [what, e164, country, line, required, ebr] of TABLE) {
  test(`table: ${what}`, (t) => {
    const r = req(e164, country, line);
    t.is(r.required, required);
    t.is(r.acceptsExistingBusinessRelationship, ebr);
    t.is(r.citations.length > 0, required !== 'none');
  });
}

test('France: the consumer opt-in of loi 2025-594 joins the citations from 11 August 2026', (t) => {
  const before = req('+33612345678', 'FR', 'mobile', at('2026-08-10T12:00:00Z'));
  const after = req('+33612345678', 'FR', 'mobile', at('2026-08-11T00:00:00Z'));
  t.deepEqual(before.rules, ['FR-automated']);
  t.deepEqual(after.rules, ['FR-automated', 'FR-consumer-opt-in']);
  t.is(before.required, 'prior_express');
  t.is(after.required, 'prior_express');
});

test('the refusal names what is required and the rule', (t) => {
  const r = req('+12025550123', 'US', 'mobile');
  t.is(consentExplanation('mobile', r), `Calling this mobile number with an AI voice needs prior express written consent (${r.citations[0]}).`);
  t.regex(consentExplanation('business_landline', req(IN_STATE.UT, 'US', 'business_landline')), /prior express consent \(or an existing business relationship\) \(Utah Code 13-25a-103/);
});

test('consent meets a requirement exactly as the ladder says', (t) => {
  const cases: [ConsentType, Pick<ConsentRequirement, 'required' | 'acceptsExistingBusinessRelationship'>, boolean][] = [
    ['none', { required: 'none', acceptsExistingBusinessRelationship: false }, true],
    ['none', { required: 'prior_express', acceptsExistingBusinessRelationship: true }, false],
    ['existing_business_relationship', { required: 'prior_express', acceptsExistingBusinessRelationship: true }, true],
    ['existing_business_relationship', { required: 'prior_express', acceptsExistingBusinessRelationship: false }, false],
    ['prior_express', { required: 'prior_express', acceptsExistingBusinessRelationship: false }, true],
    ['prior_express', { required: 'prior_express_written', acceptsExistingBusinessRelationship: false }, false],
    ['prior_express_written', { required: 'prior_express_written', acceptsExistingBusinessRelationship: false }, true],
    ['prior_express_written', { required: 'requested_call', acceptsExistingBusinessRelationship: false }, false],
    ['existing_business_relationship', { required: 'requested_call', acceptsExistingBusinessRelationship: true }, false],
    ['requested_call', { required: 'requested_call', acceptsExistingBusinessRelationship: false }, true],
    ['requested_call', { required: 'prior_express_written', acceptsExistingBusinessRelationship: false }, true],
    ['requested_call', { required: 'prior_express', acceptsExistingBusinessRelationship: false }, true],
  ];
  for (const [held, r, expected] of cases) t.is(consentMeets(held, r), expected, `${held} vs ${r.required}`);
});

test('consent expires at expires_at, not before; without one it does not expire', (t) => {
  t.false(consentExpired(null, NOW));
  t.false(consentExpired(at('2026-11-25T12:00:00.001Z'), NOW));
  t.true(consentExpired(NOW, NOW));
});

test('usStateOf reads the area code; an unlisted or Canadian code is null', (t) => {
  t.is(usStateOf('+13055550123'), 'FL');
  t.is(usStateOf('+19995550123'), null);
  t.is(usStateOf('+14165550123'), null);
});

test('test-mode line types: fourth digit from the end; every existing test number is a business landline', (t) => {
  t.is(simulatedLineType('+12025559123'), 'mobile');
  t.is(simulatedLineType('+12025558123'), 'landline');
  t.is(simulatedLineType('+12025557123'), 'voip');
  t.is(simulatedLineType('+12025550123'), 'business_landline');
  for (const n of ['+12025550101', '+12025550188', '+12025550199', '+442079460000', '+61412345678']) t.is(simulatedLineType(n), 'business_landline', n);
});

// ---- properties over jurisdictions × line types × consent types × days ----

const digits = (n: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));
const numberArb = fc.oneof(
  fc.tuple(fc.constantFrom(...US_CODES, '999'), digits(7)).map(([npa, d]) => ['US', `+1${npa}${d}`] as const),
  fc.tuple(fc.constantFrom(...CA_CODES), digits(7)).map(([npa, d]) => ['CA', `+1${npa}${d}`] as const),
  digits(8).map((d) => ['AU', `+614${d}`] as const),
  digits(9).map((d) => ['GB', `+447${d}`] as const),
  digits(8).map((d) => ['IE', `+3538${d}`] as const),
  digits(9).map((d) => ['DE', `+491${d}`] as const),
  digits(8).map((d) => ['FR', `+336${d}`] as const),
  digits(8).map((d) => ['ES', `+346${d}`] as const),
  digits(8).map((d) => ['NL', `+316${d}`] as const),
);
const lineArb = fc.constantFrom(...LINE_TYPES);
const consentArb = fc.constantFrom(...CONSENT_TYPES);
/** 2024 to 2028: either side of every `from` in the table. */
const dayArb = fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2028, 11, 31) }).map((ms) => new Date(ms));

test('property: unknown and VoIP lines need exactly what a mobile needs', (t) => {
  fc.assert(
    fc.property(numberArb, dayArb, ([country, e164], day) => {
      const mobile = req(e164, country, 'mobile', day);
      return [req(e164, country, 'unknown', day), req(e164, country, 'voip', day)].every((r) => r.required === mobile.required && r.acceptsExistingBusinessRelationship === mobile.acceptsExistingBusinessRelationship);
    }),
  );
  t.pass();
});

test('property: a business landline never needs more than a residential one', (t) => {
  fc.assert(fc.property(numberArb, dayArb, ([country, e164], day) => STRENGTH[req(e164, country, 'business_landline', day).required] <= STRENGTH[req(e164, country, 'landline', day).required]));
  t.pass();
});

test('property: a requested call meets every requirement, written consent all but a requested-call-only state\'s; no consent meets only "none"', (t) => {
  fc.assert(
    fc.property(numberArb, lineArb, dayArb, ([country, e164], line, day) => {
      const r = req(e164, country, line, day);
      return (
        consentMeets('requested_call', r) &&
        consentMeets('prior_express_written', r) === (r.required !== 'requested_call') &&
        consentMeets('none', r) === (r.required === 'none')
      );
    }),
  );
  t.pass();
});

test('property: stronger consent meets whatever weaker consent meets', (t) => {
  const weaker: [ConsentType, ConsentType][] = [
    ['none', 'existing_business_relationship'],
    ['existing_business_relationship', 'prior_express'],
    ['prior_express', 'prior_express_written'],
    ['prior_express_written', 'requested_call'],
  ];
  fc.assert(
    fc.property(numberArb, lineArb, dayArb, fc.constantFrom(...weaker), ([country, e164], line, day, [weak, strong]) => {
      const r = req(e164, country, line, day);
      return !consentMeets(weak, r) || consentMeets(strong, r);
    }),
  );
  t.pass();
});

test('property: a US number needs at least the federal rule, and an unlisted area code at least any state', (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...US_CODES), digits(7), lineArb, consentArb, dayArb, (npa, d, line, held, day) => {
      const e164 = `+1${npa}${d}`;
      const r = req(e164, 'US', line, day);
      const federal = req('+12025550123', 'US', line, day); // DC: no state rule
      const anywhere = req(`+1999${d}`, 'US', line, day);
      return STRENGTH[r.required] >= STRENGTH[federal.required] && STRENGTH[anywhere.required] >= STRENGTH[r.required] && (!consentMeets(held, anywhere) || consentMeets(held, r));
    }),
  );
  t.pass();
});

test('property: a requirement never weakens as days pass (rules only come into force)', (t) => {
  fc.assert(
    fc.property(numberArb, lineArb, dayArb, dayArb, ([country, e164], line, a, b) => {
      const [early, late] = a <= b ? [a, b] : [b, a];
      return STRENGTH[req(e164, country, line, early).required] <= STRENGTH[req(e164, country, line, late).required];
    }),
  );
  t.pass();
});

test('property: every non-"none" answer cites its rules, and the explanation carries them', (t) => {
  fc.assert(
    fc.property(numberArb, lineArb, dayArb, ([country, e164], line, day) => {
      const r = req(e164, country, line, day);
      if (r.required === 'none') return r.citations.length === 0 && !r.acceptsExistingBusinessRelationship;
      const text = consentExplanation(line, r);
      return r.citations.length > 0 && r.citations.every((c) => text.includes(c));
    }),
  );
  t.pass();
});

test('property: the answer depends on the state, not on the rest of the number', (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...US_CODES), digits(7), digits(7), lineArb, dayArb, (npa, a, b, line, day) => {
      const x = req(`+1${npa}${a}`, 'US', line, day);
      const y = req(`+1${npa}${b}`, 'US', line, day);
      return x.required === y.required && x.acceptsExistingBusinessRelationship === y.acceptsExistingBusinessRelationship;
    }),
  );
  t.pass();
});

// ---- state auto-dialler laws (issue 20 §1) ----

test('Washington and Maine: the refusal names the state and its statute, and asks for requested_call', (t) => {
  const wa = req('+12065550123', 'US', 'business_landline');
  t.deepEqual(wa.rules, ['US-WA']);
  t.is(
    consentExplanation('business_landline', wa),
    'An AI-voice sales call to this business number (it may be in Washington) is lawful only when the called party asked for this call: send consent of type requested_call ' +
      'with the request\'s evidence; no other consent makes it lawful (RCW 80.36.400(2) (no automatic dialing and announcing device for commercial solicitation, ' +
      '"the unsolicited initiation of a telephone conversation", of anyone in Washington)).',
  );
  t.regex(consentExplanation('mobile', req('+12075550123', 'US', 'mobile')), /it may be in Maine\).*\(10 M\.R\.S\. § 1498\(2\)\(B\)/);
  t.regex(consentExplanation('mobile', req('+19995550123', 'US', 'mobile')), /it may be in Washington or Maine\)/);
  for (const held of ['prior_express_written', 'prior_express', 'existing_business_relationship', 'none'] as const) t.false(consentMeets(held, wa), held);
  t.true(consentMeets('requested_call', wa));
});

test('the ADAD states need consent on business lines too (no live operator precedes the agent)', (t) => {
  for (const e164 of ['+16015550123', '+14055550123', '+16125550123', '+14155550123', '+17025550123', '+13135550123']) {
    const r = req(e164, 'US', 'business_landline');
    t.not(r.required, 'none', e164);
    t.false(consentMeets('none', r), e164);
  }
  // Canada's 416 is no US state: the US-CA rule (California) does not reach it.
  t.false(req('+14165550123', 'CA', 'business_landline').rules.includes('US-CA'));
});

test('coverage and readiness notices: the US lists Washington and Maine as requested-call-only; other countries none', (t) => {
  const us = consentNotices('US');
  t.deepEqual(us.map((n) => [n.code, n.jurisdiction]), [['requested_call_only', 'US-WA'], ['requested_call_only', 'US-ME']]);
  t.regex(us[0].message, /^Washington numbers may be called only when the called party asked for the call/);
  t.regex(us[0].citation, /RCW 80\.36\.400\(2\)/);
  for (const c of ['GB', 'CA', 'FR', 'AU']) t.deepEqual(consentNotices(c), [], c);
});

test('Nevada: no redial after the callee hung up (completed, not_interested, do_not_call); other outcomes and other states do not stop it', (t) => {
  const nv = '+17025550123';
  t.is(NO_REDIAL_RULES[0].checked, '2026-11-27');
  for (const o of ['completed', 'not_interested', 'do_not_call']) t.is(noRedialRule(nv, 'US', ['no_answer', o])?.id, 'US-NV-no-redial', o);
  for (const o of ['no_answer', 'busy', 'failed', 'voicemail', 'call_back_later', 'appointment_booked', 'time_limit']) t.is(noRedialRule(nv, 'US', [o, null]), null, o);
  t.is(noRedialRule(nv, 'US', []), null);
  t.regex(noRedialRule(nv, 'US', ['completed'])!.citation, /NRS 597\.814\(2\)\(b\)/);
  t.is(noRedialRule('+12025550123', 'US', ['completed']), null, 'D.C. has no such rule');
  t.is(noRedialRule('+19995550123', 'US', ['completed'])?.id, 'US-NV-no-redial', 'an unlisted area code could be in Nevada');
  t.is(noRedialRule('+442079460000', 'GB', ['completed']), null);
});
