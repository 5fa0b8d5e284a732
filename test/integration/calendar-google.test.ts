import test from 'ava';
import { CalendarAuthError, CalendarSyncExpired, CalendarUnavailable, type CalendarCredentials } from '../../calendars/calendar.ts';
import { googleCalendar } from '../../calendars/google/google-calendar.ts';
import { calendarOAuthProviders } from '../../calendars/oauth.ts';
import { createCalendarOpener } from '../../calendars/open-calendar.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { calendarContract } from '../helpers/calendar-contract.ts';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google-calendar.ts';

/**
 * The Google Calendar adapter (calendars/google) and Google's OAuth (calendars/oauth.ts), the
 * production code through the official SDK, against the fake Google of test/fakes/google-calendar.ts:
 * the shared calendar contract, the consent and code exchange, token refresh, a revoked grant,
 * an expired sync token, paging to the sync token, and errors that may pass.
 */

let google: FakeGoogle;
let users = 0;
test.before(async () => {
  // Pages of 2 events so the initial full listing pages through to its sync token.
  google = await startFakeGoogle({ maxPageSize: 2 });
});
test.after.always(async () => {
  await google?.close();
});

const newUser = () => {
  const email = `owner${++users}@example.com`;
  google.addUser(email);
  return email;
};
const credentialsFor = (email: string, opts?: { expiresInS?: number }): Extract<CalendarCredentials, { kind: 'google' }> => ({
  kind: 'google',
  ...google.grant(email, opts),
  calendarId: 'primary',
  email,
});
const day = (d: string) => [new Date(`${d}T00:00:00Z`), new Date(`${d}T23:59:59Z`)] as const;

calendarContract(test, 'Google Calendar (fake)', async () => {
  const email = newUser();
  return {
    client: googleCalendar(google.settings, credentialsFor(email)),
    addBusy: async (e) => google.insertEvent(email, { start: e.start, end: e.end, transparent: e.free }),
    move: async (id, start, end) => google.moveEvent(email, id, start, end),
    remove: async (id) => google.deleteEvent(email, id),
  };
});

test('OAuth: the consent URL asks for the calendar scopes offline; the code coming back is exchanged for credentials that open the calendar', async (t) => {
  const email = newUser();
  google.consentAs(email);
  const oauth = calendarOAuthProviders(loadConfig(google.env)).google!;
  t.is(oauth.kind, 'google');
  const redirectUri = 'https://app.example.com/calendar/oauth/callback';
  const consentUrl = new URL(oauth.authorizationUrl({ state: 'state-123', redirectUri }));
  t.is(consentUrl.origin + consentUrl.pathname, google.settings.authUrl);
  t.is(consentUrl.searchParams.get('scope'), 'https://www.googleapis.com/auth/calendar.events https://www.googleapis.com/auth/calendar.freebusy openid email');
  t.is(consentUrl.searchParams.get('access_type'), 'offline');
  t.is(consentUrl.searchParams.get('prompt'), 'consent');

  const consent = await fetch(consentUrl, { redirect: 'manual' });
  t.is(consent.status, 302);
  const back = new URL(consent.headers.get('location')!);
  t.is(back.origin + back.pathname, redirectUri);
  t.is(back.searchParams.get('state'), 'state-123');

  const credentials = await oauth.exchange({ code: back.searchParams.get('code')!, redirectUri });
  t.like(credentials, { kind: 'google', calendarId: 'primary', email });
  const client = createCalendarOpener({ pool: null as never, log: createLogger('silent'), config: loadConfig(google.env) }).open(credentials);
  t.deepEqual(await client.freeBusy(...day('2031-01-01')), []);

  // A code is good once.
  await t.throwsAsync(oauth.exchange({ code: back.searchParams.get('code')!, redirectUri }), { instanceOf: CalendarAuthError });
});

test('OAuth: without GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET Google is not offered, and stored Google credentials say the calendar is unavailable', async (t) => {
  t.is(calendarOAuthProviders(loadConfig({})).google, null);
  t.is(calendarOAuthProviders(loadConfig({ GOOGLE_CLIENT_ID: 'only-the-id' })).google, null);
  const client = createCalendarOpener({ pool: null as never, log: createLogger('silent'), config: loadConfig({}) }).open(credentialsFor(newUser()));
  await t.throwsAsync(client.freeBusy(...day('2031-01-01')), { instanceOf: CalendarUnavailable });
});

test('an access token past its expiry is refreshed with the refresh token before the call, and the new credentials are handed over to be stored', async (t) => {
  const email = newUser();
  const old = credentialsFor(email, { expiresInS: -60 });
  const refreshed: CalendarCredentials[] = [];
  const client = googleCalendar(google.settings, old, { onRefreshed: async (c) => void refreshed.push(c) });
  t.deepEqual(await client.freeBusy(...day('2031-01-01')), []);
  t.is(google.refreshes(email), 1);
  t.is(refreshed.length, 1);
  t.like(refreshed[0], { kind: 'google', refreshToken: old.refreshToken, calendarId: 'primary', email });
  t.not((refreshed[0] as typeof old).accessToken, old.accessToken);
  t.true(Date.parse((refreshed[0] as typeof old).expiresAt) > Date.now());
});

test('an access token Google refuses before its stated expiry (401 authError) is refreshed and the call retried once', async (t) => {
  const email = newUser();
  const refreshed: CalendarCredentials[] = [];
  const client = googleCalendar(google.settings, credentialsFor(email), { onRefreshed: async (c) => void refreshed.push(c) });
  google.insertEvent(email, { start: new Date('2031-01-01T10:00:00Z'), end: new Date('2031-01-01T11:00:00Z') });
  google.expireAccessTokens();
  t.is((await client.freeBusy(...day('2031-01-01'))).length, 1);
  t.is(refreshed.length, 1);
});

test('a revoked grant (refresh → invalid_grant) is CalendarAuthError "access to the calendar was withdrawn" on every operation', async (t) => {
  const email = newUser();
  const client = googleCalendar(google.settings, credentialsFor(email));
  const { syncToken } = await client.changes(null);
  google.revoke(email);
  const withdrawn = { instanceOf: CalendarAuthError, message: 'access to the calendar was withdrawn' };
  await t.throwsAsync(client.freeBusy(...day('2031-01-01')), withdrawn);
  await t.throwsAsync(client.changes(syncToken), withdrawn);
  await t.throwsAsync(client.deleteEvent('abcdef'), withdrawn);
  await t.throwsAsync(
    client.createEvent({ uid: 'u-1', start: new Date('2031-01-01T10:00:00Z'), end: new Date('2031-01-01T10:30:00Z'), timezone: 'UTC', title: 'T', description: '' }),
    withdrawn,
  );
});

test('a sync token Google no longer accepts (410 fullSyncRequired) is CalendarSyncExpired; reading again from null pages through to a new token', async (t) => {
  const email = newUser();
  for (let i = 0; i < 5; i++) google.insertEvent(email, { start: new Date(`2031-02-0${i + 1}T10:00:00Z`), end: new Date(`2031-02-0${i + 1}T11:00:00Z`) });
  const client = googleCalendar(google.settings, credentialsFor(email));
  const listCalls = () => google.requests.filter((r) => r.email === email && r.method === 'GET' && r.path.endsWith('/events')).length;
  const before = listCalls();
  const first = await client.changes(null);
  t.is(listCalls() - before, 3, 'five events in pages of two');
  google.expireSyncTokens();
  await t.throwsAsync(client.changes(first.syncToken), { instanceOf: CalendarSyncExpired });
  const again = await client.changes(null);
  t.deepEqual((await client.changes(again.syncToken)).changes, []);
});

test('writing a meeting twice with one uid (a retried insert meets 409 duplicate) answers the same event, and there is one', async (t) => {
  const email = newUser();
  const client = googleCalendar(google.settings, credentialsFor(email));
  const event = { uid: 'appt_7f3c', start: new Date('2031-03-01T10:00:00Z'), end: new Date('2031-03-01T10:30:00Z'), timezone: 'America/New_York', title: 'Meeting with Ana', description: 'notes' };
  const a = await client.createEvent(event);
  const b = await client.createEvent(event);
  t.is(b.id, a.id);
  t.is(b.etag, a.etag);
  t.is(google.events(email).length, 1);
  t.like(google.events(email)[0], { iCalUID: 'appt_7f3c', summary: 'Meeting with Ana', transparency: 'opaque', start: { dateTime: '2031-03-01T10:00:00.000Z', timeZone: 'America/New_York' } });
});

test('rate limits (429, 403 rateLimitExceeded) and server errors are CalendarUnavailable, not a withdrawn access', async (t) => {
  const email = newUser();
  const client = googleCalendar(google.settings, credentialsFor(email));
  for (const status of [429, 403, 500, 503]) {
    // The OAuth2 client takes a 403 for a stale token: it refreshes and tries once more, so a lasting limit fails twice.
    google.failNext(email, status, status === 403 ? 2 : 1);
    await t.throwsAsync(client.freeBusy(...day('2031-01-01')), { instanceOf: CalendarUnavailable }, String(status));
  }
  t.deepEqual(await client.freeBusy(...day('2031-01-01')), []);
});

test('a Calendar API that does not answer is CalendarUnavailable', async (t) => {
  const closed = await startFakeGoogle();
  await closed.close();
  const client = googleCalendar({ ...google.settings, apiUrl: closed.url }, credentialsFor(newUser()));
  await t.throwsAsync(client.freeBusy(...day('2031-01-01')), { instanceOf: CalendarUnavailable });
});
