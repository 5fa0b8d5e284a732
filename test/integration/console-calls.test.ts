import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { consoleAs, type ConsoleClient } from '../helpers/console.ts';
import { createConsoleCallReads } from '../../db/console-calls.ts';

/*
 * Issue 21, "Calls" and "Appointments": the console lists calls with filters, places a test call
 * through the /v1 path and its gates, and shows a call's page with its transcript, the recording
 * in a player (the session cookie, not a key) and the compliance trail. Another account's ids
 * answer 404 on every route.
 */

let svc: TestService;
let account: TestAccount;
let owner: ConsoleClient;
let ready: { id: string; name: string };
let other: { id: string };

test.before(async () => {
  // The dialler only runs when asked, so the tests decide when requests are dialled.
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  ready = await makeReadyCustomer(svc.url, account.api, { name: 'Bright Dental LLC', external_ref: 'bright-1' });
  other = await makeReadyCustomer(svc.url, account.api, { name: 'Other Plumbing', timezone: 'America/Chicago' });
  // A Tuesday, 15:00 UTC: 10:00 in New York, inside every US window.
  await advanceToNext(account, 2, 15);
  owner = await consoleAs(svc.url, account.id, 'owner');
});
test.after.always(async () => {
  await svc?.stop();
});

const placeCall = (client: ConsoleClient, body: Record<string, unknown>) =>
  client.post('/console/api/calls', { customer_id: ready.id, called_party: 'business', business_name: 'Acme Plumbing', ...body });

/** The bytes of a GET, with its headers (fetch directly: the helpers read bodies as text). */
async function bytes(path: string, headers: Record<string, string>) {
  const res = await fetch(svc.url + path, { headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

test.serial('a test call placed in the console is the /v1 request; its page has the transcript, a recording that plays with the cookie, and the compliance trail in order', async (t) => {
  const consent = { type: 'prior_express_written', obtained_at: '2026-11-20T14:02:00Z', source: 'web form acme.example/quote', evidence_ref: 'consent-8812' };
  const placed = await placeCall(owner, { phone: '+12025550161', external_ref: 'console-1', mode: 'test', called_party: 'consumer', consent });
  t.is(placed.status, 201, placed.text);
  t.like(placed.body, { object: 'call_request', customer_id: ready.id, phone: '+12025550161', status: 'queued', mode: 'test' });
  t.is((await account.api.get(`/v1/calls/${placed.body.id}`)).body.id, placed.body.id, 'the /v1 request');
  // The same request again is the open one (200), as on /v1.
  const again = await placeCall(owner, { phone: '+12025550161' });
  t.is(again.status, 200);
  t.is(again.body.id, placed.body.id);

  const done = await dialUntilFinished(account, account.api, placed.body.id);
  t.is(done.outcome, 'appointment_booked');

  const page = await owner.get(`/console/api/calls/${placed.body.id}`);
  t.is(page.status, 200, page.text);
  t.is(page.body.object, 'console_call');
  t.deepEqual(page.body.call, done, 'the call is the /v1 call');
  t.deepEqual(page.body.transcript, (await account.api.get(`/v1/calls/${placed.body.id}/transcript`)).body);
  t.true(page.body.transcript.lines.length > 1);
  t.is(page.body.recording_url, `/console/api/calls/${placed.body.id}/recording`);

  // The player's request: the cookie only, no key, no CSRF header (a GET).
  const audio = await bytes(page.body.recording_url, { cookie: owner.cookie });
  t.is(audio.status, 200);
  t.is(audio.headers.get('content-type'), 'audio/wav');
  t.is(Number(audio.headers.get('content-length')), audio.body.length);
  t.is(audio.body.subarray(0, 4).toString('latin1'), 'RIFF');
  const v1 = await bytes(`/v1/calls/${placed.body.id}/recording`, { authorization: `Bearer ${account.testKey}` });
  t.true(audio.body.equals(v1.body), 'the same bytes as /v1');

  const trail: { gate: string; passed: boolean; at: string; detail: string }[] = page.body.compliance_trail;
  t.true(trail.every((g) => g.passed), JSON.stringify(trail.filter((g) => !g.passed)));
  const gates = trail.map((g) => g.gate);
  t.deepEqual(
    gates.filter((g) => ['request', 'do_not_call', 'consent', 'readiness', 'frequency_caps', 'calling_window', 'hold', 'identification'].includes(g)),
    ['request', 'do_not_call', 'consent', 'readiness', 'frequency_caps', 'calling_window', 'hold', 'identification'],
    'each gate once, in the order they are met',
  );
  const times = trail.map((g) => Date.parse(g.at));
  t.deepEqual([...times].sort((a, b) => a - b), times, 'ordered by time');
  const detail = (gate: string) => trail.find((g) => g.gate === gate)!.detail;
  // The calling window: jurisdiction, local time, the rule and its citation.
  t.regex(detail('calling_window'), /^Open in US, US-DC: local time \d{4}-\d{2}-\d{2} 10:00 \(America\/New_York\), inside US \(47 CFR § 64\.1200\(c\)\(1\); 16 CFR § 310\.4\(c\); the law\)\.$/);
  // The do-not-call lists: the account's own and the country's registry with its load date.
  t.regex(detail('do_not_call'), /not on the account's do-not-call list, and not on US-NDNC \(loaded \d{4}-\d{2}-\d{2}T/);
  // The consent held and the rule it was judged on.
  t.is(
    detail('consent'),
    'Held: prior express written consent, obtained 2026-11-20T14:02:00.000Z (web form acme.example/quote; evidence consent-8812). ' +
      'Needed for a residential landline: prior express written consent, under US-residential (47 U.S.C. 227(b)(1)(B); 47 CFR 64.1200(a)(3); FCC 24-17).',
  );
  t.regex(detail('hold'), /^\$\d+\.\d{2} held for the longest call \(test mode\); settled /);
  t.regex(detail('identification'), /^The agent opened with: "Hello, this call is on behalf of /);

  // Placed from the console, listed by the console, shown by /v1 the same.
  const listed = await owner.get('/console/api/calls?status=completed');
  t.deepEqual(listed.body.data.find((c: { id: string }) => c.id === placed.body.id), done);
});

test.serial('a request stopped at a gate shows that gate as failed: the do-not-call list, and a customer without a number', async (t) => {
  t.is((await account.api.post('/v1/dnc', { phone: '+12025550162', reason: 'asked by email' })).status, 201);
  const listed = await placeCall(owner, { phone: '+12025550162' });
  t.is(listed.status, 201, listed.text);
  const blocked = await dialUntilFinished(account, account.api, listed.body.id);
  t.like(blocked, { status: 'blocked', outcome: 'do_not_call_listed' });
  const page = (await owner.get(`/console/api/calls/${listed.body.id}`)).body;
  t.deepEqual(
    page.compliance_trail.map((g: { gate: string; passed: boolean }) => [g.gate, g.passed]),
    [['request', true], ['do_not_call', false]],
  );
  t.regex(page.compliance_trail[1].detail, /on a do-not-call list, so it was not dialled/);
  t.is(page.recording_url, null);
  t.is(page.transcript, null);

  // A customer without a number in the country: the request waits at the caller ID, and its page says why.
  const fresh = await makeCustomer(account.api, { country: 'US', timezone: 'America/New_York' });
  const waiting = await placeCall(owner, { customer_id: fresh.id, phone: '+12025550163' });
  t.is(waiting.status, 201, waiting.text);
  await account.admin.post('/admin/v1/dialler/run');
  const trail = (await owner.get(`/console/api/calls/${waiting.body.id}`)).body.compliance_trail;
  const last = trail.at(-1);
  t.like(last, { gate: 'caller_id', passed: false });
  t.regex(last.detail, /^Waiting: There is no calling number in the customer's country yet\. Ask for it through provisioning\. Tried again at \d{4}-/);
  t.is((await owner.delete(`/console/api/calls/${waiting.body.id}`)).body.status, 'cancelled', 'cancelled from the console as on /v1');

  // A start the money refused (no call slot: concurrency_limit) is a failed gate; tried again, it passes.
  const limits = (await account.admin.get(`/admin/v1/accounts/${account.id}`)).body;
  t.is((await account.admin.patch(`/admin/v1/accounts/${account.id}/limits`, { concurrent_calls: 0 })).status, 200);
  const refused = await placeCall(owner, { phone: '+12025550164' });
  await account.admin.post('/admin/v1/dialler/run');
  const held = (await owner.get(`/console/api/calls/${refused.body.id}`)).body.compliance_trail;
  t.deepEqual(held.map((g: { gate: string; passed: boolean }) => [g.gate, g.passed]), [['request', true], ['hold', false]]);
  t.regex(held[1].detail, /^The call start was refused: the customer or the account already ran as many calls as allowed at once \(concurrency_limit\)\. The request waited and was tried again\./);
  t.is((await account.admin.patch(`/admin/v1/accounts/${account.id}/limits`, { concurrent_calls: limits.limits.concurrent_calls })).status, 200);
  await account.admin.post('/admin/v1/test_clock/advance', { seconds: 60 });
  await dialUntilFinished(account, account.api, refused.body.id);
  const passed = (await owner.get(`/console/api/calls/${refused.body.id}`)).body.compliance_trail;
  t.deepEqual(passed.filter((g: { passed: boolean }) => !g.passed).map((g: { gate: string }) => g.gate), ['hold'], 'the refusal stays in the trail');
  t.true(passed.findIndex((g: { gate: string; passed: boolean }) => g.gate === 'hold' && !g.passed) < passed.findIndex((g: { gate: string }) => g.gate === 'calling_window'));
  t.true(passed.some((g: { gate: string; passed: boolean }) => g.gate === 'hold' && g.passed));
  t.is((await owner.delete(`/console/api/calls/${listed.body.id}`)).body.error.code, 'call_already_finished');
});

test.serial('the list filters by customer, status, outcome and date, and pages with a cursor', async (t) => {
  const a = (await placeCall(owner, { phone: '+12025550170' })).body;
  const b = (await placeCall(owner, { customer_id: other.id, phone: '+12025550171' })).body;
  const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((c) => c.id);

  const all = await owner.get('/console/api/calls');
  t.is(all.status, 200, all.text);
  t.deepEqual(ids(all).slice(0, 2), [b.id, a.id], 'newest first, queued requests too');
  t.true(all.body.data.every((c: { object: string }) => c.object === 'call'));

  t.deepEqual(ids(await owner.get(`/console/api/calls?customer_id=${other.id}`)), [b.id]);
  t.true(ids(await owner.get('/console/api/calls?customer_id=bright-1')).includes(a.id), 'by external_ref too');
  t.false(ids(await owner.get('/console/api/calls?customer_id=bright-1')).includes(b.id));
  const queued = ids(await owner.get('/console/api/calls?status=queued'));
  t.true(queued.includes(a.id) && queued.includes(b.id));
  t.false(queued.some((id) => !all.body.data.find((c: { id: string; status: string }) => c.id === id && c.status === 'queued')));
  const booked = await owner.get('/console/api/calls?outcome=appointment_booked');
  t.true(booked.body.data.length >= 1);
  t.true(booked.body.data.every((c: { outcome: string }) => c.outcome === 'appointment_booked'));
  t.is((await owner.get('/console/api/calls?outcome=do_not_call_listed')).body.data[0].outcome, 'do_not_call_listed');

  // Dates: from the request's instant on; a day counts whole; before it, nothing.
  const day = b.created_at.slice(0, 10);
  t.deepEqual(ids(await owner.get(`/console/api/calls?from=${encodeURIComponent(b.created_at)}`)), [b.id]);
  t.true(ids(await owner.get(`/console/api/calls?from=${day}&to=${day}`)).includes(a.id));
  const dayBefore = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  t.deepEqual(ids(await owner.get(`/console/api/calls?to=${dayBefore}`)), []);
  t.deepEqual(ids(await owner.get(`/console/api/calls?to=${encodeURIComponent(b.created_at)}`)).includes(b.id), false, 'to is excluded');
  for (const bad of ['yesterday', '2026-02-30', '2026-11-20T10:00:00', '20261120']) {
    const r = await owner.get(`/console/api/calls?from=${bad}`);
    t.is(r.status, 400, bad);
    t.is(r.body.error.code, 'invalid_parameter');
    t.regex(r.body.error.message, /^from must be an RFC 3339 date-time/);
    t.truthy(r.body.error.request_id);
  }

  // Pages: limit and starting_after, as /v1.
  const first = await owner.get('/console/api/calls?limit=1');
  t.deepEqual(ids(first), [b.id]);
  t.true(first.body.has_more);
  t.deepEqual(ids(await owner.get(`/console/api/calls?limit=1&starting_after=${b.id}`)), [a.id]);
  t.is((await owner.get('/console/api/calls?limit=201')).status, 400);
  t.is((await owner.get('/console/api/calls?mode=sandbox')).body.error.code, 'invalid_parameter');
  // Live data of an account not live yet is simply empty.
  t.deepEqual((await owner.get('/console/api/calls?mode=live')).body, { object: 'list', data: [], has_more: false });
});

test.serial('appointments list in the /v1 shape with the customer name and time zone, filtered by meeting start and customer', async (t) => {
  const list = await owner.get('/console/api/appointments');
  t.is(list.status, 200, list.text);
  t.true(list.body.data.length >= 1);
  const first = list.body.data[0];
  const v1 = (await account.api.get(`/v1/appointments/${first.id}`)).body;
  t.deepEqual(first, { ...v1, customer_name: 'Bright Dental LLC', customer_timezone: 'America/New_York' });
  const start = first.start_at;
  t.deepEqual((await owner.get(`/console/api/appointments?from=${encodeURIComponent(start)}&to=${start.slice(0, 10)}`)).body.data.map((a: { id: string }) => a.id), [first.id]);
  t.deepEqual((await owner.get(`/console/api/appointments?to=${encodeURIComponent(start)}`)).body.data, []);
  t.deepEqual((await owner.get(`/console/api/appointments?customer_id=${other.id}`)).body.data, []);
  t.is((await owner.get('/console/api/appointments?from=soon')).body.error.code, 'invalid_parameter');
  t.deepEqual((await owner.get('/console/api/appointments?mode=live')).body.data, []);
});

test.serial('live calls before go-live are refused with live_not_enabled, after it they go the /v1 path in live mode; a suspended account is refused; a call asked for in the other mode is not found', async (t) => {
  const live = await placeCall(owner, { phone: '+12025550172', mode: 'live' });
  t.is(live.status, 403);
  t.is(live.body.error.code, 'live_not_enabled');
  const testCall = (await placeCall(owner, { phone: '+12025550179' })).body;
  for (const path of [`/console/api/calls/${testCall.id}?mode=live`, `/console/api/calls/${testCall.id}/recording?mode=live`]) {
    const r = await owner.get(path);
    t.is(r.status, 404, path);
    t.is(r.body.error.code, 'call_not_found');
  }
  t.is((await owner.delete(`/console/api/calls/${testCall.id}?mode=live`)).body.error.code, 'call_not_found');

  // Once live, a live call from the console goes the /v1 path in live mode: the request a key queued is the same one.
  const liveAccount = await makeAccount(svc.url, { live: true });
  const liveOwner = await consoleAs(svc.url, liveAccount.id, 'owner');
  const liveCustomer = await makeCustomer(liveAccount.liveApi!, { country: 'US', timezone: 'America/New_York' });
  const body = { customer_id: liveCustomer.id, phone: '+12025550178', called_party: 'business' };
  const viaKey = await liveAccount.liveApi!.post('/v1/calls', body);
  const viaConsole = await liveOwner.post('/console/api/calls', { ...body, mode: 'live' });
  t.is(viaKey.status, 201, viaKey.text);
  t.is(viaConsole.status, 200, 'the open request the key queued');
  t.like(viaConsole.body, { id: viaKey.body.id, mode: 'live', status: 'queued' });
  t.deepEqual((await liveOwner.get('/console/api/calls?mode=live')).body.data.map((c: { id: string }) => c.id), [viaKey.body.id]);
  t.deepEqual((await liveOwner.get('/console/api/calls')).body.data, [], 'test mode by default');
  t.is((await liveOwner.get(`/console/api/calls/${viaKey.body.id}?mode=live`)).body.call.id, viaKey.body.id);
  t.is((await liveOwner.get(`/console/api/calls/${viaKey.body.id}`)).body.error.code, 'call_not_found', 'a live call asked for in test mode');
  t.is((await liveOwner.delete(`/console/api/calls/${viaKey.body.id}?mode=live`)).body.status, 'cancelled');
  t.is((await liveOwner.post('/console/api/calls', { ...body, mode: 'test' })).body.error.code, 'customer_not_found', 'a live customer is not in test mode');

  // A suspended account places nothing from the console either, and still reads.
  const suspended = await makeAccount(svc.url);
  const itsOwner = await consoleAs(svc.url, suspended.id, 'owner');
  const customer = await makeCustomer(suspended.api, { country: 'US', timezone: 'America/New_York' });
  t.is((await suspended.admin.post(`/admin/v1/accounts/${suspended.id}/suspend`)).status, 200);
  const refused = await itsOwner.post('/console/api/calls', { customer_id: customer.id, phone: '+12025550177', called_party: 'business' });
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'reseller_suspended');
  t.is((await itsOwner.get('/console/api/calls')).status, 200);
});

test.serial('roles: a viewer and a billing person read calls and appointments but cannot place or cancel one; a developer can', async (t) => {
  const queued = (await placeCall(owner, { phone: '+12025550173' })).body;
  for (const role of ['viewer', 'billing']) {
    const person = await consoleAs(svc.url, account.id, role);
    t.is((await person.get('/console/api/calls')).status, 200, role);
    t.is((await person.get(`/console/api/calls/${queued.id}`)).status, 200, role);
    t.is((await person.get('/console/api/appointments')).status, 200, role);
    const place = await placeCall(person, { phone: '+12025550174' });
    t.is(place.status, 403, role);
    t.is(place.body.error.code, 'role_forbidden');
    t.regex(place.body.error.message, /owner, admin, developer/);
    t.is((await person.delete(`/console/api/calls/${queued.id}`)).body.error.code, 'role_forbidden', role);
  }
  const developer = await consoleAs(svc.url, account.id, 'developer');
  t.is((await placeCall(developer, { phone: '+12025550174' })).status, 201);
  t.is((await developer.delete(`/console/api/calls/${queued.id}`)).body.status, 'cancelled');
});

test.serial("another account's calls, appointments and customers are not found on every route", async (t) => {
  const stranger = await makeAccount(svc.url);
  const outsider = await consoleAs(svc.url, stranger.id, 'owner');
  const calls = (await owner.get('/console/api/calls?status=completed')).body.data;
  const answered = calls.find((c: { recording_url: string | null }) => c.recording_url);
  const queued = (await placeCall(owner, { phone: '+12025550175' })).body;
  const notFound = async (r: Promise<{ status: number; body: any }>, code: string, what: string) => {
    const reply = await r;
    t.is(reply.status, 404, what);
    t.is(reply.body.error.code, code, what);
  };
  await notFound(outsider.get(`/console/api/calls/${answered.id}`), 'call_not_found', 'page');
  await notFound(outsider.get(`/console/api/calls/${answered.id}/recording`), 'call_not_found', 'recording');
  await notFound(outsider.delete(`/console/api/calls/${queued.id}`), 'call_not_found', 'cancel');
  await notFound(outsider.get(`/console/api/calls?customer_id=${ready.id}`), 'customer_not_found', 'list by customer');
  await notFound(outsider.get(`/console/api/appointments?customer_id=${ready.id}`), 'customer_not_found', 'appointments by customer');
  await notFound(outsider.post('/console/api/calls', { customer_id: ready.id, phone: '+12025550176' }), 'customer_not_found', 'place');
  // The outsider's lists hold none of it, and another account's id is no cursor.
  t.deepEqual((await outsider.get('/console/api/calls')).body.data, []);
  t.deepEqual((await outsider.get('/console/api/appointments')).body.data, []);
  t.is((await outsider.get(`/console/api/calls?starting_after=${answered.id}`)).body.error.code, 'invalid_cursor');
  const appointment = (await owner.get('/console/api/appointments')).body.data[0];
  t.is((await outsider.get(`/console/api/appointments?starting_after=${appointment.id}`)).body.error.code, 'invalid_cursor');
  // The call is untouched.
  t.is((await owner.get(`/console/api/calls/${queued.id}`)).body.call.status, 'queued');
  // A made-up id is the same 404.
  await notFound(owner.get('/console/api/calls/00000000-0000-4000-8000-000000000000'), 'call_not_found', 'unknown id');
  await notFound(owner.get('/console/api/calls/not-an-id/recording'), 'call_not_found', 'not an id');
});

test.serial('the call list stays on an index with 10,000 calls in the account, among other accounts\' calls', async (t) => {
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  const neighbour = await makeAccount(svc.url);
  const theirs = await makeCustomer(neighbour.api, { country: 'US', timezone: 'America/New_York' });
  // Accounts call side by side: one call in three is this account's (10,000), the rest a neighbour's.
  const insert = () =>
    db.query(
      `INSERT INTO calls (account_id, mode, customer_id, to_e164, to_country, phone_input, status, outcome, dial_before, next_attempt_at, created_at, updated_at)
       SELECT CASE WHEN i % 3 = 0 THEN $1::uuid ELSE $4::uuid END, 'test',
              CASE WHEN i % 3 <> 0 THEN $5::uuid WHEN i % 6 = 0 THEN $2::uuid ELSE $3::uuid END,
              '+1202555' || lpad((i % 10000)::text, 4, '0'), 'US', 'x',
              'completed', CASE WHEN i % 1500 = 0 THEN 'appointment_booked' ELSE 'no_answer' END, now(), now(),
              now() - make_interval(secs => (30000 - i) * 60), now()
         FROM generate_series(1, 30000) AS i`,
      [account.id, ready.id, other.id, neighbour.id, theirs.id],
    );
  try {
    await insert();
    await db.query('ANALYZE calls');
    // Each filter's statement, as the list runs it, explained: no whole-table scan, a page's work.
    const plans: string[] = [];
    const explaining = {
      query: async (text: string, values: unknown[]) => {
        const r = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
        plans.push(JSON.stringify(r.rows[0]['QUERY PLAN'][0]));
        return { rows: [] };
      },
    };
    const reads = createConsoleCallReads(explaining as unknown as Parameters<typeof createConsoleCallReads>[0]);
    const base = { accountId: account.id, mode: 'test' as const, customerId: null, status: null, outcome: null, from: null, to: null, limit: 51, beforeSeq: null };
    const days = (n: number) => new Date(Date.now() - n * 86_400_000);
    const filters = {
      none: base,
      customer: { ...base, customerId: other.id },
      outcome: { ...base, outcome: 'appointment_booked' },
      'rare outcome': { ...base, outcome: 'busy' },
      status: { ...base, status: 'queued' },
      dates: { ...base, from: days(30), to: days(3) },
      'dates far back': { ...base, from: days(7), to: days(6.5) },
    };
    for (const [name, f] of Object.entries(filters)) {
      await reads.listCalls(f);
      const plan = JSON.parse(plans.at(-1)!);
      t.false(plans.at(-1)!.includes('"Seq Scan"'), `${name}: ${plans.at(-1)}`);
      // Rows read and thrown away: a page's worth, never the account's 10,000 (without migration
      // 030's indexes an outcome reads the whole table). A date range is the planner's to weigh:
      // it may walk the newest calls back to the range (seq and created_at rise together).
      const removed = (node: Record<string, any>): number => (node['Rows Removed by Filter'] ?? 0) + (node.Plans ?? []).reduce((n: number, p: Record<string, any>) => n + removed(p), 0);
      if (!name.startsWith('dates')) t.true(removed(plan.Plan) <= 500, `${name}: ${removed(plan.Plan)} rows filtered out: ${plans.at(-1)}`);
      t.true(plan['Execution Time'] < 20, `${name}: ${plan['Execution Time']} ms`);
    }
    // And through the route, with the session and the views.
    for (const path of ['/console/api/calls', `/console/api/calls?customer_id=${other.id}`, '/console/api/calls?outcome=appointment_booked', '/console/api/calls?status=queued']) {
      const started = performance.now();
      const r = await owner.get(path);
      t.is(r.status, 200, r.text);
      t.true(performance.now() - started < 500, path);
    }
  } finally {
    await db.end();
  }
});
