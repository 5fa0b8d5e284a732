import test from 'ava';
import { busyIntervals, eventToICalendar, readBudget, ReadBudgetExceeded, readEvent, readFreeBusy } from '../../calendars/caldav/ical-event.ts';

/** The iCalendar of the CalDAV adapter (calendars/caldav/ical-event.ts): what Radicale cannot show (it has no free-busy-query). */

const span = (i: { start: Date; end: Date }) => [i.start.toISOString(), i.end.toISOString()];

test('readFreeBusy reads the busy periods of a VFREEBUSY answer (RFC 4791 §7.10), skipping FBTYPE=FREE, with DURATION periods', (t) => {
  const ics = [
    'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Example Corp.//CalDAV Server//EN',
    'BEGIN:VFREEBUSY', 'DTSTAMP:20060206T001210Z', 'DTSTART:20060104T140000Z', 'DTEND:20060105T220000Z',
    'FREEBUSY;FBTYPE=BUSY-TENTATIVE:20060104T150000Z/PT1H',
    'FREEBUSY:20060104T190000Z/20060104T200000Z,20060105T170000Z/20060105T180000Z',
    'FREEBUSY;FBTYPE=FREE:20060105T090000Z/PT2H',
    'FREEBUSY;FBTYPE=BUSY-UNAVAILABLE:20060105T200000Z/PT30M',
    'END:VFREEBUSY', 'END:VCALENDAR', '',
  ].join('\r\n');
  t.deepEqual(readFreeBusy(ics).map(span), [
    ['2006-01-04T15:00:00.000Z', '2006-01-04T16:00:00.000Z'],
    ['2006-01-04T19:00:00.000Z', '2006-01-04T20:00:00.000Z'],
    ['2006-01-05T17:00:00.000Z', '2006-01-05T18:00:00.000Z'],
    ['2006-01-05T20:00:00.000Z', '2006-01-05T20:30:00.000Z'],
  ]);
});

test('a meeting written is read back with its uid and times, opaque and confirmed; busyIntervals clips nothing inside the range', (t) => {
  const ics = eventToICalendar({
    uid: 'appt-1',
    start: new Date('2031-04-01T15:00:00Z'),
    end: new Date('2031-04-01T15:30:00Z'),
    timezone: 'Europe/London',
    title: 'Meeting with Ana',
    description: 'Called: Lopez Plumbing; notes, with a comma',
  });
  t.regex(ics, /DTSTART:20310401T150000Z/);
  t.regex(ics, /TRANSP:OPAQUE/);
  t.regex(ics, /DESCRIPTION:Called: Lopez Plumbing\\; notes\\, with a comma/);
  t.like(readEvent(ics), { uid: 'appt-1', transparent: false, cancelled: false });
  t.deepEqual(busyIntervals(ics, new Date('2031-04-01T00:00:00Z'), new Date('2031-04-02T00:00:00Z')).map(span), [
    ['2031-04-01T15:00:00.000Z', '2031-04-01T15:30:00.000Z'],
  ]);
  t.deepEqual(busyIntervals(ics, new Date('2031-04-02T00:00:00Z'), new Date('2031-04-03T00:00:00Z')), []);
});

test('an event in a zone of its own VTIMEZONE is read at its real instant', (t) => {
  const ics = [
    'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN',
    'BEGIN:VTIMEZONE', 'TZID:America/New_York',
    'BEGIN:DAYLIGHT', 'TZOFFSETFROM:-0500', 'TZOFFSETTO:-0400', 'DTSTART:20070311T020000', 'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU', 'END:DAYLIGHT',
    'BEGIN:STANDARD', 'TZOFFSETFROM:-0400', 'TZOFFSETTO:-0500', 'DTSTART:20071104T020000', 'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU', 'END:STANDARD',
    'END:VTIMEZONE',
    'BEGIN:VEVENT', 'UID:ny', 'DTSTAMP:20310101T000000Z', 'DTSTART;TZID=America/New_York:20310707T090000', 'DTEND;TZID=America/New_York:20310707T100000', 'END:VEVENT',
    'END:VCALENDAR', '',
  ].join('\r\n');
  t.deepEqual(busyIntervals(ics, new Date('2031-07-07T00:00:00Z'), new Date('2031-07-08T00:00:00Z')).map(span), [
    ['2031-07-07T13:00:00.000Z', '2031-07-07T14:00:00.000Z'],
  ]);
});

// ---- hostile calendar objects: a business's calendar may hold anything another app wrote ----------

const calendarOf = (...vevents: string[][]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//x//EN', ...vevents.flatMap((v) => ['BEGIN:VEVENT', 'DTSTAMP:20300101T000000Z', ...v, 'END:VEVENT']), 'END:VCALENDAR', ''].join('\r\n');
const JAN = [new Date('2031-01-01T00:00:00Z'), new Date('2031-02-01T00:00:00Z')] as const;

test('an unreadable event is skipped, never thrown: the other events of the object still count; readEvent says unreadable (not deleted)', (t) => {
  const ics = calendarOf(['UID:bad', 'DTSTART:notadate', 'DTEND:20310105T100000Z'], ['UID:good', 'DTSTART:20310105T090000Z', 'DTEND:20310105T100000Z']);
  t.deepEqual(busyIntervals(ics, ...JAN).map(span), [['2031-01-05T09:00:00.000Z', '2031-01-05T10:00:00.000Z']]);
  t.is(readEvent(calendarOf(['UID:bad', 'DTSTART:notadate'])), 'unreadable');
  t.is(readEvent('not iCalendar at all'), 'unreadable');
  t.is(readEvent(calendarOf()), null, 'no event at all');
});

test('a DURATION of centuries or an end before the start takes no time and costs none; readEvent never gives an inverted or invalid time', (t) => {
  const started = Date.now();
  const long = calendarOf(['UID:long', 'DTSTART:20310101T000000Z', 'DURATION:P99999999W']);
  t.deepEqual(busyIntervals(long, ...JAN), []);
  t.like(readEvent(long) as object, { start: new Date('2031-01-01T00:00:00Z'), end: new Date('2031-01-01T00:00:00Z') });
  t.true(Date.now() - started < 300, `read in ${Date.now() - started} ms`);
  const inverted = calendarOf(['UID:inv', 'DTSTART:20310105T100000Z', 'DTEND:20310105T090000Z']);
  t.deepEqual(busyIntervals(inverted, ...JAN), []);
  const e = readEvent(inverted) as { start: Date; end: Date };
  t.true(e.end >= e.start);
});

test('many endless series share one budget: reading stops in bounded time with ReadBudgetExceeded instead of holding the event loop', (t) => {
  const series = calendarOf(['UID:s', 'DTSTART:19700101T000000Z', 'DTEND:19700101T000001Z', 'RRULE:FREQ=SECONDLY']);
  const budget = readBudget();
  const started = Date.now();
  t.throws(() => {
    for (let i = 0; i < 200; i++) busyIntervals(series, ...JAN, budget);
  }, { instanceOf: ReadBudgetExceeded });
  t.true(Date.now() - started < 4_000, `stopped after ${Date.now() - started} ms`);
});
