import test from 'ava';
import fc from 'fast-check';
import {
  ATTENDEE_NAME_MAX,
  DEFAULT_DNC_REASON,
  DNC_REASON_MAX,
  END_REASON_MAX,
  NOTES_MAX,
  readToolCall,
  searchStartIn,
  type ToolCall,
  type ToolDecision,
} from '../../actors/call/tool-args.ts';
import { isStorableText } from '../../http/plugins/storable-text.ts';
import { BOOKING_ARGS } from '../fakes/openai-realtime.ts';
import { freeSlots } from '../../actors/call/free-slots.ts';
import { DEFAULT_BOOKING_SETTINGS } from '../../actors/customer/booking-settings.ts';

const NOW = new Date('2029-06-15T15:00:00Z');
const MINUTE_MS = 60_000;
const REFUSED = { reply: { booked: false, error: 'start_at must be a future date and time with its offset' } };

const act = (d: ToolDecision): ToolCall => {
  if (!('act' in d)) throw new Error(`expected an action, got ${JSON.stringify(d)}`);
  return d.act;
};
const book = (args: Record<string, unknown>) => readToolCall('book_appointment', { start_at: '2030-01-07T10:00:00Z', ...args }, NOW);

// ---- examples ----------------------------------------------------------------------------------

test('book_appointment: the agent’s booking as sent', (t) => {
  t.deepEqual(act(readToolCall('book_appointment', BOOKING_ARGS, NOW)), {
    tool: 'book_appointment',
    startAt: new Date(BOOKING_ARGS.start_at),
    endAt: new Date(new Date(BOOKING_ARGS.start_at).getTime() + BOOKING_ARGS.duration_minutes * MINUTE_MS),
    attendeeName: BOOKING_ARGS.attendee_name,
    notes: BOOKING_ARGS.notes,
  });
});

test('book_appointment: a start that is missing, not a string, unparseable, past or now is refused with the same reply', (t) => {
  for (const start_at of [undefined, null, '', 'next tuesday at ten', 'NaN', '2029-06-15T15:00:00Z', '2020-01-01T00:00:00Z', 1_900_000_000_000, {}, ['2030-01-07T10:00:00Z']]) {
    t.deepEqual(readToolCall('book_appointment', { start_at }, NOW), REFUSED, JSON.stringify(start_at));
  }
  t.deepEqual(readToolCall('book_appointment', { start_at: '2029-06-15T15:00:00.001Z' }, NOW).hasOwnProperty('act'), true, 'a millisecond ahead is the future');
});

test('book_appointment: a start without its offset is refused (it would be read on the server’s own clock); with Z or ±HH:MM it is that instant', (t) => {
  for (const start_at of ['2030-01-07T10:00:00', '2030-01-07T10:00', '2030-01-07', '2030-01-07 10:00']) t.deepEqual(book({ start_at }), REFUSED, start_at);
  t.like(act(book({ start_at: '2030-01-07T10:00:00+13:00' })), { startAt: new Date('2030-01-06T21:00:00Z') });
  t.like(act(book({ start_at: '2030-01-07T10:00:00-0800' })), { startAt: new Date('2030-01-07T18:00:00Z') });
  t.like(act(book({ start_at: '2030-01-07T10:00:00z' })), { startAt: new Date('2030-01-07T10:00:00Z') });
});

test('book_appointment: a start whose end no Date can hold is refused, never written as an invalid date', (t) => {
  t.deepEqual(book({ start_at: '+275760-09-13T00:00:00.000Z' }), REFUSED);
  t.like(act(book({ start_at: '+275760-09-12T22:00:00.000Z', duration_minutes: 120 })), { endAt: new Date(8.64e15) });
});

test('book_appointment: duration_minutes is a whole number held to 10..120, else 30', (t) => {
  const minutes = (duration_minutes: unknown) => {
    const a = act(book({ duration_minutes })) as ToolCall & { tool: 'book_appointment' };
    return (a.endAt.getTime() - a.startAt.getTime()) / MINUTE_MS;
  };
  for (const [given, expected] of [
    [45, 45], [10, 10], [120, 120], [9, 10], [0, 10], [-5, 10], [121, 120], [1e9, 120],
    [undefined, 30], [null, 30], ['45', 30], [45.5, 30], [NaN, 30], [Infinity, 30], [-Infinity, 30], [true, 30], [[45], 30], [{}, 30],
  ] as [unknown, number][]) {
    t.is(minutes(given), expected, String(given));
  }
});

test('book_appointment: attendee name and notes cut to 200 and 2000, null unless a string', (t) => {
  t.like(act(book({ attendee_name: 'x'.repeat(250), notes: 'y'.repeat(2500) })), { attendeeName: 'x'.repeat(ATTENDEE_NAME_MAX), notes: 'y'.repeat(NOTES_MAX) });
  t.like(act(book({ attendee_name: 42, notes: { text: 'hi' } })), { attendeeName: null, notes: null });
  t.like(act(book({ attendee_name: '', notes: '' })), { attendeeName: '', notes: '' }, 'an empty string stays empty');
});

test('text PostgreSQL cannot store is made storable: NUL dropped, an unpaired surrogate (or a pair cut in half) as U+FFFD', (t) => {
  t.like(act(book({ attendee_name: 'Pat\u0000 Example', notes: 'a\uD800b' })), { attendeeName: 'Pat Example', notes: 'a\uFFFDb' });
  t.like(act(book({ attendee_name: 'x'.repeat(ATTENDEE_NAME_MAX - 1) + '😀' })), { attendeeName: 'x'.repeat(ATTENDEE_NAME_MAX - 1) + '\uFFFD' });
  t.like(act(book({ attendee_name: '😀 Pat' })), { attendeeName: '😀 Pat' }, 'a whole pair is kept');
  t.deepEqual(act(readToolCall('mark_do_not_call', { reason: 'stop\u0000calling' }, NOW)), { tool: 'mark_do_not_call', reason: 'stopcalling' });
  t.deepEqual(act(readToolCall('end_call', { reason: 'not_interested\u0000' }, NOW)), { tool: 'end_call', reason: 'not_interested' });
});

test('mark_do_not_call and end_call: the reason given, cut; a default without one', (t) => {
  t.deepEqual(act(readToolCall('mark_do_not_call', {}, NOW)), { tool: 'mark_do_not_call', reason: DEFAULT_DNC_REASON });
  t.deepEqual(act(readToolCall('mark_do_not_call', { reason: 7 }, NOW)), { tool: 'mark_do_not_call', reason: DEFAULT_DNC_REASON });
  t.deepEqual(act(readToolCall('mark_do_not_call', { reason: 'r'.repeat(600) }, NOW)), { tool: 'mark_do_not_call', reason: 'r'.repeat(DNC_REASON_MAX) });
  t.deepEqual(act(readToolCall('end_call', { reason: 'voicemail' }, NOW)), { tool: 'end_call', reason: 'voicemail' });
  t.deepEqual(act(readToolCall('end_call', { reason: null }, NOW)), { tool: 'end_call', reason: 'other' });
  t.deepEqual(act(readToolCall('end_call', { reason: 'e'.repeat(5000) }, NOW)), { tool: 'end_call', reason: 'e'.repeat(END_REASON_MAX) });
});

test('an unknown tool is answered, and arguments that are no object read as none', (t) => {
  t.deepEqual(readToolCall('transfer_call', {}, NOW), { reply: { error: 'unknown tool transfer_call' } });
  for (const args of [null, undefined, 'reason', 42, ['voicemail']]) {
    t.deepEqual(act(readToolCall('end_call', args, NOW)), { tool: 'end_call', reason: 'other' }, JSON.stringify(args));
  }
});

// ---- properties over hostile arguments ---------------------------------------------------------

/** Strings as a model might garble them: any code units (NUL and lone surrogates included), some huge. */
const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 300 }),
  fc.tuple(fc.string({ maxLength: 3 }), fc.integer({ min: 1, max: 20_000 })).map(([s, n]) => (s || 'x').repeat(n)),
);
/** Anything JSON can carry, and a few things it cannot (NaN, Infinity). */
const hostileValue = fc.oneof(
  hostileString,
  fc.double(),
  fc.integer(),
  fc.constantFrom(null, undefined, true, false, NaN, Infinity, -Infinity),
  fc.jsonValue(),
  fc.date({ noInvalidDate: false }).map((d) => (Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString())),
);
const hostileArgs = fc.oneof(
  fc.record(
    { start_at: hostileValue, duration_minutes: hostileValue, attendee_name: hostileValue, notes: hostileValue, reason: hostileValue },
    { requiredKeys: [] },
  ),
  fc.anything(),
);
const toolName = fc.oneof(fc.constantFrom('book_appointment', 'mark_do_not_call', 'end_call'), fc.string());

test('property: whatever the arguments, reading never throws and every value fits where it is written', (t) => {
  fc.assert(
    fc.property(toolName, hostileArgs, (name, args) => {
      const d = readToolCall(name, args, NOW);
      if ('reply' in d) return name === 'book_appointment' ? JSON.stringify(d) === JSON.stringify(REFUSED) : !['mark_do_not_call', 'end_call'].includes(name);
      const a = d.act;
      const fits = (s: string | null, max: number) => s === null || (s.length <= max && isStorableText(s));
      switch (a.tool) {
        case 'book_appointment': {
          const minutes = (a.endAt.getTime() - a.startAt.getTime()) / MINUTE_MS;
          return a.startAt > NOW && Number.isFinite(a.endAt.getTime()) && Number.isInteger(minutes) && minutes >= 10 && minutes <= 120 &&
            fits(a.attendeeName, ATTENDEE_NAME_MAX) && fits(a.notes, NOTES_MAX);
        }
        case 'mark_do_not_call':
          return fits(a.reason, DNC_REASON_MAX);
        case 'end_call':
          return fits(a.reason, END_REASON_MAX);
      }
    }),
    { numRuns: 3_000, seed: 20290615 },
  );
  t.pass();
});

test('property: text without NUL is stored exactly as before (the driver turned unpaired surrogates into U+FFFD itself)', (t) => {
  fc.assert(
    fc.property(hostileString, fc.constantFrom(['attendee_name', ATTENDEE_NAME_MAX] as const, ['notes', NOTES_MAX] as const), (s, [field, max]) => {
      const clean = s.replace(/\u0000/g, 'a');
      const got = act(book({ [field]: clean })) as ToolCall & { tool: 'book_appointment' };
      const stored = Buffer.from(clean.slice(0, max), 'utf8').toString('utf8');
      return (field === 'attendee_name' ? got.attendeeName : got.notes) === stored;
    }),
    { numRuns: 2_000, seed: 20290616 },
  );
  t.pass();
});

test('property: a future start as any ISO string books at that instant, a past one never', (t) => {
  fc.assert(
    fc.property(fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }), (start) => {
      const d = readToolCall('book_appointment', { start_at: start.toISOString() }, NOW);
      return start > NOW ? 'act' in d && d.act.tool === 'book_appointment' && d.act.startAt.getTime() === start.getTime() : JSON.stringify(d) === JSON.stringify(REFUSED);
    }),
    { numRuns: 1_000, seed: 20290617 },
  );
  t.pass();
});

test('find_free_slots: after as a date or date and time (unreadable: from now), part_of_day morning or afternoon, else any', (t) => {
  t.deepEqual(readToolCall('find_free_slots', {}, NOW), { act: { tool: 'find_free_slots', after: null, partOfDay: 'any' } });
  t.deepEqual(readToolCall('find_free_slots', { after: '2030-01-08', part_of_day: 'morning' }, NOW), { act: { tool: 'find_free_slots', after: { localDate: '2030-01-08', minute: 0 }, partOfDay: 'morning' } });
  t.deepEqual(readToolCall('find_free_slots', { after: '2030-01-08T14:30' }, NOW), { act: { tool: 'find_free_slots', after: { localDate: '2030-01-08', minute: 870 }, partOfDay: 'any' } });
  t.deepEqual(readToolCall('find_free_slots', { after: '2030-01-08T14:30:00-08:00' }, NOW), { act: { tool: 'find_free_slots', after: { at: new Date('2030-01-08T22:30:00Z') }, partOfDay: 'any' } });
  for (const after of ['2030-02-30', '2030-01-08T24:00', '2030-13-01', 'next week'])
    t.deepEqual(readToolCall('find_free_slots', { after }, NOW), { act: { tool: 'find_free_slots', after: null, partOfDay: 'any' } }, after);
  t.deepEqual(readToolCall('find_free_slots', { after: 'next week', part_of_day: 'evening' }, NOW), { act: { tool: 'find_free_slots', after: null, partOfDay: 'any' } });
  t.deepEqual(readToolCall('find_free_slots', { after: 42, part_of_day: 'afternoon' }, NOW), { act: { tool: 'find_free_slots', after: null, partOfDay: 'afternoon' } });
});

test("find_free_slots: a bare date is midnight on the business's clock, not UTC's (Auckland, Los Angeles)", (t) => {
  const after = act(readToolCall('find_free_slots', { after: '2030-01-08' }, NOW));
  if (after.tool !== 'find_free_slots') return t.fail();
  // January: Auckland keeps NZDT (UTC+13), Los Angeles PST (UTC−8).
  t.is(searchStartIn(after.after, 'Pacific/Auckland')?.toISOString(), '2030-01-07T11:00:00.000Z');
  t.is(searchStartIn(after.after, 'America/Los_Angeles')?.toISOString(), '2030-01-08T08:00:00.000Z');
  t.is(searchStartIn({ localDate: '2030-07-08', minute: 9 * 60 }, 'Pacific/Auckland')?.toISOString(), '2030-07-07T21:00:00.000Z', 'NZST (UTC+12) in July');
  t.is(searchStartIn(null, 'Pacific/Auckland'), null);

  // The slots from that date: the day's first business hour there (09:00 local), not what follows UTC midnight.
  const now = new Date('2030-01-06T20:00:00Z'); // Monday 7 January 09:00 in Auckland; Sunday 6 January 12:00 in Los Angeles
  const first = (zone: string) => freeSlots({ now, settings: DEFAULT_BOOKING_SETTINGS, timezone: zone, busy: [], booked: [], after: searchStartIn(after.after, zone), limit: 1 })[0]?.start.toISOString();
  t.is(first('Pacific/Auckland'), '2030-01-07T20:00:00.000Z', 'Tuesday 8 January 09:00 NZDT (UTC midnight would be 13:00)');
  t.is(first('America/Los_Angeles'), '2030-01-08T17:00:00.000Z', 'Tuesday 8 January 09:00 PST (UTC midnight would be Monday 16:00)');
});
