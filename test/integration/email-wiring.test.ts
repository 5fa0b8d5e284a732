/**
 * Issue 22, "Email": the facts that ask for an email write it to the outbox (email_outbox, 033) in
 * their own transaction, through enqueueEmail: the low-balance stages, a number's rent and a
 * site's hosting due (live only, the event's data and id, deduped on the event), console
 * invitations and password resets (the link sealed), and an onboarding link the reseller asks to
 * be emailed to its customer. Here: what is written, once, and rolled back with its fact; the
 * sending itself is email-core's (and email-arrival.test.ts's). The money invariants hold after each.
 */
import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { adminClient, makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { call } from '../helpers/http.ts';
import { consoleAs, CONSOLE_PASSWORD } from '../helpers/console.ts';
import { outboxEmails } from '../helpers/outbox.ts';
import { end, hold, spend, topUp } from '../helpers/live-money.ts';
import type { Client } from '../helpers/http.ts';
import { recordEvent } from '../../db/events.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});
test.afterEach(async (t) => {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
});

type Live = TestAccount & { liveApi: Client };
const liveAccount = async () => (await makeAccount(svc.url, { live: true })) as Live;
const events = async (a: TestAccount, type: string) => (await a.admin.get(`/admin/v1/accounts/${a.id}/events?type=${type}&limit=100`)).body.data as any[];
const balanceOf = async (a: Live) => (await a.liveApi.get('/v1/balance')).body;
const lowEmails = (a: TestAccount) => outboxEmails(svc.databaseUrl, { accountId: a.id, kind: 'balance_low' });

test('balance_low: one email per stage crossed (25 %, 10 %, zero), the event itself, to the billing people; a rise and a second fall write new ones', async (t) => {
  const a = await liveAccount();
  const c = await makeCustomer(a.liveApi);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { concurrent_calls: 10 });
  await topUp(a, 10_000);
  t.deepEqual(await lowEmails(a), []);

  await spend(a, c.id, 7_600);
  t.like(await balanceOf(a), { balance_cents: 2_400, low_balance: 'below_25_percent' });
  t.deepEqual((await lowEmails(a)).map((e) => e.data.low_balance), ['below_25_percent']);

  await spend(a, c.id, 1_500);
  t.like(await balanceOf(a), { balance_cents: 900, low_balance: 'below_10_percent' });
  t.deepEqual((await lowEmails(a)).map((e) => e.data.low_balance), ['below_25_percent', 'below_10_percent']);

  // Two calls running hold 800 of the 900: what is left (100) does not cover a third call's hold.
  await hold(a, c.id, 'zero-1');
  await hold(a, c.id, 'zero-2');
  t.like(await balanceOf(a), { available_cents: 100, low_balance: 'zero' });
  await end(a, 'zero-1', 0);
  await end(a, 'zero-2', 0);
  t.like(await balanceOf(a), { available_cents: 900, low_balance: 'below_10_percent' });

  const emails = await lowEmails(a);
  t.deepEqual(emails.map((e) => e.data.low_balance), ['below_25_percent', 'below_10_percent', 'zero'], 'each stage once, and none on the way back up');
  const lows = await events(a, 'balance.low');
  t.is(lows.length, 3);
  for (const email of emails) {
    const event = lows.find((e) => e.id === email.data.event_id);
    t.truthy(event, 'each email tells an event');
    t.like(email, { account_id: a.id, mode: 'live', customer_id: null, audience: 'billing', to_address: null, dedupe_key: `event:${event.id}`, secret: null });
    t.deepEqual(email.data, { ...event.data, event_id: event.id }, "the email's data is the event's, with its id");
    t.is(email.data.object, 'balance');
  }

  // A top-up lifts the balance (nothing written); the next fall under 25 % of it is a new crossing.
  await topUp(a, 10_000);
  t.is((await balanceOf(a)).low_balance, 'ok');
  t.is((await lowEmails(a)).length, 3, 'rising writes nothing');
  await spend(a, c.id, 8_500); // 10,900 → 2,400: under 25 % of the last top-up (10,000)
  t.like(await balanceOf(a), { balance_cents: 2_400, low_balance: 'below_25_percent' });
  t.deepEqual((await lowEmails(a)).map((e) => e.data.low_balance), ['below_25_percent', 'below_10_percent', 'zero', 'below_25_percent']);
});

test('test mode writes no low-balance email: spending test money never warns', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const r = await a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'test', customer_id: c.id, reference: 'test-1' });
  t.true(r.body.ok, r.text);
  await end(a, 'test-1', 1_200);
  t.deepEqual(await outboxEmails(svc.databaseUrl, { accountId: a.id }), []);
});

/** Runs `work` in a transaction of its own on the service's database, committed or rolled back. */
async function inTransaction<T>(commit: boolean, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: svc.databaseUrl, max: 1 });
  const db = await pool.connect();
  try {
    await db.query('BEGIN');
    const out = await work(db);
    await db.query(commit ? 'COMMIT' : 'ROLLBACK');
    return out;
  } finally {
    db.release();
    await pool.end();
  }
}

test('the emailed events write their email in the event\'s transaction: live only, rolled back with it, never for a test event sent to one endpoint', async (t) => {
  const a = await liveAccount();
  const now = new Date();
  const record = (db: pg.PoolClient, type: string, mode: 'test' | 'live', extra: { onlyEndpointId?: string } = {}) =>
    recordEvent(db, { accountId: a.id, mode, type, data: { object: 'thing', id: `x_${type}` }, now, ...extra });
  const emailed = { 'balance.low': 'balance_low', 'number.payment_due': 'number_payment_due', 'website.hosting_due': 'website_hosting_due' } as const;

  // Rolled back: neither the events nor their emails.
  await inTransaction(false, async (db) => {
    for (const type of Object.keys(emailed)) await record(db, type, 'live');
  });
  t.deepEqual(await outboxEmails(svc.databaseUrl, { accountId: a.id }), [], 'rolled back with the event');

  // Committed: one email per live event of an emailed type; none in test mode, none for other types.
  const written = await inTransaction(true, async (db) => {
    const out: Record<string, string> = {};
    for (const type of Object.keys(emailed)) {
      out[type] = (await record(db, type, 'live')).id;
      await record(db, type, 'test');
    }
    await record(db, 'call.completed', 'live');
    await record(db, 'customer.ready', 'live');
    return out;
  });
  const emails = await outboxEmails(svc.databaseUrl, { accountId: a.id });
  t.deepEqual(
    emails.map((e) => [e.kind, e.mode, e.audience, e.dedupe_key, e.data]),
    Object.entries(emailed).map(([type, kind]) => [kind, 'live', 'billing', `event:${written[type]}`, { object: 'thing', id: `x_${type}`, event_id: written[type] }]),
  );

  // The console's "send a test event" to one endpoint is no fact: delivered there, emailed to nobody.
  const endpoint = await a.admin.post(`/admin/v1/accounts/${a.id}/webhook_endpoints`, { mode: 'live', url: 'https://127.0.0.1:9/hook' });
  t.is(endpoint.status, 201, endpoint.text);
  await inTransaction(true, (db) => record(db, 'balance.low', 'live', { onlyEndpointId: endpoint.body.id }));
  t.is((await outboxEmails(svc.databaseUrl, { accountId: a.id })).length, 3);
});

test('console invitations: each one is an email to the invited address with the accept link sealed, who invited and when it expires; inviting again is a new email', async (t) => {
  const a = await makeAccount(svc.url, { name: 'Northwind Agency' });
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const invitations = () => outboxEmails(svc.databaseUrl, { accountId: a.id, kind: 'console_invitation' });
  const operatorMade = await invitations();
  t.is(operatorMade.length, 1, "the operator's invitation of the owner (consoleAs) is an email too");
  t.like(operatorMade[0], { to_address: owner.user.email, audience: 'person', data: { account_name: 'Northwind Agency', role: 'owner', invited_by: null } });

  const invited = await owner.post('/console/api/team/invitations', { email: 'Dana@Agency.example', role: 'billing' });
  t.is(invited.status, 201, invited.text);
  const emails = await invitations();
  t.is(emails.length, 2);
  const email = emails[1]!;
  t.like(email, { account_id: a.id, mode: 'live', customer_id: null, kind: 'console_invitation', audience: 'person', to_address: 'dana@agency.example', dedupe_key: `invitation:${invited.body.id}` });
  t.deepEqual(email.data, { account_name: 'Northwind Agency', role: 'billing', invited_by: 'The owner', expires_at: invited.body.expires_at });
  t.is(email.secret, invited.body.url, 'the sealed secret is the accept link the inviter is shown');
  t.false(JSON.stringify(email.data).includes('sbi_'), 'the token is only in the sealed secret');

  // The emailed link works.
  const token = new URL(email.secret!).searchParams.get('token')!;
  const peek = await call(svc.url, 'GET', `/console/api/invitations/${token}`);
  t.like(peek.body, { email: 'dana@agency.example', role: 'billing', account_name: 'Northwind Agency' });

  // Inviting the same address again: a new invitation, a new email.
  const again = await owner.post('/console/api/team/invitations', { email: 'dana@agency.example', role: 'billing' });
  t.is(again.status, 201);
  const after = await invitations();
  t.is(after.length, 3);
  t.is(after[2]!.dedupe_key, `invitation:${again.body.id}`);
  t.not(after[2]!.secret, email.secret);

  // A refused invitation writes nothing.
  const admin = await consoleAs(svc.url, a.id, 'admin');
  t.is((await admin.post('/console/api/team/invitations', { email: 'boss@agency.example', role: 'owner' })).status, 403);
  t.is((await invitations()).length, 4, 'only the admin\'s own invitation was added');
});

test("the operator's account creation with owner_email emails the owner's invitation (the link is also in the answer)", async (t) => {
  const created = await adminClient(svc.url).post('/admin/v1/accounts', { name: 'Founders & Co', country: 'US', owner_email: 'Founder@Founders.example' });
  t.is(created.status, 201, created.text);
  const emails = await outboxEmails(svc.databaseUrl, { accountId: created.body.id });
  t.is(emails.length, 1);
  t.like(emails[0], { kind: 'console_invitation', audience: 'person', to_address: 'founder@founders.example', data: { account_name: 'Founders & Co', role: 'owner', invited_by: null, expires_at: created.body.owner_invitation.expires_at } });
  t.is(emails[0]!.secret, created.body.owner_invitation.url);
  // Accepting through the emailed link signs the owner in.
  const token = new URL(emails[0]!.secret!).searchParams.get('token')!;
  const accepted = await call(svc.url, 'POST', '/console/api/invitations/accept', { body: { token, name: 'Founder', password: CONSOLE_PASSWORD } });
  t.is(accepted.status, 200, accepted.text);
});

test('invitation addresses that could break a mail header are refused with 400 invalid_parameter, and write nothing', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const before = (await outboxEmails(svc.databaseUrl, { accountId: a.id })).length;
  for (const email of ['dana@agency.example\r\nBcc: x@evil.example', 'dana,x@agency.example', 'Dana <dana@agency.example>', 'da\u0007na@agency.example', 'dana@agency', `${'d'.repeat(70)}@agency.example`, `dana@${'a'.repeat(64)}.example`]) {
    const r = await owner.post('/console/api/team/invitations', { email, role: 'viewer' });
    t.is(r.status, 400, JSON.stringify(email));
    t.is(r.body.error.code, 'invalid_parameter');
  }
  t.is((await outboxEmails(svc.databaseUrl, { accountId: a.id })).length, before);
});

test('onboarding link with `email`: emailed on the reseller\'s behalf in the mint\'s transaction, `emailed_to` in the answer and the list; without it nothing is emailed', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { name: 'Bright Dental' });
  const linkEmails = () => outboxEmails(svc.databaseUrl, { accountId: a.id, kind: 'onboarding_link' });

  const plain = await a.api.post(`/v1/customers/${c.id}/onboarding_link`, {});
  t.is(plain.status, 201, plain.text);
  t.is(plain.body.emailed_to, null);
  const bare = await a.api.post(`/v1/customers/${c.id}/onboarding_link`);
  t.is(bare.status, 201, 'no body at all is still accepted');
  t.deepEqual(await linkEmails(), []);

  const sent = await a.api.post(`/v1/customers/${c.id}/onboarding_link`, { email: 'Owner@BrightDental.example' }, { headers: { 'idempotency-key': 'mint-and-send-1' } });
  t.is(sent.status, 201, sent.text);
  t.is(sent.body.emailed_to, 'owner@brightdental.example');
  const emails = await linkEmails();
  t.is(emails.length, 1);
  t.like(emails[0], { account_id: a.id, mode: 'test', customer_id: c.id, kind: 'onboarding_link', audience: 'customer', to_address: 'owner@brightdental.example', dedupe_key: `onboarding_link:${sent.body.id}` });
  t.deepEqual(emails[0]!.data, { customer_name: 'Bright Dental', link_id: sent.body.id, expires_at: sent.body.expires_at, language: 'en-US' });
  t.is(emails[0]!.secret, sent.body.url, 'the sealed secret is the link itself');

  // A replay of the same request answers the same link and writes no second email.
  const replay = await a.api.post(`/v1/customers/${c.id}/onboarding_link`, { email: 'Owner@BrightDental.example' }, { headers: { 'idempotency-key': 'mint-and-send-1' } });
  t.is(replay.body.id, sent.body.id);
  t.is((await linkEmails()).length, 1);

  const list = await a.api.get(`/v1/customers/${c.id}/onboarding_link`);
  t.deepEqual(list.body.data.map((l: any) => l.emailed_to), ['owner@brightdental.example', null, null]);
});

test('onboarding link: an address that is not one mailbox is a 400 invalid_parameter and mints nothing', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  for (const email of ['owner@brightdental.example\nBcc: all@evil.example', 'owner@brightdental.example, all@evil.example', 'not-an-address', '', 'owner@bright\u007fdental.example', 'ow\u001bner@brightdental.example', 42, `${'o'.repeat(70)}@brightdental.example`, 'owner@-brightdental.example']) {
    const r = await a.api.post(`/v1/customers/${c.id}/onboarding_link`, { email });
    t.is(r.status, 400, JSON.stringify(email));
    t.is(r.body.error.code, 'invalid_parameter', JSON.stringify(email));
  }
  // NUL is refused in any text of any request, with its own code (docs/api.md, Bodies).
  const nul = await a.api.post(`/v1/customers/${c.id}/onboarding_link`, { email: 'ow\u0000ner@brightdental.example' });
  t.like(nul, { status: 400, body: { error: { code: 'invalid_string' } } });
  t.is((await a.api.get(`/v1/customers/${c.id}/onboarding_link`)).body.data.length, 0, 'no link minted');
  t.deepEqual(await outboxEmails(svc.databaseUrl, { accountId: a.id }), []);
});

test("the console's \"Send by email\": the customer page's mint takes an address and emails the link", async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const r = await owner.post(`/console/api/customers/${c.id}/onboarding_links`, { mode: 'test', email: 'front-desk@brightdental.example' });
  t.is(r.status, 201, r.text);
  t.is(r.body.emailed_to, 'front-desk@brightdental.example');
  const emails = await outboxEmails(svc.databaseUrl, { accountId: a.id, kind: 'onboarding_link' });
  t.is(emails.length, 1);
  t.like(emails[0], { customer_id: c.id, to_address: 'front-desk@brightdental.example', secret: r.body.url });
  const bad = await owner.post(`/console/api/customers/${c.id}/onboarding_links`, { mode: 'test', email: 'front desk@brightdental.example' });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_parameter');
  const page = await owner.get(`/console/api/customers/${c.id}?mode=test`);
  t.is(page.body.onboarding_links[0].emailed_to, 'front-desk@brightdental.example');
});

test('onboarding emails are limited: 5 per customer and 200 per account in any 24 hours (429 onboarding_email_limit, nothing minted or queued); a mint without email is not limited', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const linkEmails = () => outboxEmails(svc.databaseUrl, { accountId: a.id, kind: 'onboarding_link' });
  const links = async (id: string) => (await a.api.get(`/v1/customers/${id}/onboarding_link?limit=100`)).body.data.length;
  for (let i = 1; i <= 5; i++) {
    const r = await a.api.post(`/v1/customers/${c.id}/onboarding_link`, { email: `owner+${i}@brightdental.example` });
    t.is(r.status, 201, `email ${i}: ${r.text}`);
  }
  const sixth = await a.api.post(`/v1/customers/${c.id}/onboarding_link`, { email: 'owner+6@brightdental.example' });
  t.is(sixth.status, 429, sixth.text);
  t.is(sixth.body.error.code, 'onboarding_email_limit');
  t.is((await linkEmails()).length, 5, 'nothing queued');
  t.is(await links(c.id), 5, 'nothing minted');
  t.is((await a.api.post(`/v1/customers/${c.id}/onboarding_link`, {})).status, 201, 'a mint without email is not limited');
  const other = await makeCustomer(a.api);
  t.is((await a.api.post(`/v1/customers/${other.id}/onboarding_link`, { email: 'someone@elsewhere.example' })).status, 201, 'another customer has its own 5');

  // The account's 200: 194 more emails written when the last one was (straight into the outbox, as 194 mints would).
  const db = new pg.Pool({ connectionString: svc.databaseUrl, max: 1 });
  try {
    await db.query(
      `INSERT INTO email_outbox (account_id, mode, kind, audience, to_address, dedupe_key, data, status, created_at)
       SELECT $1, 'test', 'onboarding_link', 'customer', 'x' || g || '@example.com', 'limit-test:' || g, '{}', 'skipped',
              (SELECT max(created_at) FROM email_outbox WHERE account_id = $1)
         FROM generate_series(1, 194) g`,
      [a.id],
    );
  } finally {
    await db.end();
  }
  t.is((await linkEmails()).length, 200);
  const third = await makeCustomer(a.api);
  const over = await a.api.post(`/v1/customers/${third.id}/onboarding_link`, { email: 'first@third.example' });
  t.is(over.status, 429, over.text);
  t.is(over.body.error.code, 'onboarding_email_limit');
  t.is(await links(third.id), 0);
});

test('the account onboarding email limit holds under concurrency: at 199 of 200, four mints for four customers at once let exactly one through', async (t) => {
  const a = await makeAccount(svc.url);
  const customers = await Promise.all([1, 2, 3, 4].map(() => makeCustomer(a.api)));
  const db = new pg.Pool({ connectionString: svc.databaseUrl, max: 1 });
  try {
    await db.query(
      `INSERT INTO email_outbox (account_id, mode, kind, audience, to_address, dedupe_key, data, status)
       SELECT $1, 'test', 'onboarding_link', 'customer', 'x' || g || '@example.com', 'race-test:' || g, '{}', 'skipped'
         FROM generate_series(1, 199) g`,
      [a.id],
    );
  } finally {
    await db.end();
  }
  const answers = await Promise.all(customers.map((c, i) => a.api.post(`/v1/customers/${c.id}/onboarding_link`, { email: `owner${i}@race.example` })));
  t.deepEqual(answers.map((r) => r.status).sort(), [201, 429, 429, 429], answers.map((r) => r.text).join('\n'));
  t.is((await outboxEmails(svc.databaseUrl, { accountId: a.id, kind: 'onboarding_link' })).length, 200);
});
