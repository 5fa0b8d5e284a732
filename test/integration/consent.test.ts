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
  // A business landline needs none: the request says so.
  const business = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+12025550103' });
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
    message: '"consent.type" must be one of prior_express_written, prior_express, existing_business_relationship, none.',
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
  await account.console.post('/console/v1/dialler/run');
  t.like((await account.api.get(`/v1/calls/${r.body.id}`)).body, { status: 'queued', waiting_reason: 'outside_calling_window' });
  await account.console.post('/console/v1/test_clock/advance', { seconds: 12 * 3600 });
  await account.console.post('/console/v1/dialler/run');
  const ended = (await account.api.get(`/v1/calls/${r.body.id}`)).body;
  t.like(ended, { status: 'blocked', finished: true, outcome: 'consent_expired', dialed_at: null });
  t.regex(ended.summary, /consent .* expired/);
  const events = (await account.console.get(`/console/v1/accounts/${account.id}/events`)).body.data;
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
  t.regex(record.identification, /^Hello, this is an automated assistant calling on behalf of .+\. This call may be recorded\. You can reach .+ at \(202\) 555-/);
  t.true(record.identification.includes(nationalFormat(from)));
  t.truthy(record.admitted_at);
  t.truthy(record.identified_at);
});
