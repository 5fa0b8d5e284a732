/**
 * Calling-window behaviour that the mutation run (docs/decisions.md, "Mutation testing") found no
 * test for. Each test names the rule it holds (ITU-T E.164, the statutes' hours) literally.
 */
import test from 'ava';
import { WINDOW_RULES, callingZones, isOpen, nextOpening, windowExplanation } from '../../actors/scheduler/calling-windows.ts';
import { REMOVED_RULES } from '../../actors/scheduler/window-rules.ts';

const at = (iso: string): Date => new Date(iso);

test('an E.164 number has at most 15 digits after the plus and nothing else (ITU-T E.164 §6.1): anything longer or trailing is refused', (t) => {
  const noon = at('2027-06-16T16:00:00Z'); // 12:00 in New York, inside 8:00–21:00
  t.true(isOpen('+12125550123', 'US', noon), 'the 11-digit New York number itself is open');
  t.true(isOpen('+121255501234567', 'US', noon), '15 digits is still E.164');
  for (const bad of ['+1212555012345678', '+12125550123x', '+12125550123 ', '+1+12125550123']) {
    t.throws(() => isOpen(bad, 'US', noon), { instanceOf: RangeError }, bad);
    t.throws(() => callingZones(bad, 'US'), { instanceOf: RangeError }, bad);
  }
});

test('the explanation of a closed window gives the local weekday, date and time, the hours the law allows and the next opening', (t) => {
  // 47 CFR § 64.1200(c)(1): 8:00–21:00 at the called party's location; 22:30 in New York on a Wednesday is after it.
  t.is(
    windowExplanation('+12125550123', 'US', at('2027-06-17T02:30:00Z')),
    '+12125550123 (US; America/New_York) at 2027-06-17T02:30:00.000Z is closed: it is Wednesday 2027-06-16 22:30 in America/New_York, ' +
      'where US (47 CFR § 64.1200(c)(1); 16 CFR § 310.4(c), law) allows 08:00–21:00; next opening 2027-06-17T12:00:00.000Z.',
  );
  // Code de la consommation art. D223-9: 10:00–13:00 and 14:00–20:00; 13:30 in Paris is the lunch gap.
  t.regex(windowExplanation('+33142000000', 'FR', at('2027-06-16T11:30:00Z')), /it is Wednesday 2027-06-16 13:30 in Europe\/Paris, where FR .* allows 10:00–13:00 and 14:00–20:00; next opening 2027-06-16T12:00:00\.000Z\.$/);
});

test('the explanation names each local weekday (a week of 21:30 evenings in London, after the 9:00–20:00 policy window)', (t) => {
  const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  for (let i = 0; i < 7; i++) {
    const date = `2027-06-${13 + i}`; // Sunday 13 June 2027 … Saturday 19 June
    t.regex(windowExplanation('+442079460000', 'GB', at(`${date}T20:30:00Z`)), new RegExp(`it is ${days[i]} ${date} 21:30 in Europe/London`), date);
  }
});

test('the explanation names every rule that reaches the number: Alabama is held to the federal window and its own', (t) => {
  // Ala. Admin. Code r. 770-X-5-.17(1)(b): none on Sundays, 8:00–20:00; 20:30 in Birmingham on a Wednesday.
  t.regex(windowExplanation('+12055550123', 'US', at('2027-06-17T01:30:00Z')), /^\+12055550123 \(US \+ US-AL; America\/Chicago\) at 2027-06-17T01:30:00\.000Z is closed: .* where US-AL .* allows 08:00–20:00;/);
});

test('the explanation names every zone the callee may be in: an Australian 03 number is Melbourne or Hobart', (t) => {
  // Telemarketing Industry Standard 2017: weekdays 9:00–20:00; 21:00 AEST on a Wednesday is after it.
  t.regex(windowExplanation('+61390001234', 'AU', at('2027-06-16T11:00:00Z')), /^\+61390001234 \(AU; Australia\/Melbourne, Australia\/Hobart\) at .* is closed: it is Wednesday 2027-06-16 21:00 in Australia\/Melbourne, where AU .* allows 09:00–20:00;/);
});

test('a public holiday closes the whole day: the explanation says no calls are allowed that day (Alabama, 5 July 2027, Independence Day observed)', (t) => {
  // Ala. Admin. Code r. 770-X-5-.17(1)(b): no automated solicitation calls on holidays; 10:00 in Birmingham is inside 8:00–20:00.
  t.regex(windowExplanation('+12055550123', 'US', at('2027-07-05T15:00:00Z')), /it is Monday 2027-07-05 10:00, a public holiday in America\/Chicago, where US-AL \(Ala\. Admin\. Code r\. 770-X-5-\.17\(1\)\(b\), law\) allows no calls that day;/);
});

test('Spanish regional festivos close only their own community (TRLGDCU art. 96.2: no calls on festivos): Madrid and Catalonia in one year', (t) => {
  const madrid = '+34911234567';
  const barcelona = '+34931234567';
  // Thursday 25 March 2027, Jueves Santo: a festivo in Madrid, not in Catalonia (12:00 CET, inside 9:00–21:00).
  t.false(isOpen(madrid, 'ES', at('2027-03-25T11:00:00Z')));
  t.true(isOpen(barcelona, 'ES', at('2027-03-25T11:00:00Z')));
  // Thursday 24 June 2027, Sant Joan: a festivo in Catalonia, not in Madrid (12:00 CEST).
  t.true(isOpen(madrid, 'ES', at('2027-06-24T10:00:00Z')));
  t.false(isOpen(barcelona, 'ES', at('2027-06-24T10:00:00Z')));
  // Monday 29 March 2027, Easter Monday: Catalonia only.
  t.true(isOpen(madrid, 'ES', at('2027-03-29T10:00:00Z')));
  t.false(isOpen(barcelona, 'ES', at('2027-03-29T10:00:00Z')));
});

test('a number is read only in the country whose calling code it carries (ITU-T E.164 country codes): another country\'s number is refused', (t) => {
  const noon = at('2027-06-16T11:00:00Z');
  const foreign: [string, string][] = [
    ['US', '+442079460000'], // +44 is the United Kingdom, not +1
    ['CA', '+33142000000'],
    ['AU', '+442079460000'], // not +61
    ['GB', '+33142000000'], // not +44
    ['IE', '+442079460000'], // not +353
    ['DE', '+31201234567'], // not +49
    ['FR', '+4930123456'], // not +33
    ['ES', '+33142000000'], // not +34
    ['NL', '+4930123456'], // not +31
  ];
  for (const [country, e164] of foreign) {
    t.throws(() => isOpen(e164, country, noon), { instanceOf: RangeError }, `${e164} as ${country}`);
    t.throws(() => nextOpening(e164, country, noon), { instanceOf: RangeError }, `${e164} as ${country}`);
  }
});

test('Australian geographic area codes reach every clock their area keeps', (t) => {
  // 02: New South Wales (Sydney), Broken Hill on South Australia's clock, Lord Howe Island's half-hour shift.
  t.deepEqual(callingZones('+61291234567', 'AU').sort(), ['Australia/Broken_Hill', 'Australia/Lord_Howe', 'Australia/Sydney']);
  // 03: Victoria and Tasmania.
  t.deepEqual(callingZones('+61390001234', 'AU').sort(), ['Australia/Hobart', 'Australia/Melbourne']);
  // 07: Queensland (no daylight time) and Tweed Heads in New South Wales (daylight time).
  t.deepEqual(callingZones('+61731234567', 'AU').sort(), ['Australia/Brisbane', 'Australia/Sydney']);
  // 08: South Australia, Western Australia, the Northern Territory, Broken Hill and Eucla (+08:45).
  t.deepEqual(callingZones('+61881234567', 'AU').sort(), ['Australia/Adelaide', 'Australia/Broken_Hill', 'Australia/Darwin', 'Australia/Eucla', 'Australia/Perth']);
});

test('a day the law closes altogether allows no calls: Alabama on a Sunday (r. 770-X-5-.17(1)(b)), the 9:00–20:00 weekday policy on a Saturday and a Sunday', (t) => {
  // Sunday 20 June 2027, 12:00 in Birmingham.
  t.regex(windowExplanation('+12055550123', 'US', at('2027-06-20T17:00:00Z')), /it is Sunday 2027-06-20 12:00 in America\/Chicago, where US-AL .* allows no calls that day;/);
  t.regex(windowExplanation('+442079460000', 'GB', at('2027-06-19T11:00:00Z')), /it is Saturday 2027-06-19 12:00 in Europe\/London, where GB .* allows no calls that day;/);
  t.regex(windowExplanation('+442079460000', 'GB', at('2027-06-20T11:00:00Z')), /it is Sunday 2027-06-20 12:00 in Europe\/London, where GB .* allows no calls that day;/);
});

test('a refused number says what is wrong with it', (t) => {
  const noon = at('2027-06-16T16:00:00Z');
  t.throws(() => isOpen('+12125550123x', 'US', noon), { instanceOf: RangeError, message: /\+12125550123x is not an E\.164 number/ });
  t.throws(() => isOpen('+442079460000', 'FR', noon), { instanceOf: RangeError, message: /\+442079460000 is not a FR number/ });
  t.throws(() => isOpen('+390612345678', 'IT', noon), { instanceOf: RangeError, message: /unsupported country IT/ });
  t.throws(() => isOpen('+14165550123', 'US', noon), { instanceOf: RangeError, message: /area code of \+14165550123 is in CA, not US/ }, '416 is Toronto');
});

test('GB, IE, DE and NL set no calling hours in law: their window is policy, with no statute and no source, and the explanation says so', (t) => {
  for (const id of ['GB', 'IE', 'DE', 'NL'] as const) {
    t.is(WINDOW_RULES[id].basis, 'policy', id);
    t.deepEqual(WINDOW_RULES[id].sources, [], id);
  }
  t.regex(windowExplanation('+442079460000', 'GB', at('2027-06-19T11:00:00Z')), /where GB \(Switchboard policy \(no statutory calling hours in GB\), policy\) allows no calls that day/);
});

test('no window rule is removed today: Michigan, Minnesota, Kentucky, Nevada and Texas were each found (docs/compliance.md)', (t) => {
  t.deepEqual(REMOVED_RULES, []);
  for (const id of ['US-MI', 'US-MN', 'US-KY', 'US-NV', 'US-TX'] as const) t.is(WINDOW_RULES[id].basis, 'law', id);
});
