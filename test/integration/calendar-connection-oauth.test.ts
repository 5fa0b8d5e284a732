/**
 * A live customer connects Google Calendar on its calendar link (issue 24) against the fake Google
 * (test/fakes/google-calendar.ts, the documented OAuth 2.0 web-server flow and Calendar API v3):
 * the page offers it only with the client settings, the state is signed, bound to the link and
 * used once, consent refused connects nothing, the check runs on connect, a refreshed access
 * token is sealed again, and a withdrawn grant returns the calendar step to not done.
 */
import test from 'ava';
import pg from 'pg';
import { startTestService, TEST_ENCRYPTION_KEY, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { mintCalendarLink } from '../helpers/calendar.ts';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google-calendar.ts';
import { startFakeMicrosoft, type FakeMicrosoft } from '../fakes/microsoft-graph.ts';
import { SecretBox } from '../../runtime/secret-box.ts';

let svc: TestService;
let google: FakeGoogle;
let microsoft: FakeMicrosoft;
let db: pg.Client;
test.before(async () => {
  [google, microsoft] = await Promise.all([startFakeGoogle(), startFakeMicrosoft()]);
  svc = await startTestService({ ...google.env, ...microsoft.env });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
  await google?.close();
  await microsoft?.close();
});

const get = (url: string) => fetch(url, { redirect: 'manual' });

/** The browser's round trip: the page's Google (or Microsoft) link → the fake's consent → back to the callback. */
async function roundTrip(link: string, kind: 'google' | 'microsoft' = 'google') {
  const html = await (await fetch(link)).text();
  const href = html.match(new RegExp(`href="([^"]*/oauth/${kind})"`))?.[1];
  if (!href) throw new Error(`no ${kind} choice on the page`);
  const start = await get(new URL(href, link).toString());
  const authorize = start.headers.get('location')!;
  const consent = await get(authorize);
  const callback = consent.headers.get('location')!;
  const back = await get(callback);
  return { start, authorize, callback, status: back.status, html: await back.text() };
}

test.serial('Google Calendar: offered with its client settings; the consent round trip connects the account checked, sealed and working', async (t) => {
  google.addUser('owner@brightdental.example');
  google.consentAs('owner@brightdental.example');
  const a = await makeAccount(svc.url, { live: true });
  const c = await makeCustomer(a.liveApi!);
  await a.liveApi!.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
  const link = await mintCalendarLink(a.liveApi!, c.id);
  const page = await (await fetch(link)).text();
  t.regex(page, /Connect Google Calendar/);
  t.regex(page, /Connect Microsoft 365/);

  const trip = await roundTrip(link);
  t.is(trip.start.status, 303);
  const auth = new URL(trip.authorize);
  t.is(auth.origin, new URL(google.url).origin);
  t.is(auth.searchParams.get('redirect_uri'), `${svc.url}/calendar/oauth/callback`);
  t.is(auth.searchParams.get('access_type'), 'offline');
  t.regex(auth.searchParams.get('scope') ?? '', /calendar\.events/);
  t.true(trip.callback.startsWith(`${svc.url}/calendar/oauth/callback?`));
  t.is(trip.status, 200, trip.html.slice(0, 500));
  t.regex(trip.html, /Your calendar is connected/);
  t.regex(trip.html, /owner@brightdental\.example/);

  t.like((await a.liveApi!.get(`/v1/customers/${c.id}/calendar`)).body, { status: 'working', kind: 'google', label: 'owner@brightdental.example', failure: null });
  const step = (await a.liveApi!.get(`/v1/customers/${c.id}/provisioning`)).body.steps.find((s: any) => s.step === 'calendar');
  t.like(step, { done: true, blocker: null });
  // The check wrote its probe event and deleted it.
  const probe = google.events('owner@brightdental.example').filter((e) => e.summary === 'Connection check');
  t.is(probe.length, 1);
  t.is(probe[0].status, 'cancelled');
  const row = (await db.query(`SELECT credentials FROM calendar_connections WHERE customer_id = $1`, [c.id])).rows[0];
  const sealed = JSON.parse(SecretBox.fromKey(TEST_ENCRYPTION_KEY).open(row.credentials));
  t.like(sealed, { kind: 'google', email: 'owner@brightdental.example' });
  t.false(row.credentials.toString('latin1').includes(sealed.refreshToken), 'sealed');
  t.false(svc.logs.raw.join('\n').includes(sealed.refreshToken), 'never logged');

  // The state was used once: the same callback again connects nothing.
  const replay = await get(trip.callback);
  t.is(replay.status, 404);
});

test.serial('a forged or tampered state is refused; consent refused connects nothing', async (t) => {
  google.addUser('frontdesk@harbourcafe.example');
  const a = await makeAccount(svc.url, { live: true });
  const c = await makeCustomer(a.liveApi!);
  const link = await mintCalendarLink(a.liveApi!, c.id);
  const html = await (await fetch(link)).text();
  const start = await get(new URL(html.match(/href="([^"]*\/oauth\/google)"/)![1], link).toString());
  const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
  const [id, nonce] = state.split('.');
  t.is((await get(`${svc.url}/calendar/oauth/callback?code=x&state=${encodeURIComponent(`${id}.${nonce}.forged`)}`)).status, 404);
  t.is((await get(`${svc.url}/calendar/oauth/callback?code=x&state=${encodeURIComponent(`${id}.other.${state.split('.')[2]}`)}`)).status, 404);

  google.consentAs('deny');
  const trip = await roundTrip(link);
  t.is(trip.status, 400);
  t.regex(trip.html, /Access was not given, so nothing was connected/);
  t.is((await a.liveApi!.get(`/v1/customers/${c.id}/calendar`)).body.status, 'not_connected');
});

test.serial('a refreshed access token is sealed again; a withdrawn grant fails the connection and the calendar step says why', async (t) => {
  google.addUser('boss@cornerbakery.example');
  google.consentAs('boss@cornerbakery.example');
  const a = await makeAccount(svc.url, { live: true });
  const c = await makeCustomer(a.liveApi!);
  await a.liveApi!.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
  t.is((await roundTrip(await mintCalendarLink(a.liveApi!, c.id))).status, 200);
  const box = SecretBox.fromKey(TEST_ENCRYPTION_KEY);
  const tokenNow = async () => JSON.parse(box.open((await db.query(`SELECT credentials FROM calendar_connections WHERE customer_id = $1`, [c.id])).rows[0].credentials)).accessToken;
  const before = await tokenNow();
  const due = () => db.query(`UPDATE calendar_connections SET check_due_at = now() - interval '1 minute' WHERE customer_id = $1`, [c.id]);

  google.expireAccessTokens();
  await due();
  await a.admin.post('/admin/v1/jobs/check_calendars/run');
  t.is((await a.liveApi!.get(`/v1/customers/${c.id}/calendar`)).body.status, 'working');
  t.not(await tokenNow(), before, 'the refreshed token was sealed and stored');

  google.revoke('boss@cornerbakery.example');
  google.expireAccessTokens();
  await due();
  await a.admin.post('/admin/v1/jobs/check_calendars/run');
  const conn = (await a.liveApi!.get(`/v1/customers/${c.id}/calendar`)).body;
  t.like(conn, { status: 'failing', failure: { code: 'calendar_auth_failed' } });
  t.regex(conn.failure.message, /withdrawn/);
  const provisioning = (await a.liveApi!.get(`/v1/customers/${c.id}/provisioning`)).body;
  t.true(provisioning.blockers.includes('calendar_connection_failed'));
  t.like(provisioning.steps.find((s: any) => s.step === 'calendar'), { done: false, blocker: 'calendar_connection_failed' });
});

test.serial('Microsoft 365: the consent round trip connects the account checked and working; a revoked consent fails the calendar step', async (t) => {
  microsoft.addUser('owner@northbakery.example');
  microsoft.consentAs('owner@northbakery.example');
  const a = await makeAccount(svc.url, { live: true });
  const c = await makeCustomer(a.liveApi!);
  await a.liveApi!.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
  const trip = await roundTrip(await mintCalendarLink(a.liveApi!, c.id), 'microsoft');
  t.is(new URL(trip.authorize).origin, new URL(microsoft.url).origin);
  t.regex(new URL(trip.authorize).searchParams.get('scope') ?? '', /Calendars\.ReadWrite/);
  t.is(trip.status, 200, trip.html.slice(0, 500));
  t.regex(trip.html, /Your calendar is connected/);
  t.like((await a.liveApi!.get(`/v1/customers/${c.id}/calendar`)).body, { status: 'working', kind: 'microsoft', failure: null });
  const probe = microsoft.events('owner@northbakery.example').filter((e) => e.subject === 'Connection check');
  t.is(probe.length, 1);
  t.true(probe[0].deleted, 'the probe event was deleted');

  microsoft.revoke('owner@northbakery.example');
  microsoft.expireAccessTokens();
  await db.query(`UPDATE calendar_connections SET check_due_at = now() - interval '1 minute' WHERE customer_id = $1`, [c.id]);
  await a.admin.post('/admin/v1/jobs/check_calendars/run');
  t.like((await a.liveApi!.get(`/v1/customers/${c.id}/calendar`)).body, { status: 'failing', failure: { code: 'calendar_auth_failed' } });
  t.like((await a.liveApi!.get(`/v1/customers/${c.id}/provisioning`)).body.steps.find((s: any) => s.step === 'calendar'), { done: false, blocker: 'calendar_connection_failed' });
});
