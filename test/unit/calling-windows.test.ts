import test from 'ava';
import fc from 'fast-check';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import {
  CALLING_COUNTRIES,
  MAX_SEARCH_DAYS,
  EMERGENCY_JURISDICTIONS,
  WINDOW_RULES,
  callingJurisdictions,
  callingRules,
  emergencyClosure,
  callingZones,
  isOpen,
  localWallToInstant,
  nextOpening,
  windowExplanation,
} from '../../actors/scheduler/calling-windows.ts';
import { NANP_AREA_CODES } from '../../actors/shared/nanp-area-codes.ts';
import { localOf } from '../helpers/local-time.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const at = (iso: string): Date => new Date(iso);
const plus = (d: Date, ms: number): Date => new Date(d.getTime() + ms);

/** One number per country (single-clock ones), and per stricter US state. */
const N = {
  NY: '+12125550123',
  AL: '+12055550123',
  LA: '+15045550123',
  MS: '+16015550123',
  FL: '+13055550123',
  OK: '+14055550123',
  MD: '+14105550123',
  MA: '+16175550123',
  MI: '+13135550123',
  MN: '+16125550123',
  NM: '+15055550123',
  KY: '+15025550123',
  NV: '+17025550123',
  CT: '+12035550123',
  TX: '+12145550123',
  RI: '+14015550123',
  UT: '+18015550123',
  PA: '+12155550123',
  WA: '+12065550123',
  FL_PANHANDLE: '+18505550123',
  US_UNKNOWN: '+19995550123',
  TORONTO: '+14165550123',
  MELBOURNE: '+61390001234',
  AU_MOBILE: '+61412345678',
  GB: '+442079460000',
  IE: '+35312345678',
  DE: '+4930123456',
  FR: '+33142000000',
  MADRID: '+34911234567',
  CANARY: '+34928123456',
  ES_MOBILE: '+34612345678',
  NL: '+31201234567',
  VANCOUVER: '+16045550123',
  BARCELONA: '+34931234567',
} as const;

/**
 * The four edge instants of a window given as local times with offsets: a minute before open
 * (closed), open (open), a minute before close (open), close (closed).
 */
function assertEdges(t: import('ava').ExecutionContext, e164: string, country: string, open: string, close: string): void {
  const o = at(open);
  const c = at(close);
  t.false(isOpen(e164, country, plus(o, -MINUTE_MS)), `${e164} a minute before ${open}`);
  t.true(isOpen(e164, country, o), `${e164} at ${open}`);
  t.true(isOpen(e164, country, plus(c, -MINUTE_MS)), `${e164} a minute before ${close}`);
  t.false(isOpen(e164, country, c), `${e164} at ${close}`);
  t.true(isOpen(e164, country, plus(c, -1)), `${e164} a millisecond before ${close}`);
}

// ---- the area-code table ----------------------------------------------------------------------

test('NANP table: the overlays named in the brief', (t) => {
  for (const npa of ['212', '332', '646', '917']) t.deepEqual(NANP_AREA_CODES[npa], { country: 'US', region: 'NY', zones: ['America/New_York'] }, npa);
  for (const npa of ['236', '250', '604', '672', '778']) {
    t.is(NANP_AREA_CODES[npa].country, 'CA', npa);
    t.is(NANP_AREA_CODES[npa].region, 'BC', npa);
    t.true(NANP_AREA_CODES[npa].zones.includes('America/Vancouver'), npa);
  }
  t.deepEqual(NANP_AREA_CODES['604'].zones, ['America/Vancouver']);
  t.true(NANP_AREA_CODES['250'].zones.includes('America/Edmonton'), 'East Kootenay');
});

test('NANP table: non-geographic codes are absent', (t) => {
  for (const npa of ['800', '888', '877', '866', '855', '844', '833', '900', '500', '533', '544', '566', '577', '588', '700', '710', '600', '622', '633', '521']) {
    t.false(npa in NANP_AREA_CODES, npa);
  }
});

test('NANP table: every row is well formed and every zone is a real IANA zone', (t) => {
  const CA_REGIONS = new Set(['AB', 'BC', 'MB', 'NB', 'NL', 'NS', 'ON', 'QC', 'SK', 'NT']);
  for (const [npa, row] of Object.entries(NANP_AREA_CODES)) {
    t.regex(npa, /^[2-9]\d\d$/);
    t.regex(row.region, /^[A-Z]{2}$/);
    t.is(row.country, CA_REGIONS.has(row.region) ? 'CA' : 'US', npa);
    t.true(row.zones.length > 0, npa);
    t.is(new Set(row.zones).size, row.zones.length, `${npa} lists a zone twice`);
    for (const zone of row.zones) t.notThrows(() => new Intl.DateTimeFormat('en', { timeZone: zone }), `${npa} ${zone}`);
  }
});

test('NANP table: every state, DC and every province has area codes', (t) => {
  const regions = new Set(Object.values(NANP_AREA_CODES).map((r) => r.region));
  const expected =
    'AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC AB BC MB NB NL NS ON QC SK NT';
  for (const r of expected.split(' ')) t.true(regions.has(r), r);
});

test('NANP table: area codes that straddle a zone line list both zones', (t) => {
  const cases: [string, string[]][] = [
    ['850', ['America/Chicago', 'America/New_York']],
    ['448', ['America/Chicago', 'America/New_York']],
    ['270', ['America/Chicago', 'America/New_York']],
    ['606', ['America/Chicago', 'America/New_York']],
    ['423', ['America/Chicago', 'America/New_York']],
    ['931', ['America/Chicago', 'America/New_York']],
    ['219', ['America/Chicago', 'America/New_York']],
    ['812', ['America/Chicago', 'America/New_York']],
    ['906', ['America/Chicago', 'America/New_York']],
    ['208', ['America/Boise', 'America/Los_Angeles']],
    ['541', ['America/Boise', 'America/Los_Angeles']],
    ['605', ['America/Chicago', 'America/Denver']],
    ['701', ['America/Chicago', 'America/Denver']],
    ['308', ['America/Chicago', 'America/Denver']],
    ['785', ['America/Chicago', 'America/Denver']],
    ['620', ['America/Chicago', 'America/Denver']],
    ['928', ['America/Denver', 'America/Phoenix']],
    ['807', ['America/Toronto', 'America/Winnipeg']],
    ['418', ['America/Halifax', 'America/Toronto']],
    ['709', ['America/Halifax', 'America/St_Johns']],
  ];
  for (const [npa, zones] of cases) for (const z of zones) t.true(NANP_AREA_CODES[npa].zones.includes(z), `${npa} ${z}`);
  t.true(NANP_AREA_CODES['867'].zones.length >= 4, '867 spans the three territories');
  t.deepEqual(NANP_AREA_CODES['915'].zones, ['America/Denver'], 'El Paso');
  t.deepEqual(NANP_AREA_CODES['808'].zones, ['Pacific/Honolulu']);
  t.deepEqual(NANP_AREA_CODES['602'].zones, ['America/Phoenix']);
});

test('NANP table: agrees with libphonenumber on which US and Canadian geographic codes exist', (t) => {
  // libphonenumber accepts 273 (Canada) since September 2026 but says nowhere where it is: it
  // stays out of the table and falls back to every Canadian zone.
  const KNOWN_UNPLACED = new Set(['273']);
  const nonGeographic = new Set(['TOLL_FREE', 'PREMIUM_RATE', 'PERSONAL_NUMBER', 'VOIP', 'SHARED_COST', 'UAN', 'PAGER', 'VOICEMAIL']);
  for (let n = 200; n <= 999; n++) {
    const npa = String(n);
    let country: string | undefined;
    for (const nxx of ['201', '234', '456', '555', '678', '789', '923']) {
      const p = parsePhoneNumberFromString(`+1${npa}${nxx}4567`);
      if (p?.isValid() && (p.country === 'US' || p.country === 'CA') && !nonGeographic.has(p.getType() ?? '')) country = p.country;
    }
    const row = NANP_AREA_CODES[npa];
    if (country && !KNOWN_UNPLACED.has(npa)) t.is(row?.country as string | undefined, country, `libphonenumber has ${npa} in ${country}`);
    if (row) t.is(country, row.country, `table has ${npa}; libphonenumber does not know it`);
  }
});

// ---- zones and rules of a number ---------------------------------------------------------------

test('callingZones: NANP by area code, unknown area code = every zone of the country', (t) => {
  t.deepEqual(callingZones(N.NY, 'US'), ['America/New_York']);
  t.deepEqual(callingZones(N.FL_PANHANDLE, 'US').sort(), ['America/Chicago', 'America/New_York']);
  const allUs = callingZones(N.US_UNKNOWN, 'US');
  for (const z of ['America/New_York', 'America/Chicago', 'America/Denver', 'America/Phoenix', 'America/Los_Angeles', 'America/Anchorage', 'Pacific/Honolulu']) t.true(allUs.includes(z), z);
  t.false(allUs.includes('America/Toronto'));
  const allCa = callingZones('+12735550123', 'CA');
  for (const z of ['America/St_Johns', 'America/Halifax', 'America/Toronto', 'America/Winnipeg', 'America/Regina', 'America/Edmonton', 'America/Vancouver', 'America/Whitehorse']) t.true(allCa.includes(z), z);
  t.false(allCa.includes('America/New_York'));
});

test('callingZones: Australian mobiles anywhere on the mainland, landlines by area code', (t) => {
  t.deepEqual(callingZones(N.AU_MOBILE, 'AU'), ['Australia/Perth', 'Australia/Darwin', 'Australia/Adelaide', 'Australia/Brisbane', 'Australia/Sydney', 'Australia/Melbourne', 'Australia/Hobart']);
  t.true(callingZones('+61291234567', 'AU').includes('Australia/Sydney'));
  t.true(callingZones('+61291234567', 'AU').includes('Australia/Broken_Hill'));
  t.deepEqual(callingZones(N.MELBOURNE, 'AU'), ['Australia/Melbourne', 'Australia/Hobart']);
  t.true(callingZones('+61731234567', 'AU').includes('Australia/Brisbane'));
  const eight = callingZones('+61881234567', 'AU');
  for (const z of ['Australia/Adelaide', 'Australia/Perth', 'Australia/Darwin']) t.true(eight.includes(z), z);
  t.is(callingZones('+611300123456', 'AU').length, 7, '13/1300/1800 numbers can be anywhere');
});

test('callingZones: the European countries', (t) => {
  t.deepEqual(callingZones(N.GB, 'GB'), ['Europe/London']);
  t.deepEqual(callingZones(N.IE, 'IE'), ['Europe/Dublin']);
  t.deepEqual(callingZones(N.DE, 'DE'), ['Europe/Berlin']);
  t.deepEqual(callingZones(N.FR, 'FR'), ['Europe/Paris']);
  t.deepEqual(callingZones(N.NL, 'NL'), ['Europe/Amsterdam']);
  t.deepEqual(callingZones(N.MADRID, 'ES'), ['Europe/Madrid']);
  t.deepEqual(callingZones(N.CANARY, 'ES'), ['Atlantic/Canary']);
  t.deepEqual(callingZones(N.ES_MOBILE, 'ES'), ['Europe/Madrid', 'Atlantic/Canary']);
});

test('callingRules: federal plus the state; unknown area code gets every state', (t) => {
  t.deepEqual(callingRules(N.NY, 'US').map((r) => r.id), ['US']);
  t.deepEqual(callingRules(N.AL, 'US').map((r) => r.id), ['US', 'US-AL']);
  t.deepEqual(callingRules(N.TX, 'US').map((r) => r.id), ['US', 'US-TX']);
  const all = callingRules(N.US_UNKNOWN, 'US').map((r) => r.id);
  for (const id of Object.keys(WINDOW_RULES).filter((k) => k.startsWith('US'))) t.true(all.includes(id), id);
  t.deepEqual(callingRules(N.FR, 'FR').map((r) => r.id), ['FR']);
});

test('bad input is refused, not guessed', (t) => {
  t.throws(() => isOpen(N.NY, 'IT', at('2027-06-16T15:00:00Z')), { instanceOf: RangeError });
  t.throws(() => isOpen('2125550123', 'US', at('2027-06-16T15:00:00Z')), { instanceOf: RangeError });
  t.throws(() => isOpen(N.GB, 'FR', at('2027-06-16T15:00:00Z')), { instanceOf: RangeError });
  t.throws(() => isOpen(N.NY, 'CA', at('2027-06-16T15:00:00Z')), { instanceOf: RangeError }, '212 is a US area code');
  t.throws(() => nextOpening(N.TORONTO, 'US', at('2027-06-16T15:00:00Z')), { instanceOf: RangeError });
});

test('every rule boundary lies between 04:00 and midnight, clear of DST transitions', (t) => {
  for (const rule of Object.values(WINDOW_RULES)) {
    t.is(rule.week.length, 7, rule.id);
    for (const day of rule.week) {
      for (const p of day) {
        t.true(p.openMinute >= 4 * 60 && p.openMinute < p.closeMinute && p.closeMinute <= 24 * 60, rule.id);
      }
    }
    t.true(rule.citation.length > 0, rule.id);
  }
  t.is(WINDOW_RULES.GB.basis, 'policy');
  t.is(WINDOW_RULES.FR.basis, 'law');
});

// ---- edges of each window, on Wednesday 2027-06-16 (summer time everywhere north) ----------------

test('US federal (New York): 08:00–21:00', (t) => {
  assertEdges(t, N.NY, 'US', '2027-06-16T08:00:00-04:00', '2027-06-16T21:00:00-04:00');
});

const STATE_EDGES: [keyof typeof N, string, string][] = [
  ['AL', '2027-06-16T08:00:00-05:00', '2027-06-16T20:00:00-05:00'],
  ['LA', '2027-06-16T08:00:00-05:00', '2027-06-16T20:00:00-05:00'],
  ['MS', '2027-06-16T09:00:00-05:00', '2027-06-16T20:00:00-05:00'], // 08:00 CST is 09:00 CDT
  ['FL', '2027-06-16T08:00:00-04:00', '2027-06-16T20:00:00-04:00'],
  ['OK', '2027-06-16T09:00:00-05:00', '2027-06-16T20:00:00-05:00'],
  ['MD', '2027-06-16T08:00:00-04:00', '2027-06-16T20:00:00-04:00'],
  ['MA', '2027-06-16T08:00:00-04:00', '2027-06-16T20:00:00-04:00'],
  ['MI', '2027-06-16T09:00:00-04:00', '2027-06-16T21:00:00-04:00'],
  ['MN', '2027-06-16T09:00:00-05:00', '2027-06-16T21:00:00-05:00'],
  ['NM', '2027-06-16T09:00:00-06:00', '2027-06-16T21:00:00-06:00'],
  ['KY', '2027-06-16T10:00:00-04:00', '2027-06-16T21:00:00-04:00'],
  ['NV', '2027-06-16T09:00:00-07:00', '2027-06-16T21:00:00-07:00'],
  ['CT', '2027-06-16T09:00:00-04:00', '2027-06-16T20:00:00-04:00'],
  ['TX', '2027-06-16T09:00:00-05:00', '2027-06-16T21:00:00-05:00'],
  ['RI', '2027-06-16T09:00:00-04:00', '2027-06-16T18:00:00-04:00'],
  ['UT', '2027-06-16T08:00:00-06:00', '2027-06-16T21:00:00-06:00'],
  ['PA', '2027-06-16T09:00:00-04:00', '2027-06-16T19:00:00-04:00'],
  ['WA', '2027-06-16T08:00:00-07:00', '2027-06-16T20:00:00-07:00'],
];
for (const [state, open, close] of STATE_EDGES) {
  test(`US-${state}: ${open.slice(11, 16)}–${close.slice(11, 16)} local`, (t) => assertEdges(t, N[state], 'US', open, close));
}

test('US-RI: Saturday 10:00–17:00, never on Sunday', (t) => {
  assertEdges(t, N.RI, 'US', '2027-06-26T10:00:00-04:00', '2027-06-26T17:00:00-04:00');
  t.false(isOpen(N.RI, 'US', at('2027-06-27T12:00:00-04:00')));
  t.is(nextOpening(N.RI, 'US', at('2027-06-26T17:00:00-04:00')).toISOString(), '2027-06-28T13:00:00.000Z', 'Monday 09:00 EDT');
  t.false(isOpen(N.RI, 'US', at('2027-06-19T12:00:00-04:00')), 'Juneteenth, a Saturday, is a Rhode Island holiday');
});

test('state holidays: Victory Day closes Rhode Island, Pioneer Day Utah, Flag Day Pennsylvania, each only there', (t) => {
  const victoryDay = at('2027-08-09T12:00:00-04:00');
  t.false(isOpen(N.RI, 'US', victoryDay));
  t.true(isOpen(N.NY, 'US', victoryDay));
  const pioneerDay = at('2027-07-24T12:00:00-06:00'); // a Saturday
  t.false(isOpen(N.UT, 'US', pioneerDay));
  t.true(isOpen('+13035550123', 'US', pioneerDay), 'Colorado, same zone');
  const flagDay = at('2027-06-14T12:00:00-04:00');
  t.false(isOpen(N.PA, 'US', flagDay));
  t.true(isOpen(N.NY, 'US', flagDay));
  t.true(isOpen(N.WA, 'US', at('2027-08-09T12:00:00-07:00')), 'Washington closes on no state holiday of these');
});

test('US-TX: Saturday 09:00–21:00, Sunday noon–21:00', (t) => {
  assertEdges(t, N.TX, 'US', '2027-06-19T09:00:00-05:00', '2027-06-19T21:00:00-05:00');
  assertEdges(t, N.TX, 'US', '2027-06-20T12:00:00-05:00', '2027-06-20T21:00:00-05:00');
});

test('Canada: weekdays 09:00–21:30, weekends 10:00–18:00', (t) => {
  assertEdges(t, N.TORONTO, 'CA', '2027-06-16T09:00:00-04:00', '2027-06-16T21:30:00-04:00');
  assertEdges(t, N.TORONTO, 'CA', '2027-06-19T10:00:00-04:00', '2027-06-19T18:00:00-04:00');
  assertEdges(t, N.TORONTO, 'CA', '2027-06-20T10:00:00-04:00', '2027-06-20T18:00:00-04:00');
  t.true(isOpen(N.TORONTO, 'CA', at('2027-07-01T12:00:00-04:00')), 'Canada Day: the rules name no holidays');
});

test('Australia: weekdays 09:00–20:00, Saturday 09:00–17:00, Sunday closed', (t) => {
  assertEdges(t, N.MELBOURNE, 'AU', '2027-06-16T09:00:00+10:00', '2027-06-16T20:00:00+10:00');
  assertEdges(t, N.MELBOURNE, 'AU', '2027-06-19T09:00:00+10:00', '2027-06-19T17:00:00+10:00');
  for (let h = 0; h < 24; h++) t.false(isOpen(N.MELBOURNE, 'AU', at(`2027-06-20T${String(h).padStart(2, '0')}:30:00+10:00`)), `Sunday ${h}:30`);
});

test('France: Monday–Friday 10:00–13:00 and 14:00–20:00, never weekends', (t) => {
  assertEdges(t, N.FR, 'FR', '2027-06-16T10:00:00+02:00', '2027-06-16T13:00:00+02:00');
  assertEdges(t, N.FR, 'FR', '2027-06-16T14:00:00+02:00', '2027-06-16T20:00:00+02:00');
  t.false(isOpen(N.FR, 'FR', at('2027-06-16T13:30:00+02:00')), 'lunch');
  t.false(isOpen(N.FR, 'FR', at('2027-06-19T11:00:00+02:00')), 'Saturday');
  t.false(isOpen(N.FR, 'FR', at('2027-06-20T11:00:00+02:00')), 'Sunday');
});

test('Spain: weekdays 09:00–21:00, never weekends', (t) => {
  assertEdges(t, N.MADRID, 'ES', '2027-06-16T09:00:00+02:00', '2027-06-16T21:00:00+02:00');
  t.false(isOpen(N.MADRID, 'ES', at('2027-06-19T12:00:00+02:00')), 'Saturday');
  t.false(isOpen(N.MADRID, 'ES', at('2027-06-20T12:00:00+02:00')), 'Sunday');
  assertEdges(t, N.CANARY, 'ES', '2027-06-16T09:00:00+01:00', '2027-06-16T21:00:00+01:00');
  // A mobile may be in the Canaries: opens with the Canaries, closes with Madrid.
  assertEdges(t, N.ES_MOBILE, 'ES', '2027-06-16T09:00:00+01:00', '2027-06-16T21:00:00+02:00');
});

test('GB, IE, DE, NL policy: weekdays 09:00–20:00, never weekends', (t) => {
  assertEdges(t, N.GB, 'GB', '2027-06-16T09:00:00+01:00', '2027-06-16T20:00:00+01:00');
  assertEdges(t, N.IE, 'IE', '2027-06-16T09:00:00+01:00', '2027-06-16T20:00:00+01:00');
  assertEdges(t, N.DE, 'DE', '2027-06-16T09:00:00+02:00', '2027-06-16T20:00:00+02:00');
  assertEdges(t, N.NL, 'NL', '2027-06-16T09:00:00+02:00', '2027-06-16T20:00:00+02:00');
  for (const [n, c] of [[N.GB, 'GB'], [N.IE, 'IE'], [N.DE, 'DE'], [N.NL, 'NL']] as const) {
    t.false(isOpen(n, c, at('2027-06-19T12:00:00Z')), `${c} Saturday`);
    t.false(isOpen(n, c, at('2027-06-20T12:00:00Z')), `${c} Sunday`);
  }
});

test('winter edges too (standard time)', (t) => {
  assertEdges(t, N.NY, 'US', '2027-01-13T08:00:00-05:00', '2027-01-13T21:00:00-05:00');
  assertEdges(t, N.MELBOURNE, 'AU', '2027-01-13T09:00:00+11:00', '2027-01-13T20:00:00+11:00');
  assertEdges(t, N.FR, 'FR', '2027-01-13T14:00:00+01:00', '2027-01-13T20:00:00+01:00');
  assertEdges(t, N.GB, 'GB', '2027-01-13T09:00:00Z', '2027-01-13T20:00:00Z');
});

// ---- Sundays and holidays ----------------------------------------------------------------------

test('US: July 4 closes Alabama and Louisiana, not the federal window; Sunday closes AL, LA, MS', (t) => {
  const july4th2024 = at('2024-07-04T12:00:00-05:00'); // a Thursday
  t.true(isOpen(N.NY, 'US', july4th2024));
  t.false(isOpen(N.AL, 'US', july4th2024));
  t.false(isOpen(N.LA, 'US', july4th2024));
  t.true(isOpen(N.MS, 'US', july4th2024), 'Mississippi closes Sundays only');
  const observed2027 = at('2027-07-05T12:00:00-05:00'); // Monday, July 4 falls on a Sunday
  t.false(isOpen(N.AL, 'US', observed2027));
  t.false(isOpen(N.LA, 'US', observed2027));
  t.true(isOpen(N.MS, 'US', observed2027));
  t.true(isOpen(N.TX, 'US', observed2027));
  const sunday = at('2027-06-20T12:00:00-05:00');
  t.false(isOpen(N.AL, 'US', sunday));
  t.false(isOpen(N.LA, 'US', sunday));
  t.false(isOpen(N.MS, 'US', sunday));
  t.true(isOpen(N.NY, 'US', sunday));
  t.true(isOpen(N.FL, 'US', sunday));
  t.false(isOpen(N.LA, 'US', at('2027-02-09T12:00:00-06:00')), 'Mardi Gras is a Louisiana holiday');
  t.true(isOpen(N.AL, 'US', at('2026-12-24T12:00:00-06:00')), 'Christmas Eve is only an optional holiday');
  t.false(isOpen(N.AL, 'US', at('2027-12-24T12:00:00-06:00')), 'Christmas observed on Friday 2027-12-24');
});

test('Australia: Christmas, Boxing Day and Australia Day, past and 2027', (t) => {
  t.false(isOpen(N.MELBOURNE, 'AU', at('2024-12-25T12:00:00+11:00')));
  t.false(isOpen(N.MELBOURNE, 'AU', at('2024-12-26T12:00:00+11:00')));
  t.false(isOpen(N.MELBOURNE, 'AU', at('2027-12-27T12:00:00+11:00')), 'Christmas substitute day');
  t.false(isOpen(N.MELBOURNE, 'AU', at('2027-12-28T12:00:00+11:00')), 'Boxing Day substitute day');
  t.true(isOpen(N.MELBOURNE, 'AU', at('2027-12-29T12:00:00+11:00')));
  t.false(isOpen(N.MELBOURNE, 'AU', at('2024-01-26T12:00:00+11:00')));
  t.false(isOpen(N.MELBOURNE, 'AU', at('2027-01-26T12:00:00+11:00')));
  t.false(isOpen(N.AU_MOBILE, 'AU', at('2027-01-26T03:00:00Z')), 'Australia Day everywhere');
  t.true(isOpen(N.MELBOURNE, 'AU', at('2027-01-27T12:00:00+11:00')));
  t.false(isOpen(N.MELBOURNE, 'AU', at('2027-03-29T12:00:00+11:00')), 'Easter Monday');
  t.true(isOpen(N.MELBOURNE, 'AU', at('2027-06-14T12:00:00+10:00')), "King's Birthday is not national (observances and state days do not count)");
});

test('France: 14 juillet, past and 2027', (t) => {
  t.false(isOpen(N.FR, 'FR', at('2023-07-14T11:00:00+02:00')));
  t.false(isOpen(N.FR, 'FR', at('2027-07-14T11:00:00+02:00')));
  t.true(isOpen(N.FR, 'FR', at('2027-07-15T11:00:00+02:00')));
  t.false(isOpen(N.FR, 'FR', at('2027-05-17T11:00:00+02:00')), 'lundi de Pentecôte');
});

test('Spain: 12 de octubre, past and 2027', (t) => {
  t.false(isOpen(N.MADRID, 'ES', at('2023-10-12T12:00:00+02:00')));
  t.false(isOpen(N.MADRID, 'ES', at('2027-10-12T12:00:00+02:00')));
  t.true(isOpen(N.MADRID, 'ES', at('2027-10-13T12:00:00+02:00')));
  t.true(isOpen(N.MADRID, 'ES', at('2027-03-19T12:00:00+01:00')), 'San José is a regional day (observance nationally)');
});

test('GB: Boxing Day, past and substitute days', (t) => {
  t.false(isOpen(N.GB, 'GB', at('2024-12-26T12:00:00Z')));
  t.false(isOpen(N.GB, 'GB', at('2026-12-28T12:00:00Z')), 'Boxing Day (Saturday) substitute');
  t.false(isOpen(N.GB, 'GB', at('2027-12-28T12:00:00Z')), 'Boxing Day (Sunday) substitute');
  t.true(isOpen(N.GB, 'GB', at('2027-12-29T12:00:00Z')));
});

test('Germany: Tag der Deutschen Einheit', (t) => {
  t.false(isOpen(N.DE, 'DE', at('2024-10-03T12:00:00+02:00')));
  t.false(isOpen(N.DE, 'DE', at('2028-10-03T12:00:00+02:00')));
  t.true(isOpen(N.DE, 'DE', at('2027-10-04T12:00:00+02:00')), 'no substitute for a Sunday holiday');
  t.true(isOpen(N.DE, 'DE', at('2027-12-24T12:00:00+01:00')), 'Heiligabend is a bank holiday, not public');
});

test('Netherlands: Koningsdag', (t) => {
  t.false(isOpen(N.NL, 'NL', at('2023-04-27T12:00:00+02:00')));
  t.false(isOpen(N.NL, 'NL', at('2027-04-27T12:00:00+02:00')));
  t.true(isOpen(N.NL, 'NL', at('2027-04-28T12:00:00+02:00')));
  t.true(isOpen(N.NL, 'NL', at('2027-03-26T12:00:00+01:00')), 'Goede Vrijdag is not a public holiday in date-holidays');
});

test('Ireland: public holidays close, bank holidays do not', (t) => {
  t.false(isOpen(N.IE, 'IE', at('2027-03-17T12:00:00Z')), "St Patrick's Day");
  t.true(isOpen(N.IE, 'IE', at('2027-03-26T12:00:00Z')), 'Good Friday is a bank holiday only');
  t.false(isOpen(N.IE, 'IE', at('2027-02-01T12:00:00Z')), "St Brigid's Day");
});

// ---- DST days ---------------------------------------------------------------------------------

test('US spring forward 2027-03-14: the Sunday window opens at 08:00 EDT', (t) => {
  t.false(isOpen(N.NY, 'US', at('2027-03-14T11:59:00Z')));
  t.true(isOpen(N.NY, 'US', at('2027-03-14T12:00:00Z')));
  t.is(nextOpening(N.NY, 'US', at('2027-03-14T05:00:00Z')).toISOString(), '2027-03-14T12:00:00.000Z');
  t.is(nextOpening(N.NY, 'US', at('2027-03-13T05:00:00Z')).toISOString(), '2027-03-13T13:00:00.000Z', 'the day before, 08:00 EST');
  t.true(isOpen(N.NY, 'US', at('2027-03-15T00:59:00Z')));
  t.false(isOpen(N.NY, 'US', at('2027-03-15T01:00:00Z')), '21:00 EDT');
  t.is(nextOpening(N.TX, 'US', at('2027-03-14T06:00:00Z')).toISOString(), '2027-03-14T17:00:00.000Z', 'Texas Sunday noon CDT');
  t.is(nextOpening(N.TORONTO, 'CA', at('2027-03-14T06:00:00Z')).toISOString(), '2027-03-14T14:00:00.000Z', 'Canada weekend 10:00 EDT');
});

test('US fall back 2027-11-07: the Sunday window opens at 08:00 EST', (t) => {
  t.false(isOpen(N.NY, 'US', at('2027-11-07T12:30:00Z')), '07:30 EST');
  t.true(isOpen(N.NY, 'US', at('2027-11-07T13:00:00Z')));
  t.is(nextOpening(N.NY, 'US', at('2027-11-07T04:00:00Z')).toISOString(), '2027-11-07T13:00:00.000Z');
  t.is(nextOpening(N.TX, 'US', at('2027-11-07T04:00:00Z')).toISOString(), '2027-11-07T18:00:00.000Z', 'Texas Sunday noon CST');
  t.false(isOpen(N.NY, 'US', at('2027-11-08T02:00:00Z')), '21:00 EST');
});

test('EU spring forward 2027-03-28: Monday opens on summer time', (t) => {
  // Easter Monday (29 March) is a public holiday in France and the Netherlands, not nationally in Spain.
  t.is(nextOpening(N.MADRID, 'ES', at('2027-03-27T12:00:00Z')).toISOString(), '2027-03-29T07:00:00.000Z', '09:00 CEST on Monday');
  t.is(nextOpening(N.FR, 'FR', at('2027-03-27T12:00:00Z')).toISOString(), '2027-03-30T08:00:00.000Z', '10:00 CEST on Tuesday');
  t.is(nextOpening(N.NL, 'NL', at('2027-03-27T12:00:00Z')).toISOString(), '2027-03-30T07:00:00.000Z', '09:00 CEST on Tuesday');
  // Good Friday and Easter Monday are public holidays in GB and DE.
  t.is(nextOpening(N.GB, 'GB', at('2027-03-25T20:00:00Z')).toISOString(), '2027-03-30T08:00:00.000Z', '09:00 BST on Tuesday');
  t.is(nextOpening(N.DE, 'DE', at('2027-03-25T20:00:00Z')).toISOString(), '2027-03-30T07:00:00.000Z', '09:00 CEST on Tuesday');
});

test('EU fall back 2027-10-31: Monday opens on standard time (or Tuesday after Toussaint)', (t) => {
  t.is(nextOpening(N.GB, 'GB', at('2027-10-30T12:00:00Z')).toISOString(), '2027-11-01T09:00:00.000Z', '09:00 GMT');
  t.is(nextOpening(N.NL, 'NL', at('2027-10-30T12:00:00Z')).toISOString(), '2027-11-01T08:00:00.000Z', '09:00 CET');
  t.is(nextOpening(N.FR, 'FR', at('2027-10-30T12:00:00Z')).toISOString(), '2027-11-02T09:00:00.000Z', '10:00 CET, Toussaint skipped');
  t.is(nextOpening(N.MADRID, 'ES', at('2027-10-30T12:00:00Z')).toISOString(), '2027-11-02T08:00:00.000Z', '09:00 CET, Todos los Santos skipped');
});

test('AU daylight saving ends 2027-04-04: Saturday on AEDT, Monday on AEST', (t) => {
  assertEdges(t, N.MELBOURNE, 'AU', '2027-04-03T09:00:00+11:00', '2027-04-03T17:00:00+11:00');
  t.is(nextOpening(N.MELBOURNE, 'AU', at('2027-04-03T06:00:00Z')).toISOString(), '2027-04-04T23:00:00.000Z', 'Monday 09:00 AEST');
  assertEdges(t, N.MELBOURNE, 'AU', '2027-04-05T09:00:00+10:00', '2027-04-05T20:00:00+10:00');
});

test('AU daylight saving starts 2027-10-03: Monday on AEDT; a mobile waits for Perth', (t) => {
  t.is(nextOpening(N.MELBOURNE, 'AU', at('2027-10-02T07:00:00Z')).toISOString(), '2027-10-03T22:00:00.000Z', 'Monday 09:00 AEDT');
  t.is(nextOpening(N.AU_MOBILE, 'AU', at('2027-10-02T07:00:00Z')).toISOString(), '2027-10-04T01:00:00.000Z', 'Monday 09:00 AWST');
  t.true(isOpen(N.AU_MOBILE, 'AU', at('2027-10-04T08:59:00Z')));
  t.false(isOpen(N.AU_MOBILE, 'AU', at('2027-10-04T09:00:00Z')), '20:00 AEDT in Sydney');
});

test('localWallToInstant: ordinary, skipped and repeated wall times', (t) => {
  const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / DAY_MS;
  t.is(new Date(localWallToInstant('America/New_York', day('2027-03-14'), 8 * 60)).toISOString(), '2027-03-14T12:00:00.000Z');
  t.is(new Date(localWallToInstant('America/New_York', day('2027-03-14'), 2 * 60 + 30)).toISOString(), '2027-03-14T07:00:00.000Z', 'skipped 02:30 → the jump');
  t.is(new Date(localWallToInstant('America/New_York', day('2027-11-07'), 60 + 30)).toISOString(), '2027-11-07T05:30:00.000Z', 'repeated 01:30 → first time');
  t.is(new Date(localWallToInstant('Europe/Paris', day('2027-03-28'), 2 * 60 + 15)).toISOString(), '2027-03-28T01:00:00.000Z');
  t.is(new Date(localWallToInstant('Australia/Lord_Howe', day('2027-10-03'), 2 * 60 + 15)).toISOString(), '2027-10-02T15:30:00.000Z', 'half-hour jump');
  t.is(new Date(localWallToInstant('Australia/Sydney', day('2027-04-04'), 9 * 60)).toISOString(), '2027-04-03T23:00:00.000Z');
});

// ---- several zones ------------------------------------------------------------------------------

test('an AU mobile is open only while every mainland zone is', (t) => {
  const wednesday = '2027-06-16';
  t.true(isOpen(N.MELBOURNE, 'AU', at(`${wednesday}T00:30:00Z`)), '10:30 in Melbourne');
  t.false(isOpen(N.AU_MOBILE, 'AU', at(`${wednesday}T00:59:00Z`)), '08:59 in Perth');
  t.true(isOpen(N.AU_MOBILE, 'AU', at(`${wednesday}T01:00:00Z`)));
  t.true(isOpen(N.AU_MOBILE, 'AU', at(`${wednesday}T09:59:00Z`)));
  t.false(isOpen(N.AU_MOBILE, 'AU', at(`${wednesday}T10:00:00Z`)), '20:00 in Sydney, Brisbane and Hobart');
  t.is(nextOpening(N.AU_MOBILE, 'AU', at(`${wednesday}T00:00:00Z`)).toISOString(), `${wednesday}T01:00:00.000Z`);
});

test('850 (Florida panhandle, Central and Eastern) is open only while both are', (t) => {
  t.true(isOpen(N.FL, 'US', at('2027-06-16T12:30:00Z')), 'Miami 08:30 EDT');
  t.false(isOpen(N.FL_PANHANDLE, 'US', at('2027-06-16T12:59:00Z')), '07:59 CDT');
  t.true(isOpen(N.FL_PANHANDLE, 'US', at('2027-06-16T13:00:00Z')));
  t.true(isOpen(N.FL_PANHANDLE, 'US', at('2027-06-16T23:59:00Z')));
  t.false(isOpen(N.FL_PANHANDLE, 'US', at('2027-06-17T00:00:00Z')), '20:00 EDT');
  t.false(isOpen('+13345550123', 'US', at('2027-06-17T00:30:00Z')), '334 (Alabama) includes Phenix City, on Eastern time');
});

test('an unknown US area code is held to every state and every US zone', (t) => {
  // Latest opening: 10:00 (Kentucky's rule) in Honolulu = 20:00Z; earliest close: 17:00 (Maine's
  // rule for automated calls, 10 M.R.S. § 1498(3)) Eastern = 21:00Z.
  t.false(isOpen(N.US_UNKNOWN, 'US', at('2027-06-16T19:59:00Z')));
  t.true(isOpen(N.US_UNKNOWN, 'US', at('2027-06-16T20:00:00Z')));
  t.true(isOpen(N.US_UNKNOWN, 'US', at('2027-06-16T20:59:00Z')));
  t.false(isOpen(N.US_UNKNOWN, 'US', at('2027-06-16T21:00:00Z')), '17:00 in Maine');
  t.false(isOpen(N.US_UNKNOWN, 'US', at('2027-06-20T20:30:00Z')), 'Sunday (Alabama, Louisiana, Mississippi)');
  t.false(isOpen(N.US_UNKNOWN, 'US', at('2027-07-03T20:30:00Z')), 'Saturday: Maine takes automated calls on weekdays only');
  t.is(nextOpening(N.US_UNKNOWN, 'US', at('2027-07-04T12:00:00Z')).toISOString(), '2027-07-06T20:00:00.000Z', 'Sunday July 4, then the observed Monday');
});

test('an unknown Canadian area code is held to every Canadian zone', (t) => {
  // Weekdays 09:00–21:30: opens with Vancouver/Whitehorse (16:00Z in June), closes with St John's (00:00Z).
  const n = '+12735550123';
  t.false(isOpen(n, 'CA', at('2027-06-16T15:59:00Z')));
  t.true(isOpen(n, 'CA', at('2027-06-16T16:00:00Z')));
  t.true(isOpen(n, 'CA', at('2027-06-16T23:59:00Z')));
  t.false(isOpen(n, 'CA', at('2027-06-17T00:00:00Z')));
});

// ---- nextOpening ------------------------------------------------------------------------------

test('nextOpening from inside a window is the same instant', (t) => {
  for (const [n, c, iso] of [
    [N.NY, 'US', '2027-06-16T15:00:00.123Z'],
    [N.FR, 'FR', '2027-06-16T09:00:00Z'],
    [N.AU_MOBILE, 'AU', '2027-06-16T05:00:00Z'],
    [N.FL_PANHANDLE, 'US', '2027-06-16T18:00:00Z'],
  ] as const) {
    const from = at(iso);
    t.is(nextOpening(n, c, from).getTime(), from.getTime(), `${n} at ${iso}`);
  }
});

test('nextOpening: France from Friday evening is Monday 10:00 Paris', (t) => {
  t.is(nextOpening(N.FR, 'FR', at('2027-06-18T18:30:00Z')).toISOString(), '2027-06-21T08:00:00.000Z');
  t.is(nextOpening(N.FR, 'FR', at('2027-06-16T11:30:00Z')).toISOString(), '2027-06-16T12:00:00.000Z', 'after lunch');
});

test('nextOpening: Spain from Saturday is Monday 09:00 unless Monday is a holiday', (t) => {
  t.is(nextOpening(N.MADRID, 'ES', at('2027-06-19T10:00:00Z')).toISOString(), '2027-06-21T07:00:00.000Z');
  // Monday 6 December is Día de la Constitución: Tuesday 7th (Wednesday 8th is a holiday too).
  t.is(nextOpening(N.MADRID, 'ES', at('2027-12-04T10:00:00Z')).toISOString(), '2027-12-07T08:00:00.000Z');
  t.is(nextOpening(N.MADRID, 'ES', at('2027-12-07T20:00:00Z')).toISOString(), '2027-12-09T08:00:00.000Z');
});

test('nextOpening: Australia over Christmas 2027', (t) => {
  // Christmas (Saturday), Boxing Day (Sunday), both substitute days: Wednesday 29th.
  t.is(nextOpening(N.MELBOURNE, 'AU', at('2027-12-24T10:00:00Z')).toISOString(), '2027-12-28T22:00:00.000Z');
  t.true(MAX_SEARCH_DAYS >= 30);
});

test('windowExplanation names the rule, the zone and the next opening', (t) => {
  const closed = windowExplanation(N.AL, 'US', at('2027-07-05T15:00:00Z'));
  t.regex(closed, /closed/);
  t.regex(closed, /US-AL/);
  t.regex(closed, /America\/Chicago/);
  t.regex(closed, /public holiday/);
  t.regex(closed, /2027-07-06T13:00:00\.000Z/);
  t.regex(windowExplanation(N.FR, 'FR', at('2027-06-16T09:00:00Z')), /is open\.$/);
  t.regex(windowExplanation(N.GB, 'GB', at('2027-06-19T12:00:00Z')), /Switchboard policy.*no calls that day/);
});

// ---- properties -------------------------------------------------------------------------------

const US_CODES = Object.keys(NANP_AREA_CODES).filter((k) => NANP_AREA_CODES[k].country === 'US');
const CA_CODES = Object.keys(NANP_AREA_CODES).filter((k) => NANP_AREA_CODES[k].country === 'CA');
const digits = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789'.split('')), minLength: n, maxLength: n });

/** A random (country, number) pair: known and unknown area codes, mobiles, every country. */
const numberArb: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constantFrom(...US_CODES, '999', '273'), digits(7)).map(([npa, d]): [string, string] => ['US', `+1${npa}${d}`]),
  fc.tuple(fc.constantFrom(...CA_CODES, '273'), digits(7)).map(([npa, d]): [string, string] => ['CA', `+1${npa}${d}`]),
  fc.tuple(fc.constantFrom('2', '3', '4', '7', '8', '1300'), digits(8)).map(([p, d]): [string, string] => ['AU', `+61${p}${d}`]),
  digits(9).map((d): [string, string] => ['GB', `+447${d}`]),
  digits(8).map((d): [string, string] => ['IE', `+3538${d}`]),
  digits(9).map((d): [string, string] => ['DE', `+491${d}`]),
  fc.tuple(fc.constantFrom('1', '6', '7'), digits(8)).map(([p, d]): [string, string] => ['FR', `+33${p}${d}`]),
  fc.constantFrom('91', '93', '928', '6', '7').chain((p) => digits(9 - p.length).map((d): [string, string] => ['ES', `+34${p}${d}`])),
  digits(8).map((d): [string, string] => ['NL', `+316${d}`]),
);
const instantArb = fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2028, 11, 31, 23, 59) }).map((ms) => new Date(ms));

test('property: nextOpening(x) ≥ x, is open, and nothing before it is', (t) => {
  fc.assert(
    fc.property(numberArb, instantArb, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }), ([country, e164], x, fractions) => {
      const next = nextOpening(e164, country, x);
      if (next.getTime() < x.getTime()) return false;
      if (!isOpen(e164, country, next)) return false;
      if (isOpen(e164, country, x) !== (next.getTime() === x.getTime())) return false;
      const gapMinutes = Math.floor((next.getTime() - x.getTime()) / MINUTE_MS);
      if (next.getTime() > x.getTime() && isOpen(e164, country, plus(next, -1))) return false;
      // A few 1-minute steps between x and the opening are all closed.
      return fractions.every((f) => gapMinutes === 0 || !isOpen(e164, country, plus(x, Math.floor(f * gapMinutes) * MINUTE_MS)));
    }),
    { numRuns: 400, seed: 20270314 },
  );
  t.pass();
});


/** The windows restated by hand from the brief, as [open, close) hours by weekday kind (holidays aside). */
function expectedHours(country: string, weekday: number): [number, number][] {
  const weekend = weekday === 0 || weekday === 6;
  switch (country) {
    case 'US':
      return [[8, 21]];
    case 'CA':
      return weekend ? [[10, 18]] : [[9, 21.5]];
    case 'AU':
      return weekday === 0 ? [] : weekday === 6 ? [[9, 17]] : [[9, 20]];
    case 'FR':
      return weekend ? [] : [[10, 13], [14, 20]];
    case 'ES':
      return weekend ? [] : [[9, 21]];
    default:
      return weekend ? [] : [[9, 20]];
  }
}

test('a simulated week of requests: 200 numbers, every dial time inside a window', (t) => {
  const requests = fc.sample(fc.tuple(numberArb, fc.integer({ min: Date.UTC(2027, 2, 8), max: Date.UTC(2027, 2, 15) })), { numRuns: 200, seed: 42 });
  const countries = new Set<string>();
  for (const [[country, e164], ms] of requests) {
    countries.add(country);
    const requested = new Date(ms);
    const dial = nextOpening(e164, country, requested);
    t.true(dial.getTime() >= ms, `${e164} dialled before it was requested`);
    t.true(dial.getTime() - ms <= MAX_SEARCH_DAYS * DAY_MS);
    t.true(isOpen(e164, country, dial), `${e164} (${country}) dialled at ${dial.toISOString()}`);
    for (const zone of callingZones(e164, country)) {
      const { weekday, minute } = localOf(zone, dial);
      const inside = expectedHours(country, weekday).some(([o, c]) => minute >= o * 60 && minute < c * 60);
      t.true(inside, `${e164} (${country}) at ${dial.toISOString()} is ${minute} min into day ${weekday} in ${zone}`);
    }
  }
  for (const c of CALLING_COUNTRIES) t.true(countries.has(c), `the sample reached ${c}`);
});

test('US-ME: automated calls on weekdays 09:00–17:00 Maine time only (10 M.R.S. § 1498(3))', (t) => {
  const me = '+12075550123';
  t.deepEqual(callingRules(me, 'US').map((r) => r.id), ['US', 'US-ME']);
  // Wednesday 2027-06-16, EDT (UTC−4).
  t.false(isOpen(me, 'US', at('2027-06-16T12:59:00Z')), '08:59');
  t.true(isOpen(me, 'US', at('2027-06-16T13:00:00Z')), '09:00');
  t.true(isOpen(me, 'US', at('2027-06-16T20:59:00Z')), '16:59');
  t.false(isOpen(me, 'US', at('2027-06-16T21:00:00Z')), '17:00');
  // Saturday and Sunday are closed; Friday 17:00 opens next on Monday 09:00.
  t.false(isOpen(me, 'US', at('2027-06-19T15:00:00Z')));
  t.false(isOpen(me, 'US', at('2027-06-20T15:00:00Z')));
  t.is(nextOpening(me, 'US', at('2027-06-18T21:00:00Z')).toISOString(), '2027-06-21T13:00:00.000Z');
});
