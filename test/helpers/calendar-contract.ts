/**
 * One contract for every calendar adapter (calendars/calendar.ts, `CalendarClient`), run by each
 * adapter's test file against a real server (Radicale) or a faithful fake (Google, Microsoft):
 * free/busy of events another client wrote, a meeting written and deleted, and changes since a
 * sync token after another client moved one event and deleted another, and the current state of
 * chosen events (what the sync compares after a sync token expired).
 *
 *   calendarContract(test, 'CalDAV', async () => ({ client, addBusy, move, remove, cancel, absentId }));
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
  /**
   * Another client cancels an event and keeps it (STATUS:CANCELLED, Graph's isCancelled). Absent
   * where the calendar has no such state (Google: a cancelled event is a deleted one).
   */
  cancel?(id: string): Promise<void>;
  /** An event id of this calendar's form that was never written (read as deleted). */
  absentId: string;
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

  test(`${name}: events(ids) reads each event as it is now, in the order asked: untouched (same version), moved, deleted, cancelled, never written`, async (t) => {
    const cal = await open();
    const write = (uid: string, hour: string) =>
      cal.client.createEvent({ uid, start: at(`2031-08-04T${hour}:00:00Z`), end: at(`2031-08-04T${hour}:30:00Z`), timezone: 'UTC', title: `Meeting ${uid}`, description: '' });
    const kept = await write('appt-kept', '09');
    const moved = await write('appt-moved', '10');
    const gone = await write('appt-gone', '11');
    const cancelled = cal.cancel ? await write('appt-cancelled', '12') : null;

    await cal.move(moved.id, at('2031-08-04T15:00:00Z'), at('2031-08-04T15:30:00Z'));
    await cal.remove(gone.id);
    if (cancelled) await cal.cancel!(cancelled.id);

    const ids = [kept.id, moved.id, gone.id, cal.absentId, ...(cancelled ? [cancelled.id] : [])];
    const states = await cal.client.events(ids);
    t.deepEqual(states.map((s) => s.id), ids);
    t.deepEqual(states[0], { id: kept.id, kind: 'changed', start: at('2031-08-04T09:00:00Z'), end: at('2031-08-04T09:30:00Z'), etag: kept.etag, cancelled: false }, 'untouched: the version createEvent gave');
    const now = states[1];
    t.like(now, { id: moved.id, kind: 'changed', cancelled: false });
    t.deepEqual(now?.kind === 'changed' ? span(now) : null, ['2031-08-04T15:00:00.000Z', '2031-08-04T15:30:00.000Z']);
    t.not(now?.kind === 'changed' ? now.etag : null, moved.etag, 'the moved event has a new version');
    t.deepEqual(states[2], { id: gone.id, kind: 'deleted' });
    t.deepEqual(states[3], { id: cal.absentId, kind: 'deleted' });
    if (cancelled) t.like(states[4], { id: cancelled.id, kind: 'changed', cancelled: true });
    t.deepEqual(await cal.client.events([]), []);
  });
}
