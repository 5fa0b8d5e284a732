import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { assessCoverage, type CountryFacts } from '../../actors/coverage/coverage.ts';

/** An opened, certified country with numbers in stock; each test changes what it is about. */
function country(overrides: Partial<CountryFacts> = {}): CountryFacts {
  return {
    country: 'GB',
    name: 'United Kingdom',
    calling_language: 'en-GB',
    number_route: 'local_rental',
    numbers_available: 200,
    opened: true,
    speech_certified: true,
    ...overrides,
  };
}

/** Names of the white-label platform and its suppliers, which resellers' customers must never see. */
const HIDDEN_NAMES = /switchboard|twilio|openai/i;

test('a fully available country is sellable and waits on nobody', (t) => {
  const c = assessCoverage('GB', country());
  t.deepEqual(c, {
    object: 'coverage',
    country: 'GB',
    status: 'available',
    sellable: true,
    calling_language: 'en-GB',
    number_route: 'local_rental',
    numbers_available: 200,
    waiting_on: 'nobody',
    summary: c.summary,
    blockers: [],
    notices: [],
  });
  t.regex(c.summary, /United Kingdom/);
  t.regex(c.summary, /en-GB/);
});

test('an unknown country (no facts) is not opened', (t) => {
  const c = assessCoverage('ZZ', null);
  t.deepEqual(c, {
    object: 'coverage',
    country: 'ZZ',
    status: 'not_opened',
    sellable: false,
    calling_language: null,
    number_route: 'none',
    numbers_available: 0,
    waiting_on: 'service',
    summary: c.summary,
    blockers: [{ code: 'country_not_opened', message: c.blockers[0].message }],
    notices: [],
  });
  t.regex(c.summary, /ZZ/);
  t.true(c.blockers[0].message.length > 0);
});

test('a known country with opened=false is not opened, whatever its stock and certification', (t) => {
  const c = assessCoverage('NL', country({ country: 'NL', name: 'Netherlands', calling_language: 'nl-NL', opened: false, numbers_available: 50 }));
  t.is(c.status, 'not_opened');
  t.false(c.sellable);
  t.is(c.country, 'NL');
  t.is(c.calling_language, 'nl-NL');
  t.is(c.number_route, 'none');
  t.is(c.numbers_available, 0);
  t.is(c.waiting_on, 'service');
  t.regex(c.summary, /Netherlands/);
  t.deepEqual(c.blockers.map((b) => b.code), ['country_not_opened']);
});

test('speech gate closed: pending, waiting on the service, naming the language', (t) => {
  const c = assessCoverage('DE', country({ country: 'DE', name: 'Germany', calling_language: 'de-DE', speech_certified: false }));
  t.is(c.status, 'pending');
  t.false(c.sellable);
  t.is(c.waiting_on, 'service');
  t.is(c.numbers_available, 200);
  t.is(c.number_route, 'local_rental');
  t.deepEqual(c.blockers.map((b) => b.code), ['human_speech_gate_closed']);
  t.regex(c.blockers[0].message, /de-DE/);
  t.regex(c.summary, /human_speech_gate_closed/);
});

test('no numbers in stock: pending, waiting on the service', (t) => {
  const c = assessCoverage('IE', country({ country: 'IE', name: 'Ireland', numbers_available: 0 }));
  t.is(c.status, 'pending');
  t.false(c.sellable);
  t.is(c.waiting_on, 'service');
  t.is(c.numbers_available, 0);
  t.deepEqual(c.blockers.map((b) => b.code), ['no_numbers_available']);
  t.regex(c.blockers[0].message, /Ireland/);
});

test('a negative stock count is treated as none', (t) => {
  t.deepEqual(assessCoverage('IE', country({ numbers_available: -3 })).blockers.map((b) => b.code), ['no_numbers_available']);
});

test('both gates closed: both blockers, speech first, both in the summary', (t) => {
  const c = assessCoverage('FR', country({ country: 'FR', name: 'France', calling_language: 'fr-FR', speech_certified: false, numbers_available: 0 }));
  t.deepEqual(c.blockers.map((b) => b.code), ['human_speech_gate_closed', 'no_numbers_available']);
  t.regex(c.summary, /human_speech_gate_closed, no_numbers_available/);
});

/** The opened markets of the first migration. */
const SEEDED: [string, string, string][] = [
  ['US', 'United States', 'en-US'],
  ['CA', 'Canada', 'en-CA'],
  ['GB', 'United Kingdom', 'en-GB'],
  ['IE', 'Ireland', 'en-IE'],
  ['AU', 'Australia', 'en-AU'],
  ['DE', 'Germany', 'de-DE'],
  ['FR', 'France', 'fr-FR'],
  ['ES', 'Spain', 'es-ES'],
  ['NL', 'Netherlands', 'nl-NL'],
];

const factsArb: fc.Arbitrary<CountryFacts | null> = fc.option(
  fc.record({
    seeded: fc.constantFrom(...SEEDED),
    number_route: fc.constantFrom('local_rental', 'none'),
    numbers_available: fc.integer({ min: 0, max: 500 }),
    opened: fc.boolean(),
    speech_certified: fc.boolean(),
  }).map(({ seeded: [code, name, language], ...rest }) => ({ country: code, name, calling_language: language, ...rest })),
);

test('property: status, sellable, waiting_on and blockers agree, and no hidden name appears', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.constantFrom(...SEEDED.map(([code]) => code), 'ZZ'), factsArb, (code, facts) => {
        const c = assessCoverage(facts?.country ?? code, facts);
        assert.equal(c.object, 'coverage');
        assert.equal(c.sellable, c.blockers.length === 0);
        assert.equal(c.status === 'available', c.sellable);
        assert.equal(c.waiting_on, c.sellable ? 'nobody' : 'service');
        assert.equal(c.status === 'not_opened', !facts || !facts.opened);
        assert.ok(c.blockers.length <= 2);
        assert.doesNotMatch(JSON.stringify(c), HIDDEN_NAMES);
      }),
      { numRuns: 1_000 },
    ),
  );
});

test('no output of any case mentions Switchboard, Twilio or OpenAI', (t) => {
  const outputs = [
    assessCoverage('ZZ', null),
    assessCoverage('GB', country({ opened: false })),
    assessCoverage('GB', country({ speech_certified: false })),
    assessCoverage('GB', country({ numbers_available: 0 })),
    assessCoverage('GB', country({ speech_certified: false, numbers_available: 0 })),
    assessCoverage('GB', country()),
  ];
  for (const c of outputs) {
    const text = JSON.stringify(c);
    t.notRegex(text, HIDDEN_NAMES, text);
  }
});

test('US coverage shows Washington and Maine as requested-call-only, not as blockers (issue 20 §1)', (t) => {
  const c = assessCoverage('US', country({ country: 'US', name: 'United States', calling_language: 'en-US' }));
  t.true(c.sellable);
  t.deepEqual(c.blockers, []);
  t.deepEqual(c.notices.map((n) => [n.code, n.jurisdiction]), [['requested_call_only', 'US-WA'], ['requested_call_only', 'US-ME']]);
  t.regex(c.notices[0].citation, /^RCW 80\.36\.400\(2\)/);
  t.regex(c.notices[1].citation, /^10 M\.R\.S\. § 1498/);
});
