/**
 * One contract for every calendar adapter (calendars/calendar.ts, `CalendarClient`), run by each
 * adapter's test file against a real server (Radicale) or a faithful fake (Google, Microsoft):
 * free/busy of events another client wrote, a meeting written and deleted, and changes since a
 * sync token after another client moved one event and deleted another.
 *
 *   calendarContract(test, 'CalDAV', async () => ({ client, addBusy, move, remove }));
 */
import type { TestFn } from 'ava';
import { mergeBusy, type CalendarClient } from '../../calendars/calendar.ts';

/** A calendar under test, and what another client (the business's own calendar app) does to it. */
export interface CalendarUnderTest {
  client: CalendarClient;
  /** Another client adds an event (busy unless `free`); returns the id the adapter knows it by. */
  addBusy(e: { uid: string; start: Date; end: Date; free?: boolean }): Promise<string>;
  /** Another client moves an event. */
  move(id: string, start: Date, end: Date): Promise<void>;
  /** Another client deletes an event. */
  remove(id: string): Promise<void>;
}

const at = (iso: string) => new Date(iso);
const span = (i: { start: Date; end: Date }) => [i.start.toISOString(), i.end.toISOString()];

export function calendarContract(test: TestFn, name: string, open: () => Promise<CalendarUnderTest>): void {
  test(`${name}: freeBusy lists the busy events overlapping the range, not free ones nor ones outside it`, async (t) => {
    const cal = await open();
    await cal.addBusy({ uid: 'fb-1', start: at('2031-03-10T09:00:00Z'), end: at('2031-03-10T10:00:00Z') });
    await cal.addBusy({ uid: 'fb-2', start: at('2031-03-10T13:30:00Z'), end: at('2031-03-10T14:00:00Z') });
    await cal.addBusy({ uid: 'fb-free', start: at('2031-03-10T11:00:00Z'), end: at('2031-03-10T12:00:00Z'), free: true });
    await cal.addBusy({ uid: 'fb-later', start: at('2031-03-12T09:00:00Z'), end: at('2031-03-12T10:00:00Z') });

    const busy = mergeBusy(await cal.client.freeBusy(at('2031-03-10T00:00:00Z'), at('2031-03-11T00:00:00Z')));
    t.deepEqual(busy.map(span), [
      ['2031-03-10T09:00:00.000Z', '2031-03-10T10:00:00.000Z'],
      ['2031-03-10T13:30:00.000Z', '2031-03-10T14:00:00.000Z'],
    ]);
  });

  test(`${name}: createEvent writes a busy meeting that freeBusy then shows; deleteEvent removes it, and deleting it again is no error`, async (t) => {
    const cal = await open();
    const ref = await cal.client.createEvent({
      uid: 'appt-0001',
      start: at('2031-04-01T15:00:00Z'),
      end: at('2031-04-01T15:30:00Z'),
      timezone: 'Europe/London',
      title: 'Meeting with Ana Lopez',
      description: 'Called: Lopez Plumbing\nAna Lopez, +44 20 7946 0000\nNotes: boiler service',
    });
    t.truthy(ref.id);
    const range = [at('2031-04-01T00:00:00Z'), at('2031-04-02T00:00:00Z')] as const;
    t.deepEqual((await cal.client.freeBusy(...range)).map(span), [['2031-04-01T15:00:00.000Z', '2031-04-01T15:30:00.000Z']]);

    await cal.client.deleteEvent(ref.id);
    t.deepEqual(await cal.client.freeBusy(...range), []);
    await t.notThrowsAsync(cal.client.deleteEvent(ref.id));
  });

  test(`${name}: changes(null) lists nothing; after another client moves one event and deletes another, changes(token) reports both, then nothing`, async (t) => {
    const cal = await open();
    const ours = await cal.client.createEvent({
      uid: 'appt-0002',
      start: at('2031-05-05T10:00:00Z'),
      end: at('2031-05-05T10:30:00Z'),
      timezone: 'UTC',
      title: 'Meeting with Bo',
      description: '',
    });
    const other = await cal.addBusy({ uid: 'to-delete', start: at('2031-05-06T10:00:00Z'), end: at('2031-05-06T11:00:00Z') });

    const first = await cal.client.changes(null);
    t.deepEqual(first.changes, []);
    t.truthy(first.syncToken);

    await cal.move(ours.id, at('2031-05-05T14:00:00Z'), at('2031-05-05T14:30:00Z'));
    await cal.remove(other);

    const second = await cal.client.changes(first.syncToken);
    const moved = second.changes.find((c) => c.id === ours.id);
    t.like(moved, { kind: 'changed', cancelled: false });
    t.deepEqual(moved && moved.kind === 'changed' ? span(moved) : null, ['2031-05-05T14:00:00.000Z', '2031-05-05T14:30:00.000Z']);
    t.not(moved && moved.kind === 'changed' ? moved.etag : null, ours.etag, 'the moved event has a new version');
    t.deepEqual(
      second.changes.filter((c) => c.id === other),
      [{ id: other, kind: 'deleted' }],
    );

    const third = await cal.client.changes(second.syncToken);
    t.deepEqual(third.changes, []);
  });
}
