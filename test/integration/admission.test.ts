import test from 'ava';
import crypto from 'node:crypto';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { createPool, type Pool } from '../../db/pool.ts';
import { loadAdmissionFacts, loadAdmissionFactsOfMany, type AdmissionRequest } from '../../db/admission.ts';
import { loadReadinessFacts } from '../../db/readiness.ts';

let svc: TestService;
let account: TestAccount & { liveApi?: any };
let other: TestAccount;
let pool: Pool;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url, { live: true });
  other = await makeAccount(svc.url);
  await account.admin.post(`/admin/v1/accounts/${account.id}/top_ups`, { amount_cents: 10_000 });
  pool = createPool(svc.databaseUrl, 2);
});
test.after.always(async () => {
  await pool?.end();
  await svc?.stop();
});

const now = () => new Date();
const YEAR_AGO = new Date(Date.now() - 400 * 86_400_000);

test('the admission statement reads exactly the readiness endpoint’s row, for ready, unready and live customers', async (t) => {
  const customers = [
    await makeReadyCustomer(svc.url, account.api),
    await makeCustomer(account.api),
    await makeReadyCustomer(svc.url, account.liveApi),
    await makeCustomer(account.liveApi, { country: 'GB' }),
  ];
  for (const c of customers) {
    const at = now();
    const admission = await loadAdmissionFacts(pool, { accountId: account.id, customerId: c.id, toE164: '+12025550111', attemptsSince: YEAR_AGO }, at);
    t.deepEqual(admission.readiness, await loadReadinessFacts(pool, c.id, at), c.id);
    t.is(admission.do_not_call, null);
  }
});

test('a customer that is gone has no readiness and no caller ID, and do-not-call is still read', async (t) => {
  await account.api.post('/v1/dnc', { phone: '+12025550112' });
  const gone = crypto.randomUUID();
  t.deepEqual(await loadAdmissionFacts(pool, { accountId: account.id, customerId: gone, toE164: '+12025550112', attemptsSince: YEAR_AGO }, now()), {
    do_not_call: 'account_list',
    readiness: null,
    caller_id: null,
    attempts: [],
    emergency_closures: [],
    earlier_outcomes: [],
    research_pending: false,
    prospect_notes: null,
  });
});

test('do-not-call: the account’s own list first, then the national registry; another account’s list does not count', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  const read = (toE164: string) => loadAdmissionFacts(pool, { accountId: account.id, customerId: customer.id, toE164, attemptsSince: YEAR_AGO }, now());
  await other.api.post('/v1/dnc', { phone: '+12025550121' });
  await account.admin.post('/admin/v1/dnc/registry', { country: 'US', source: 'admission test', text: 'phone_number\n+12025550122\n+12025550123\n' });
  await account.api.post('/v1/dnc', { phone: '+12025550123' });
  t.is((await read('+12025550120')).do_not_call, null);
  t.is((await read('+12025550121')).do_not_call, null, 'listed by another account only');
  t.is((await read('+12025550122')).do_not_call, 'national_registry');
  t.is((await read('+12025550123')).do_not_call, 'account_list', 'both: the account’s own list is named');
});

test('the caller ID is the customer’s first active number in its own country, and none without one', async (t) => {
  const ready = await makeReadyCustomer(svc.url, account.liveApi);
  const facts = await loadAdmissionFacts(pool, { accountId: account.id, customerId: ready.id, toE164: '+12025550130', attemptsSince: YEAR_AGO }, now());
  t.is(facts.caller_id, '+12025550188');
  t.true(facts.readiness?.has_number_in_country);

  // A later number in the same country does not replace the first.
  await addNumber(ready.id, '+12025550187', 'US');
  t.is((await loadAdmissionFacts(pool, { accountId: account.id, customerId: ready.id, toE164: '+12025550130', attemptsSince: YEAR_AGO }, now())).caller_id, '+12025550188');

  const abroad = await makeCustomer(account.liveApi, { country: 'GB' });
  const read = () => loadAdmissionFacts(pool, { accountId: account.id, customerId: abroad.id, toE164: '+442079460000', attemptsSince: YEAR_AGO }, now());
  await addNumber(abroad.id, '+12025550189', 'US');
  const none = await read();
  t.is(none.caller_id, null, 'a number in another country is no caller ID');
  t.false(none.readiness?.has_number_in_country);
  await addNumber(abroad.id, '+442079460099', 'GB');
  const some = await read();
  t.is(some.caller_id, '+442079460099');
  t.true(some.readiness?.has_number_in_country);
});

test('a round reads every request’s facts in one statement: each request gets, in order, exactly what it reads alone', async (t) => {
  const ready = await makeReadyCustomer(svc.url, account.api);
  const live = await makeReadyCustomer(svc.url, account.liveApi);
  const unready = await makeCustomer(account.api);
  await account.api.post('/v1/dnc', { phone: '+12025550141' });
  // A request whose research of the called business is still running, and one without research.
  const queued = (await account.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, phone: '+12025550142' })).body;
  await pool.query(
    `INSERT INTO prospect_research (request_id, account_id, mode, customer_id, website_url, created_at) VALUES ($1, $2, 'test', $3, 'https://example.com', now())`,
    [queued.id, account.id, ready.id],
  );
  const requests: AdmissionRequest[] = [
    { accountId: account.id, customerId: ready.id, toE164: '+12025550142', attemptsSince: YEAR_AGO, requestId: queued.id },
    { accountId: account.id, customerId: ready.id, toE164: '+12025550141', attemptsSince: YEAR_AGO, requestId: crypto.randomUUID() },
    { accountId: account.id, customerId: live.id, toE164: '+12025550143', attemptsSince: YEAR_AGO },
    { accountId: account.id, customerId: crypto.randomUUID(), toE164: '+12025550144', attemptsSince: YEAR_AGO },
    { accountId: account.id, customerId: unready.id, toE164: '+12025550141', attemptsSince: YEAR_AGO },
  ];
  const at = now();
  const many = await loadAdmissionFactsOfMany(pool, requests, at);
  t.is(many.length, requests.length);
  for (const [i, r] of requests.entries()) t.deepEqual(many[i], await loadAdmissionFacts(pool, r, at), `request ${i}`);
  t.deepEqual(
    many.map((f) => [f.readiness?.customer_id ?? null, f.do_not_call, f.caller_id, f.research_pending]),
    [
      [ready.id, null, many[0].caller_id, true],
      [ready.id, 'account_list', many[0].caller_id, false],
      [live.id, null, '+12025550188', false],
      [null, null, null, false],
      [unready.id, 'account_list', null, false],
    ],
  );
  t.deepEqual(await loadAdmissionFactsOfMany(pool, [], at), []);
});

async function addNumber(customerId: string, e164: string, country: string): Promise<void> {
  await pool.query(
    `INSERT INTO phone_numbers (account_id, mode, customer_id, e164, country, kind, created_at, updated_at)
     SELECT account_id, mode, id, $2, $3, 'rented', now(), now() FROM customers WHERE id = $1`,
    [customerId, e164, country],
  );
}
