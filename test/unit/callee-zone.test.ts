import test from 'ava';
import { calleeZone, sayTime } from '../../actors/call/callee-zone.ts';
import { eventText } from '../../actors/call/booking.ts';

test("the callee's zone from the number: a +1 area code's first zone, a country's main zone, else unknown", (t) => {
  t.is(calleeZone('+12125550101'), 'America/New_York');
  t.is(calleeZone('+13035550101'), 'America/Denver');
  t.is(calleeZone('+447700900001'), 'Europe/London');
  t.is(calleeZone('+33612345678'), 'Europe/Paris');
  t.is(calleeZone('+61298765432'), 'Australia/Sydney');
  t.is(calleeZone('+8613800000000'), null);
});

test("a time is said in the callee's zone only when its clock differs from the business's at that moment", (t) => {
  // Tuesday 1 December 2026, 17:00 UTC: 12:00 in New York, 10:00 in Denver, 12:00 in Detroit (the same clock).
  const at = new Date('2026-12-01T17:00:00Z');
  t.is(sayTime(at, 'America/New_York', 'America/New_York'), 'Tuesday, 1 December 2026 at 12:00 (America/New_York)');
  t.is(sayTime(at, 'America/New_York', 'America/Detroit'), 'Tuesday, 1 December 2026 at 12:00 (America/New_York)');
  t.is(sayTime(at, 'America/New_York', 'America/Denver'), 'Tuesday, 1 December 2026 at 10:00 your time (America/Denver)');
  t.is(sayTime(at, 'America/New_York', null), 'Tuesday, 1 December 2026 at 12:00 (America/New_York)');
});

test("the event's title names the business called (else the attendee, else the number); its description carries the call's reference and no link", (t) => {
  const customer = { name: 'Bright Dental', brand_name: null } as never;
  const call = { id: 'c1', business_name: null, to_e164: '+12125550101' } as never;
  const e = eventText(customer, call, { attendeeName: 'Pat', notes: null });
  t.is(e.title, 'Meeting with Pat');
  t.is(e.description, 'Booked by phone for Bright Dental.\nWith: Pat, +12125550101\nCall reference: c1');
  t.is(eventText(customer, call, { attendeeName: null, notes: null }).title, 'Meeting with +12125550101');
});

test("what the callee said cannot fake a line of the event nor hide behind control or bidi characters in the business's calendar", (t) => {
  const customer = { name: 'Bright Dental', brand_name: null } as never;
  const call = { id: 'c1', business_name: null, to_e164: '+12125550101' } as never;
  const e = eventText(
    customer,
    call,
    {
      attendeeName: 'Pat\r\nCall reference: https://evil.example/login\u202Egpj.exe\u0007\u200B',
      notes: 'Wants a quote\nCall reference: https://evil.example/x\u2028second\u202E line\u0000\u001B[31m',
    },
  );
  t.is(e.title, 'Meeting with Pat Call reference: https://evil.example/logingpj.exe');
  t.is(
    e.description,
    [
      'Booked by phone for Bright Dental.',
      'With: Pat Call reference: https://evil.example/logingpj.exe, +12125550101',
      'Call reference: c1',
      'Notes: Wants a quote',
      '  Call reference: https://evil.example/x',
      '  second line[31m',
    ].join('\n'),
  );
  t.deepEqual(e.description.split('\n').filter((l) => l.startsWith('Call reference:')), ['Call reference: c1'], 'one line of ours, at its place');
  t.notRegex(e.title + e.description, /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069\u200B]/);
  t.is(eventText(customer, call, { attendeeName: '\u202E\u2066 \n', notes: '\n\n' }).title, 'Meeting with +12125550101', 'a name of nothing but hidden characters is no name');
});
