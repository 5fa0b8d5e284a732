import test from 'ava';
import { CalendarAuthError, CalendarSyncExpired, CalendarUnavailable, mergeBusy } from '../../calendars/calendar.ts';
import { caldavCalendar, type CaldavOptions } from '../../calendars/caldav/caldav-calendar.ts';
import { createCalendarOpener } from '../../calendars/open-calendar.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { calendarContract } from '../helpers/calendar-contract.ts';
import { radicaleMissing, startRadicale, type Radicale } from '../helpers/radicale.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../e2e/process-helpers.ts';

/**
 * The CalDAV adapter (calendars/caldav/caldav-calendar.ts) against a real Radicale from Debian's
 * packages on a loopback port: the shared calendar contract (free/busy, write and delete a meeting,
 * changes since a sync token after another client moved and deleted events), then what is
 * CalDAV's own: discovery from the server's root, recurring events, the ETag fallback of servers
 * without sync-collection, a refused sync token, and refused or changed passwords.
 */

if (radicaleMissing) {
  test('CalDAV adapter against Radicale', (t) => t.log(`skipped: ${radicaleMissing}`));
} else {
  let radicale: Radicale;
  let users = 0;
  test.before(async () => {
    radicale = await startRadicale();
  });
  test.after.always(async () => {
    await radicale?.stop();
  });

  /** A user of its own with its calendar, so tests do not see each other's events. */
  const newUser = async (password = 'app-password-1') => {
    const user = `user${++users}`;
    await radicale.addUser(user, password);
    return { user, password };
  };

  const openCalDav = (opts: CaldavOptions = {}) => async () => {
    const { user, password } = await newUser();
    return {
      client: caldavCalendar({ kind: 'caldav', url: radicale.calendarUrl(user), username: user, password }, { allowPrivate: true, ...opts }),
      addBusy: (e: { uid: string; start: Date; end: Date; free?: boolean }) => radicale.putEvent(user, e),
      move: (id: string, start: Date, end: Date) => radicale.moveEvent(user, id, start, end),
      remove: (id: string) => radicale.deleteEvent(user, id),
      // Another client marks the event cancelled and keeps it (RFC 5545 STATUS:CANCELLED).
      cancel: async (id: string) => {
        const current = await radicale.request(user, 'GET', id);
        const etag = current.headers.get('etag');
        const ics = (await current.text()).replace('STATUS:CONFIRMED', 'STATUS:CANCELLED');
        const put = await radicale.request(user, 'PUT', id, ics, { 'content-type': 'text/calendar; charset=utf-8', ...(etag ? { 'if-match': etag } : {}) });
        if (!put.ok) throw new Error(`PUT ${id}: ${put.status}`);
      },
      absentId: `${radicale.calendarUrl(user)}never-written.ics`,
    };
  };

  calendarContract(test, 'CalDAV (Radicale)', openCalDav());
  calendarContract(test, 'CalDAV without sync-collection (ETag comparison)', openCalDav({ sync: 'etag' }));

  test('the calendar opener opens CalDAV credentials with this adapter', async (t) => {
    const { user, password } = await newUser();
    await radicale.putEvent(user, { uid: 'x', start: new Date('2031-01-02T10:00:00Z'), end: new Date('2031-01-02T11:00:00Z') });
    const opener = createCalendarOpener({ pool: null as never, log: createLogger('silent'), config: loadConfig({ SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '1' }) });
    const client = opener.open({ kind: 'caldav', url: radicale.calendarUrl(user), username: user, password });
    t.is((await client.freeBusy(new Date('2031-01-02T00:00:00Z'), new Date('2031-01-03T00:00:00Z'))).length, 1);
  });

  test("an address that is the server's root or the user's principal finds the user's calendar", async (t) => {
    const { user, password } = await newUser();
    const ev = await radicale.putEvent(user, { uid: 'found', start: new Date('2031-02-03T09:00:00Z'), end: new Date('2031-02-03T09:30:00Z') });
    for (const url of [radicale.url, `${radicale.url}${user}/`]) {
      const client = caldavCalendar({ kind: 'caldav', url, username: user, password }, { allowPrivate: true });
      const busy = await client.freeBusy(new Date('2031-02-03T00:00:00Z'), new Date('2031-02-04T00:00:00Z'));
      t.deepEqual(busy.map((b) => b.start.toISOString()), ['2031-02-03T09:00:00.000Z'], url);
      const ref = await client.createEvent({ uid: `via-${url.length}`, start: new Date('2031-02-03T12:00:00Z'), end: new Date('2031-02-03T12:30:00Z'), timezone: 'UTC', title: 'T', description: '' });
      t.true(ref.id.startsWith(radicale.calendarUrl(user)), 'written into the calendar found');
      await client.deleteEvent(ref.id);
    }
    t.is(ev, `${radicale.calendarUrl(user)}found.ics`);
  });

  test('recurring events are expanded over the range; a cancelled occurrence and a transparent series are not busy', async (t) => {
    const { user, password } = await newUser();
    // Weekly on Mondays 09:00–10:00 UTC from 2031-03-03; the 2031-03-17 occurrence cancelled, the 2031-03-24 one moved to 11:00.
    const weekly = [
      'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN',
      'BEGIN:VEVENT', 'UID:weekly', 'DTSTAMP:20310101T000000Z', 'DTSTART:20310303T090000Z', 'DTEND:20310303T100000Z', 'RRULE:FREQ=WEEKLY;COUNT=10', 'SUMMARY:Standup', 'END:VEVENT',
      'BEGIN:VEVENT', 'UID:weekly', 'DTSTAMP:20310101T000000Z', 'RECURRENCE-ID:20310317T090000Z', 'DTSTART:20310317T090000Z', 'DTEND:20310317T100000Z', 'STATUS:CANCELLED', 'SUMMARY:Standup', 'END:VEVENT',
      'BEGIN:VEVENT', 'UID:weekly', 'DTSTAMP:20310101T000000Z', 'RECURRENCE-ID:20310324T090000Z', 'DTSTART:20310324T110000Z', 'DTEND:20310324T120000Z', 'SUMMARY:Standup', 'END:VEVENT',
      'END:VCALENDAR', '',
    ].join('\r\n');
    const lunch = [
      'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN',
      'BEGIN:VEVENT', 'UID:lunch', 'DTSTAMP:20310101T000000Z', 'DTSTART:20310303T120000Z', 'DTEND:20310303T130000Z', 'RRULE:FREQ=DAILY', 'TRANSP:TRANSPARENT', 'SUMMARY:Lunch', 'END:VEVENT',
      'END:VCALENDAR', '',
    ].join('\r\n');
    await radicale.putEvent(user, { uid: 'weekly', start: new Date(0), end: new Date(0), ics: weekly });
    await radicale.putEvent(user, { uid: 'lunch', start: new Date(0), end: new Date(0), ics: lunch });

    const client = caldavCalendar({ kind: 'caldav', url: radicale.calendarUrl(user), username: user, password }, { allowPrivate: true });
    const busy = mergeBusy(await client.freeBusy(new Date('2031-03-09T00:00:00Z'), new Date('2031-03-31T00:00:00Z')));
    t.deepEqual(
      busy.map((b) => [b.start.toISOString(), b.end.toISOString()]),
      [
        ['2031-03-10T09:00:00.000Z', '2031-03-10T10:00:00.000Z'],
        ['2031-03-24T11:00:00.000Z', '2031-03-24T12:00:00.000Z'],
      ],
    );
  });

  test('writing a meeting twice with one uid (a retried attempt) answers the same event, and there is one', async (t) => {
    const { user, password } = await newUser();
    const client = caldavCalendar({ kind: 'caldav', url: radicale.calendarUrl(user), username: user, password }, { allowPrivate: true });
    const event = { uid: 'appt-retried', start: new Date('2031-06-01T10:00:00Z'), end: new Date('2031-06-01T10:30:00Z'), timezone: 'UTC', title: 'Meeting', description: '' };
    const a = await client.createEvent(event);
    const b = await client.createEvent(event);
    t.is(b.id, a.id);
    t.is(b.etag, a.etag);
    t.is((await client.freeBusy(new Date('2031-06-01T00:00:00Z'), new Date('2031-06-02T00:00:00Z'))).length, 1);
  });

  test('an event another client marks cancelled (STATUS:CANCELLED) is reported changed and cancelled, and no longer busy', async (t) => {
    const { user, password } = await newUser();
    const client = caldavCalendar({ kind: 'caldav', url: radicale.calendarUrl(user), username: user, password }, { allowPrivate: true });
    const ref = await client.createEvent({ uid: 'to-cancel', start: new Date('2031-07-01T10:00:00Z'), end: new Date('2031-07-01T10:30:00Z'), timezone: 'UTC', title: 'Meeting', description: '' });
    const { syncToken } = await client.changes(null);
    const current = await (await radicale.request(user, 'GET', ref.id)).text();
    await radicale.putEvent(user, { uid: 'to-cancel', start: new Date(0), end: new Date(0), ics: current.replace('STATUS:CONFIRMED', 'STATUS:CANCELLED') });
    const { changes } = await client.changes(syncToken);
    t.like(changes, [{ id: ref.id, kind: 'changed', cancelled: true }]);
    t.deepEqual(await client.freeBusy(new Date('2031-07-01T00:00:00Z'), new Date('2031-07-02T00:00:00Z')), []);
  });

  test('a sync token the server no longer accepts is CalendarSyncExpired; reading again from null works', async (t) => {
    const { user, password } = await newUser();
    const client = caldavCalendar({ kind: 'caldav', url: radicale.calendarUrl(user), username: user, password }, { allowPrivate: true });
    await t.throwsAsync(client.changes('http://radicale.org/ns/sync/0000000000000000000000000000000000000000000000000000000000000000'), {
      instanceOf: CalendarSyncExpired,
    });
    t.truthy((await client.changes(null)).syncToken);
  });

  test('a wrong password is CalendarAuthError with a reason for the customer, on every operation', async (t) => {
    const { user } = await newUser('right-password');
    const client = caldavCalendar({ kind: 'caldav', url: radicale.calendarUrl(user), username: user, password: 'wrong-password' }, { allowPrivate: true });
    const refused = { instanceOf: CalendarAuthError, message: 'the calendar server refused the user name or password' };
    await t.throwsAsync(client.freeBusy(new Date('2031-01-01T00:00:00Z'), new Date('2031-01-02T00:00:00Z')), refused);
    await t.throwsAsync(client.changes(null), refused);
    await t.throwsAsync(client.deleteEvent(`${radicale.calendarUrl(user)}x.ics`), refused);
  });

  test('a password changed on the server after connecting turns the working calendar into CalendarAuthError', async (t) => {
    const { user, password } = await newUser();
    const client = caldavCalendar({ kind: 'caldav', url: radicale.calendarUrl(user), username: user, password }, { allowPrivate: true });
    const range = [new Date('2031-01-01T00:00:00Z'), new Date('2031-01-02T00:00:00Z')] as const;
    t.deepEqual(await client.freeBusy(...range), []);
    const { syncToken } = await client.changes(null);

    await radicale.setPassword(user, 'a-new-password');
    await t.throwsAsync(client.freeBusy(...range), { instanceOf: CalendarAuthError });
    await t.throwsAsync(client.changes(syncToken), { instanceOf: CalendarAuthError });
    await t.throwsAsync(
      client.createEvent({ uid: 'after-change', start: range[0], end: range[1], timezone: 'UTC', title: 'T', description: '' }),
      { instanceOf: CalendarAuthError },
    );
  });

  test('a server that does not answer is CalendarUnavailable (it may pass)', async (t) => {
    const port = await freePort();
    const client = caldavCalendar({ kind: 'caldav', url: `http://127.0.0.1:${port}/user/calendar/`, username: 'u', password: 'p' }, { allowPrivate: true });
    await t.throwsAsync(client.freeBusy(new Date('2031-01-01T00:00:00Z'), new Date('2031-01-02T00:00:00Z')), { instanceOf: CalendarUnavailable });
  });

  test('a user without any calendar is refused with a reason for the customer', async (t) => {
    const { user, password } = await newUser();
    await radicale.request(user, 'DELETE', radicale.calendarUrl(user));
    const client = caldavCalendar({ kind: 'caldav', url: radicale.calendarUrl(user), username: user, password }, { allowPrivate: true });
    await t.throwsAsync(client.freeBusy(new Date('2031-01-01T00:00:00Z'), new Date('2031-01-02T00:00:00Z')), {
      instanceOf: CalendarAuthError,
      message: 'the calendar was not found (it may have been deleted)',
    });
  });
}

/**
 * Radicale 3.1 has no free-busy-query REPORT; servers such as Nextcloud and Fastmail do. A calendar
 * collection answering as RFC 4791 §7.10 shows (PROPFIND listing the report, the REPORT with
 * Depth 1 answering a VFREEBUSY) stands in for one, to see the adapter takes that path.
 */
test('where the calendar offers free-busy-query (RFC 4791 §7.10), freeBusy asks it and reads the VFREEBUSY', async (t) => {
  const reports: string[] = [];
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    if (req.method === 'PROPFIND') {
      res.writeHead(207, { 'content-type': 'application/xml; charset=utf-8' });
      return res.end(
        '<?xml version="1.0" encoding="utf-8"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:response><d:href>/cal/</d:href><d:propstat><d:prop>' +
          '<d:resourcetype><d:collection/><c:calendar/></d:resourcetype>' +
          '<c:supported-calendar-component-set><c:comp name="VEVENT"/></c:supported-calendar-component-set>' +
          '<d:supported-report-set><d:supported-report><d:report><c:free-busy-query/></d:report></d:supported-report><d:supported-report><d:report><c:calendar-query/></d:report></d:supported-report></d:supported-report-set>' +
          '</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>',
      );
    }
    reports.push(`${req.method} depth=${req.headers.depth} ${/<[^>]*free-busy-query/.test(body) ? 'free-busy-query' : 'other'} ${/start="20310310T000000Z" end="20310311T000000Z"/.test(body)}`);
    res.writeHead(200, { 'content-type': 'text/calendar; charset=utf-8' });
    res.end(
      ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//fake//EN', 'BEGIN:VFREEBUSY', 'DTSTAMP:20310101T000000Z', 'DTSTART:20310310T000000Z', 'DTEND:20310311T000000Z',
        'FREEBUSY:20310310T090000Z/PT1H', 'FREEBUSY;FBTYPE=FREE:20310310T110000Z/PT1H', 'END:VFREEBUSY', 'END:VCALENDAR', ''].join('\r\n'),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const client = caldavCalendar({ kind: 'caldav', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cal/`, username: 'u', password: 'p' }, { allowPrivate: true });
  const busy = await client.freeBusy(new Date('2031-03-10T00:00:00Z'), new Date('2031-03-11T00:00:00Z'));
  t.deepEqual(busy.map((b) => [b.start.toISOString(), b.end.toISOString()]), [['2031-03-10T09:00:00.000Z', '2031-03-10T10:00:00.000Z']]);
  t.deepEqual(reports, ['REPORT depth=1 free-busy-query true']);
});
