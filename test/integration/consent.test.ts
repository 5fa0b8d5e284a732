import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { nationalFormat } from '../../actors/shared/phone.ts';

/**
 * Consent on POST /v1/calls (issue 13 §1): refused before anything is queued when it does not meet
 * the rule for the number's line type (test mode: the fourth digit from the end, docs/api.md),
 * stored and shown on the request only, and re-checked by the dialler right before each dial.
 */

let svc: TestService;
let account: TestAccount;
let customer: any;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  customer = await makeReadyCustomer(svc.url, account.api);
  // A Tuesday, 15:00 UTC: 10:00 in Washington, inside the window.
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await svc?.stop();
});

const written = (obtainedAt: string, extra: Record<string, unknown> = {}) => ({
  type: 'prior_express_written',
  obtained_at: obtainedAt,
  source: 'web form bright.example/quote, consent checkbox',
  evidence_ref: 'consent-42',
  ...extra,
});

async function requestsOf(phone: string): Promise<number> {
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    return (await db.query(`SELECT count(*)::int AS n FROM calls WHERE to_e164 = $1`, [phone])).rows[0].n;
  } finally {
    await db.end();
  }
}

test.serial('a mobile number without written consent is refused 400 consent_required, naming the rule; nothing is queued', async (t) => {
  const phone = '+12025559101';
  for (const consent of [undefined, { type: 'none' }, { type: 'prior_express', obtained_at: '2026-01-02T00:00:00Z', source: 'call', evidence_ref: 'r1' }]) {
    const r = await account.api.post('/v1/calls', { customer_id: customer.id, phone, ...(consent ? { consent } : {}) });
    t.is(r.status, 400, JSON.stringify(consent));
    t.is(r.body.error.code, 'consent_required');
    t.is(r.body.error.message, 'Calling this mobile number with an AI voice needs prior express written consent (47 U.S.C. 227(b)(1)(A)(iii); 47 CFR 64.1200(a)(2); FCC 24-17 (AI voices are artificial voices)).');
  }
  t.is(await requestsOf(phone), 0);
  const residential = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025558101' });
  t.is(residential.body.error.code, 'consent_required');
  t.regex(residential.body.error.message, /^Calling this residential number .* 47 CFR 64\.1200\(a\)\(3\)/);
});

test.serial('written consent queues the call; the request shows the consent, the call object and its events do not', async (t) => {
  const consent = written('2026-01-02T10:00:00.000Z');
  const r = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025559102', consent });
  t.is(r.status, 201);
  t.deepEqual(r.body.consent, { ...consent, expires_at: null });
  const listed = await account.api.get(`/v1/calls?view=requests&customer_id=${customer.id}`);
  t.deepEqual(listed.body.data.find((c: any) => c.id === r.body.id).consent, { ...consent, expires_at: null });
  const call = await account.api.get(`/v1/calls/${r.body.id}`);
  t.is(call.body.consent, undefined);
  // A business landline needs none, when the request says the called party is a business and the lookup agrees.
  const business = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025550103', called_party: 'business' });
  t.is(business.status, 201);
  t.deepEqual(business.body.consent, { type: 'none', obtained_at: null, source: null, evidence_ref: null, expires_at: null });
  for (const id of [r.body.id, business.body.id]) await account.api.delete(`/v1/calls/${id}`);
});

test.serial('consent fields are checked: missing, malformed, in the future, too long, expiring before obtained', async (t) => {
  const post = (consent: unknown) => account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025559104', consent });
  t.is((await post({ type: 'prior_express_written', source: 's', evidence_ref: 'e' })).body.error.code, 'parameter_missing');
  t.is((await post(written('yesterday'))).body.error.code, 'invalid_parameter');
  t.is((await post(written('2999-01-01T00:00:00Z'))).body.error.code, 'invalid_parameter');
  t.is((await post(written('2026-01-02T00:00:00Z', { expires_at: '2026-01-01T00:00:00Z' }))).body.error.code, 'invalid_parameter');
  t.is((await post(written('2026-01-02T00:00:00Z', { source: 'x'.repeat(501) }))).body.error.code, 'field_too_long');
  t.is((await post(written('2026-01-02T00:00:00Z', { evidence_ref: 'x'.repeat(256) }))).body.error.code, 'field_too_long');
  t.like((await post({ type: 'implied' })).body.error, {
    code: 'invalid_parameter',
    message: '"consent.type" must be one of requested_call, prior_express_written, prior_express, existing_business_relationship, none.',
  });
  t.is((await post(written('2026-01-02T00:00:00Z', { extra: 1 }))).body.error.code, 'unknown_parameter');
  // Consent already expired is no consent.
  const expired = await post(written('2026-01-02T00:00:00Z', { expires_at: '2026-01-03T00:00:00Z' }));
  t.is(expired.body.error.code, 'consent_required');
  t.is(await requestsOf('+12025559104'), 0);
});

test.serial('a line type is looked up once and cached', async (t) => {
  await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025559105' });
  await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025559105' });
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  const { rows } = await db.query(`SELECT carrier, line_type FROM line_type_lookups WHERE e164 = '+12025559105'`);
  await db.end();
  t.deepEqual(rows, [{ carrier: 'simulated', line_type: 'mobile' }]);
});

test.serial('consent that expires before the dial ends the request blocked / consent_expired, never dialled', async (t) => {
  // Closed hours: queued now, the window opens after the consent has expired.
  const start = await advanceToNext(account, 3, 3); // Wednesday 03:00 UTC: 22:00 in Washington, closed
  const consent = written(new Date(start.getTime() - 86_400_000).toISOString(), { expires_at: new Date(start.getTime() + 3600_000).toISOString() });
  const r = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025559106', consent });
  t.is(r.status, 201);
  await account.admin.post('/admin/v1/dialler/run');
  t.like((await account.api.get(`/v1/calls/${r.body.id}`)).body, { status: 'queued', waiting_reason: 'outside_calling_window' });
  await account.admin.post('/admin/v1/test_clock/advance', { seconds: 12 * 3600 });
  await account.admin.post('/admin/v1/dialler/run');
  const ended = (await account.api.get(`/v1/calls/${r.body.id}`)).body;
  t.like(ended, { status: 'blocked', finished: true, outcome: 'consent_expired', dialed_at: null });
  t.regex(ended.summary, /consent .* expired/);
  const events = (await account.admin.get(`/admin/v1/accounts/${account.id}/events`)).body.data;
  const completed = events.find((e: any) => e.type === 'call.completed' && e.data.id === r.body.id);
  t.like(completed.data, { outcome: 'consent_expired' });
  t.is(completed.data.consent, undefined, 'events never carry the consent');
});

test.serial('a dialled call has its compliance record: the consent and rule it was admitted on, and the agent\'s identification', async (t) => {
  await advanceToNext(account, 2, 15);
  const consent = written('2026-01-02T10:00:00.000Z');
  const r = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025559100', consent });
  t.is(r.status, 201);
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.like(done, { status: 'completed', outcome: 'not_interested' });
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  const { rows } = await db.query(`SELECT * FROM call_compliance_records WHERE call_id = $1`, [r.body.id]);
  const from = (await db.query(`SELECT from_e164 FROM calls WHERE id = $1`, [r.body.id])).rows[0].from_e164;
  await db.end();
  t.is(rows.length, 1);
  const record = rows[0];
  t.like(record, {
    consent_type: 'prior_express_written',
    consent_source: consent.source,
    consent_evidence_ref: consent.evidence_ref,
    line_type: 'mobile',
    required_consent: 'prior_express_written',
    rules: ['US-mobile'],
    opt_out_offered: true,
  });
  t.is(record.consent_obtained_at.toISOString(), consent.obtained_at);
  t.regex(record.citations[0], /64\.1200\(a\)\(2\)/);
  t.regex(record.identification, /^Hello, this call is on behalf of .+\. To stop these calls, press 9 or say stop\. I am an automated assistant, and this call is recorded\. You can reach .+ at \(202\) 555-/);
  t.true(record.identification.includes(nationalFormat(from)));
  t.truthy(record.admitted_at);
  t.truthy(record.identified_at);
});

// ---- issue 20 §1: business landlines need the request's word, state auto-dialler laws ----

const requested = (extra: Record<string, unknown> = {}) => ({
  type: 'requested_call',
  obtained_at: '2026-01-02T10:00:00Z',
  source: 'web form bright.example/call-me: "please call me about a quote", e-signed',
  evidence_ref: 'request-77',
  ...extra,
});

test.serial('a business landline is exempt only when the request says called_party business; a lookup alone never is', async (t) => {
  const phone = '+12025550111'; // test mode: a business landline by its digits
  for (const calledParty of [undefined, null, 'consumer']) {
    const r = await account.api.post('/v1/calls', { customer_id: customer.id, phone, ...(calledParty === undefined ? {} : { called_party: calledParty }) });
    t.is(r.status, 400, String(calledParty));
    t.is(r.body.error.code, 'consent_required');
    t.regex(r.body.error.message, /^Calling this residential number with an AI voice needs prior express written consent \(47 U\.S\.C\. 227\(b\)\(1\)\(B\)/);
  }
  t.is(await requestsOf(phone), 0);
  t.is((await account.api.post('/v1/calls', { customer_id: customer.id, phone, called_party: 'tenant' })).body.error.code, 'invalid_parameter');
  // A mobile stays a mobile whatever the request says.
  t.is((await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025559111', called_party: 'business' })).body.error.code, 'consent_required');
  const ok = await account.api.post('/v1/calls', { customer_id: customer.id, phone, called_party: 'business' });
  t.is(ok.status, 201);
  await account.api.delete(`/v1/calls/${ok.body.id}`);
});

test.serial('Washington: only a requested call; any other consent is 400 requested_call_only naming RCW 80.36.400(2); nothing is queued', async (t) => {
  const phone = '+12065550112'; // Seattle, business landline by its digits
  for (const consent of [undefined, written('2026-01-02T10:00:00Z'), { type: 'existing_business_relationship', obtained_at: '2026-01-02T10:00:00Z', source: 'customer', evidence_ref: 'c1' }]) {
    const r = await account.api.post('/v1/calls', { customer_id: customer.id, phone, called_party: 'business', ...(consent ? { consent } : {}) });
    t.is(r.status, 400, JSON.stringify(consent));
    t.is(r.body.error.code, 'requested_call_only');
    t.regex(r.body.error.message, /it may be in Washington\).*consent of type requested_call.*RCW 80\.36\.400\(2\)/);
  }
  t.is(await requestsOf(phone), 0);
  const mobile = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12065559112', consent: written('2026-01-02T10:00:00Z') });
  t.is(mobile.body.error.code, 'requested_call_only', 'written consent does not open a Washington mobile either');
  const ok = await account.api.post('/v1/calls', { customer_id: customer.id, phone, consent: requested() });
  t.is(ok.status, 201);
  t.like(ok.body.consent, { type: 'requested_call', evidence_ref: 'request-77' });
  await account.api.delete(`/v1/calls/${ok.body.id}`);
});

test.serial('state ADAD laws need consent on business lines too (MS, OK, MN, CA, NV, MI); Maine takes only a requested call', async (t) => {
  const cases: [string, RegExp][] = [
    ['+16015550113', /Miss\. Code Ann\. § 77-3-723\(2\)/],
    ['+14055550113', /Okla\. Stat\. tit\. 15, 775C/],
    ['+16125550113', /Minn\. Stat\. § 325E\.27/],
    ['+14155550113', /Cal\. Pub\. Util\. Code § 2874/],
    ['+17025550113', /NRS 597\.814\(1\),\(3\)/],
    ['+13135550113', /MCL 445\.111a\(1\)/],
  ];
  for (const [phone, rule] of cases) {
    const r = await account.api.post('/v1/calls', { customer_id: customer.id, phone, called_party: 'business' });
    t.is(r.status, 400, phone);
    t.is(r.body.error.code, 'consent_required', phone);
    t.regex(r.body.error.message, rule, phone);
    t.is(await requestsOf(phone), 0);
  }
  const maine = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12075550113', called_party: 'business', consent: written('2026-01-02T10:00:00Z') });
  t.is(maine.body.error.code, 'requested_call_only');
  t.regex(maine.body.error.message, /it may be in Maine\).*10 M\.R\.S\. § 1498/);
  const mississippi = await account.api.post('/v1/calls', {
    customer_id: customer.id,
    phone: '+16015550113',
    called_party: 'business',
    consent: { type: 'prior_express', obtained_at: '2026-01-02T10:00:00Z', source: 'trade show card', evidence_ref: 'card-1' },
  });
  t.is(mississippi.status, 201);
  await account.api.delete(`/v1/calls/${mississippi.body.id}`);
});

test.serial('coverage and readiness show Washington and Maine as requested-call-only notices, not blockers', async (t) => {
  const coverage = (await account.api.get('/v1/coverage?country=US')).body;
  t.deepEqual(coverage.notices.map((n: any) => n.jurisdiction), ['US-WA', 'US-ME']);
  t.true(coverage.notices.every((n: any) => n.code === 'requested_call_only'));
  t.false(coverage.blockers.some((b: any) => /WA|Washington/.test(b.code)));
  const readiness = (await account.api.get(`/v1/customers/${customer.id}/readiness`)).body;
  t.deepEqual(readiness.notices.map((n: any) => [n.code, n.jurisdiction]), [['requested_call_only', 'US-WA'], ['requested_call_only', 'US-ME']]);
  t.regex(readiness.notices[0].message, /^Washington numbers may be called only when the called party asked for the call/);
  t.true(readiness.ready_for_test_calls, 'a notice blocks nothing');
});

test.serial('the dialler checks the Washington rule again before the dial: a request that became unlawful ends blocked / requested_call_only', async (t) => {
  await advanceToNext(account, 2, 20); // Tuesday 20:00 UTC: 12:00 in Seattle
  const r = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12065550114', consent: requested() });
  t.is(r.status, 201);
  // As a request queued before the rule (or written around the API) would be: written consent only.
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await db.query(`UPDATE calls SET consent_type = 'prior_express_written' WHERE id = $1`, [r.body.id]);
  await db.end();
  await account.admin.post('/admin/v1/dialler/run');
  const ended = (await account.api.get(`/v1/calls/${r.body.id}`)).body;
  t.like(ended, { status: 'blocked', finished: true, outcome: 'requested_call_only', dialed_at: null });
  t.regex(ended.summary, /asked for the call/);
});

test.serial('Nevada: a callee who hung up on the customer\'s earlier call is not called again (NRS 597.814(2)(b))', async (t) => {
  await advanceToNext(account, 2, 20); // 12:00 in Las Vegas
  const phone = '+17025550110'; // last digit 0: answered, the prospect is not interested
  const consent = { type: 'prior_express', obtained_at: '2026-01-02T10:00:00Z', source: 'trade show card', evidence_ref: 'card-2' };
  const first = await account.api.post('/v1/calls', { customer_id: customer.id, phone, called_party: 'business', consent });
  t.is(first.status, 201);
  t.like(await dialUntilFinished(account, account.api, first.body.id), { status: 'completed', outcome: 'not_interested' });
  // Refused at the POST, naming the statute; nothing is queued.
  const again = await account.api.post('/v1/calls', { customer_id: customer.id, phone, called_party: 'business', consent });
  t.is(again.status, 400);
  t.is(again.body.error.code, 'no_redial_after_hang_up');
  t.regex(again.body.error.message, /NRS 597\.814\(2\)\(b\)/);
  t.is(await requestsOf(phone), 1);
  // And checked again at the dial: a request queued while the earlier outcome did not say so
  // (here the outcome is rewritten around the API) is ended, never dialled.
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    await db.query(`UPDATE calls SET outcome = 'voicemail' WHERE id = $1`, [first.body.id]);
    const queued = await account.api.post('/v1/calls', { customer_id: customer.id, phone, called_party: 'business', consent });
    t.is(queued.status, 201);
    await db.query(`UPDATE calls SET outcome = 'not_interested' WHERE id = $1`, [first.body.id]);
    await account.admin.post('/admin/v1/dialler/run');
    const ended = (await account.api.get(`/v1/calls/${queued.body.id}`)).body;
    t.like(ended, { status: 'blocked', outcome: 'no_redial_after_hang_up', dialed_at: null });
    t.regex(ended.summary, /hung up on an earlier call/);
  } finally {
    await db.end();
  }
  // Another customer of the reseller may still call the number (the statute binds the caller).
  const other = await makeReadyCustomer(svc.url, account.api);
  const theirs = await account.api.post('/v1/calls', { customer_id: other.id, phone, called_party: 'business', consent });
  t.is(theirs.status, 201);
  await account.api.delete(`/v1/calls/${theirs.body.id}`);
});

// ---- issue 20 §2: consent dates are read strictly ----

test.serial('consent dates must be real RFC 3339 date-times with an offset, in the documented range; the 400 names the field', async (t) => {
  const post = (consent: unknown) => account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025559115', consent });
  const now = new Date((await account.admin.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  for (const bad of ['2026-02-30T10:00:00Z', '2026-01-02T24:00:00Z', '2026-01-02T10:00:00', '2026-01-02', '0001-01-01T00:00:00Z', '9999-12-31T00:00:00Z', '2026-01-02T10:60:00Z', '2026-01-02T10:00:00+25:00', '1999-12-31T23:59:59Z', new Date(now.getTime() + 6 * 60_000).toISOString()]) {
    const r = await post(written(bad));
    t.is(r.status, 400, bad);
    t.is(r.body.error.code, 'invalid_parameter', bad);
    t.regex(r.body.error.message, /^consent\.obtained_at must be /, bad);
  }
  t.regex((await post(written('2026-02-30T10:00:00Z'))).body.error.message, /RFC 3339 date-time with a real calendar date and an offset/);
  t.regex((await post(written('1999-12-31T23:59:59Z'))).body.error.message, /no earlier than 2000-01-01T00:00:00\.000Z/);
  for (const bad of ['2027-02-29T00:00:00Z', '2026-01-03T00:00:00', '2100-01-01T00:00:01Z', '2026-01-01T00:00:00Z']) {
    const r = await post(written('2026-01-02T00:00:00Z', { expires_at: bad }));
    t.is(r.body.error.code, 'invalid_parameter', bad);
    t.regex(r.body.error.message, /^consent\.expires_at must be /, bad);
  }
  t.is(await requestsOf('+12025559115'), 0);
  // Accepted: an offset other than Z (kept as the same instant), a fraction, a leap day, 4 minutes of clock skew.
  const offset = await post(written('2024-02-29T09:02:00.5-05:00'));
  t.is(offset.status, 201);
  t.is(offset.body.consent.obtained_at, '2024-02-29T14:02:00.500Z');
  await account.api.delete(`/v1/calls/${offset.body.id}`);
  const skewed = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025559116', consent: written(new Date(now.getTime() + 4 * 60_000).toISOString()) });
  t.is(skewed.status, 201);
  await account.api.delete(`/v1/calls/${skewed.body.id}`);
});
