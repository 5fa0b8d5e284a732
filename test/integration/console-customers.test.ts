import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { call } from '../helpers/http.ts';
import { consoleAs } from '../helpers/console.ts';
import { createCustomerList } from '../../actors/customer/customer-list.ts';

/*
 * Issue 21, "Customers": the console's customer list with readiness, creating a customer, a
 * customer's page (readiness in plain words with who must act, provisioning, onboarding links and
 * who accepted them, limits, numbers, websites with their preview, chat sessions), minting a link
 * and setting limits; every route checks the role and never reaches another account's customer.
 */

let svc: TestService;
test.before(async () => {
  // The site of the page test is built when the test asks (website_builder/run), never half-way by the builder's poll.
  svc = await startTestService({ SWITCHBOARD_BUILDER_POLL_MS: '3600000' });
});
test.after.always(async () => svc?.stop());

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
const form = (fields: Record<string, string>) => ({
  rawBody: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

test('the list: newest first, the /v1 shape plus ready and blocker_count, cursor pages of limit, filtered by readiness or status, one mode at a time', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const made = [];
  for (const name of ['First Blocked', 'Second Blocked']) made.push((await owner.post('/console/api/customers', { name, country: 'US' })).body);
  const ready = await makeReadyCustomer(svc.url, a.api, { name: 'Ready Dental' });
  made.push((await owner.post('/console/api/customers', { name: 'Third Blocked', country: 'US' })).body);

  const first = await owner.get('/console/api/customers?limit=2');
  t.is(first.status, 200, first.text);
  t.is(first.body.object, 'list');
  t.true(first.body.has_more);
  t.deepEqual(first.body.data.map((c: any) => c.name), ['Third Blocked', 'Ready Dental']);
  t.like(first.body.data[0], { object: 'customer', id: made[2].id, mode: 'test', status: 'prospect', ready: false, country: 'US' });
  t.true(first.body.data[0].blocker_count > 0);
  t.like(first.body.data[1], { id: ready.id, ready: true, blocker_count: 0, status: 'active' });
  const second = await owner.get(`/console/api/customers?limit=2&starting_after=${first.body.data[1].id}`);
  t.deepEqual(second.body.data.map((c: any) => c.name), ['Second Blocked', 'First Blocked']);
  t.false(second.body.has_more);

  const readyOnes = await owner.get('/console/api/customers?status=ready');
  t.deepEqual(readyOnes.body.data.map((c: any) => c.id), [ready.id]);
  const blocked = await owner.get('/console/api/customers?status=blocked&limit=2');
  t.deepEqual(blocked.body.data.map((c: any) => c.name), ['Third Blocked', 'Second Blocked'], 'the ready customer between is skipped, the page is full');
  t.true(blocked.body.has_more);
  const blockedRest = await owner.get(`/console/api/customers?status=blocked&limit=2&starting_after=${blocked.body.data[1].id}`);
  t.deepEqual(blockedRest.body.data.map((c: any) => c.name), ['First Blocked']);
  t.false(blockedRest.body.has_more);
  t.deepEqual((await owner.get('/console/api/customers?status=active')).body.data.map((c: any) => c.id), [ready.id]);
  t.is((await owner.get('/console/api/customers?status=prospect')).body.data.length, 3);

  // The default page is 50; live mode of an account not live is simply empty.
  t.is((await owner.get('/console/api/customers')).body.data.length, 4);
  t.deepEqual((await owner.get('/console/api/customers?mode=live')).body, { object: 'list', data: [], has_more: false });
  for (const query of ['status=sleeping', 'mode=prod', 'limit=0', 'limit=201']) {
    const bad = await owner.get(`/console/api/customers?${query}`);
    t.is(bad.status, 400, query);
    t.is(bad.body.error.code, 'invalid_parameter', query);
  }
  t.is((await owner.get(`/console/api/customers?starting_after=${ready.id}&mode=live`)).body.error.code, 'invalid_cursor', 'a cursor of the other mode is no cursor');
});

test('a readiness filter reads on in rounds past customers that do not match until the page is full, and says whether more match', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const add = async (name: string) => (await owner.post('/console/api/customers', { name })).body;
  const [old1, old2] = [await add('Old One'), await add('Old Two')];
  const readyOnes = [await makeReadyCustomer(svc.url, a.api, { name: 'Ready One' }), await makeReadyCustomer(svc.url, a.api, { name: 'Ready Two' })];
  const newest = await add('Newest');
  // Rounds of two rows, so the ready pair fills a whole round with no match.
  const list = createCustomerList(svc.services, { scanBatch: 2 });
  const page = await list.list(a.id, 'test', { limit: 1, startingAfter: newest.id }, 'blocked');
  t.deepEqual(page.data.map((c) => c.id), [old2.id]);
  t.true(page.has_more, 'Old One still matches');
  const last = await list.list(a.id, 'test', { limit: 1, startingAfter: old2.id }, 'blocked');
  t.deepEqual(last.data.map((c) => c.id), [old1.id]);
  t.false(last.has_more);
  t.deepEqual((await list.list(a.id, 'test', { limit: 5 }, 'ready')).data.map((c) => c.id), readyOnes.map((c) => c.id).reverse());
});

test('creating: as POST /v1/customers plus mode, with its validation and codes; live before go-live is 403 live_not_enabled, after go-live a live customer', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const created = await owner.post('/console/api/customers', { name: 'Bright Dental', external_ref: 'bright-1', country: 'US', timezone: 'America/Chicago' });
  t.is(created.status, 201, created.text);
  t.like(created.body, { object: 'customer', name: 'Bright Dental', external_ref: 'bright-1', mode: 'test', timezone: 'America/Chicago', coverage: { object: 'coverage', country: 'US' } });
  t.is((await a.api.get(`/v1/customers/${created.body.id}`)).body.id, created.body.id, 'the same customer /v1 sees');

  const refusals: [Record<string, unknown>, number, string][] = [
    [{ name: '  ' }, 400, 'name_required'],
    [{ name: 'X', country: 'ZZ' }, 400, 'country_not_supported'],
    [{ name: 'X', timezone: 'Mars/Olympus' }, 400, 'invalid_timezone'],
    [{ name: 'X', website_url: 'ftp://x.example' }, 400, 'invalid_url'],
    [{ name: 'X', colour: 'blue' }, 400, 'unknown_parameter'],
    [{ name: 'X', external_ref: 'bright-1' }, 409, 'external_ref_taken'],
    [{ name: 'X', mode: 'prod' }, 400, 'invalid_parameter'],
    [{ name: 'X', mode: 'live' }, 403, 'live_not_enabled'],
  ];
  for (const [body, status, code] of refusals) {
    const r = await owner.post('/console/api/customers', body);
    t.is(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    t.is(r.body.error.code, code, JSON.stringify(body));
  }
  const liveByQuery = await owner.post('/console/api/customers?mode=live', { name: 'X' });
  t.is(liveByQuery.status, 403, 'mode may be sent in the query too');
  t.is(liveByQuery.body.error.code, 'live_not_enabled');
  t.is((await owner.post('/console/api/customers?mode=prod', { name: 'X' })).body.error.code, 'invalid_parameter');
  t.is((await owner.get('/console/api/customers?mode=live')).body.data.length, 0);

  const liveAccount = await makeAccount(svc.url, { live: true });
  const liveOwner = await consoleAs(svc.url, liveAccount.id, 'owner');
  const live = await liveOwner.post('/console/api/customers', { name: 'Live Dental', mode: 'live' });
  t.is(live.status, 201, live.text);
  t.is(live.body.mode, 'live');
  t.deepEqual((await liveOwner.get('/console/api/customers?mode=live')).body.data.map((c: any) => c.id), [live.body.id]);
  t.deepEqual((await liveOwner.get('/console/api/customers')).body.data, [], 'test mode shows test customers only');
});

test('creating with test_clock puts the new test customer on the clock; an unknown or other account\'s clock, or live mode, creates nothing', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const other = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const clock = (await owner.post('/console/api/test_clocks', { name: 'Scenario' })).body;
  const theirClock = (await (await consoleAs(svc.url, other.id, 'owner')).post('/console/api/test_clocks', {})).body;

  const created = await owner.post('/console/api/customers', { name: 'Clocked Dental', test_clock: clock.id });
  t.is(created.status, 201, created.text);
  t.like(created.body, { object: 'customer', name: 'Clocked Dental', mode: 'test', test_clock: clock.id });
  t.is((await owner.get(`/console/api/test_clocks/${clock.id}`)).body.customer_count, 1);
  const page = (await owner.get(`/console/api/customers/${created.body.id}`)).body;
  t.like(page.test_clock, { object: 'test_clock', id: clock.id, name: 'Scenario' }, 'the customer page says which clock it is on');
  t.is((await (await consoleAs(svc.url, other.id, 'owner')).get(`/console/api/customers/${created.body.id}`)).status, 404);
  t.false('test_clock' in (await owner.post('/console/api/customers', { name: 'Plain Dental' })).body, 'no clock, no test_clock');

  for (const [body, status, code] of [
    [{ name: 'Nope', test_clock: theirClock.id }, 404, 'test_clock_not_found'],
    [{ name: 'Nope', test_clock: '00000000-0000-0000-0000-000000000000' }, 404, 'test_clock_not_found'],
    [{ name: 'Nope', test_clock: clock.id, mode: 'live' }, 400, 'test_clock_live_customer'],
  ] as const) {
    const r = await owner.post('/console/api/customers', body);
    t.is(r.status, status, r.text);
    t.is(r.body.error.code, code);
  }
  const names = async (mode: string) => (await owner.get(`/console/api/customers?mode=${mode}`)).body.data.map((c: any) => c.name);
  t.deepEqual([...(await names('test')), ...(await names('live'))], ['Plain Dental', 'Clocked Dental'], 'nothing else was created');
  const plain = (await owner.get('/console/api/customers?mode=test')).body.data.find((c: any) => c.name === 'Plain Dental');
  t.is((await owner.get(`/console/api/customers/${plain.id}`)).body.test_clock, null, 'on real time: no clock');
  t.is((await owner.get(`/console/api/test_clocks/${clock.id}`)).body.customer_count, 1);
});

test("a customer's page: readiness in plain words naming who acts, provisioning, limits, onboarding links (accepted: when and by whom; never a URL), numbers, websites with their preview, chat sessions without tokens", async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const c = (await owner.post('/console/api/customers', { name: 'Bright Dental', external_ref: 'bright-page', country: 'US' })).body;

  const before = await owner.get(`/console/api/customers/${c.id}`);
  t.is(before.status, 200, before.text);
  t.like(before.body, { object: 'console_customer', customer: { id: c.id, name: 'Bright Dental' }, provisioning: { object: 'provisioning', customer_id: c.id }, limits: { object: 'customer_limits', customer_id: c.id } });
  t.deepEqual(before.body.onboarding_links, []);
  const byCode = (list: any[]) => Object.fromEntries(list.map((b) => [b.code, b]));
  const live = byCode(before.body.readiness.blockers);
  t.false(before.body.readiness.ready_for_live_calls);
  // The account's own steps: the reader acts, in the console, at Going live.
  t.like(live.reseller_not_live, { waiting_on: 'reseller', who: 'you', who_label: 'You', where: { label: 'Going live', path: '/console/going-live' } });
  t.like(live.kyb_incomplete, { who: 'you', what_to_do: 'Complete business verification in the console.', where: { label: 'Going live › Business details' } });
  t.like(live.agreement_unsigned, { who: 'you', where: { label: 'Going live › Agreement' } });
  t.is(live.agreement_unsigned.message, 'The reseller agreement has not been signed.', 'the meaning is the readiness rule’s own message');
  // A test customer's balance: no money can be loaded in test mode.
  t.like(live.insufficient_balance, { who: 'you', where: { path: '/console/billing' } });
  t.regex(live.insufficient_balance.what_to_do, /switch to live mode/);
  // The terms: the reader sends a link, from this page.
  const test_ = byCode(before.body.readiness.test_blockers);
  t.like(test_.customer_not_attested, { who: 'you', where: { path: `/console/customers/${c.id}` } });
  t.regex(test_.customer_not_attested.what_to_do, /Mint an onboarding link on this page/);
  // The operator's moves: nothing for the reader to do.
  t.like(test_.human_speech_gate_closed, { waiting_on: 'service', who: 'operator', who_label: 'The operator', where: null, action: null });
  t.regex(test_.human_speech_gate_closed.what_to_do, /Nothing for you to do/);
  // A provisioning step is asked for through the API: the words say which request.
  t.like(test_.script_uncertified, { who: 'you', where: null });
  t.regex(test_.script_uncertified.what_to_do, new RegExp(`POST /v1/customers/${c.id}/provisioning \\{"steps":\\["script"\\]\\}`));

  // Mint a link from the console: the URL is in this answer only.
  const minted = await owner.post(`/console/api/customers/${c.id}/onboarding_links`, {});
  t.is(minted.status, 201, minted.text);
  t.like(minted.body, { object: 'onboarding_link', customer_id: c.id, status: 'active', accepted_by: null });
  t.true(minted.body.url.startsWith(`${svc.url}/onboarding/ob_`));
  const sent = byCode((await owner.get(`/console/api/customers/${c.id}`)).body.readiness.test_blockers);
  t.like(sent.customer_not_attested, { waiting_on: 'customer', who: 'your_customer', who_label: 'Your customer' });
  t.regex(sent.customer_not_attested.what_to_do, /If they lost it, mint a new one/);

  const token = new URL(minted.body.url).pathname.split('/').pop()!;
  const accepted = await call(svc.url, 'POST', pathOf(minted.body.url), form({ accepted_by: 'Jane Doe', agree: 'yes' }));
  t.is(accepted.status, 200);
  const second = await owner.post(`/console/api/customers/${c.id}/onboarding_links`);
  t.is(second.status, 201);

  // Parts made through /v1: a number, a website, a chat session.
  await a.admin.post(`/admin/v1/languages/en-US/certify`);
  await a.api.post(`/v1/customers/${c.id}/provisioning`, { steps: ['number'] });
  const order = await a.api.post(`/v1/customers/${c.id}/websites`, { brief: 'Family dental practice; evening hours.' });
  t.is(order.status, 202, order.text);
  await a.admin.post('/admin/v1/website_builder/run');
  const session = await a.api.post(`/v1/customers/${c.id}/sessions`, { end_user_ref: 'front-desk', display_name: 'Front desk' });
  t.is(session.status, 201, session.text);
  await a.api.patch(`/v1/customers/${c.id}/limits`, { daily_spend_cap_cents: 5000 });

  const page = await owner.get(`/console/api/customers/bright-page`);
  t.is(page.status, 200, 'an external_ref names the customer, as on /v1');
  const links = page.body.onboarding_links;
  t.is(links.length, 2);
  t.like(links[0], { id: second.body.id, status: 'active', accepted_by: null, completed_at: null });
  t.like(links[1], { id: minted.body.id, status: 'completed', accepted_by: 'Jane Doe' });
  t.truthy(links[1].completed_at);
  t.truthy(links[1].created_at);
  t.truthy(links[1].expires_at);
  t.false(page.text.includes(token), 'never the token of a link');
  t.false(page.text.includes(session.body.token), 'never the token of a chat session');
  t.false('url' in links[0]);
  t.true(page.body.readiness.checks.customer_accepted_terms);
  t.false(page.body.readiness.test_blockers.some((b: any) => b.code === 'customer_not_attested'));

  t.is(page.body.numbers.length, 1);
  t.like(page.body.numbers[0], { object: 'number', customer_id: c.id, kind: 'rented', status: 'active' });
  t.is(page.body.websites.length, 1);
  t.like(page.body.websites[0], { object: 'website_build', id: order.body.id, status: 'ready' });
  t.true(page.body.websites[0].preview_url.startsWith(svc.url), 'the preview address');
  t.is(page.body.chat_sessions.length, 1);
  t.like(page.body.chat_sessions[0], { object: 'chat_session', id: session.body.id, status: 'active', messages_sent: 0, end_user_ref: 'front-desk' });
  t.truthy(page.body.chat_sessions[0].created_at);
  t.like(page.body.limits, { daily_spend_cap_cents: 5000 });

  const limits = await owner.patch(`/console/api/customers/${c.id}/limits`, { monthly_spend_cap_cents: 90_000, daily_spend_cap_cents: null });
  t.is(limits.status, 200, limits.text);
  t.like(limits.body, { object: 'customer_limits', customer_id: c.id, monthly_spend_cap_cents: 90_000, daily_spend_cap_cents: null });
  t.like((await a.api.get(`/v1/customers/${c.id}/limits`)).body, { monthly_spend_cap_cents: 90_000, daily_spend_cap_cents: null });
  const badLimit = await owner.patch(`/console/api/customers/${c.id}/limits`, { max_concurrent_calls: -1 });
  t.is(badLimit.status, 400);
  t.is(badLimit.body.error.code, 'invalid_limit');
});

test("a suspended account's people still read their customers but change nothing (403 reseller_suspended, as a key is refused)", async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const c = (await owner.post('/console/api/customers', { name: 'Bright Dental' })).body;
  t.is((await a.admin.post(`/admin/v1/accounts/${a.id}/suspend`)).status, 200);
  for (const r of [
    await owner.post('/console/api/customers', { name: 'Nope' }),
    await owner.post(`/console/api/customers/${c.id}/onboarding_links`, {}),
    await owner.patch(`/console/api/customers/${c.id}/limits`, { max_concurrent_calls: 1 }),
  ]) {
    t.is(r.status, 403, r.text);
    t.is(r.body.error.code, 'reseller_suspended');
  }
  t.is((await owner.get(`/console/api/customers/${c.id}`)).status, 200);
  t.deepEqual((await owner.get('/console/api/customers')).body.data.map((x: any) => x.id), [c.id]);
});

test('roles: a viewer reads but cannot create, mint or set limits; billing reads; a developer writes', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const viewer = await consoleAs(svc.url, a.id, 'viewer');
  const billing = await consoleAs(svc.url, a.id, 'billing');
  const developer = await consoleAs(svc.url, a.id, 'developer');
  for (const person of [viewer, billing]) {
    t.is((await person.get('/console/api/customers')).status, 200, person.user.role);
    t.is((await person.get(`/console/api/customers/${c.id}`)).status, 200, person.user.role);
    for (const [what, r] of [
      ['create', await person.post('/console/api/customers', { name: 'Nope' })],
      ['mint', await person.post(`/console/api/customers/${c.id}/onboarding_links`, {})],
      ['limits', await person.patch(`/console/api/customers/${c.id}/limits`, { max_concurrent_calls: 1 })],
    ] as const) {
      t.is(r.status, 403, `${person.user.role} ${what}`);
      t.is(r.body.error.code, 'role_forbidden', `${person.user.role} ${what}`);
      t.regex(r.body.error.message, /owner, admin, developer/);
    }
  }
  t.is((await a.api.get('/v1/customers')).body.data.length, 1, 'nothing was created');
  t.is((await developer.post('/console/api/customers', { name: 'Dev Dental' })).status, 201);
  t.is((await developer.post(`/console/api/customers/${c.id}/onboarding_links`, {})).status, 201);
  t.is((await developer.patch(`/console/api/customers/${c.id}/limits`, { max_concurrent_calls: 2 })).status, 200);
  // Without a session, nothing; a write without the CSRF header, nothing.
  t.is((await call(svc.url, 'GET', '/console/api/customers')).body.error.code, 'console_session_required');
  const noCsrf = await call(svc.url, 'POST', '/console/api/customers', { body: { name: 'X' }, headers: { cookie: developer.cookie } });
  t.is(noCsrf.body.error.code, 'csrf_failed');
});

test("another account's customer is 404 customer_not_found on every route, and so is a test customer asked for in live mode", async (t) => {
  const mine = await makeAccount(svc.url, { live: true });
  const theirs = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, mine.id, 'owner');
  const other = await makeCustomer(theirs.api, { external_ref: 'their-ref' });
  const myTest = await makeCustomer(mine.api, { external_ref: 'my-test' });

  const routes = (id: string, mode?: 'live') => {
    const q = mode ? `?mode=${mode}` : '';
    return [
      ['GET page', () => owner.get(`/console/api/customers/${encodeURIComponent(id)}${q}`)],
      ['POST onboarding_links', () => owner.post(`/console/api/customers/${encodeURIComponent(id)}/onboarding_links`, mode ? { mode } : {})],
      ['PATCH limits', () => owner.patch(`/console/api/customers/${encodeURIComponent(id)}/limits`, { max_concurrent_calls: 1, ...(mode ? { mode } : {}) })],
    ] as const;
  };
  for (const [what, go] of [...routes(other.id), ...routes('their-ref'), ...routes(other.id, 'live'), ...routes(myTest.id, 'live'), ...routes('my-test', 'live')]) {
    const r = await go();
    t.is(r.status, 404, `${what}: ${r.text}`);
    t.is(r.body.error.code, 'customer_not_found', what);
  }
  t.is((await theirs.api.get(`/v1/customers/${other.id}/limits`)).body.max_concurrent_calls, null, 'their limits untouched');
  t.is((await theirs.api.get(`/v1/customers/${other.id}/onboarding_link`)).body.data.length, 0, 'no link minted for them');

  // The list never shows them, and their id is no cursor here.
  const list = await owner.get('/console/api/customers');
  t.deepEqual(list.body.data.map((c: any) => c.id), [myTest.id]);
  const cursor = await owner.get(`/console/api/customers?starting_after=${other.id}`);
  t.is(cursor.status, 400);
  t.is(cursor.body.error.code, 'invalid_cursor');
  // Creating never reaches another account: the customer is the session's account's.
  const created = await owner.post('/console/api/customers', { name: 'Mine', external_ref: 'their-ref' });
  t.is(created.status, 201, 'an external_ref is unique per account');
  t.is((await mine.api.get('/v1/customers/their-ref')).body.id, created.body.id);
  t.is((await theirs.api.get('/v1/customers/their-ref')).body.id, other.id);
});
