/**
 * Consent refusal texts that the mutation run (docs/decisions.md, "Mutation testing") found
 * unchecked: the line type in words and every deciding statute, each named in full.
 */
import test from 'ava';
import { CONSENT_TYPES, consentExplanation, requiredConsent, type LineType } from '../../actors/scheduler/consent.ts';

const DAY = new Date('2027-01-15T12:00:00Z');
const NEW_YORK = '+12125550123';
const TCPA_MOBILE = '47 U.S.C. 227(b)(1)(A)(iii); 47 CFR 64.1200(a)(2); FCC 24-17 (AI voices are artificial voices)';

test('the refusal names the line in words: residential lines under 227(b)(1)(B), VoIP and unverified lines read as mobiles under 227(b)(1)(A)(iii)', (t) => {
  const text = (line: LineType) => consentExplanation(line, requiredConsent(NEW_YORK, 'US', line, DAY));
  t.is(text('landline'), 'Calling this residential number with an AI voice needs prior express written consent (47 U.S.C. 227(b)(1)(B); 47 CFR 64.1200(a)(3); FCC 24-17).');
  t.is(text('voip'), `Calling this VoIP number with an AI voice needs prior express written consent (${TCPA_MOBILE}).`);
  t.is(text('unknown'), `Calling this unverified (treated as mobile) number with an AI voice needs prior express written consent (${TCPA_MOBILE}).`);
});

test('the refusal cites every deciding statute, separated: a Florida mobile needs the TCPA\'s and Fla. Stat. 501.059(8)(a)\'s written consent', (t) => {
  const florida = consentExplanation('mobile', requiredConsent('+13055550123', 'US', 'mobile', DAY));
  t.true(florida.endsWith(`(${TCPA_MOBILE}; Fla. Stat. 501.059(8)(a) ("the playing of a recorded message when a connection is completed")).`), florida);
});

test('an unknown area code may be in Washington or Maine: both statutes are cited, separated', (t) => {
  const text = consentExplanation('mobile', requiredConsent('+19995550123', 'US', 'mobile', DAY));
  t.regex(text, /\(it may be in Washington or Maine\)/);
  t.regex(text, /of anyone in Washington\); 10 M\.R\.S\. § 1498\(2\)\(B\)/);
});

test('the consent types a request may carry are the five docs/api.md names', (t) => {
  t.deepEqual([...CONSENT_TYPES].sort(), ['existing_business_relationship', 'none', 'prior_express', 'prior_express_written', 'requested_call']);
});

test('Ireland and France protect natural persons on every consumer line: a residential landline needs prior consent as a mobile does', (t) => {
  // S.I. 336/2011 reg. 13(1); CPCE art. L34-5 (système automatisé; personne physique).
  for (const line of ['landline', 'mobile', 'voip', 'unknown'] as const) {
    t.is(requiredConsent('+35312345678', 'IE', line, DAY).required, 'prior_express', `IE ${line}`);
    t.is(requiredConsent('+33142000000', 'FR', line, DAY).required, 'prior_express', `FR ${line}`);
  }
  // Neither reaches a business line (legal persons are outside both).
  t.is(requiredConsent('+35312345678', 'IE', 'business_landline', DAY).required, 'none');
  t.is(requiredConsent('+33142000000', 'FR', 'business_landline', DAY).required, 'none');
});
