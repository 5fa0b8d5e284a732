/**
 * The renewal calendar (money/rules/renewal.ts): a number's rent renews on the same day each
 * month (the anchor), the last day of a shorter month without drifting, warned three days ahead
 * and released fourteen days after an unpaid renewal.
 */
import test from 'ava';
import fc from 'fast-check';
import { addDays, dayOf, inNoticeWindow, nextRenewal, reached, releaseDueOn, RELEASE_COUNTDOWN_DAYS, RENEWAL_NOTICE_DAYS } from '../../money/rules/renewal.ts';

/** The renewals from `start`, `n` of them, each from the one before (as renewOne walks them). */
function chain(start: string, anchorDay: number, n: number): string[] {
  const out: string[] = [];
  let day = start;
  for (let i = 0; i < n; i++) out.push((day = nextRenewal(day, anchorDay)));
  return out;
}

test('the rules of issue 14: warned 3 days ahead, released 14 days after', (t) => {
  t.is(RENEWAL_NOTICE_DAYS, 3);
  t.is(RELEASE_COUNTDOWN_DAYS, 14);
});

test('dayOf: the UTC calendar day of an instant, whatever the local offset said', (t) => {
  t.is(dayOf(new Date('2027-03-15T23:59:59.999Z')), '2027-03-15');
  t.is(dayOf(new Date('2027-03-16T00:00:00Z')), '2027-03-16');
  t.is(dayOf(new Date('2027-03-15T23:30:00-05:00')), '2027-03-16', 'late evening in New York is already tomorrow in UTC');
});

test('nextRenewal: the same day next month', (t) => {
  t.is(nextRenewal('2027-03-15', 15), '2027-04-15');
  t.is(nextRenewal('2027-01-01', 1), '2027-02-01');
  t.is(nextRenewal('2027-04-30', 30), '2027-05-30');
});

test('nextRenewal: rented on 31 January, renews on the last day of February, then back on 31 March (the anchor is kept)', (t) => {
  t.deepEqual(chain('2027-01-31', 31, 6), ['2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31', '2027-06-30', '2027-07-31']);
  t.deepEqual(chain('2028-01-31', 31, 2), ['2028-02-29', '2028-03-31'], 'a leap year has its 29 February');
  t.deepEqual(chain('2027-01-30', 30, 2), ['2027-02-28', '2027-03-30']);
  t.deepEqual(chain('2027-01-29', 29, 2), ['2027-02-28', '2027-03-29'], 'the 29th in a common year falls on the 28th');
  t.deepEqual(chain('2028-01-29', 29, 2), ['2028-02-29', '2028-03-29']);
});

test('nextRenewal: December renews in January of the next year', (t) => {
  t.is(nextRenewal('2026-12-31', 31), '2027-01-31');
  t.is(nextRenewal('2026-12-01', 1), '2027-01-01');
  t.deepEqual(chain('2026-11-30', 30, 3), ['2026-12-30', '2027-01-30', '2027-02-28']);
});

test('nextRenewal: leap years by the Gregorian rule (2000 and 2024 are, 2100 is not)', (t) => {
  t.is(nextRenewal('2024-01-31', 31), '2024-02-29');
  t.is(nextRenewal('2000-01-31', 31), '2000-02-29');
  t.is(nextRenewal('2100-01-31', 31), '2100-02-28');
  t.is(nextRenewal('2025-01-31', 31), '2025-02-28');
});

test('nextRenewal: from a clamped day the anchor, not the day, decides (28 Feb with anchor 28 stays on the 28th)', (t) => {
  t.is(nextRenewal('2027-02-28', 28), '2027-03-28');
  t.is(nextRenewal('2027-02-28', 31), '2027-03-31');
});

test('addDays: across month and year ends, in leap and common years, and backwards', (t) => {
  t.is(addDays('2027-01-31', 1), '2027-02-01');
  t.is(addDays('2026-12-31', 1), '2027-01-01');
  t.is(addDays('2027-01-01', -1), '2026-12-31');
  t.is(addDays('2028-02-28', 1), '2028-02-29');
  t.is(addDays('2027-02-28', 1), '2027-03-01');
  t.is(addDays('2028-03-01', -1), '2028-02-29');
  t.is(addDays('2027-03-15', 0), '2027-03-15');
  t.is(addDays('2027-12-20', 14), '2028-01-03');
  t.is(addDays('2027-03-03', -RENEWAL_NOTICE_DAYS), '2027-02-28');
});

test('inNoticeWindow: opens exactly 3 days before the renewal and closes on the renewal day', (t) => {
  const renewsOn = '2027-03-02';
  t.false(inNoticeWindow('2027-02-26', renewsOn), '4 days before: not yet');
  t.true(inNoticeWindow('2027-02-27', renewsOn), '3 days before (across the end of February): opened');
  t.true(inNoticeWindow('2027-03-01', renewsOn), 'the day before');
  t.false(inNoticeWindow('2027-03-02', renewsOn), 'the renewal day itself is the renewal, not its notice');
  t.false(inNoticeWindow('2027-03-05', renewsOn), 'after the renewal');
  t.true(inNoticeWindow('2026-12-29', '2027-01-01'), 'across the year end');
  t.false(inNoticeWindow('2026-12-28', '2027-01-01'));
});

test('reached: on or after the day', (t) => {
  t.false(reached('2027-03-01', '2027-03-02'));
  t.true(reached('2027-03-02', '2027-03-02'));
  t.true(reached('2027-04-01', '2027-03-02'));
  t.true(reached('2028-01-01', '2027-12-31'));
});

test('releaseDueOn: 14 days after the unpaid renewal, across month and year ends', (t) => {
  t.is(releaseDueOn('2027-03-15'), '2027-03-29');
  t.is(releaseDueOn('2027-02-20'), '2027-03-06');
  t.is(releaseDueOn('2028-02-20'), '2028-03-05', 'the leap day counts');
  t.is(releaseDueOn('2026-12-25'), '2027-01-08');
});

const day = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map(dayOf);
const anchor = fc.integer({ min: 1, max: 31 });

test('property: a renewal is in the next calendar month, on the anchor or that month\'s last day, and the anchor never drifts', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(day, anchor, fc.integer({ min: 1, max: 30 }), (start, a, n) => {
        let prev = start;
        for (const next of chain(start, a, n)) {
          const [py, pm] = prev.split('-').map(Number);
          const [ny, nm, nd] = next.split('-').map(Number);
          if (ny * 12 + nm !== py * 12 + pm + 1) return false;
          const lastDay = new Date(Date.UTC(ny, nm, 0)).getUTCDate();
          if (nd !== Math.min(a, lastDay)) return false;
          if (next <= prev) return false;
          prev = next;
        }
        return true;
      }),
    ),
  );
});

test('property: addDays moves by whole days, is undone by its negative, and agrees with the notice window and countdown', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(day, fc.integer({ min: -400, max: 400 }), (d, n) => {
        const moved = addDays(d, n);
        if (addDays(moved, -n) !== d) return false;
        const ms = Date.parse(`${moved}T00:00:00Z`) - Date.parse(`${d}T00:00:00Z`);
        if (ms !== n * 86_400_000) return false;
        if (releaseDueOn(d) !== addDays(d, RELEASE_COUNTDOWN_DAYS)) return false;
        // Exactly RENEWAL_NOTICE_DAYS days of a renewal are its notice window.
        let open = 0;
        for (let k = -10; k <= 10; k++) if (inNoticeWindow(addDays(d, k), d)) open++;
        return open === RENEWAL_NOTICE_DAYS;
      }),
    ),
  );
});
