/**
 * Scheduler rules (frequency caps, admission) that the mutation run (docs/decisions.md, "Mutation
 * testing") found no deterministic test for. Each test names the statute's count and period.
 */
import test from 'ava';
import { checkCaps, type PastAttempt } from '../../actors/scheduler/frequency-caps.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const T0 = new Date('2027-03-02T15:00:00Z');
const plus = (d: Date, ms: number): Date => new Date(d.getTime() + ms);
const attempt = (agoMs: number, outcome = 'no_answer'): PastAttempt => ({ at: plus(T0, -agoMs), outcome, endedAt: plus(T0, -agoMs + 60_000) });

test('France, four attempts per 30 calendar days (D223-9, 31 rolling days): the oldest attempt frees the number, in whatever order the attempts come', (t) => {
  const paris = '+33142000000';
  // Attempts 1, 5, 10 and 25 days ago, newest first: the one 25 days ago leaves the 31-day window in 6 days.
  const newestFirst = [1, 5, 10, 25].map((d) => attempt(d * DAY_MS));
  t.like(checkCaps(paris, 'FR', newestFirst, T0), { allowed: false, until: plus(T0, 6 * DAY_MS), rule: { id: 'FR', kind: 'count' } });
  const shuffled = [10, 1, 25, 5].map((d) => attempt(d * DAY_MS));
  t.like(checkCaps(paris, 'FR', shuffled, T0), { allowed: false, until: plus(T0, 6 * DAY_MS) });
});

test('Florida, three calls per 24 hours (Fla. Stat. § 501.616(6)(b)): newest-first history, the fourth waits until the oldest of the three is 24 hours old', (t) => {
  const miami = '+13055550123';
  const newestFirst = [1, 2, 23].map((h) => attempt(h * HOUR_MS));
  t.like(checkCaps(miami, 'US', newestFirst, T0), { allowed: false, until: plus(T0, HOUR_MS), rule: { id: 'US-FL' } });
  t.deepEqual(checkCaps(miami, 'US', newestFirst, plus(T0, HOUR_MS)), { allowed: true });
});
