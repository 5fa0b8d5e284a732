import test from 'ava';
import { decideRetry, RETRYABLE_OUTCOMES } from '../../actors/scheduler/retry-rules.ts';
import { retryPolicyOf, type RetryFacts } from '../../actors/call/retries.ts';

/** When a request tries again (issue 23 §4; docs/api.md "Calls", "Retries"), pure. */

const at = (iso: string) => new Date(iso);
// Washington D.C. (America/New_York, EST in January): Tuesday 5 January 2027, 09:00 there.
const FIRST = at('2027-01-05T14:00:00Z');
const facts = (over: Partial<RetryFacts> = {}): RetryFacts => ({
  outcome: 'no_answer',
  attempt: 1,
  policy: { max_attempts: 3, min_gap_hours: 4 },
  endedAt: FIRST,
  attemptTimes: [FIRST],
  to: '+12025550102',
  toCountry: 'US',
  dialBefore: at('2027-01-12T14:00:00Z'),
  doNotCall: false,
  ...over,
});

test('retried after no answer, busy, a machine or a carrier failure; never after an outcome that settles the request', (t) => {
  t.deepEqual([...RETRYABLE_OUTCOMES].sort(), ['busy', 'failed', 'no_answer', 'voicemail']);
  for (const outcome of RETRYABLE_OUTCOMES) t.true(decideRetry(facts({ outcome })).retry, outcome);
  for (const outcome of ['do_not_call', 'not_interested', 'appointment_booked', 'completed', 'time_limit', 'call_back_later', 'fax', 'cancelled', null]) {
    t.deepEqual(decideRetry(facts({ outcome })), { retry: false, reason: 'outcome_final' }, String(outcome));
  }
});

test('max_attempts counts every call of the request; a listed number is not retried', (t) => {
  t.deepEqual(decideRetry(facts({ policy: { max_attempts: 1, min_gap_hours: 4 } })), { retry: false, reason: 'attempts_used' });
  t.deepEqual(decideRetry(facts({ attempt: 3 })), { retry: false, reason: 'attempts_used' });
  t.true(decideRetry(facts({ attempt: 2 })).retry);
  t.deepEqual(decideRetry(facts({ doNotCall: true })), { retry: false, reason: 'do_not_call_listed' });
});

test('min_gap_hours after the end, when the window is open and the time of day is 2 hours from every earlier attempt', (t) => {
  // 09:00 + 4 h = 13:00 in New York: open, 4 hours from 09:00.
  t.deepEqual(decideRetry(facts()), { retry: true, at: at('2027-01-05T18:00:00Z') });
  t.deepEqual(decideRetry(facts({ policy: { max_attempts: 3, min_gap_hours: 6 } })), { retry: true, at: at('2027-01-05T20:00:00Z') });
  // An attempt ended at 18:00: 22:00 is closed; the window opens at 08:00, an hour from the first
  // attempt's 09:00, so the next is 11:00 (2 hours from 09:00, 7 from 18:00).
  const second = at('2027-01-05T23:00:00Z');
  t.deepEqual(decideRetry(facts({ attempt: 2, endedAt: second, attemptTimes: [FIRST, second] })), { retry: true, at: at('2027-01-06T16:00:00Z') });
});

test('never after the request’s dial_before', (t) => {
  t.deepEqual(decideRetry(facts({ dialBefore: at('2027-01-05T18:00:00Z') })), { retry: false, reason: 'past_deadline' });
  t.true(decideRetry(facts({ dialBefore: at('2027-01-05T18:00:01Z') })).retry);
});

test('the called number’s window and zone: a French number ending on a Friday evening is retried on Monday morning', (t) => {
  // Friday 8 January 2027, 17:00 in Paris; 21:00 is closed, the weekend too.
  const friday = at('2027-01-08T16:00:00Z');
  t.deepEqual(decideRetry(facts({ to: '+33612345672', toCountry: 'FR', endedAt: friday, attemptTimes: [friday] })), { retry: true, at: at('2027-01-11T09:00:00Z') });
});

test("the policy is the customer's call_settings.retries over the defaults (3 calls, 4 hours), inside the bounds (1–5, 2–72)", (t) => {
  t.deepEqual(retryPolicyOf({}), { max_attempts: 3, min_gap_hours: 4 });
  t.deepEqual(retryPolicyOf({ retries: { max_attempts: 1 } }), { max_attempts: 1, min_gap_hours: 4 });
  t.deepEqual(retryPolicyOf({ retries: { max_attempts: 5, min_gap_hours: 72 } }), { max_attempts: 5, min_gap_hours: 72 });
  t.deepEqual(retryPolicyOf({ retries: { max_attempts: 9, min_gap_hours: 1 } }), { max_attempts: 5, min_gap_hours: 2 });
  t.deepEqual(retryPolicyOf({ retries: { max_attempts: 0, min_gap_hours: 100 } }), { max_attempts: 1, min_gap_hours: 72 });
  t.deepEqual(retryPolicyOf({ retries: { max_attempts: 'x' } }), { max_attempts: 3, min_gap_hours: 4 });
});
