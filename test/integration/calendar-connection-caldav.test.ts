/**
 * A live customer connects a real CalDAV calendar (Debian's Radicale on a loopback port) on its
 * calendar link (issue 24, "Done when"): the check on connect, a wrong password refused in place
 * with nothing stored, and a password changed afterwards returning the calendar step to not done
 * at the next periodic check, with the message saying why; connecting again with the new one
 * completes it again.
 */
import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { mintCalendarLink, postCalendarForm } from '../helpers/calendar.ts';
import { radicaleMissing, startRadicale, type Radicale } from '../helpers/radicale.ts';

if (radicaleMissing) {
  test('calendar connection against Radicale', (t) => t.log(`skipped: ${radicaleMissing}`));
} else {
  let svc: TestService;
  let radicale: Radicale;
  let db: pg.Client;
  test.before(async () => {
    [svc, radicale] = await Promise.all([startTestService(), startRadicale()]);
    db = new pg.Client({ connectionString: svc.databaseUrl });
    await db.connect();
  });
  test.after.always(async () => {
    await db?.end();
    await Promise.all([svc?.stop(), radicale?.stop()]);
  });

  const calendarStep = async (api: any, id: string) => (await api.get(`/v1/customers/${id}/provisioning`)).body.steps.find((s: any) => s.step === 'calendar');

  test('connect a CalDAV calendar; a changed password returns the calendar step to not done; connecting again completes it', async (t) => {
    await radicale.addUser('ana', 'first-app-password');
    const a = await makeAccount(svc.url, { live: true });
    const api = a.liveApi!;
    const c = await makeCustomer(api);
    await api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
    const url = await mintCalendarLink(api, c.id);
    const calendarUrl = radicale.calendarUrl('ana');

    // A wrong password: refused in place, nothing stored.
    const wrong = await postCalendarForm(url, { connect: 'caldav', url: calendarUrl, username: 'ana', password: 'not-the-password' });
    t.is(wrong.status, 422);
    t.regex(wrong.text, /The calendar could not be connected<\/h3><p>The calendar server refused the user name or password\.<\/p>/);
    t.is((await api.get(`/v1/customers/${c.id}/calendar`)).body.status, 'not_connected');

    const posted = await postCalendarForm(url, { connect: 'caldav', url: calendarUrl, username: 'ana', password: 'first-app-password' });
    t.is(posted.status, 303, posted.text.slice(0, 400));
    const conn = (await api.get(`/v1/customers/${c.id}/calendar`)).body;
    t.like(conn, { status: 'working', kind: 'caldav', label: calendarUrl, failure: null });
    t.like(await calendarStep(api, c.id), { done: true, blocker: null });
    // The probe event was written and deleted: the calendar holds nothing of it.
    const listing = await radicale.request('ana', 'PROPFIND', calendarUrl, undefined, { depth: '1' });
    t.notRegex(await listing.text(), /\.ics</, 'no event left in the calendar');
    const row = (await db.query(`SELECT credentials, sync_token FROM calendar_connections WHERE customer_id = $1`, [c.id])).rows[0];
    t.truthy(row.sync_token, 'the sync starts from the token taken on connect');
    t.false(row.credentials.toString('latin1').includes('first-app-password'), 'sealed');
    t.false(svc.logs.raw.join('\n').includes('first-app-password'), 'never logged');

    // The business changes its password: the next check finds out.
    await radicale.setPassword('ana', 'second-app-password');
    await db.query(`UPDATE calendar_connections SET check_due_at = now() - interval '1 minute' WHERE customer_id = $1`, [c.id]);
    t.true((await a.admin.post('/admin/v1/jobs/check_calendars/run')).body.processed >= 1);
    t.like((await api.get(`/v1/customers/${c.id}/calendar`)).body, {
      status: 'failing',
      failure: { code: 'calendar_auth_failed', message: 'the calendar server refused the user name or password' },
    });
    const step = await calendarStep(api, c.id);
    t.like(step, { done: false, blocker: 'calendar_connection_failed' });
    t.regex(step.message, /stopped working \(the calendar server refused the user name or password\)/);
    t.true((await api.get(`/v1/customers/${c.id}/provisioning`)).body.blockers.includes('calendar_connection_failed'));

    // Connected again with the new password: working, the step done.
    const again = await postCalendarForm(url, { connect: 'caldav', url: calendarUrl, username: 'ana', password: 'second-app-password' });
    t.is(again.status, 303);
    t.like((await api.get(`/v1/customers/${c.id}/calendar`)).body, { status: 'working', failure: null });
    t.like(await calendarStep(api, c.id), { done: true, blocker: null, message: null });
  });

  test("the server's root address is enough: the user's calendar is found", async (t) => {
    await radicale.addUser('ben', 'ben-app-password');
    const a = await makeAccount(svc.url, { live: true });
    const c = await makeCustomer(a.liveApi!);
    const url = await mintCalendarLink(a.liveApi!, c.id);
    const posted = await postCalendarForm(url, { connect: 'caldav', url: radicale.url, username: 'ben', password: 'ben-app-password' });
    t.is(posted.status, 303, posted.text.slice(0, 400));
    t.like((await a.liveApi!.get(`/v1/customers/${c.id}/calendar`)).body, { status: 'working', kind: 'caldav' });
  });

  test("a calendar's address on our own network is refused (no requests to loopback, private or metadata addresses) unless private addresses are allowed", async (t) => {
    await radicale.addUser('dora', 'dora-app-password');
    const guarded = await startTestService({ SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '' });
    try {
      const a = await makeAccount(guarded.url, { live: true });
      const c = await makeCustomer(a.liveApi!);
      const url = await mintCalendarLink(a.liveApi!, c.id);
      for (const address of [radicale.calendarUrl('dora'), 'http://169.254.169.254/latest/', 'http://localhost:8080/']) {
        const posted = await postCalendarForm(url, { connect: 'caldav', url: address, username: 'dora', password: 'dora-app-password' });
        t.is(posted.status, 422, address);
        t.regex(posted.text, /The calendar&#39;s address must be one reachable over the internet \(/, address);
      }
      t.is((await a.liveApi!.get(`/v1/customers/${c.id}/calendar`)).body.status, 'not_connected');
    } finally {
      await guarded.stop();
    }
  });

  test('a password changed is found by the next sync: the check runs at once, the step is not done, and the sync stops asking every round', async (t) => {
    await radicale.addUser('cleo', 'cleo-app-password');
    const a = await makeAccount(svc.url, { live: true });
    const api = a.liveApi!;
    const c = await makeCustomer(api);
    await api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['calendar'] });
    const url = await mintCalendarLink(api, c.id);
    const posted = await postCalendarForm(url, { connect: 'caldav', url: radicale.calendarUrl('cleo'), username: 'cleo', password: 'cleo-app-password' });
    t.is(posted.status, 303, posted.text.slice(0, 400));

    await radicale.setPassword('cleo', 'cleo-new-password');
    // The sync is due (a minute since the last); the 6-hourly check is not.
    await db.query(`UPDATE calendar_connections SET synced_at = now() - interval '2 minutes' WHERE customer_id = $1`, [c.id]);
    await a.admin.post('/admin/v1/jobs/sync_calendars/run');
    const row = (await db.query(`SELECT synced_at > now() - interval '1 minute' AS backed_off FROM calendar_connections WHERE customer_id = $1`, [c.id])).rows[0];
    t.true(row.backed_off, 'the refused sync is tried again in a minute, not at every round');
    await a.admin.post('/admin/v1/jobs/check_calendars/run');
    t.like((await api.get(`/v1/customers/${c.id}/calendar`)).body, {
      status: 'failing',
      failure: { code: 'calendar_auth_failed', message: 'the calendar server refused the user name or password' },
    });
    t.like(await calendarStep(api, c.id), { done: false, blocker: 'calendar_connection_failed' });
  });
}
