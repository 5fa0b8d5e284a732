import test from 'ava';
import fc from 'fast-check';
import {
  CALLING_COUNTRIES,
  EMERGENCY_JURISDICTIONS,
  WINDOW_RULES,
  callingJurisdictions,
  callingRules,
  emergencyClosure,
  isOpen,
  nextOpening,
  windowExplanation,
  type WindowRule,
} from '../../actors/scheduler/calling-windows.ts';
import { ES_REGIONS, esRegionsOf } from '../../actors/scheduler/es-regions.ts';
import { NANP_AREA_CODES } from '../../actors/shared/nanp-area-codes.ts';
import { localOf } from '../helpers/local-time.ts';

// The rules as corrected and cited for issue 13 §3: the table's own obligations, then one example
// per changed rule, then properties over numbers, clock positions and closed jurisdictions.

const MINUTE_MS = 60_000;
const at = (iso: string): Date => new Date(iso);
const plus = (d: Date, ms: number): Date => new Date(d.getTime() + ms);
const RULES: WindowRule[] = Object.values(WINDOW_RULES);

const N = {
  NY: '+12125550123',
  LA: '+15045550123',
  MS: '+16015550123',
  TX: '+12145550123',
  UT: '+18015550123',
  PA: '+12155550123',
  US_UNKNOWN: '+19995550123',
  TORONTO: '+14165550123',
  VANCOUVER: '+16045550123',
  CA_UNKNOWN: '+12735550123',
  MADRID: '+34911234567',
  BARCELONA: '+34931234567',
  CANARY: '+34928123456',
  CEUTA: '+34956512345',
  ES_MOBILE: '+34612345678',
} as const;

// ---- the table ---------------------------------------------------------------------------------

test('every rule carries a citation, its sources and the date it was last checked', (t) => {
  for (const r of RULES) {
    t.true(r.citation.trim().length > 0, `${r.id} has no citation`);
    t.regex(r.checked, /^\d{4}-\d{2}-\d{2}$/, `${r.id} has no check date`);
    t.false(Number.isNaN(Date.parse(`${r.checked}T00:00:00Z`)), `${r.id}: ${r.checked} is not a date`);
    t.true(r.checked <= '2026-11-27', `${r.id} was checked in the future`);
    if (r.basis === 'law') {
      t.true(r.sources.length > 0, `${r.id} names no source`);
      t.not(r.verification, 'not_applicable', r.id);
    } else {
      t.is(r.verification, 'not_applicable', r.id);
    }
    t.notRegex(r.citation, /verify/i, `${r.id} still says "verify"`);
    for (const clock of r.alsoReadIn) t.notThrows(() => new Intl.DateTimeFormat('en', { timeZone: clock }), `${r.id} ${clock}`);
    for (const day of r.alsoClosed) t.regex(day, /^(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, `${r.id} ${day}`);
  }
});

test('the citations named in issue 13 §3', (t) => {
  t.regex(WINDOW_RULES['US-AL'].citation, /770-X-5-\.17\(1\)\(b\)/);
  t.regex(WINDOW_RULES['US-MS'].citation, /77-3-723/);
  t.regex(WINDOW_RULES['US-RI'].citation, /5-61-3\.6/);
  t.regex(WINDOW_RULES['US-PA'].citation, /2245\(a\)\(1\)/);
  t.regex(WINDOW_RULES['US-WA'].citation, /19\.158\.040\(2\)/);
  t.regex(WINDOW_RULES.FR.citation, /D223-9/);
  t.regex(WINDOW_RULES.FR.citation, /L3133-1/);
  t.notRegex(WINDOW_RULES.FR.citation, /D223-8/);
  t.regex(WINDOW_RULES['US-LA'].citation, /45:811/);
  for (const id of ['US-MI', 'US-MN', 'US-KY', 'US-NV', 'US-TX'] as const) t.truthy(WINDOW_RULES[id].note, `${id} says what was found`);
});

// ---- one example per changed rule ---------------------------------------------------------------

test('Utah: never on a Sunday (13-25a-103(3)(b))', (t) => {
  const sunday = at('2027-06-20T12:00:00-06:00');
  t.false(isOpen(N.UT, 'US', sunday));
  t.true(isOpen('+13035550123', 'US', sunday), 'Colorado, same zone, same hour');
  t.true(isOpen(N.UT, 'US', at('2027-06-26T12:00:00-06:00')), 'Saturday');
  t.is(nextOpening(N.UT, 'US', at('2027-06-26T21:00:00-06:00')).toISOString(), '2027-06-28T14:00:00.000Z', 'Saturday night → Monday 08:00 MDT');
});

test('Louisiana: an operator closure closes every number that may be in Louisiana, and only those', (t) => {
  const closed = new Set(['US-LA']);
  t.is(emergencyClosure(N.LA, 'US', closed), 'US-LA');
  t.is(emergencyClosure(N.US_UNKNOWN, 'US', closed), 'US-LA', 'an unknown area code may be in Louisiana');
  t.is(emergencyClosure(N.TX, 'US', closed), null);
  t.is(emergencyClosure(N.NY, 'US', closed), null);
  t.is(emergencyClosure(N.LA, 'US', new Set()), null, 'no closure, no answer');
  t.is(emergencyClosure(N.NY, 'US', new Set(['US'])), 'US', 'a whole country can be closed');
  t.true(EMERGENCY_JURISDICTIONS.has('US-LA'));
  t.true(EMERGENCY_JURISDICTIONS.has('CA-BC'));
  t.true(EMERGENCY_JURISDICTIONS.has('ES-MD'));
  t.false(EMERGENCY_JURISDICTIONS.has('US-ZZ'));
  t.throws(() => emergencyClosure('+2125550123', 'US', closed), { instanceOf: RangeError });
  // The window itself is unchanged by a closure: the closure is a separate gate (admission.ts).
  t.true(isOpen(N.LA, 'US', at('2027-06-16T12:00:00-05:00')));
});

test('Mississippi: "Central Standard Time" is held both ways, so summer opens at 09:00 CDT', (t) => {
  // Summer: the callee's clock says 08:00–20:00 CDT, the fixed clock 08:00–20:00 CST = 09:00–21:00 CDT.
  t.false(isOpen(N.MS, 'US', at('2027-06-16T08:30:00-05:00')), '08:30 CDT is 07:30 CST');
  t.true(isOpen(N.MS, 'US', at('2027-06-16T09:00:00-05:00')));
  t.true(isOpen(N.MS, 'US', at('2027-06-16T19:59:00-05:00')));
  t.false(isOpen(N.MS, 'US', at('2027-06-16T20:00:00-05:00')), '20:00 CDT, though only 19:00 CST');
  // Winter: the two readings agree.
  t.false(isOpen(N.MS, 'US', at('2027-01-13T07:59:00-06:00')));
  t.true(isOpen(N.MS, 'US', at('2027-01-13T08:00:00-06:00')));
  t.false(isOpen(N.MS, 'US', at('2027-01-13T20:00:00-06:00')));
  t.is(nextOpening(N.MS, 'US', at('2027-06-19T21:00:00-05:00')).toISOString(), '2027-06-21T14:00:00.000Z', 'Saturday night → Monday 09:00 CDT');
  t.regex(windowExplanation(N.MS, 'US', at('2027-06-16T08:30:00-05:00')), /Etc\/GMT\+6 \(read for America\/Chicago\)/);
  t.false(isOpen(N.MS, 'US', at('2027-06-20T12:00:00-05:00')), 'Sunday');
  t.true(isOpen(N.MS, 'US', at('2027-07-05T12:00:00-05:00')), 'holidays are ordinary days since the PSC rule went');
});

test('Pennsylvania: 09:00–19:00, never Sunday (SB 992 of 2025–2026)', (t) => {
  t.false(isOpen(N.PA, 'US', at('2027-06-20T12:00:00-04:00')), 'Sunday');
  t.false(isOpen(N.PA, 'US', at('2027-06-16T08:30:00-04:00')));
  t.false(isOpen(N.PA, 'US', at('2027-06-16T19:00:00-04:00')));
  t.true(isOpen(N.PA, 'US', at('2027-06-16T18:59:00-04:00')));
});

test('British Columbia: closed on statutory holidays, the rest of Canada open', (t) => {
  const bcDay = at('2027-08-02T12:00:00-07:00'); // Monday
  t.false(isOpen(N.VANCOUVER, 'CA', bcDay));
  t.true(isOpen(N.TORONTO, 'CA', bcDay), 'the CRTC rules name no holidays');
  t.false(isOpen(N.VANCOUVER, 'CA', at('2027-09-30T12:00:00-07:00')), 'Truth and Reconciliation, a BC statutory holiday since 2023');
  t.false(isOpen(N.VANCOUVER, 'CA', at('2025-12-26T12:00:00-08:00')), 'Boxing Day');
  t.true(isOpen(N.VANCOUVER, 'CA', at('2027-08-03T12:00:00-07:00')));
  t.false(isOpen(N.CA_UNKNOWN, 'CA', at('2027-08-02T19:00:00Z')), 'an unknown area code may be in BC');
  t.deepEqual(callingRules(N.VANCOUVER, 'CA').map((r) => r.id), ['CA', 'CA-BC']);
  t.deepEqual(callingRules(N.TORONTO, 'CA').map((r) => r.id), ['CA']);
  t.regex(windowExplanation(N.VANCOUVER, 'CA', bcDay), /CA-BC .*public holiday|public holiday.*CA-BC/);
  t.is(nextOpening(N.VANCOUVER, 'CA', at('2027-08-01T18:00:00-07:00')).toISOString(), '2027-08-03T16:00:00.000Z', 'Sunday evening → Tuesday 09:00 PDT');
});

test('Spain: a regional holiday closes its community and every mobile, not the rest', (t) => {
  const santJoan = at('2027-06-24T12:00:00+02:00'); // Thursday; Catalonia and Valencia
  t.false(isOpen(N.BARCELONA, 'ES', santJoan));
  t.true(isOpen(N.MADRID, 'ES', santJoan));
  t.false(isOpen(N.ES_MOBILE, 'ES', santJoan), 'a mobile may be in Catalonia');
  t.false(isOpen(N.MADRID, 'ES', at('2027-05-03T12:00:00+02:00')), 'Día de la Comunidad de Madrid');
  t.false(isOpen(N.CANARY, 'ES', at('2027-05-31T12:00:00+01:00')), 'Día de Canarias');
  t.true(isOpen(N.MADRID, 'ES', at('2027-05-31T12:00:00+02:00')));
  t.deepEqual(callingRules(N.MADRID, 'ES').map((r) => r.id), ['ES-MD']);
  t.deepEqual(callingRules(N.CEUTA, 'ES').map((r) => r.id), ['ES-AN/CE'], '956 is Cádiz or Ceuta');
  t.deepEqual(callingRules(N.ES_MOBILE, 'ES').map((r) => r.id), ['ES']);
  t.is(nextOpening(N.BARCELONA, 'ES', at('2027-06-23T19:30:00Z')).toISOString(), '2027-06-25T07:00:00.000Z', 'Wednesday evening → Friday 09:00');
});

test('Spanish prefixes: every province prefix names a community, others name all', (t) => {
  for (const p of ['91', '93', '94', '95', '96', '97', '98', '920', '928', '941', '949', '81', '83']) {
    const regions = esRegionsOf(`${p}1234567`);
    t.true(regions.length <= 2, `${p} → ${regions.join(',')}`);
  }
  t.deepEqual([...esRegionsOf('612345678')], [...ES_REGIONS]);
  t.deepEqual([...esRegionsOf('971234567')], ['IB']);
  t.deepEqual([...esRegionsOf('984123456')], ['AS']);
});

// ---- properties ---------------------------------------------------------------------------------

const US_CODES = Object.keys(NANP_AREA_CODES).filter((k) => NANP_AREA_CODES[k].country === 'US');
const CA_CODES = Object.keys(NANP_AREA_CODES).filter((k) => NANP_AREA_CODES[k].country === 'CA');
const digits = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789'.split('')), minLength: n, maxLength: n });
const numberArb: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constantFrom(...US_CODES, '999'), digits(7)).map(([npa, d]): [string, string] => ['US', `+1${npa}${d}`]),
  fc.tuple(fc.constantFrom(...CA_CODES, '273'), digits(7)).map(([npa, d]): [string, string] => ['CA', `+1${npa}${d}`]),
  fc.constantFrom('91', '93', '956', '928', '971', '6', '7').chain((p) => digits(9 - p.length).map((d): [string, string] => ['ES', `+34${p}${d}`])),
  digits(9).map((d): [string, string] => ['GB', `+447${d}`]),
  fc.tuple(fc.constantFrom('1', '6'), digits(8)).map(([p, d]): [string, string] => ['FR', `+33${p}${d}`]),
);
const closedArb = fc.uniqueArray(fc.constantFrom(...EMERGENCY_JURISDICTIONS), { maxLength: 6 }).map((a) => new Set(a));
const instantArb = fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2028, 11, 31, 23, 59) }).map((ms) => new Date(ms));

test('property: a closure answers exactly when one of the number\'s jurisdictions is closed', (t) => {
  fc.assert(
    fc.property(numberArb, closedArb, ([country, e164], closed) => {
      const jurisdictions = callingJurisdictions(e164, country);
      const answer = emergencyClosure(e164, country, closed);
      if (!jurisdictions.every((j) => EMERGENCY_JURISDICTIONS.has(j))) return false;
      if (jurisdictions[0] !== country) return false;
      return answer === null ? jurisdictions.every((j) => !closed.has(j)) : closed.has(answer) && jurisdictions.includes(answer);
    }),
    { numRuns: 500, seed: 45844 },
  );
  t.pass();
});

test('property: closing a jurisdiction never opens another number, and reopening it restores the answer', (t) => {
  fc.assert(
    fc.property(numberArb, closedArb, fc.constantFrom(...EMERGENCY_JURISDICTIONS), ([country, e164], closed, more) => {
      const before = emergencyClosure(e164, country, closed);
      const after = emergencyClosure(e164, country, new Set([...closed, more]));
      if (before !== null && after === null) return false;
      const without = new Set(closed);
      without.delete(more);
      return closed.has(more) || emergencyClosure(e164, country, without) === before;
    }),
    { numRuns: 300, seed: 811 },
  );
  t.pass();
});


test('property: a Mississippi number is open only when both clocks read 08:00–20:00 Monday–Saturday', (t) => {
  fc.assert(
    fc.property(instantArb, (x) => {
      const local = localOf('America/Chicago', x);
      const standard = localOf('Etc/GMT+6', x);
      const inside = (c: { weekday: number; minute: number }) => c.weekday !== 0 && c.minute >= 8 * 60 && c.minute < 20 * 60;
      return isOpen(N.MS, 'US', x) === (inside(local) && inside(standard));
    }),
    { numRuns: 2000, seed: 77_3723 },
  );
  t.pass();
});

test('property: Utah and Pennsylvania are never open on a local Sunday; BC never on a BC statutory holiday', (t) => {
  fc.assert(
    fc.property(instantArb, (x) => {
      const ut = localOf('America/Denver', x);
      const pa = localOf('America/New_York', x);
      if (ut.weekday === 0 && isOpen(N.UT, 'US', x)) return false;
      if (pa.weekday === 0 && isOpen(N.PA, 'US', x)) return false;
      const bcDate = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Vancouver' }).format(x).slice(5);
      return !(['07-01', '09-30', '11-11', '12-25', '12-26', '01-01'].includes(bcDate) && isOpen(N.VANCOUVER, 'CA', x));
    }),
    { numRuns: 3000, seed: 1325 },
  );
  t.pass();
});

test('property: every opening nextOpening finds is open, a minute before it is not, for the changed rules', (t) => {
  fc.assert(
    fc.property(fc.constantFrom(N.UT, N.MS, N.PA, N.LA, N.VANCOUVER, N.BARCELONA, N.ES_MOBILE, N.CEUTA), instantArb, (e164, x) => {
      const country = e164.startsWith('+34') ? 'ES' : e164 === N.VANCOUVER ? 'CA' : 'US';
      const next = nextOpening(e164, country, x);
      if (next < x || !isOpen(e164, country, next)) return false;
      return next.getTime() === x.getTime() || !isOpen(e164, country, plus(next, -MINUTE_MS));
    }),
    { numRuns: 400, seed: 20261125 },
  );
  t.pass();
});

test('every calling country has a rule and every jurisdiction list starts with the country', (t) => {
  for (const c of CALLING_COUNTRIES) t.true(EMERGENCY_JURISDICTIONS.has(c), c);
  t.deepEqual(callingJurisdictions(N.LA, 'US'), ['US', 'US-LA']);
  t.deepEqual(callingJurisdictions(N.MADRID, 'ES'), ['ES', 'ES-MD']);
  t.true(callingJurisdictions(N.CA_UNKNOWN, 'CA').includes('CA-BC'));
});
