import test from 'ava';
import { freeSlots, slotProblem } from '../../actors/call/free-slots.ts';
import { DEFAULT_BOOKING_SETTINGS, bookingSettingsOf, mergeBookingSettings, type BookingSettings } from '../../actors/customer/booking-settings.ts';
import { Refusal } from '../../runtime/refusal.ts';

const NY = 'America/New_York';
const at = (iso: string) => new Date(iso);
const iv = (start: string, end: string) => ({ start: at(start), end: at(end) });
const starts = (slots: { start: Date }[]) => slots.map((s) => s.start.toISOString());
/** Monday 30 November 2026, 08:00 in New York (EST, UTC−5). */
const MONDAY_8AM = at('2026-11-30T13:00:00Z');

function slots(over: Partial<Parameters<typeof freeSlots>[0]> = {}, settings: BookingSettings = DEFAULT_BOOKING_SETTINGS) {
  return freeSlots({ now: MONDAY_8AM, settings, timezone: NY, busy: [], booked: [], limit: 3, ...over });
}

test('the defaults: Monday to Friday 09:00–17:00, 30-minute meetings, a 15-minute buffer, 2 hours of notice, 30 days ahead', (t) => {
  t.deepEqual(DEFAULT_BOOKING_SETTINGS, {
    business_hours: {
      mon: [{ start: '09:00', end: '17:00' }],
      tue: [{ start: '09:00', end: '17:00' }],
      wed: [{ start: '09:00', end: '17:00' }],
      thu: [{ start: '09:00', end: '17:00' }],
      fri: [{ start: '09:00', end: '17:00' }],
      sat: [],
      sun: [],
    },
    meeting_minutes: 30,
    buffer_minutes: 15,
    min_notice_minutes: 120,
    max_days_ahead: 30,
  });
  t.deepEqual(bookingSettingsOf({ booking_settings: null }), DEFAULT_BOOKING_SETTINGS);
});

test('at 08:00 with 2 hours of notice the first slots are 10:00, 10:30 and 11:00 local, 30 minutes each', (t) => {
  const found = slots();
  t.deepEqual(starts(found), ['2026-11-30T15:00:00.000Z', '2026-11-30T15:30:00.000Z', '2026-11-30T16:00:00.000Z']);
  t.is(found[0].end.toISOString(), '2026-11-30T15:30:00.000Z');
});

test('a busy 10:00–11:00 with the 15-minute buffer leaves 11:30 as the first slot (11:00 would touch the buffer)', (t) => {
  t.deepEqual(starts(slots({ busy: [iv('2026-11-30T15:00:00Z', '2026-11-30T16:00:00Z')], limit: 1 })), ['2026-11-30T16:30:00.000Z']);
});

test('a booked 10:00–10:30 meeting is widened by the buffer too: 10:30 and 10:45 are not offered, 11:00 is', (t) => {
  t.deepEqual(starts(slots({ booked: [iv('2026-11-30T15:00:00Z', '2026-11-30T15:30:00Z')], limit: 1 })), ['2026-11-30T16:00:00.000Z']);
});

test('late on Friday the next slot is Monday 09:00: the weekend is closed', (t) => {
  // Friday 4 December 2026, 15:00 local: 17:00 is the end of the day.
  t.deepEqual(starts(slots({ now: at('2026-12-04T20:00:00Z'), limit: 1 })), ['2026-12-07T14:00:00.000Z']);
});

test('the last slot of a day ends at 17:00, and none starts after the 30-day horizon', (t) => {
  const all = slots({ limit: 10_000 });
  t.true(starts(all).includes('2026-11-30T21:30:00.000Z'), '16:30 local is offered');
  t.false(starts(all).includes('2026-11-30T22:00:00.000Z'), '17:00 local is not');
  t.is(all[all.length - 1].start.toISOString(), '2026-12-29T21:30:00.000Z', 'Tuesday 29 December 16:30, the last weekday slot before 30 December 08:00');
  t.true(all.every((s) => s.start.getTime() <= at('2026-12-30T13:00:00Z').getTime()));
});

test('a meeting shorter than 30 minutes sets the grid: 20-minute meetings start 10:00, 10:20, 10:40', (t) => {
  const settings = { ...DEFAULT_BOOKING_SETTINGS, meeting_minutes: 20 };
  t.deepEqual(starts(slots({}, settings)), ['2026-11-30T15:00:00.000Z', '2026-11-30T15:20:00.000Z', '2026-11-30T15:40:00.000Z']);
});

test('afternoon slots start at 12:00 local or later; morning ones before 12:00; after= moves the search on', (t) => {
  t.deepEqual(starts(slots({ partOfDay: 'afternoon', limit: 1 })), ['2026-11-30T17:00:00.000Z']);
  t.deepEqual(starts(slots({ partOfDay: 'morning', after: at('2026-11-30T17:00:00Z'), limit: 1 })), ['2026-12-01T14:00:00.000Z']);
});

test('business hours are read on the customer clock across a daylight-saving change', (t) => {
  // Europe/London leaves summer time on Sunday 25 October 2026: 09:00 is 08:00Z before, 09:00Z after.
  const before = freeSlots({ now: at('2026-10-23T05:00:00Z'), settings: DEFAULT_BOOKING_SETTINGS, timezone: 'Europe/London', busy: [], booked: [], limit: 1 });
  t.deepEqual(starts(before), ['2026-10-23T08:00:00.000Z']);
  const after = freeSlots({ now: at('2026-10-23T17:00:00Z'), settings: DEFAULT_BOOKING_SETTINGS, timezone: 'Europe/London', busy: [], booked: [], limit: 1 });
  t.deepEqual(starts(after), ['2026-10-26T09:00:00.000Z']);
});

test('a requested start is checked: too soon, outside the hours, past the horizon, taken, or free', (t) => {
  const base = { now: MONDAY_8AM, settings: DEFAULT_BOOKING_SETTINGS, timezone: NY, busy: [], booked: [] };
  t.is(slotProblem({ ...base, start: at('2026-11-30T14:30:00Z') }), 'too_soon', '09:30 is less than 2 hours away');
  t.is(slotProblem({ ...base, start: at('2026-12-05T15:00:00Z') }), 'outside_hours', 'Saturday');
  t.is(slotProblem({ ...base, start: at('2026-11-30T21:45:00Z') }), 'outside_hours', '16:45 would end at 17:15');
  t.is(slotProblem({ ...base, start: at('2027-01-04T15:00:00Z') }), 'too_far');
  t.is(slotProblem({ ...base, start: at('2026-11-30T16:00:00Z'), busy: [iv('2026-11-30T16:30:00Z', '2026-11-30T17:00:00Z')] }), 'taken', '11:00–11:30 is within 15 minutes of 11:30');
  t.is(slotProblem({ ...base, start: at('2026-11-30T16:15:00Z') }), null, '11:15 is off the grid but within the hours');
});

test('booking settings: a patch merges into the settings in force; null resets', (t) => {
  const stored = mergeBookingSettings(null, { meeting_minutes: 45, business_hours: { sat: [{ start: '10:00', end: '12:00' }] } })!;
  t.is(stored.meeting_minutes, 45);
  t.deepEqual(stored.business_hours.sat, [{ start: '10:00', end: '12:00' }]);
  t.deepEqual(stored.business_hours.mon, [{ start: '09:00', end: '17:00' }]);
  const next = mergeBookingSettings(stored, { meeting_minutes: null, business_hours: { sat: null } })!;
  t.is(next.meeting_minutes, 30);
  t.deepEqual(next.business_hours.sat, []);
  t.is(mergeBookingSettings(stored, null), null);
  t.is(mergeBookingSettings(null, undefined), null);
});

test('booking settings: times are HH:MM, a start comes before its end, spans do not overlap, numbers keep their bounds', (t) => {
  const refused = (patch: object) => t.throws(() => mergeBookingSettings(null, patch as never), { instanceOf: Refusal }) as Refusal;
  t.like(refused({ business_hours: { mon: [{ start: '9:00', end: '17:00' }] } }), { code: 'invalid_parameter', explanation: 'booking.business_hours.mon times are HH:MM, 00:00 to 24:00.' });
  t.like(refused({ business_hours: { mon: [{ start: '17:00', end: '09:00' }] } }), { explanation: 'booking.business_hours.mon 17:00–09:00: the start must be before the end.' });
  t.like(refused({ business_hours: { tue: [{ start: '09:00', end: '12:30' }, { start: '12:00', end: '17:00' }] } }), { explanation: 'booking.business_hours.tue spans must not overlap.' });
  t.like(refused({ meeting_minutes: 5 }), { explanation: 'booking.meeting_minutes must be a whole number from 10 to 240.' });
  t.like(refused({ buffer_minutes: 121 }), { explanation: 'booking.buffer_minutes must be a whole number from 0 to 120.' });
  t.like(refused({ max_days_ahead: 0 }), { explanation: 'booking.max_days_ahead must be a whole number from 1 to 365.' });
  t.like(refused({ business_hours: { someday: [] } }), { code: 'invalid_parameter' });
  t.deepEqual(mergeBookingSettings(null, { business_hours: { wed: [{ start: '13:00', end: '17:00' }, { start: '08:00', end: '12:00' }] } })!.business_hours.wed.length, 2);
});
