import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { consoleAs } from '../helpers/console.ts';
import type { Client } from '../helpers/http.ts';

/*
 * Issue 21, "Billing": balance, the ledger with filters (customer, type, period) and its CSV
 * export per customer for rebilling, the activity log of refused call starts and released holds;
 * "a developer cannot see billing"; "nobody sees another account".
 */

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => svc?.stop());

type Live = TestAccount & { liveApi: Client };
const liveAccount = async () => (await makeAccount(svc.url, { live: true })) as Live;
const hold = (a: TestAccount, customer_id: string, reference: string) => a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id, reference });
const end = (a: TestAccount, reference: string, duration_seconds: number) => a.admin.post(`/admin/v1/accounts/${a.id}/holds/${reference}/end`, { duration_seconds });
const INJECTION = '=HYPERLINK("http://evil.example","Click")';

/** A live account with 10,000 topped up; two customers; calls of 600 s (200) and 60 s (20); a 500 refund to the first. */
async function ledgerAccount() {
  const a = await liveAccount();
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 10_000 });
  const c1 = await makeCustomer(a.liveApi, { name: '@Bright Dental, "North"' });
  const c2 = await makeCustomer(a.liveApi, { name: 'Other Clinic' });
  await hold(a, c1.id, 'call-1');
  await end(a, 'call-1', 600);
  await hold(a, c2.id, 'call-2');
  await end(a, 'call-2', 60);
  const refund = await a.admin.post(`/admin/v1/accounts/${a.id}/refunds`, { amount_cents: 500, customer_id: c1.id, reference: 'site-9', description: INJECTION });
  if (refund.status !== 201) throw new Error(refund.text);
  return { a, c1, c2 };
}

test('balance as /v1/balance for billing roles; a developer gets 403 role_forbidden on every billing route', async (t) => {
  const { a, c1 } = await ledgerAccount();
  const viaApi = (await a.liveApi.get('/v1/balance')).body;
  for (const role of ['owner', 'admin', 'billing', 'viewer']) {
    const person = await consoleAs(svc.url, a.id, role);
    const r = await person.get('/console/api/billing/balance?mode=live');
    t.is(r.status, 200, `${role}: ${r.text}`);
    t.deepEqual(r.body, viaApi, role);
    t.is((await person.get('/console/api/billing/ledger?mode=live')).status, 200, role);
    t.is((await person.get('/console/api/billing/ledger.csv?mode=live')).status, 200, role);
    t.is((await person.get('/console/api/billing/activity?mode=live')).status, 200, role);
  }
  t.is((await (await consoleAs(svc.url, a.id, 'owner')).get('/console/api/billing/balance')).body.mode, 'test', 'test mode by default');
  const developer = await consoleAs(svc.url, a.id, 'developer');
  for (const path of ['/balance?mode=live', '/ledger?mode=live', `/ledger?mode=live&customer_id=${c1.id}`, '/ledger.csv?mode=live', '/activity?mode=live', '/activity']) {
    const r = await developer.get(`/console/api/billing${path}`);
    t.is(r.status, 403, path);
    t.is(r.body.error.code, 'role_forbidden', path);
    t.regex(r.body.error.message, /owner, admin, billing, viewer/);
  }
});

test('the ledger: newest first, narrowed by customer, type and period, in cursor pages', async (t) => {
  const { a, c1, c2 } = await ledgerAccount();
  const owner = await consoleAs(svc.url, a.id);
  const all = await owner.get('/console/api/billing/ledger?mode=live');
  t.is(all.status, 200, all.text);
  t.deepEqual(
    all.body.data.map((l: any) => [l.type, l.amount_cents, l.customer_id]),
    [['refund', 500, c1.id], ['usage', -20, c2.id], ['usage', -200, c1.id], ['top_up', 10_000, null]],
  );
  t.like(all.body.data[2], { object: 'usage_entry', cause: 'call', minutes: 10, reference: 'call-1', description: 'Call, 10 min', balance_after_cents: 9_800, mode: 'live' });

  const mine = await owner.get(`/console/api/billing/ledger?mode=live&customer_id=${c1.id}`);
  t.deepEqual(mine.body.data.map((l: any) => [l.type, l.amount_cents]), [['refund', 500], ['usage', -200]]);
  const usage = await owner.get(`/console/api/billing/ledger?mode=live&customer_id=${c1.id}&type=usage`);
  t.deepEqual(usage.body.data.map((l: any) => l.amount_cents), [-200]);
  t.deepEqual((await owner.get('/console/api/billing/ledger?mode=live&type=top_up')).body.data.map((l: any) => l.amount_cents), [10_000]);

  const now = svc.services.clock.now().getTime();
  const iso = (ms: number) => new Date(ms).toISOString();
  t.is((await owner.get(`/console/api/billing/ledger?mode=live&from=${iso(now - 3_600_000)}&to=${iso(now + 60_000)}`)).body.data.length, 4);
  t.is((await owner.get(`/console/api/billing/ledger?mode=live&to=${iso(now - 3_600_000)}`)).body.data.length, 0, 'before the period: nothing');
  t.is((await owner.get(`/console/api/billing/ledger?mode=live&from=${iso(now + 60_000)}`)).body.data.length, 0, 'after it: nothing');
  t.is((await owner.get('/console/api/billing/ledger?mode=live&from=yesterday')).body.error.code, 'invalid_parameter');
  t.is((await owner.get('/console/api/billing/ledger?mode=live&type=gift')).body.error.code, 'invalid_parameter');

  const first = await owner.get('/console/api/billing/ledger?mode=live&limit=3');
  t.is(first.body.data.length, 3);
  t.true(first.body.has_more);
  const next = await owner.get(`/console/api/billing/ledger?mode=live&limit=3&starting_after=${first.body.data[2].id}`);
  t.deepEqual(next.body.data.map((l: any) => l.type), ['top_up']);
  t.false(next.body.has_more);
  t.deepEqual((await owner.get('/console/api/billing/ledger?mode=test')).body.data, [], 'the test ledger is its own');
});

test("another account's customer or cursor reveals nothing: 404 customer_not_found as for an unknown id, 400 invalid_cursor", async (t) => {
  const { a, c1 } = await ledgerAccount();
  const b = await liveAccount();
  const ownerB = await consoleAs(svc.url, b.id);
  for (const path of ['ledger', 'ledger.csv']) {
    const foreign = await ownerB.get(`/console/api/billing/${path}?mode=live&customer_id=${c1.id}`);
    const unknown = await ownerB.get(`/console/api/billing/${path}?mode=live&customer_id=${crypto.randomUUID()}`);
    t.is(foreign.status, 404, path);
    t.is(foreign.body.error.code, 'customer_not_found');
    t.is(unknown.body.error.code, 'customer_not_found');
    t.is(foreign.body.error.message, unknown.body.error.message, 'the same answer as for an id that exists nowhere');
  }
  const ownerA = await consoleAs(svc.url, a.id);
  t.is((await ownerA.get(`/console/api/billing/ledger?mode=test&customer_id=${c1.id}`)).body.error.code, 'customer_not_found', 'a live customer is not in test mode');
  const lineOfA = (await ownerA.get('/console/api/billing/ledger?mode=live')).body.data[0].id;
  t.is((await ownerB.get(`/console/api/billing/ledger?mode=live&starting_after=${lineOfA}`)).body.error.code, 'invalid_cursor');
  t.deepEqual((await ownerB.get('/console/api/billing/ledger?mode=live')).body.data, []);
  t.deepEqual((await ownerB.get('/console/api/billing/activity?mode=live')).body.data, []);
  t.is((await ownerB.get('/console/api/billing/balance?mode=live')).body.balance_cents, 0);
});

test('the CSV export: exact header and rows, RFC 4180 quoting, formula cells neutralised, a file name with the customer and the period', async (t) => {
  const { a, c1 } = await ledgerAccount();
  const owner = await consoleAs(svc.url, a.id, 'billing');
  const lines = (await owner.get(`/console/api/billing/ledger?mode=live&customer_id=${c1.id}`)).body.data;
  const period = 'from=2020-01-01T00:00:00.000Z&to=2100-01-01T00:00:00.000Z';
  const r = await owner.get(`/console/api/billing/ledger.csv?mode=live&customer_id=${c1.id}&${period}`);
  t.is(r.status, 200, r.text);
  t.is(r.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');
  t.is(r.headers.get('content-disposition'), 'attachment; filename="ledger-live-bright-dental-north-2020-01-01-to-2100-01-01.csv"');
  const [refund, usage] = lines;
  t.is(
    r.text,
    'created_at,id,customer_id,customer_name,type,cause,description,reference,minutes,amount_cents,amount,currency,balance_after_cents,mode\r\n' +
      `${refund.created_at},${refund.id},${c1.id},"'@Bright Dental, ""North""",refund,refund,"'=HYPERLINK(""http://evil.example"",""Click"")",site-9,,500,5.00,usd,10280,live\r\n` +
      `${usage.created_at},${usage.id},${c1.id},"'@Bright Dental, ""North""",usage,call,"Call, 10 min",call-1,10,-200,-2.00,usd,9800,live\r\n`,
  );
  const whole = await owner.get('/console/api/billing/ledger.csv?mode=live');
  t.is(whole.headers.get('content-disposition'), 'attachment; filename="ledger-live-all-customers-start-to-now.csv"');
  t.is(whole.text.trimEnd().split('\r\n').length, 1 + 4);
  t.regex(whole.text, /,top_up,top_up,[^\r\n]*,10000,100\.00,usd,10000,live\r\n$/);
  const none = await owner.get(`/console/api/billing/ledger.csv?mode=live&type=bonus`);
  t.is(none.text, 'created_at,id,customer_id,customer_name,type,cause,description,reference,minutes,amount_cents,amount,currency,balance_after_cents,mode\r\n');
});

test('a CSV of a ledger larger than one page holds every line once, in order', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { name: 'Big Ledger Co' });
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    // 1,234 priced test lines (test lines are never applied): more than two pages of the export.
    await db.query(
      `INSERT INTO ledger_entries (account_id, mode, customer_id, type, cause, amount_cents, cash_cents, bonus_cents, balance_after_cents, applied, minutes, reference, description, created_at)
       SELECT $1, 'test', $2, 'usage', 'call', -i, -i, 0, 0, false, 1, 'r' || i, 'Call, 1 min', now() + i * interval '1 millisecond'
         FROM generate_series(1, 1234) AS i`,
      [a.id, c.id],
    );
  } finally {
    await db.end();
  }
  const owner = await consoleAs(svc.url, a.id);
  const r = await owner.get(`/console/api/billing/ledger.csv?customer_id=${c.id}`);
  const rows = r.text.trimEnd().split('\r\n').slice(1);
  t.is(rows.length, 1234);
  const references = rows.map((row) => row.split(',')[8]);
  t.deepEqual(references, Array.from({ length: 1234 }, (_, i) => `r${1234 - i}`), 'newest first, none twice, none left out');
  t.is(rows.reduce((sum, row) => sum + Number(row.split(',')[10]), 0), -((1234 * 1235) / 2));
});

// Serial: it moves the shared test clock 30 minutes (ava runs serial tests before the others).
test.serial('the activity log lists a released hold: a call that never reported back', async (t) => {
  const a = await liveAccount();
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 10_000 });
  const c = await makeCustomer(a.liveApi);
  t.true((await hold(a, c.id, 'lost-call')).body.ok);
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 30 * 60 });
  await a.admin.post('/admin/v1/jobs/release_holds/run');
  const r = await (await consoleAs(svc.url, a.id, 'billing')).get('/console/api/billing/activity?mode=live');
  t.like(r.body.data[0], { object: 'activity', kind: 'hold_released', reason: 'call_never_reported_back', reference: 'lost-call', customer_id: c.id, detail: { hold_cents: 400 } });
});

test('the activity log lists refused call starts (insufficient_balance, concurrency_limit), newest first, in pages, per mode', async (t) => {
  const a = await liveAccount();
  const c = await makeCustomer(a.liveApi);
  const refused = await hold(a, c.id, 'no-money');
  t.is(refused.body.reason, 'insufficient_balance');
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 0 });
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 10_000 });
  t.is((await hold(a, c.id, 'no-slot')).body.reason, 'concurrency_limit');
  const viewer = await consoleAs(svc.url, a.id, 'viewer');
  const r = await viewer.get('/console/api/billing/activity?mode=live');
  t.is(r.status, 200, r.text);
  t.deepEqual(
    r.body.data.map((x: any) => [x.object, x.kind, x.reason, x.reference, x.customer_id, x.mode]),
    [
      ['activity', 'call_start_refused', 'concurrency_limit', 'no-slot', c.id, 'live'],
      ['activity', 'call_start_refused', 'insufficient_balance', 'no-money', c.id, 'live'],
    ],
  );
  t.false('account_id' in r.body.data[0] || 'seq' in r.body.data[0], 'only the view');
  const page = await viewer.get('/console/api/billing/activity?mode=live&limit=1');
  t.true(page.body.has_more);
  const rest = await viewer.get(`/console/api/billing/activity?mode=live&limit=1&starting_after=${page.body.data[0].id}`);
  t.is(rest.body.data[0].reference, 'no-money');
  t.false(rest.body.has_more);
  t.deepEqual((await viewer.get('/console/api/billing/activity')).body.data, [], 'test mode has its own log');
  const ownerB = await consoleAs(svc.url, (await makeAccount(svc.url)).id);
  t.is((await ownerB.get(`/console/api/billing/activity?mode=live&starting_after=${page.body.data[0].id}`)).body.error.code, 'invalid_cursor', "another account's entry is no cursor");
  t.deepEqual((await ownerB.get('/console/api/billing/activity?mode=live')).body.data, []);
});
