/**
 * Numbers (issue 14) through the API, on the simulated carrier of both modes: renting, caller IDs
 * and their verification, lists, release, the errors, the events, the provisioning number step,
 * and the money (the invariant checker after each test that moves it).
 */
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { isFictional } from '../../telephony/simulated/fictional-numbers.ts';
import type { Client } from '../helpers/http.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: '3600000' });
});
test.after.always(async () => {
  await svc?.stop();
});

type Live = TestAccount & { liveApi: Client };
const liveAccount = async (topUpCents = 0): Promise<Live> => {
  const a = (await makeAccount(svc.url, { live: true })) as Live;
  if (topUpCents) await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: topUpCents });
  return a;
};

async function invariantsHold(t: ExecutionContext) {
  t.deepEqual(await checkMoneyInvariants(svc.databaseUrl), []);
}

async function ledgerOf(api: Client, customerId: string) {
  return (await api.get(`/v1/usage?customer_id=${customerId}`)).body.data as any[];
}

async function eventsOf(api: Client, type: string) {
  return (await api.get(`/v1/events?type=${type}`)).body.data as any[];
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('test mode: a rented number comes from the fictional range, its rent is priced and not applied, number.assigned carries it', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api, { country: 'GB' });
  const r = await a.api.post(`/v1/customers/${c.id}/numbers`, {});
  t.is(r.status, 201, r.text);
  t.like(r.body, { object: 'number', customer_id: c.id, kind: 'rented', country: 'GB', status: 'active', monthly_cents: 1500, mode: 'test', release_due_on: null, verification: null });
  t.true(isFictional(r.body.phone_number), r.body.phone_number);
  t.regex(r.body.renews_on, /^\d{4}-\d{2}-\d{2}$/);
  const lines = await ledgerOf(a.api, c.id);
  t.is(lines.length, 1);
  t.like(lines[0], { type: 'usage', cause: 'number', amount_cents: -1500, applied: false });
  const [assigned] = await eventsOf(a.api, 'number.assigned');
  t.like(assigned.data, { id: r.body.id, phone_number: r.body.phone_number, monthly_cents: 1500 });
  // Readiness sees the number.
  t.true((await a.api.get(`/v1/customers/${c.id}/readiness`)).body.checks.number_in_country);
  await invariantsHold(t);
});

test('live: renting charges the first month at once on the customer; an unaffordable one is 402 and nothing is bought', async (t) => {
  const poor = await liveAccount();
  const pc = await makeCustomer(poor.liveApi);
  const refused = await poor.liveApi.post(`/v1/customers/${pc.id}/numbers`, { kind: 'rented' });
  t.is(refused.status, 402, refused.text);
  t.is(refused.body.error.code, 'insufficient_balance');
  t.is((await poor.liveApi.get(`/v1/customers/${pc.id}/numbers`)).body.data.length, 0);
  t.is((await ledgerOf(poor.liveApi, pc.id)).length, 0);

  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  const r = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { area_code: '415' });
  t.is(r.status, 201, r.text);
  t.like(r.body, { status: 'active', mode: 'live', country: 'US' });
  t.true(r.body.phone_number.startsWith('+1415555'), 'the area code asked for');
  const [line] = await ledgerOf(a.liveApi, c.id);
  t.like(line, { cause: 'number', amount_cents: -1500, applied: true, customer_id: c.id });
  t.is((await a.liveApi.get('/v1/balance')).body.available_cents, 10_000 - 1500);
  await invariantsHold(t);
});

test('Idempotency-Key: a replayed order answers the first number and rents nothing more', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  const headers = { 'idempotency-key': `num-${c.id}` };
  const [first, second] = await Promise.all([
    a.liveApi.post(`/v1/customers/${c.id}/numbers`, {}, { headers }),
    a.liveApi.post(`/v1/customers/${c.id}/numbers`, {}, { headers }),
  ]);
  t.is(first.body.id, second.body.id);
  t.is((await a.liveApi.get(`/v1/customers/${c.id}/numbers`)).body.data.length, 1);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 1);
  const reused = await a.liveApi.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550111' }, { headers });
  t.is(reused.status, 409);
  t.is(reused.body.error.code, 'idempotency_key_reused');
  await invariantsHold(t);
});

test('caller ID in test mode: verifying with a code, then active and charged (priced) by itself; one ending in 9 fails, nothing charged', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const r = await a.api.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '(202) 555-0147' });
  t.is(r.status, 201, r.text);
  t.like(r.body, { kind: 'caller_id', phone_number: '+12025550147', status: 'verifying', monthly_cents: 1200, renews_on: null });
  t.regex(r.body.verification.code, /^\d{6}$/);
  const got = await a.api.get(`/v1/customers/${c.id}/numbers/${r.body.id}`);
  t.is(got.body.verification.code, r.body.verification.code, 'GET shows the code while verifying');
  const active = await waitFor('verified', async () => {
    const n = (await a.api.get(`/v1/customers/${c.id}/numbers/${r.body.id}`)).body;
    return n.status === 'active' && n;
  });
  t.is(active.verification, null);
  t.truthy(active.renews_on);
  t.like((await ledgerOf(a.api, c.id))[0], { cause: 'caller_id', amount_cents: -1200, applied: false });
  t.is((await eventsOf(a.api, 'number.assigned')).filter((e) => e.data.id === r.body.id).length, 1);
  // The same number again while it is a caller ID: 409.
  const again = await a.api.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550147' });
  t.is(again.status, 409);
  t.is(again.body.error.code, 'number_already_added');

  const fails = await a.api.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550149' });
  const failed = await waitFor('failed', async () => {
    const n = (await a.api.get(`/v1/customers/${c.id}/numbers/${fails.body.id}`)).body;
    return n.status === 'failed' && n;
  });
  t.like(failed, { failure_reason: 'verification_failed', verification: null, renews_on: null });
  t.is((await ledgerOf(a.api, c.id)).length, 1, 'the failed one charged nothing');
  await invariantsHold(t);
});

test('order errors: missing phone_number, unparseable, another country, a bad area code or kind, a field of the other kind', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const cases: [unknown, number, string][] = [
    [{ kind: 'caller_id' }, 400, 'parameter_missing'],
    [{ kind: 'caller_id', phone_number: 'not a number' }, 400, 'invalid_phone_number'],
    [{ kind: 'caller_id', phone_number: '+44 20 7946 0958' }, 400, 'phone_country_mismatch'],
    [{ area_code: '12' }, 400, 'invalid_parameter'],
    [{ kind: 'mobile' }, 400, 'invalid_parameter'],
    [{ colour: 'red' }, 400, 'unknown_parameter'],
    [{ phone_number: '+12025550147' }, 400, 'invalid_parameter'],
    [{ kind: 'caller_id', phone_number: '+12025550147', area_code: '202' }, 400, 'invalid_parameter'],
  ];
  for (const [body, status, code] of cases) {
    const r = await a.api.post(`/v1/customers/${c.id}/numbers`, body);
    t.is(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    t.is(r.body.error.code, code, JSON.stringify(body));
  }
  t.is((await a.api.get(`/v1/customers/${c.id}/numbers`)).body.data.length, 0);
});

test('area_code: refused outside the NANP (a GB customer), for a code not in service (999, 800) or of the other country (416 for a US customer), in words; a code in service is honoured', async (t) => {
  const a = await makeAccount(svc.url);
  const gb = await makeCustomer(a.api, { country: 'GB' });
  const us = await makeCustomer(a.api, { country: 'US' });
  const cases: [string, string, RegExp][] = [
    [gb.id, '113', /only to numbers in the United States and Canada/],
    [gb.id, '202', /only to numbers in the United States and Canada/],
    [us.id, '999', /999 is not a geographic area code in service in the United States/],
    [us.id, '800', /800 is not a geographic area code in service/],
    [us.id, '416', /416 is in Canada, not in the United States/],
    [us.id, '12', /three digits/],
  ];
  for (const [customerId, areaCode, message] of cases) {
    const r = await a.api.post(`/v1/customers/${customerId}/numbers`, { area_code: areaCode });
    t.is(r.status, 400, `${areaCode}: ${r.text}`);
    t.is(r.body.error.code, 'invalid_parameter', areaCode);
    t.regex(r.body.error.message, message, areaCode);
    t.notRegex(r.body.error.message, /pattern|\^\[/, 'no validator internals');
  }
  t.is((await a.api.get(`/v1/customers/${gb.id}/numbers`)).body.data.length, 0, 'nothing rented for GB');
  t.is((await a.api.get(`/v1/customers/${us.id}/numbers`)).body.data.length, 0, 'nothing rented for US');
  const ok = await a.api.post(`/v1/customers/${us.id}/numbers`, { area_code: '212' });
  t.is(ok.status, 201, ok.text);
  t.regex(ok.body.phone_number, /^\+1212555/);
});

test('caller ID: premium-rate, toll-free, UAN, personal, pager and VoIP numbers are refused as not geographic, a number with an extension too; nothing started', async (t) => {
  const a = await makeAccount(svc.url);
  const us = await makeCustomer(a.api, { country: 'US' });
  const gb = await makeCustomer(a.api, { country: 'GB' });
  const cases: [string, string, string, RegExp][] = [
    [us.id, '+1 900 555 0100', 'caller_id_not_geographic', /premium-rate/],
    [us.id, '+1 800 555 0100', 'caller_id_not_geographic', /toll-free/],
    [us.id, '+1 888 555 0100', 'caller_id_not_geographic', /toll-free/],
    [gb.id, '+44 871 234 5678', 'caller_id_not_geographic', /premium-rate/],
    [gb.id, '+44 845 464 0000', 'caller_id_not_geographic', /premium-rate/],
    [gb.id, '+44 300 123 4567', 'caller_id_not_geographic', /UAN/],
    [gb.id, '+44 70 1234 5678', 'caller_id_not_geographic', /personal/],
    [gb.id, '+44 76 4012 3456', 'caller_id_not_geographic', /pager/],
    [gb.id, '+44 56 1234 5678', 'caller_id_not_geographic', /VoIP/],
    [us.id, '+1 202 555 0147 ext. 12', 'phone_extension_not_allowed', /extension/],
    [us.id, '(202) 555-0147 x12', 'phone_extension_not_allowed', /extension/],
  ];
  for (const [customerId, phone, code, message] of cases) {
    const r = await a.api.post(`/v1/customers/${customerId}/numbers`, { kind: 'caller_id', phone_number: phone });
    t.is(r.status, 400, `${phone}: ${r.text}`);
    t.is(r.body.error.code, code, phone);
    t.regex(r.body.error.message, message, phone);
  }
  for (const c of [us, gb]) t.is((await a.api.get(`/v1/customers/${c.id}/numbers`)).body.data.length, 0);
  // A landline and a mobile are caller IDs.
  t.is((await a.api.post(`/v1/customers/${gb.id}/numbers`, { kind: 'caller_id', phone_number: '+44 20 7946 0958' })).status, 201);
  t.is((await a.api.post(`/v1/customers/${us.id}/numbers`, { kind: 'caller_id', phone_number: '+1 202 555 0148' })).status, 201);
});

test('a number of another customer, another account or the other mode is 404 number_not_found; an unknown customer 404 customer_not_found', async (t) => {
  const a = await liveAccount(10_000);
  const c1 = await makeCustomer(a.api);
  const c2 = await makeCustomer(a.api);
  const n = (await a.api.post(`/v1/customers/${c1.id}/numbers`, {})).body;
  const liveCustomer = await makeCustomer(a.liveApi);
  const other = await makeAccount(svc.url);
  const oc = await makeCustomer(other.api);
  for (const [api, cid] of [[a.api, c2.id], [other.api, oc.id]] as const) {
    for (const method of ['get', 'delete'] as const) {
      const r = await api[method](`/v1/customers/${cid}/numbers/${n.id}`);
      t.is(r.status, 404, `${method} ${r.text}`);
      t.is(r.body.error.code, 'number_not_found');
    }
  }
  const liveSide = await a.liveApi.get(`/v1/customers/${liveCustomer.id}/numbers/${n.id}`);
  t.is(liveSide.body.error.code, 'number_not_found');
  t.is((await a.api.get(`/v1/customers/${c1.id}/numbers/not-a-uuid`)).body.error.code, 'number_not_found');
  t.is((await a.liveApi.get(`/v1/customers/${c1.id}/numbers`)).body.error.code, 'customer_not_found', 'the test customer from a live key');
  t.is((await a.api.get(`/v1/customers/${c1.id}/numbers/${n.id}`)).status, 200);
});

test('lists page newest first with a cursor; a cursor of another customer is invalid_cursor', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await a.api.post(`/v1/customers/${c.id}/numbers`, {})).body.id);
  const page1 = await a.api.get(`/v1/customers/${c.id}/numbers?limit=2`);
  t.deepEqual(page1.body.data.map((n: any) => n.id), [ids[2], ids[1]]);
  t.true(page1.body.has_more);
  const page2 = await a.api.get(`/v1/customers/${c.id}/numbers?limit=2&starting_after=${ids[1]}`);
  t.deepEqual(page2.body.data.map((n: any) => n.id), [ids[0]]);
  t.false(page2.body.has_more);
  const c2 = await makeCustomer(a.api);
  t.is((await a.api.get(`/v1/customers/${c2.id}/numbers?starting_after=${ids[0]}`)).body.error.code, 'invalid_cursor');
});

test('DELETE releases permanently with number.released, nothing refunded; readiness loses the number; releasing again answers it as it is', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  const n = (await a.liveApi.post(`/v1/customers/${c.id}/numbers`, {})).body;
  t.true((await a.liveApi.get(`/v1/customers/${c.id}/readiness`)).body.checks.number_in_country);
  const r = await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${n.id}`);
  t.is(r.status, 200, r.text);
  t.like(r.body, { id: n.id, status: 'released', renews_on: null, release_due_on: null });
  t.truthy(r.body.released_at);
  const again = await a.liveApi.delete(`/v1/customers/${c.id}/numbers/${n.id}`);
  t.is(again.status, 200);
  t.is(again.body.released_at, r.body.released_at);
  t.is((await eventsOf(a.liveApi, 'number.released')).filter((e) => e.data.id === n.id).length, 1);
  t.is((await ledgerOf(a.liveApi, c.id)).length, 1, 'no refund line');
  t.false((await a.liveApi.get(`/v1/customers/${c.id}/readiness`)).body.checks.number_in_country);
  await invariantsHold(t);
});

test('scopes: numbers:read lists, numbers:order rents and releases; without them 403 scope_missing', async (t) => {
  const a = await makeAccount(svc.url, { scopes: ['numbers:read', 'customers:write'] });
  const c = await makeCustomer(a.api);
  t.is((await a.api.get(`/v1/customers/${c.id}/numbers`)).status, 200);
  const post = await a.api.post(`/v1/customers/${c.id}/numbers`, {});
  t.is(post.status, 403);
  t.is(post.body.error.code, 'scope_missing');
  const del = await a.api.delete(`/v1/customers/${c.id}/numbers/00000000-0000-4000-8000-000000000000`);
  t.is(del.body.error.code, 'scope_missing');
  const b = await makeAccount(svc.url, { scopes: ['numbers:order', 'customers:write'] });
  const cb = await makeCustomer(b.api);
  t.is((await b.api.post(`/v1/customers/${cb.id}/numbers`, {})).status, 201);
  t.is((await b.api.get(`/v1/customers/${cb.id}/numbers`)).body.error.code, 'scope_missing');
});

test('provisioning: the number step rents a number for a live customer (the service moves), a test customer gets a test number', async (t) => {
  const a = await liveAccount(10_000);
  const c = await makeCustomer(a.liveApi);
  const before = (await a.liveApi.get(`/v1/customers/${c.id}/provisioning`)).body;
  t.is(before.steps.find((s: any) => s.step === 'number').done, false);
  const p = await a.liveApi.post(`/v1/customers/${c.id}/provisioning`, { steps: ['number'] });
  t.true(p.status < 300, p.text);
  t.like(p.body.steps.find((s: any) => s.step === 'number'), { done: true, blocker: null });
  const [n] = (await a.liveApi.get(`/v1/customers/${c.id}/numbers`)).body.data;
  t.like(n, { kind: 'rented', status: 'active', mode: 'live' });
  t.true((await a.liveApi.get(`/v1/customers/${c.id}/readiness`)).body.checks.number_in_country);
  // Asking again rents nothing more.
  await a.liveApi.post(`/v1/customers/${c.id}/provisioning`, { steps: ['number'] });
  t.is((await a.liveApi.get(`/v1/customers/${c.id}/numbers`)).body.data.length, 1);

  const tc = await makeCustomer(a.api, { country: 'FR' });
  await a.api.post(`/v1/customers/${tc.id}/provisioning`, { steps: ['number'] });
  const [tn] = (await a.api.get(`/v1/customers/${tc.id}/numbers`)).body.data;
  t.like(tn, { country: 'FR', status: 'active', mode: 'test' });
  t.true(isFictional(tn.phone_number));
  await invariantsHold(t);
});

test('provisioning: a live customer whose balance cannot cover the rent sees the number step waiting on the reseller; a top-up and the retry rent it', async (t) => {
  const a = await liveAccount();
  const c = await makeCustomer(a.liveApi);
  const p = (await a.liveApi.post(`/v1/customers/${c.id}/provisioning`, { steps: ['number'] })).body;
  t.like(p.steps.find((s: any) => s.step === 'number'), { done: false, waiting_on: 'reseller', blocker: 'insufficient_balance' });
  t.true(p.blockers.includes('insufficient_balance'));
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 5_000 });
  // The retry job tries again an hour after the last try.
  await a.admin.post('/admin/v1/test_clock/advance', { seconds: 3601 });
  await a.admin.post('/admin/v1/jobs/retry_number_steps/run');
  const after = (await a.liveApi.get(`/v1/customers/${c.id}/provisioning`)).body;
  t.like(after.steps.find((s: any) => s.step === 'number'), { done: true, blocker: null });
  await invariantsHold(t);
});

test('the dialled caller ID is the rented number in the country, else the verified caller ID (admission facts)', async (t) => {
  const a = await makeAccount(svc.url);
  const c = await makeCustomer(a.api);
  // A pool: loadAdmissionFacts reads through the service's own Queryable (a pool or a pooled client).
  const db = new pg.Pool({ connectionString: svc.databaseUrl, max: 1 });
  t.teardown(() => db.end());
  const callerIdOf = async () =>
    (
      await db.query(
        `SELECT n.e164 FROM phone_numbers n WHERE n.customer_id = $1 AND n.status IN ('active', 'payment_due') AND n.country = 'US' ORDER BY n.kind = 'rented' DESC, n.seq LIMIT 1`,
        [c.id],
      )
    ).rows[0]?.e164;
  const own = await a.api.post(`/v1/customers/${c.id}/numbers`, { kind: 'caller_id', phone_number: '+12025550142' });
  await waitFor('verified', async () => (await a.api.get(`/v1/customers/${c.id}/numbers/${own.body.id}`)).body.status === 'active');
  t.is(await callerIdOf(), '+12025550142');
  const rented = (await a.api.post(`/v1/customers/${c.id}/numbers`, {})).body;
  const { loadAdmissionFacts } = await import('../../db/admission.ts');
  const facts = await loadAdmissionFacts(svc.services.pool, { accountId: a.id, customerId: c.id, toE164: '+12025550100', attemptsSince: new Date(0) }, new Date());
  t.is(facts.caller_id, rented.phone_number, 'the rented number is preferred');
  await a.api.delete(`/v1/customers/${c.id}/numbers/${rented.id}`);
  const after = await loadAdmissionFacts(svc.services.pool, { accountId: a.id, customerId: c.id, toE164: '+12025550100', attemptsSince: new Date(0) }, new Date());
  t.is(after.caller_id, '+12025550142', 'then the verified caller ID');
});
