import test from 'ava';
import { connectCalendar } from '../../actors/customer/calendar-connection.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { createLogger } from '../../runtime/logger.ts';
import type { CalendarClient } from '../../calendars/calendar.ts';

/**
 * The check on connect runs in the customer's actor (asks give up after 30 s): a calendar server
 * answering every request slowly, each within its own timeout, is refused at one deadline for the
 * whole check, with the reason on the page, instead of holding the actor for minutes.
 */
test('a calendar that answers each step slowly is refused at the deadline of the whole check, saying why; nothing is stored', async (t) => {
  const later = <T>(v: T) => new Promise<T>((r) => setTimeout(() => r(v), 300));
  const slow: CalendarClient = {
    freeBusy: () => later([]),
    createEvent: () => later({ id: 'probe', etag: null }),
    deleteEvent: () => later(undefined),
    changes: () => later({ changes: [], syncToken: 't' }),
    events: () => later([]),
  };
  const deps = {
    // Nothing may reach the database: a refused check stores nothing.
    pool: new Proxy({}, { get: () => { throw new Error('the database was used'); } }) as never,
    clock: { now: () => new Date('2031-01-01T00:00:00Z') } as never,
    log: createLogger('silent'),
    calendars: { open: () => slow } as never,
    secrets: { seal: () => Buffer.alloc(0), open: () => '' },
    connectCheckMs: 500,
    // The address check at connect (a private address refused) is another test's: this one is about time.
    allowPrivateAddresses: true,
  };
  const started = Date.now();
  const err = await t.throwsAsync(connectCalendar(deps, { id: 'c1', accountId: 'a1', mode: 'live' }, { kind: 'caldav', url: 'http://127.0.0.1:9/dav/', username: 'u', password: 'p' }), { instanceOf: Refusal });
  t.is(err?.code, 'calendar_connection_failed');
  t.is(err?.explanation ?? err?.message, 'The calendar could not be connected: the calendar server took too long to answer.');
  t.true(Date.now() - started < 1_000, `refused after ${Date.now() - started} ms`);
});
