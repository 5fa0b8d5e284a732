import test from 'ava';
import { parseRfc3339 } from '../../actors/shared/rfc3339.ts';

/** Consent dates are evidence: read strictly, never rewritten (issue 20 §2). */

test('real RFC 3339 date-times with an offset are read as the instant they name', (t) => {
  const cases: [string, string][] = [
    ['2026-11-20T14:02:00Z', '2026-11-20T14:02:00.000Z'],
    ['2026-11-20T09:02:00-05:00', '2026-11-20T14:02:00.000Z'],
    ['2026-11-20T23:30:00+05:30', '2026-11-20T18:00:00.000Z'],
    ['2026-11-20t14:02:00z', '2026-11-20T14:02:00.000Z'],
    ['2026-11-20T14:02:00.123456789Z', '2026-11-20T14:02:00.123Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['2026-12-31T23:59:59-23:59', '2027-01-01T23:58:59.000Z'],
  ];
  for (const [text, iso] of cases) t.is(parseRfc3339(text)?.toISOString(), iso, text);
});

test('impossible or offset-less dates are refused, not rewritten', (t) => {
  for (const text of [
    '2026-02-30T10:00:00Z', // not March 2
    '2026-02-29T10:00:00Z', // 2026 is no leap year
    '2100-02-29T10:00:00Z', // nor is 2100
    '2026-04-31T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-00-10T10:00:00Z',
    '2026-01-00T10:00:00Z',
    '2026-01-02T24:00:00Z', // not the next day
    '2026-01-02T10:60:00Z',
    '2026-01-02T10:00:60Z', // leap seconds are refused
    '2026-01-02T10:00:00', // no offset: not taken as UTC
    '2026-01-02 10:00:00Z',
    '2026-01-02',
    '2026-01-02T10:00Z',
    '2026-01-02T10:00:00+24:00',
    '2026-01-02T10:00:00+05:60',
    '2026-01-02T10:00:00+0500',
    '+002026-01-02T10:00:00Z',
    'Fri, 02 Jan 2026 10:00:00 GMT',
    '',
  ]) {
    t.is(parseRfc3339(text), null, text);
  }
});
