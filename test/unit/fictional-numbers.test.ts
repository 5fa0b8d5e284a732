/** Test mode's number stock (the simulated carrier's, which provisioning rents test numbers from): only ranges reserved for fiction. */
import test from 'ava';
import { areaCodeInService, FICTIONAL_COUNTRIES, fictionalNumbers, isFictional } from '../../telephony/simulated/fictional-numbers.ts';
import { NANP_AREA_CODES } from '../../actors/shared/nanp-area-codes.ts';

test('every listed number of every country is fictional, distinct, and the count never exceeds the range', (t) => {
  for (const country of FICTIONAL_COUNTRIES) {
    for (const start of [0, 0.37, 0.999]) {
      const numbers = fictionalNumbers(country, { limit: 20_000, start });
      t.is(new Set(numbers).size, numbers.length, country);
      t.true(numbers.every(isFictional), country);
      t.true(numbers.every((n) => /^\+[1-9]\d{6,14}$/.test(n)), country);
    }
  }
  t.is(fictionalNumbers('US', { limit: 1000 }).length, 100, 'NANP 555-0100..0199');
  t.is(fictionalNumbers('AU', { limit: 1000 }).length, 154, 'ACMA 0491 570 006..159');
  t.deepEqual(fictionalNumbers('JP', { limit: 5 }), []);
});

test('isFictional: NANP 555-01xx in any area code, the drama ranges within their bounds, nothing else', (t) => {
  for (const n of ['+12025550100', '+19075550199', '+447700900000', '+61491570006', '+61491570159', '+33199000000']) t.true(isFictional(n), n);
  for (const n of ['+12025550200', '+12025550099', '+442071234567', '+61491570005', '+61491570160', '+4477009000001', '+1202555010']) t.false(isFictional(n), n);
});

test('no number is invented in an area code not in service: 999 (unassigned), 800 and 900 (not geographic), 416 for the US (Canadian) have none; 212 and 416 in their countries do', (t) => {
  for (const [country, areaCode] of [['US', '999'], ['US', '800'], ['US', '900'], ['US', '416'], ['CA', '212'], ['US', '555']] as const) {
    t.deepEqual(fictionalNumbers(country, { areaCode, limit: 5 }), [], `${country} ${areaCode}`);
  }
  t.deepEqual(fictionalNumbers('US', { areaCode: '212', limit: 1 }), ['+12125550100']);
  t.deepEqual(fictionalNumbers('CA', { areaCode: '416', limit: 1 }), ['+14165550100']);
});

test('the simulated carrier and the numbers room agree on the area codes in service: every code of the NANP table, in its own country', (t) => {
  for (const [code, entry] of Object.entries(NANP_AREA_CODES)) t.true(areaCodeInService(entry.country, code), `${entry.country} ${code}`);
});
