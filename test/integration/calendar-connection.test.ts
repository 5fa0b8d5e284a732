/**
 * The customer connects its calendar (issue 24): the calendar link and its page, the check on
 * connect (free/busy, a probe event written and deleted, the sync token taken), the sealed
 * credentials, disconnecting, the periodic check (`check_calendars`) and what a connection that
 * stops working does to the calendar step. The simulated calendar of test mode; CalDAV against
 * Radicale is in calendar-connection-caldav.test.ts.
 */
import test from 'ava';
import pg from 'pg';
import { startTestService, TEST_ENCRYPTION_KEY, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { connectSimulatedCalendar, mintCalendarLink, postCalendarForm } from '../helpers/calendar.ts';
import { SecretBox } from '../../runtime/secret-box.ts';
import { CalendarAuthError, CalendarUnavailable, type CalendarClient } from '../../calendars/calendar.ts';
import { checkConnection } from '../../actors/customer/calendar-connection.ts';
import { createCalendarConnectionRepository } from '../../db/calendar-connections.ts';
import { createCalendarOpener } from '../../calendars/open-calendar.ts';

let svc: TestService;
let db: pg.Client;
test.before(async () => {
  svc = await startTestService();
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

const calendarStep = async (api: any, id: string) => (await api.get(`/v1/customers/${id}/provisioning`)).body.steps.find((s: any) => s.step === 'calendar');

test('a test customer connects the simulated calendar on its link: checked, sealed, working, the step done', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  t.deepEqual((await a.api.get(`/v1/customers/${c.id}/calendar`)).body, {
    object: 'calendar_connection', customer_id: c.id, status: 'not_connected', kind: null, label: null, connected_at: null, checked_at: null, failure: null,
  });
  await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
  t.like(await calendarStep(a.api, c.id), { done: false, blocker: 'no_calendar_connected' });

  const minted = await a.api.post(`/v1/customers/${c.id}/calendar_link`);
  t.is(minted.status, 201);
  t.like(minted.body, { object: 'calendar_link', customer_id: c.id, emailed_to: null });
  t.regex(minted.body.url, /\/calendar\/cal_[0-9A-Za-z]{36}$/);
  const days = (Date.parse(minted.body.expires_at) - Date.now()) / 86_400_000;
  t.true(days > 6.9 && days <= 7.01, `7 days (${days})`);
  const token = minted.body.url.split('/').pop();
  const stored = await db.query(`SELECT token_hash FROM calendar_links WHERE customer_id = $1`, [c.id]);
  t.false(stored.rows[0].token_hash.toString('utf8').includes(token), 'only the hash is kept');

  const page = await fetch(minted.body.url);
  t.is(page.status, 200);
  const html = await page.text();
  t.regex(html, /Connect the test calendar/);
  t.regex(html, /test mode uses a simulated calendar/);
  t.notRegex(html, /name="password"/, 'no calendar address form in test mode');
  t.notRegex(html, /switchboard/i);

  const posted = await postCalendarForm(minted.body.url, { connect: 'test' });
  t.is(posted.status, 303);
  t.is(posted.location, new URL(minted.body.url).pathname);

  const conn = (await a.api.get(`/v1/customers/${c.id}/calendar`)).body;
  t.like(conn, { object: 'calendar_connection', status: 'working', kind: 'simulated', label: 'Test calendar', failure: null });
  t.truthy(conn.connected_at);
  t.deepEqual(Object.keys(conn).sort(), ['checked_at', 'connected_at', 'customer_id', 'failure', 'kind', 'label', 'object', 'status']);
  t.like(await calendarStep(a.api, c.id), { done: true, blocker: null, message: null });

  // The check wrote a probe event and deleted it; the sync starts after it.
  const probe = await db.query(`SELECT summary, deleted FROM simulated_calendar_events WHERE calendar_id = $1`, [c.id]);
  t.deepEqual(probe.rows, [{ summary: 'Connection check', deleted: true }]);
  const row = (await db.query(`SELECT credentials, sync_token FROM calendar_connections WHERE customer_id = $1`, [c.id])).rows[0];
  t.regex(row.sync_token, /^sim:\d+$/);
  t.false(row.credentials.toString('latin1').includes(c.id), 'the credentials are sealed');
  t.deepEqual(JSON.parse(SecretBox.fromKey(TEST_ENCRYPTION_KEY).open(row.credentials)), { kind: 'simulated', calendarId: c.id });

  // The page now shows the connection.
  const again = await (await fetch(minted.body.url)).text();
  t.regex(again, /Your calendar is connected/);
});

test('disconnecting forgets the connection and the step is not done; a second disconnect is 409 calendar_not_connected', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
  await connectSimulatedCalendar(a.api, c.id);
  const off = await a.api.delete(`/v1/customers/${c.id}/calendar`);
  t.is(off.status, 200);
  t.like(off.body, { status: 'not_connected', kind: null });
  t.is((await db.query(`SELECT count(*)::int AS n FROM calendar_connections WHERE customer_id = $1`, [c.id])).rows[0].n, 0);
  t.like(await calendarStep(a.api, c.id), { done: false, blocker: 'no_calendar_connected' });
  const twice = await a.api.delete(`/v1/customers/${c.id}/calendar`);
  t.is(twice.status, 409);
  t.is(twice.body.error.code, 'calendar_not_connected');
});

test('minting a calendar link revokes the previous one; an unknown token is not found', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const first = await mintCalendarLink(a.api, c.id);
  const second = await mintCalendarLink(a.api, c.id);
  const old = await fetch(first);
  t.is(old.status, 410);
  t.regex(await old.text(), /This link has been replaced/);
  t.is((await postCalendarForm(first, { connect: 'test' })).status, 410, 'a replaced link connects nothing');
  t.is((await fetch(second)).status, 200);
  t.is((await fetch(`${svc.url}/calendar/cal_000000000000000000000000000000000000`)).status, 404);
  t.is((await a.api.get(`/v1/customers/${c.id}/calendar`)).body.status, 'not_connected');
});

test('a form posted from another site is refused and connects nothing', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const url = await mintCalendarLink(a.api, c.id);
  const posted = await postCalendarForm(url, { connect: 'test' }, { origin: 'https://attacker.example' });
  t.is(posted.status, 403);
  t.is((await postCalendarForm(url, { connect: 'test' }, { 'sec-fetch-site': 'cross-site', origin: 'null' })).status, 403);
  t.is((await a.api.get(`/v1/customers/${c.id}/calendar`)).body.status, 'not_connected');
});

test('a live customer is offered its own calendar (address, user name, app password), not the test calendar; a check that fails stores nothing and says why in place', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const c = await makeCustomer(a.liveApi!);
  const url = await mintCalendarLink(a.liveApi!, c.id);
  const html = await (await fetch(url)).text();
  t.regex(html, /Other calendar \(iCloud, Fastmail, Nextcloud…\)/);
  t.regex(html, /name="password"/);
  t.notRegex(html, /Connect the test calendar/);
  t.notRegex(html, /Google|Microsoft/, 'no OAuth choice without the client settings');
  t.is((await postCalendarForm(url, { connect: 'test' })).status, 400, 'no test calendar for a live customer');

  const refused = await postCalendarForm(url, { connect: 'caldav', url: 'http://127.0.0.1:9/dav/', username: 'ana', password: 'secret-app-password' });
  t.is(refused.status, 422);
  t.regex(refused.text, /<h3>The calendar could not be connected<\/h3><p>The calendar server could not be reached\.<\/p>/);
  t.regex(refused.text, /value="http:\/\/127\.0\.0\.1:9\/dav\/"/, 'what was typed is kept');
  t.notRegex(refused.text, /secret-app-password/, 'never the password');
  t.is((await a.liveApi!.get(`/v1/customers/${c.id}/calendar`)).body.status, 'not_connected');
  t.false(svc.logs.raw.join('\n').includes('secret-app-password'), 'never logged');

  const missing = await postCalendarForm(url, { connect: 'caldav', url: 'http://127.0.0.1:9/dav/', username: '', password: '' });
  t.is(missing.status, 400);
  t.regex(missing.text, /Fill in the calendar&#39;s address|Fill in the calendar's address/);

  // Everything filled in, the address not a web address: the page says what an address looks like.
  const notWeb = await postCalendarForm(url, { connect: 'caldav', url: 'caldav.icloud.com', username: 'ana', password: 'secret-app-password' });
  t.is(notWeb.status, 400);
  t.regex(notWeb.text, /The calendar&#39;s address starts with https:\/\/ \(or http:\/\/\), for example https:\/\/caldav\.icloud\.com\/\./);
  t.regex(notWeb.text, /value="caldav\.icloud\.com"/, 'what was typed is kept');
});

test("the reason a calendar could not be connected is said in the customer's language, as the rest of the page", async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const c = await makeCustomer(a.liveApi!, { name: 'Zahnarzt Berg', country: 'DE', timezone: 'Europe/Berlin' });
  const url = await mintCalendarLink(a.liveApi!, c.id);
  const refused = await postCalendarForm(url, { connect: 'caldav', url: 'http://127.0.0.1:9/dav/', username: 'ana', password: 'secret-app-password' });
  t.is(refused.status, 422);
  t.regex(refused.text, /<h3>Der Kalender konnte nicht verbunden werden<\/h3><p>Der Kalenderserver war nicht erreichbar\.<\/p>/);
  t.notRegex(refused.text, /could not be reached/);
});

/** The periodic check with a calendar that answers as `client` does. */
function checkWith(client: Partial<CalendarClient>) {
  const secrets = SecretBox.fromKey(TEST_ENCRYPTION_KEY);
  const real = createCalendarOpener({ pool: svc.services.pool, log: svc.services.log } as any);
  const calendars = { ...real, open: () => client as CalendarClient } as typeof real;
  return async (customerId: string) => {
    const row = await createCalendarConnectionRepository(svc.services.pool).get(customerId);
    return checkConnection({ pool: svc.services.pool, clock: svc.services.clock, log: svc.services.log, calendars, secrets }, row!);
  };
}

test('a connection whose credentials are refused fails at once: the step is not done, calendar_connection_failed, and the message says why; working again when it answers', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
  await connectSimulatedCalendar(a.api, c.id);

  await checkWith({ freeBusy: async () => { throw new CalendarAuthError('the calendar server refused the user name or password'); } })(c.id);
  const conn = (await a.api.get(`/v1/customers/${c.id}/calendar`)).body;
  t.like(conn, { status: 'failing', failure: { code: 'calendar_auth_failed', message: 'the calendar server refused the user name or password' } });
  const provisioning = (await a.api.get(`/v1/customers/${c.id}/provisioning`)).body;
  t.true(provisioning.blockers.includes('calendar_connection_failed'));
  t.false(provisioning.ready);
  t.deepEqual(provisioning.steps.find((s: any) => s.step === 'calendar'), {
    step: 'calendar',
    done: false,
    waiting_on: 'customer',
    blocker: 'calendar_connection_failed',
    message:
      "The customer's calendar connection stopped working (the calendar server refused the user name or password); no times are offered from it until the customer connects it again through a calendar link.",
  });
  const due = (await db.query(`SELECT check_due_at - checked_at AS gap FROM calendar_connections WHERE customer_id = $1`, [c.id])).rows[0].gap;
  t.is(due.minutes, 15, 'a failing connection is checked again in 15 minutes');
  // The page says so too.
  const page = await (await fetch(await mintCalendarLink(a.api, c.id))).text();
  t.regex(page, /stopped working: the calendar server refused the user name or password/);

  await checkWith({ freeBusy: async () => [] })(c.id);
  t.like((await a.api.get(`/v1/customers/${c.id}/calendar`)).body, { status: 'working', failure: null });
  t.like(await calendarStep(a.api, c.id), { done: true, blocker: null });
  const gap = (await db.query(`SELECT check_due_at - checked_at AS gap FROM calendar_connections WHERE customer_id = $1`, [c.id])).rows[0].gap;
  t.is(gap.hours, 6, 'a working connection is checked every 6 hours');
});

test('an unreachable calendar fails the connection on the third check in a row, not before', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  await connectSimulatedCalendar(a.api, c.id);
  const unreachable = checkWith({ freeBusy: async () => { throw new CalendarUnavailable('connection refused'); } });
  await unreachable(c.id);
  await unreachable(c.id);
  t.is((await a.api.get(`/v1/customers/${c.id}/calendar`)).body.status, 'working', 'two in a row: still working');
  await unreachable(c.id);
  t.like((await a.api.get(`/v1/customers/${c.id}/calendar`)).body, {
    status: 'failing',
    failure: { code: 'calendar_unavailable', message: 'connection refused, 3 checks in a row' },
  });
});

test('the check_calendars job checks each connection when due: 6 hours after the last', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  await connectSimulatedCalendar(a.api, c.id);
  const before = (await a.api.get(`/v1/customers/${c.id}/calendar`)).body.checked_at;
  await db.query(`UPDATE calendar_connections SET check_due_at = now() - interval '1 minute' WHERE customer_id = $1`, [c.id]);
  const run = await a.admin.post('/admin/v1/jobs/check_calendars/run');
  t.is(run.status, 200);
  t.true(run.body.processed >= 1);
  const after = (await a.api.get(`/v1/customers/${c.id}/calendar`)).body;
  t.is(after.status, 'working');
  t.not(after.checked_at, before);
  const next = (await db.query(`SELECT check_due_at > now() + interval '5 hours' AS later FROM calendar_connections WHERE customer_id = $1`, [c.id])).rows[0];
  t.true(next.later);
});

test('the calendar routes need their scopes and name only the caller’s customers', async (t) => {
  const a = await makeAccount(svc.url);
  const other = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  t.is((await other.api.get(`/v1/customers/${c.id}/calendar`)).status, 404);
  t.is((await other.api.post(`/v1/customers/${c.id}/calendar_link`)).status, 404);
  t.is((await other.api.delete(`/v1/customers/${c.id}/calendar`)).status, 404);
});

test("the onboarding page's done state links to the calendar page when the calendar step was asked for and is not done", async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const plain = await makeCustomer(a.api, { name: 'Harbour Cafe' });
  await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
  const accept = async (id: string) => {
    const link = (await a.api.post(`/v1/customers/${id}/onboarding_link`)).body.url;
    const res = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'accepted_by=Jane+Doe&agree=yes' });
    return { link, status: res.status, html: await res.text() };
  };
  const done = await accept(c.id);
  t.is(done.status, 200);
  t.regex(done.html, /One more step: connect your calendar/);
  const href = done.html.match(/href="([^"]*\/calendar\/cal_[^"]+)"/)?.[1];
  t.truthy(href, 'a link to the calendar page');
  t.regex(await (await fetch(href!)).text(), /Connect the test calendar/);
  t.is((await postCalendarForm(href!, { connect: 'test' })).status, 303);
  // Once connected, the done state has nothing more to ask.
  t.notRegex(await (await fetch(done.link)).text(), /One more step/);
  // Without the calendar step asked for, no calendar link.
  const other = await accept(plain.id);
  t.notRegex(other.html, /One more step|\/calendar\//);
});

test('a calendar link minted with an email is emailed on the reseller’s behalf: emailed_to, the URL sealed in the outbox, shared limits with onboarding emails', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const minted = await a.api.post(`/v1/customers/${c.id}/calendar_link`, { email: 'Owner@BrightDental.example' });
  t.is(minted.status, 201, minted.text);
  t.is(minted.body.emailed_to, 'owner@brightdental.example');
  const rows = (await db.query(`SELECT kind, audience, to_address, secret_sealed FROM email_outbox WHERE customer_id = $1`, [c.id])).rows;
  t.is(rows.length, 1);
  t.like(rows[0], { kind: 'calendar_link', audience: 'customer', to_address: 'owner@brightdental.example' });
  t.is(SecretBox.fromKey(TEST_ENCRYPTION_KEY).open(rows[0].secret_sealed), minted.body.url);
  t.is((await a.api.post(`/v1/customers/${c.id}/calendar_link`, { email: 'not an address' })).status, 400);
  // Five links emailed to one customer in 24 hours, onboarding and calendar together: the sixth is refused.
  for (let i = 0; i < 4; i++) t.is((await a.api.post(`/v1/customers/${c.id}/onboarding_link`, { email: 'owner@brightdental.example' })).status, 201);
  const sixth = await a.api.post(`/v1/customers/${c.id}/calendar_link`, { email: 'owner@brightdental.example' });
  t.is(sixth.status, 429);
  t.is(sixth.body.error.code, 'onboarding_email_limit');
  t.is((await a.api.post(`/v1/customers/${c.id}/calendar_link`)).status, 201, 'a mint without email is not limited');
});
