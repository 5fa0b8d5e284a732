/**
 * A website's hosting on the test clock (issue 15): renewed each month through the money writer,
 * the early warning and the countdown (`hosting_due`, the site still served), a top-up that ends
 * it, the suspension when it runs out (an offline page at the same address), a top-up that brings
 * a suspended site back with a fresh month, the purge after 90 days, automatic top-up, test mode
 * and a site taken down. The jobs run only when a test asks, a builder run builds every waiting
 * order, and every test moves the one clock forward, so the tests run one at a time and place each
 * step at noon UTC of a day worked out from the site's own `hosting_renews_on`. Top-ups stay under
 * 50,000 (no bonus credit), so balances are plain sums. The money invariants hold after each.
 */
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { adminClient, makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { clockDays } from '../helpers/clock-days.ts';
import { emailsTellEvents } from '../helpers/outbox.ts';
import { call, type Client } from '../helpers/http.ts';
import { nextRenewal } from '../../money/rules/renewal.ts';

let svc: TestService;
let con: Client;
let db: pg.Client;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: '3600000', SWITCHBOARD_BUILDER_POLL_MS: '3600000' });
  con = adminClient(svc.url);
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

const BRIEF = 'Family dental practice in Leeds. Check-ups, hygiene and emergency appointments; evening hours on Thursdays.';
const FEE = 35_000;
// The spec's days, named here (never the code's constants): a 14-day countdown, warned 3 days
// ahead, and a suspended site kept 90 days before its page is purged.
const COUNTDOWN_DAYS = 14;
const NOTICE_DAYS = 3;
const PURGE_DAYS = 90;
/** A UTC calendar day `n` days after `day` (YYYY-MM-DD), by the test's own arithmetic. */
const plusDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const MONTH = 2_000;

type Live = TestAccount & { liveApi: Client };

async function topUp(a: TestAccount, amountCents: number) {
  const r = await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: amountCents });
  if (r.status !== 201) throw new Error(`top-up failed: ${r.status} ${r.text}`);
  return r.body;
}

/** Runs a job once now; its count of what it did. */
async function run(job: 'renew_hosting' | 'suspend_sites' | 'purge_sites'): Promise<number> {
  const r = await con.post(`/admin/v1/jobs/${job}/run`);
  if (r.status !== 200) throw new Error(`${job} failed: ${r.status} ${r.text}`);
  return r.body.processed;
}

const advanceTo = (day: string) => clockDays(con).advanceTo(day);
const startOfTest = () => clockDays(con).startOfTest();

/**
 * A site of `api`'s customer ordered, built and published (the fee and the first month charged).
 * In live mode the account is topped up with `topUpCents` first.
 */
async function publishedSite(a: TestAccount, api: Client) {
  const c = await makeCustomer(api, { name: 'Bright Dental', country: 'GB' });
  const order = await api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF });
  if (order.status !== 202) throw new Error(`order failed: ${order.status} ${order.text}`);
  const built = await a.admin.post('/admin/v1/website_builder/run');
  if (built.status !== 200) throw new Error(`builder failed: ${built.status} ${built.text}`);
  const live = await api.post(`/v1/customers/${c.id}/websites/${order.body.id}/publish`, {});
  if (live.status !== 200) throw new Error(`publish failed: ${live.status} ${live.text}`);
  return { c, site: live.body };
}

async function liveSite(topUpCents: number) {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  await topUp(a, topUpCents);
  return { a, ...(await publishedSite(a, a.liveApi)) };
}

async function siteOf(api: Client, customerId: string, id: string) {
  return (await api.get(`/v1/customers/${customerId}/websites/${id}`)).body;
}

async function ledgerOf(api: Client, customerId: string) {
  return (await api.get(`/v1/usage?customer_id=${customerId}&limit=100`)).body.data as any[];
}

const hostingLines = async (api: Client, customerId: string) => (await ledgerOf(api, customerId)).filter((l) => l.cause === 'website_hosting');

/** The events of `type` about the site `id`, oldest first. */
async function eventsAbout(api: Client, type: string, id: string) {
  return ((await api.get(`/v1/events?type=${type}&limit=100`)).body.data as any[]).filter((e) => e.data.id === id).reverse();
}

async function balanceOf(api: Client): Promise<number> {
  return (await api.get('/v1/balance')).body.balance_cents;
}

/** What the site's address answers, as a visitor's browser gets it. */
async function visit(url: string) {
  const u = new URL(url);
  return call(svc.url, 'GET', u.pathname + u.search);
}

/** The day of the month a site went live on: its hosting renews on it. */
const anchorOf = (site: { live_at: string }) => new Date(site.live_at).getUTCDate();

const period = (from: string, to: string) => `Website hosting, ${from} to ${to}`;

function sameLines(t: ExecutionContext, lines: any[], expected: number, what: string) {
  t.is(lines.length, expected, `${what}: ${JSON.stringify(lines.map((l) => l.description))}`);
}

test.serial('renewal when the balance covers it: one website_hosting line per period, hosting_renews_on a month on, once even when the job runs twice at once', async (t) => {
  const today = await startOfTest();
  // 39,000 − 35,000 (fee) − 2,000 (first month) = 2,000: exactly one renewal.
  const { a, c, site } = await liveSite(39_000);
  t.is(await balanceOf(a.liveApi), 2_000);
  const first = site.hosting_renews_on as string;
  t.is(first, nextRenewal(today, anchorOf(site)), 'the first month runs from go-live');
  const [firstMonth] = await hostingLines(a.liveApi, c.id);
  t.like(firstMonth, { type: 'usage', cause: 'website_hosting', amount_cents: -MONTH, applied: true, customer_id: c.id, description: period(today, first) });
  const second = nextRenewal(first, anchorOf(site));

  // The notice window opens; the balance covers the renewal, so nobody is warned and nothing is charged yet.
  await advanceTo(plusDays(first, -NOTICE_DAYS));
  await run('renew_hosting');
  t.is((await eventsAbout(a.liveApi, 'website.hosting_due', site.id)).length, 0);
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'live', hosting_renews_on: first, suspend_due_on: null });
  sameLines(t, await hostingLines(a.liveApi, c.id), 1, 'nothing charged before the renewal');

  await advanceTo(first);
  await Promise.all([run('renew_hosting'), run('renew_hosting')]);
  await run('renew_hosting');
  const lines = await hostingLines(a.liveApi, c.id);
  sameLines(t, lines, 2, 'the first month and one renewal');
  t.like(lines[0], { cause: 'website_hosting', amount_cents: -MONTH, applied: true, description: period(first, second) });
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'live', hosting_renews_on: second, suspend_due_on: null, url: site.url });
  t.is(await balanceOf(a.liveApi), 0);
  const claimed = await db.query(`SELECT count(*)::int AS n FROM recurring_charges WHERE item_id = $1 AND period_start = $2`, [site.id, first]);
  t.is(claimed.rows[0].n, 1, 'the period claimed once');
  t.is((await eventsAbout(a.liveApi, 'website.hosting_due', site.id)).length, 0);
  t.is((await visit(site.url)).status, 200);
});

test.serial('3 days ahead of a renewal the balance will not cover: hosting_due with suspend_due_on and website.hosting_due, once; still served; unpaid at the renewal without a second event; a top-up in the countdown takes it and the site is live', async (t) => {
  await startOfTest();
  // 38,000 − 35,000 − 2,000 = 1,000: short of the 2,000 renewal.
  const { a, c, site } = await liveSite(38_000);
  const renewsOn = site.hosting_renews_on as string;
  const next = nextRenewal(renewsOn, anchorOf(site));
  const suspendOn = plusDays(renewsOn, COUNTDOWN_DAYS);

  await advanceTo(plusDays(renewsOn, -NOTICE_DAYS - 1));
  await run('renew_hosting');
  t.is((await siteOf(a.liveApi, c.id, site.id)).status, 'live', 'four days ahead: not yet');

  await advanceTo(plusDays(renewsOn, -NOTICE_DAYS));
  await Promise.all([run('renew_hosting'), run('renew_hosting')]);
  await run('renew_hosting');
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'hosting_due', hosting_renews_on: renewsOn, suspend_due_on: suspendOn, url: site.url });
  const notices = await eventsAbout(a.liveApi, 'website.hosting_due', site.id);
  t.is(notices.length, 1);
  t.like(notices[0].data, { id: site.id, status: 'hosting_due', suspend_due_on: suspendOn, url: site.url });
  const page = await visit(site.url);
  t.is(page.status, 200, 'a site in its countdown keeps serving');
  t.regex(page.text, /Bright Dental/);

  // The renewal comes and cannot be taken: still hosting_due, the same countdown, no second event.
  await advanceTo(renewsOn);
  await run('renew_hosting');
  await run('renew_hosting');
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'hosting_due', hosting_renews_on: renewsOn, suspend_due_on: suspendOn });
  t.is((await eventsAbout(a.liveApi, 'website.hosting_due', site.id)).length, 1);
  await emailsTellEvents(t, svc.databaseUrl, { accountId: a.id, kind: 'website_hosting_due' }, notices);
  sameLines(t, await hostingLines(a.liveApi, c.id), 1, 'nothing charged');
  t.is(await balanceOf(a.liveApi), 1_000);
  t.is((await visit(site.url)).status, 200);

  // Five days into the countdown a top-up takes the hosting in its own transaction.
  await advanceTo(plusDays(renewsOn, 5));
  await topUp(a, 2_500);
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'live', hosting_renews_on: next, suspend_due_on: null, url: site.url });
  const lines = await hostingLines(a.liveApi, c.id);
  sameLines(t, lines.filter((l) => l.description === period(renewsOn, next)), 1, 'the renewal line');
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500 - MONTH);

  // The countdown's end passes without a suspension, and nothing more is charged.
  await advanceTo(suspendOn);
  await run('renew_hosting');
  await run('suspend_sites');
  t.is((await siteOf(a.liveApi, c.id, site.id)).status, 'live');
  t.is((await eventsAbout(a.liveApi, 'website.suspended', site.id)).length, 0);
  sameLines(t, await hostingLines(a.liveApi, c.id), 2, 'the first month and the renewal');
  t.is((await visit(site.url)).status, 200);
});

test.serial('a renewal that cannot be taken (no warning before it): hosting_due with the countdown and website.hosting_due once; still served', async (t) => {
  await startOfTest();
  const { a, c, site } = await liveSite(38_000);
  const renewsOn = site.hosting_renews_on as string;
  // The job did not run in the notice window: the renewal itself finds the money short.
  await advanceTo(renewsOn);
  await Promise.all([run('renew_hosting'), run('renew_hosting')]);
  await advanceTo(plusDays(renewsOn, 1));
  await run('renew_hosting');
  const suspendOn = plusDays(renewsOn, COUNTDOWN_DAYS);
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'hosting_due', hosting_renews_on: renewsOn, suspend_due_on: suspendOn });
  const due = await eventsAbout(a.liveApi, 'website.hosting_due', site.id);
  t.is(due.length, 1, 'one event however often the job runs');
  t.like(due[0].data, { id: site.id, status: 'hosting_due', suspend_due_on: suspendOn });
  sameLines(t, await hostingLines(a.liveApi, c.id), 1, 'only the first month');
  t.is(await balanceOf(a.liveApi), 1_000);
  t.is((await visit(site.url)).status, 200);
});

test.serial('the countdown ends: suspended with website.suspended and purge_due_on 90 days on, an offline 503 at the address; a top-up brings it back at the same address with a fresh month from that day, the offline days unbilled', async (t) => {
  await startOfTest();
  const { a, c, site } = await liveSite(38_000);
  const renewsOn = site.hosting_renews_on as string;
  const suspendOn = plusDays(renewsOn, COUNTDOWN_DAYS);
  await advanceTo(renewsOn);
  await run('renew_hosting');
  t.is((await siteOf(a.liveApi, c.id, site.id)).status, 'hosting_due');

  await advanceTo(plusDays(suspendOn, -1));
  await run('renew_hosting');
  await run('suspend_sites');
  t.is((await siteOf(a.liveApi, c.id, site.id)).status, 'hosting_due', 'the day before: still counting down');
  t.is((await visit(site.url)).status, 200);

  await advanceTo(suspendOn);
  await Promise.all([run('suspend_sites'), run('suspend_sites')]);
  const purgeOn = plusDays(suspendOn, PURGE_DAYS);
  const suspended = await siteOf(a.liveApi, c.id, site.id);
  t.like(suspended, { status: 'suspended', purge_due_on: purgeOn, url: site.url });
  const events = await eventsAbout(a.liveApi, 'website.suspended', site.id);
  t.is(events.length, 1);
  t.like(events[0].data, { id: site.id, status: 'suspended', purge_due_on: purgeOn });
  const offline = await visit(site.url);
  t.is(offline.status, 503);
  t.regex(offline.text, /offline/i);
  t.notRegex(offline.text, /Bright Dental|switchboard/i, 'a neutral page');
  const stored = await db.query(`SELECT html IS NOT NULL AS kept FROM website_builds WHERE id = $1`, [site.id]);
  t.true(stored.rows[0].kept, 'nothing deleted while suspended');

  // Twenty days offline; the jobs charge nothing meanwhile.
  const back = plusDays(suspendOn, 20);
  await advanceTo(back);
  await run('renew_hosting');
  await run('purge_sites');
  sameLines(t, await hostingLines(a.liveApi, c.id), 1, 'only the first month while offline');

  await topUp(a, 2_500);
  const fresh = nextRenewal(back, Number(back.slice(8, 10)));
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'live', url: site.url, hosting_renews_on: fresh, suspend_due_on: null, purge_due_on: null });
  const lines = await hostingLines(a.liveApi, c.id);
  sameLines(t, lines, 2, 'the first month and a fresh month from the day it came back');
  t.like(lines[0], { amount_cents: -MONTH, applied: true, description: period(back, fresh) });
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500 - MONTH);
  const page = await visit(site.url);
  t.is(page.status, 200, 'back at the same address');
  t.regex(page.text, /Bright Dental/);

  // The purge day it had been given passes: a live site is not purged.
  await advanceTo(purgeOn);
  await run('purge_sites');
  t.is((await siteOf(a.liveApi, c.id, site.id)).status, 'live');
  t.is((await visit(site.url)).status, 200);
});

test.serial('after 90 days suspended: purged, the page deleted (404, html null), nothing charged afterwards', async (t) => {
  await startOfTest();
  const { a, c, site } = await liveSite(38_000);
  const renewsOn = site.hosting_renews_on as string;
  const suspendOn = plusDays(renewsOn, COUNTDOWN_DAYS);
  await advanceTo(renewsOn);
  await run('renew_hosting');
  await advanceTo(suspendOn);
  await run('suspend_sites');
  const purgeOn = plusDays(suspendOn, PURGE_DAYS);
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'suspended', purge_due_on: purgeOn });

  await advanceTo(plusDays(purgeOn, -1));
  await run('renew_hosting');
  await run('purge_sites');
  t.is((await siteOf(a.liveApi, c.id, site.id)).status, 'suspended', 'the day before: still recoverable');
  t.is((await visit(site.url)).status, 503);

  await advanceTo(purgeOn);
  await Promise.all([run('purge_sites'), run('purge_sites')]);
  const purged = await siteOf(a.liveApi, c.id, site.id);
  t.like(purged, { status: 'purged', url: null, preview_url: null, hosting_renews_on: null });
  const stored = await db.query(`SELECT html FROM website_builds WHERE id = $1`, [site.id]);
  t.is(stored.rows[0].html, null, 'the page is deleted');
  const gone = await visit(site.url);
  t.is(gone.status, 404);
  t.notRegex(gone.text, /Bright Dental/);

  // Money coming in, and the jobs over the next renewals, charge nothing.
  await topUp(a, 2_500);
  await advanceTo(plusDays(purgeOn, 40));
  await run('renew_hosting');
  await run('suspend_sites');
  await run('purge_sites');
  t.is((await siteOf(a.liveApi, c.id, site.id)).status, 'purged');
  sameLines(t, await hostingLines(a.liveApi, c.id), 1, 'only the first month');
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500);
  t.is((await visit(site.url)).status, 404);
});

test.serial('test mode: hosting is priced with applied:false each month and the site never goes hosting_due', async (t) => {
  await startOfTest();
  const a = await makeAccount(svc.url);
  const { c, site } = await publishedSite(a, a.api);
  t.is(await balanceOf(a.api), 0, 'the test balance is empty and stays so');
  let renewsOn = site.hosting_renews_on as string;
  for (let month = 0; month < 3; month++) {
    await advanceTo(plusDays(renewsOn, -NOTICE_DAYS));
    await run('renew_hosting');
    t.is((await siteOf(a.api, c.id, site.id)).status, 'live');
    await advanceTo(renewsOn);
    await run('renew_hosting');
    const next = nextRenewal(renewsOn, anchorOf(site));
    t.like(await siteOf(a.api, c.id, site.id), { status: 'live', hosting_renews_on: next, suspend_due_on: null });
    renewsOn = next;
  }
  await run('suspend_sites');
  const lines = await hostingLines(a.api, c.id);
  sameLines(t, lines, 4, 'the first month and three renewals');
  for (const line of lines) t.like(line, { cause: 'website_hosting', amount_cents: -MONTH, applied: false });
  t.is((await eventsAbout(a.api, 'website.hosting_due', site.id)).length, 0);
  t.is(await balanceOf(a.api), 0);
  // A test site is served only at its preview, which lapses 30 days after the build: re-issued, it serves again.
  t.is((await visit(site.url)).status, 404);
  const reissued = (await a.api.post(`/v1/customers/${c.id}/websites/${site.id}/preview`, {})).body;
  t.is(reissued.status, 'live');
  t.is((await visit(reissued.url)).status, 200);
});

test.serial('a site taken down once live is never charged again: not at its renewal, not by a top-up', async (t) => {
  await startOfTest();
  const { a, c, site } = await liveSite(38_000);
  const renewsOn = site.hosting_renews_on as string;
  const down = await a.liveApi.delete(`/v1/customers/${c.id}/websites/${site.id}`);
  t.is(down.status, 200, down.text);
  t.like(down.body, { status: 'cancelled', hosting_renews_on: null, url: null });

  await advanceTo(plusDays(renewsOn, -NOTICE_DAYS));
  await run('renew_hosting');
  await advanceTo(renewsOn);
  await run('renew_hosting');
  await topUp(a, 2_500);
  await advanceTo(plusDays(renewsOn, COUNTDOWN_DAYS));
  await run('renew_hosting');
  await run('suspend_sites');
  await run('purge_sites');
  t.is((await siteOf(a.liveApi, c.id, site.id)).status, 'cancelled');
  t.deepEqual(
    (await ledgerOf(a.liveApi, c.id)).map((l) => [l.cause, l.amount_cents]),
    [
      ['website_hosting', -MONTH],
      ['website_build', -FEE],
    ],
    'the fee and the first month, no refund, nothing after',
  );
  t.is((await eventsAbout(a.liveApi, 'website.hosting_due', site.id)).length, 0);
  t.is(await balanceOf(a.liveApi), 1_000 + 2_500);
  t.is((await visit(site.url)).status, 404);
});

test.serial('the early warning counts every hosting and rent of the account due by then: a site and a number, money for the site alone, warned', async (t) => {
  await startOfTest();
  const { a, c, site } = await liveSite(FEE + MONTH + 1_500 + 2_500);
  // A number rented on the day the site went live renews the same day.
  const n = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, {});
  t.is(n.status, 201, n.text);
  t.is(n.body.renews_on, site.hosting_renews_on);
  t.is(await balanceOf(a.liveApi), 2_500, 'covers the hosting (2,000), not the hosting and the rent (3,500)');
  await advanceTo(plusDays(site.hosting_renews_on, -NOTICE_DAYS));
  await run('renew_hosting');
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'hosting_due' });
  t.is((await eventsAbout(a.liveApi, 'website.hosting_due', site.id)).length, 1);
});

test.serial('money that came while a job held the site (the top-up skipped it) pays it when its countdown ends, instead of a suspension', async (t) => {
  await startOfTest();
  const { a, c, site } = await liveSite(FEE + MONTH);
  await advanceTo(site.hosting_renews_on);
  await run('renew_hosting');
  const due = await siteOf(a.liveApi, c.id, site.id);
  t.is(due.status, 'hosting_due');
  // A job holds the site's row while the top-up comes: the top-up does not wait for it.
  const holder = new pg.Client({ connectionString: svc.databaseUrl });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT 1 FROM website_builds WHERE id = $1 FOR UPDATE', [site.id]);
  await topUp(a, 2_500);
  await holder.query('COMMIT');
  await holder.end();
  t.is((await siteOf(a.liveApi, c.id, site.id)).status, 'hosting_due', 'skipped by the top-up');
  await advanceTo(due.suspend_due_on);
  await run('suspend_sites');
  t.like(await siteOf(a.liveApi, c.id, site.id), { status: 'live', suspend_due_on: null });
  t.is((await visit(site.url)).status, 200);
  t.is((await hostingLines(a.liveApi, c.id)).length, 2);
  t.is((await eventsAbout(a.liveApi, 'website.suspended', site.id)).length, 0);
});
