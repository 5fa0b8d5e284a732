import test from 'ava';
import { advanceTarget, startTime, twoYearsAfter } from '../../actors/test-clocks/clock-rules.ts';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
};
const frozen = new Date('2028-02-29T12:00:00Z');

test('an advance goes forward only, to a time or by seconds', (t) => {
  t.deepEqual(advanceTarget(frozen, { seconds: 90 }), new Date('2028-02-29T12:01:30Z'));
  t.deepEqual(advanceTarget(frozen, { to: '2028-03-01T09:00:00+01:00' }), new Date('2028-03-01T08:00:00Z'));
  t.is(refusal(() => advanceTarget(frozen, { seconds: 0 })), 'test_clock_not_forward');
  t.is(refusal(() => advanceTarget(frozen, { seconds: -1 })), 'test_clock_not_forward');
  t.is(refusal(() => advanceTarget(frozen, { to: '2028-02-29T11:59:59Z' })), 'test_clock_not_forward');
  t.is(refusal(() => advanceTarget(frozen, {})), 'parameter_missing');
  t.is(refusal(() => advanceTarget(frozen, { to: '2028-03-01T00:00:00Z', seconds: 5 })), 'parameter_missing');
  t.is(refusal(() => advanceTarget(frozen, { to: '2028-03-01' })), 'invalid_parameter');
});

test('at most two calendar years at a time (from 29 February, to 1 March two years on)', (t) => {
  t.deepEqual(twoYearsAfter(frozen), new Date('2030-03-01T12:00:00Z'));
  t.deepEqual(advanceTarget(frozen, { to: '2030-03-01T12:00:00Z' }), new Date('2030-03-01T12:00:00Z'));
  t.is(refusal(() => advanceTarget(frozen, { to: '2030-03-01T12:00:00.001Z' })), 'test_clock_advance_too_far');
  t.is(refusal(() => advanceTarget(frozen, { seconds: 2_147_483_647 })), 'test_clock_advance_too_far');
});

test("a new clock starts at now or at its frozen_time, within the years 2000 to 2099", (t) => {
  const now = new Date('2026-11-27T14:00:00Z');
  t.is(startTime(undefined, now), now);
  t.deepEqual(startTime('1999-12-31T23:59:59-01:00', now), new Date('2000-01-01T00:59:59Z'));
  t.is(refusal(() => startTime('1999-12-31T23:59:59Z', now)), 'invalid_parameter');
  t.is(refusal(() => startTime('2100-01-01T00:00:00Z', now)), 'invalid_parameter');
  t.is(refusal(() => startTime('tomorrow', now)), 'invalid_parameter');
});
