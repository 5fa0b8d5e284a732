import test from 'ava';
import crypto from 'node:crypto';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import type { Client } from '../helpers/http.ts';

/**
 * Issue 11 §6: a `starting_after` cursor names a row only inside the list it pages. An id of the
 * other mode (or of another customer) answers 400 invalid_cursor exactly like an unknown id, so
 * a key of one mode cannot learn that an id of the other exists.
 */

type Live = TestAccount & { liveKey: string; liveApi: Client };

let svc: TestService;
let a: Live;
/** One record of each listed kind, per mode. */
const ids: { test: Record<string, string>; live: Record<string, string> } = { test: {}, live: {} };
let testCustomer: { id: string };
let liveCustomer: { id: string };

const firstId = async (api: Client, path: string) => {
  const r = await api.get(path);
  if (r.status !== 200 || !r.body.data?.length) throw new Error(`${path}: ${r.status} ${r.text}`);
  return r.body.data[0].id as string;
};

test.before(async () => {
  // The dialler runs only when asked, so the live call stays queued (its row is what matters).
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  a = (await makeAccount(svc.url, { live: true })) as Live;
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 50_000 });
  await advanceToNext(a, 2, 15);

  // Test mode: a dialled call that books an appointment and prices a usage line.
  testCustomer = await makeReadyCustomer(svc.url, a.api);
  const testCall = await a.api.post('/v1/calls', { called_party: 'business', customer_id: testCustomer.id, business_name: 'Acme Plumbing', phone: '+12025550131' });
  const done = await dialUntilFinished(a, a.api, testCall.body.id);
  ids.test.calls = testCall.body.id;
  ids.test.appointments = done.appointment_id;
  ids.test.customers = testCustomer.id;
  ids.test.usage = await firstId(a.api, '/v1/usage');
  ids.test.events = await firstId(a.api, '/v1/events');
  ids.test.onboarding_link = await firstId(a.api, `/v1/customers/${testCustomer.id}/onboarding_link`);
  ids.test.sessions = (await a.api.post(`/v1/customers/${testCustomer.id}/sessions`, { end_user_ref: 'person-1' })).body.id;

  // Live mode: a customer, a queued call, a top-up line and an event.
  liveCustomer = await makeReadyCustomer(svc.url, a.liveApi);
  const liveCall = await a.liveApi.post('/v1/calls', { called_party: 'business', customer_id: liveCustomer.id, business_name: 'Acme Plumbing', phone: '+12025550132' });
  if (liveCall.status !== 201) throw new Error(`live call: ${liveCall.status} ${liveCall.text}`);
  await a.admin.post(`/admin/v1/accounts/${a.id}/test_events`, { mode: 'live' });
  ids.live.calls = liveCall.body.id;
  // A live call is dialled through the carrier, which this process has none of: its booking is
  // written as the agent's tool writes it.
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  ids.live.appointments = (
    await db.query(
      `INSERT INTO appointments (account_id, mode, customer_id, call_id, start_at, end_at, timezone, created_at)
       VALUES ($1, 'live', $2, $3, now() + interval '1 day', now() + interval '1 day 30 minutes', 'America/New_York', now()) RETURNING id`,
      [a.id, liveCustomer.id, liveCall.body.id],
    )
  ).rows[0].id;
  await db.end();
  ids.live.customers = liveCustomer.id;
  ids.live.usage = await firstId(a.liveApi, '/v1/usage');
  ids.live.events = await firstId(a.liveApi, '/v1/events');
  ids.live.onboarding_link = await firstId(a.liveApi, `/v1/customers/${liveCustomer.id}/onboarding_link`);
  ids.live.sessions = (await a.liveApi.post(`/v1/customers/${liveCustomer.id}/sessions`, { end_user_ref: 'person-1' })).body.id;
  for (const mode of ['test', 'live'] as const) for (const [k, v] of Object.entries(ids[mode])) if (!v) throw new Error(`no ${mode} ${k}`);
});
test.after.always(async () => {
  await svc?.stop();
});

const code = (r: { body: any }) => r.body?.error?.code;

/** Every list and where its rows come from; `{customer}` is the caller's mode's customer. */
const LISTS: { kind: string; path: string }[] = [
  { kind: 'customers', path: '/v1/customers' },
  { kind: 'calls', path: '/v1/calls' },
  { kind: 'calls', path: '/v1/calls?view=requests' },
  { kind: 'calls', path: '/v1/calls?customer_id={customer}' },
  { kind: 'appointments', path: '/v1/appointments' },
  { kind: 'appointments', path: '/v1/appointments?customer_id={customer}' },
  { kind: 'usage', path: '/v1/usage' },
  { kind: 'events', path: '/v1/events' },
  { kind: 'events', path: '/v1/events?order=asc' },
  { kind: 'onboarding_link', path: '/v1/customers/{customer}/onboarding_link' },
  { kind: 'sessions', path: '/v1/customers/{customer}/sessions' },
];

for (const [mode, other] of [
  ['test', 'live'],
  ['live', 'test'],
] as const) {
  test(`a ${mode} key given an id of the ${other} mode as starting_after gets invalid_cursor on every list`, async (t) => {
    const api = mode === 'test' ? a.api : a.liveApi;
    const customer = mode === 'test' ? testCustomer : liveCustomer;
    for (const list of LISTS) {
      const path = list.path.replace('{customer}', customer.id);
      const sep = path.includes('?') ? '&' : '?';
      const own = await api.get(`${path}${sep}starting_after=${encodeURIComponent(ids[mode][list.kind])}`);
      t.is(own.status, 200, `${mode} ${path} with its own mode's cursor: ${own.text}`);
      const foreign = await api.get(`${path}${sep}starting_after=${encodeURIComponent(ids[other][list.kind])}`);
      t.is(foreign.status, 400, `${mode} ${path} with a ${other} cursor: ${foreign.text}`);
      t.is(code(foreign), 'invalid_cursor', `${mode} ${path}`);
      // Indistinguishable from an id that names nothing.
      const unknown = await api.get(`${path}${sep}starting_after=${crypto.randomUUID()}`);
      t.deepEqual({ status: unknown.status, code: code(unknown), message: unknown.body.error?.message }, { status: foreign.status, code: code(foreign), message: foreign.body.error.message });
    }
  });
}

test('a cursor of another customer of the same account and mode does not page a customer list', async (t) => {
  const other = await makeCustomer(a.api, { name: 'Other Co' });
  const link = (await a.api.post(`/v1/customers/${other.id}/onboarding_link`)).body.id;
  const session = (await a.api.post(`/v1/customers/${other.id}/sessions`, { end_user_ref: 'person-2' })).body.id;
  t.is(code(await a.api.get(`/v1/customers/${testCustomer.id}/onboarding_link?starting_after=${link}`)), 'invalid_cursor');
  t.is(code(await a.api.get(`/v1/customers/${testCustomer.id}/sessions?starting_after=${session}`)), 'invalid_cursor');
});

test('the do-not-call list is one list for both modes: a number either key added pages both', async (t) => {
  await a.liveApi.post('/v1/dnc', { phone: '+12025550177' });
  await a.api.post('/v1/dnc', { phone: '+12025550178' });
  for (const api of [a.api, a.liveApi]) {
    const page = await api.get(`/v1/dnc?starting_after=${encodeURIComponent('+12025550178')}`);
    t.is(page.status, 200, page.text);
    const phones = page.body.data.map((e: { phone: string }) => e.phone);
    t.true(phones.includes('+12025550177') && !phones.includes('+12025550178'), JSON.stringify(phones));
    t.is(code(await api.get(`/v1/dnc?starting_after=${encodeURIComponent('+12025550199')}`)), 'invalid_cursor');
  }
});

test('the console account list pages by account id; anything else is invalid_cursor', async (t) => {
  const other = await makeAccount(svc.url);
  const page = await a.admin.get(`/admin/v1/accounts?starting_after=${other.id}`);
  t.is(page.status, 200, page.text);
  t.false(page.body.data.some((x: { id: string }) => x.id === other.id));
  t.is(code(await a.admin.get(`/admin/v1/accounts?starting_after=${testCustomer.id}`)), 'invalid_cursor');
});
