import test from 'ava';
import { CalendarAuthError, CalendarSyncExpired, CalendarUnavailable, type CalendarCredentials } from '../../calendars/calendar.ts';
import { microsoftCalendar } from '../../calendars/microsoft/microsoft-calendar.ts';
import { calendarOAuthProviders } from '../../calendars/oauth.ts';
import { createCalendarOpener } from '../../calendars/open-calendar.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { calendarContract } from '../helpers/calendar-contract.ts';
import { startFakeMicrosoft, type FakeMicrosoft } from '../fakes/microsoft-graph.ts';

/**
 * The Microsoft 365 adapter (calendars/microsoft) and Microsoft's OAuth (calendars/oauth.ts),
 * the production code through the Graph SDK, against the fake identity platform and Graph of
 * test/fakes/microsoft-graph.ts: the shared calendar contract, consent and code exchange, token
 * refresh, a revoked grant, an expired delta token, paging, and errors that may pass.
 */

let ms: FakeMicrosoft;
let users = 0;
test.before(async () => {
  ms = await startFakeMicrosoft({ maxPageSize: 2 });
});
test.after.always(async () => {
  await ms?.close();
});

const newUser = () => {
  const mail = `owner${++users}@contoso.example`;
  ms.addUser(mail);
  return mail;
};
const credentialsFor = (mail: string, opts?: { expiresInS?: number }): Extract<CalendarCredentials, { kind: 'microsoft' }> => ({
  kind: 'microsoft',
  ...ms.grant(mail, opts),
  calendarId: null,
  email: mail,
});
const day = (d: string) => [new Date(`${d}T00:00:00Z`), new Date(`${d}T23:59:59Z`)] as const;
// The contract's meetings are in 2031: a delta window reaching that far.
const AHEAD = { syncAheadDays: 3650 };

calendarContract(test, 'Microsoft 365 (fake Graph)', async () => {
  const mail = newUser();
  return {
    client: microsoftCalendar(ms.settings, credentialsFor(mail), AHEAD),
    addBusy: async (e) => ms.insertEvent(mail, { start: e.start, end: e.end, free: e.free }),
    move: async (id, start, end) => ms.moveEvent(mail, id, start, end),
    remove: async (id) => ms.deleteEvent(mail, id),
  };
});

test('OAuth: the consent URL asks for offline calendar access; the code coming back is exchanged for credentials naming the account', async (t) => {
  const mail = newUser();
  ms.consentAs(mail);
  const oauth = calendarOAuthProviders(loadConfig(ms.env)).microsoft!;
  t.is(oauth.kind, 'microsoft');
  const redirectUri = 'https://app.example.com/calendar/oauth/callback';
  const consentUrl = new URL(oauth.authorizationUrl({ state: 'state-456', redirectUri }));
  t.is(consentUrl.origin + consentUrl.pathname, `${ms.url}/common/oauth2/v2.0/authorize`);
  t.is(consentUrl.searchParams.get('scope'), 'offline_access Calendars.ReadWrite User.Read');
  t.is(consentUrl.searchParams.get('response_type'), 'code');

  const consent = await fetch(consentUrl, { redirect: 'manual' });
  const back = new URL(consent.headers.get('location')!);
  t.is(back.searchParams.get('state'), 'state-456');
  const credentials = await oauth.exchange({ code: back.searchParams.get('code')!, redirectUri });
  t.like(credentials, { kind: 'microsoft', calendarId: null, email: mail });
  const client = createCalendarOpener({ pool: null as never, log: createLogger('silent'), config: loadConfig(ms.env) }).open(credentials);
  t.deepEqual(await client.freeBusy(...day('2031-01-01')), []);

  // A code is redeemed once (AADSTS54005).
  await t.throwsAsync(oauth.exchange({ code: back.searchParams.get('code')!, redirectUri }), { instanceOf: CalendarAuthError });
});

test('OAuth: without MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET Microsoft 365 is not offered, and stored credentials say the calendar is unavailable', async (t) => {
  t.is(calendarOAuthProviders(loadConfig({})).microsoft, null);
  const client = createCalendarOpener({ pool: null as never, log: createLogger('silent'), config: loadConfig({}) }).open(credentialsFor(newUser()));
  await t.throwsAsync(client.freeBusy(...day('2031-01-01')), { instanceOf: CalendarUnavailable });
});

test('an access token about to expire is refreshed first (the refresh token rotates) and the new credentials are handed over to be stored', async (t) => {
  const mail = newUser();
  const old = credentialsFor(mail, { expiresInS: 60 });
  const refreshed: CalendarCredentials[] = [];
  const client = microsoftCalendar(ms.settings, old, { onRefreshed: async (c) => void refreshed.push(c) });
  t.deepEqual(await client.freeBusy(...day('2031-01-01')), []);
  t.is(ms.refreshes(mail), 1);
  t.is(refreshed.length, 1);
  const now = refreshed[0] as typeof old;
  t.like(now, { kind: 'microsoft', email: mail });
  t.not(now.accessToken, old.accessToken);
  t.not(now.refreshToken, old.refreshToken);
  // The next call uses the new token without refreshing again.
  await client.freeBusy(...day('2031-01-02'));
  t.is(ms.refreshes(mail), 1);
});

test('an access token Graph refuses (401 InvalidAuthenticationToken) is refreshed and the call retried once', async (t) => {
  const mail = newUser();
  const refreshed: CalendarCredentials[] = [];
  const client = microsoftCalendar(ms.settings, credentialsFor(mail), { onRefreshed: async (c) => void refreshed.push(c) });
  ms.insertEvent(mail, { start: new Date('2031-01-01T10:00:00Z'), end: new Date('2031-01-01T11:00:00Z') });
  ms.expireAccessTokens();
  t.is((await client.freeBusy(...day('2031-01-01'))).length, 1);
  t.is(refreshed.length, 1);
});

test('a revoked grant (refresh → invalid_grant AADSTS50173) is CalendarAuthError "access to the calendar was withdrawn" on every operation', async (t) => {
  const mail = newUser();
  const client = microsoftCalendar(ms.settings, credentialsFor(mail), AHEAD);
  const { syncToken } = await client.changes(null);
  ms.revoke(mail);
  const withdrawn = { instanceOf: CalendarAuthError, message: 'access to the calendar was withdrawn' };
  await t.throwsAsync(client.freeBusy(...day('2031-01-01')), withdrawn);
  await t.throwsAsync(client.changes(syncToken), withdrawn);
  await t.throwsAsync(client.deleteEvent('AAMkAGI2xyz'), withdrawn);
  await t.throwsAsync(
    client.createEvent({ uid: 'u-1', start: new Date('2031-01-01T10:00:00Z'), end: new Date('2031-01-01T10:30:00Z'), timezone: 'UTC', title: 'T', description: '' }),
    withdrawn,
  );
});

test('a delta token Graph no longer knows (410 syncStateNotFound) is CalendarSyncExpired; reading again from null pages through to a new delta link', async (t) => {
  const mail = newUser();
  for (let i = 0; i < 5; i++) ms.insertEvent(mail, { start: new Date(`2031-02-0${i + 1}T10:00:00Z`), end: new Date(`2031-02-0${i + 1}T11:00:00Z`) });
  const client = microsoftCalendar(ms.settings, credentialsFor(mail), AHEAD);
  const deltaCalls = () => ms.requests.filter((r) => r.user === mail && r.path.endsWith('/calendarView/delta')).length;
  const first = await client.changes(null);
  t.is(deltaCalls(), 3, 'five events in pages of two');
  ms.expireDeltaTokens();
  await t.throwsAsync(client.changes(first.syncToken), { instanceOf: CalendarSyncExpired });
  const again = await client.changes(null);
  t.deepEqual((await client.changes(again.syncToken)).changes, []);
});

test('free/busy reads every page of the calendar view, skipping events shown as free', async (t) => {
  const mail = newUser();
  for (const h of ['09', '11', '13']) ms.insertEvent(mail, { start: new Date(`2031-03-03T${h}:00:00Z`), end: new Date(`2031-03-03T${h}:30:00Z`) });
  ms.insertEvent(mail, { start: new Date('2031-03-03T15:00:00Z'), end: new Date('2031-03-03T16:00:00Z'), free: true });
  const client = microsoftCalendar(ms.settings, credentialsFor(mail));
  t.deepEqual(
    (await client.freeBusy(...day('2031-03-03'))).map((b) => b.start.toISOString()),
    ['2031-03-03T09:00:00.000Z', '2031-03-03T11:00:00.000Z', '2031-03-03T13:00:00.000Z'],
  );
});

test('writing a meeting twice with one uid (transactionId) answers the same event, and there is one, busy, in UTC', async (t) => {
  const mail = newUser();
  const client = microsoftCalendar(ms.settings, credentialsFor(mail));
  const event = { uid: 'appt_7f3c', start: new Date('2031-03-01T10:00:00Z'), end: new Date('2031-03-01T10:30:00Z'), timezone: 'Europe/London', title: 'Meeting with Ana', description: 'notes' };
  const a = await client.createEvent(event);
  const b = await client.createEvent(event);
  t.is(b.id, a.id);
  t.is(ms.events(mail).length, 1);
  t.like(ms.events(mail)[0], { subject: 'Meeting with Ana', showAs: 'busy', transactionId: 'appt_7f3c', start: { dateTime: '2031-03-01T10:00:00.000', timeZone: 'UTC' } });
});

test('throttling (429) and service errors are CalendarUnavailable, not a withdrawn access', async (t) => {
  const mail = newUser();
  const client = microsoftCalendar(ms.settings, credentialsFor(mail));
  for (const status of [429, 500, 503]) {
    ms.failNext(mail, status);
    await t.throwsAsync(client.freeBusy(...day('2031-01-01')), { instanceOf: CalendarUnavailable }, String(status));
  }
  t.deepEqual(await client.freeBusy(...day('2031-01-01')), []);
});

test('a Graph that does not answer is CalendarUnavailable', async (t) => {
  const closed = await startFakeMicrosoft();
  await closed.close();
  const client = microsoftCalendar({ ...ms.settings, graphUrl: closed.url }, credentialsFor(newUser()));
  await t.throwsAsync(client.freeBusy(...day('2031-01-01')), { instanceOf: CalendarUnavailable });
});
