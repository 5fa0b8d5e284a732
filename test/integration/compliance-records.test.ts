import test from 'ava';
import crypto from 'node:crypto';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { adminCli } from '../helpers/admin-cli.ts';
import { JOB_NAMES } from '../../app/jobs.ts';

/**
 * Germany, UWG § 7a (issue 20 §1): the consent record of a call to a German number is kept five
 * years after the call (each use of the consent) and can be produced: what was stored, when,
 * from which request. No job deletes it earlier.
 */
let svc: TestService;
let account: TestAccount;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
});
test.after.always(async () => {
  await svc?.stop();
});

const CONSENT = {
  type: 'prior_express',
  obtained_at: '2026-06-02T08:30:00Z',
  source: 'Kontaktformular auf der Website, Häkchen Telefonwerbung',
  evidence_ref: 'crm-4711',
};

test.serial('a German call: its consent record is produced with its request, kept five years, and still there after every job run at 4 years 11 months', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api, { country: 'DE', timezone: 'Europe/Berlin' });
  // Tuesday 10:00 UTC: 11:00 or 12:00 in Berlin, a weekday inside the policy window.
  await advanceToNext(account, 2, 10);
  const queued = await account.api.post('/v1/calls', { customer_id: customer.id, phone: '+49301234562', external_ref: 'lead-de-1', consent: CONSENT });
  t.is(queued.status, 201);
  // A request not dialled yet has no record.
  t.is((await account.admin.get(`/admin/v1/calls/${queued.body.id}/compliance_record`)).body.error.code, 'compliance_record_not_found');
  const done = await dialUntilFinished(account, account.api, queued.body.id);
  t.truthy(done.dialed_at);

  const produced = await account.admin.get(`/admin/v1/calls/${queued.body.id}/compliance_record`);
  t.is(produced.status, 200);
  const record = produced.body;
  t.like(record, {
    object: 'compliance_record',
    call_id: queued.body.id,
    request: {
      id: queued.body.id,
      account_id: account.id,
      customer_id: customer.id,
      mode: 'test',
      phone: '+49301234562',
      country: 'DE',
      external_ref: 'lead-de-1',
      requested_at: queued.body.created_at,
      consent: { type: 'prior_express', obtained_at: '2026-06-02T08:30:00.000Z', source: CONSENT.source, evidence_ref: 'crm-4711', expires_at: null },
    },
    consent: { type: 'prior_express', obtained_at: '2026-06-02T08:30:00.000Z', source: CONSENT.source, evidence_ref: 'crm-4711', expires_at: null },
    required_consent: 'prior_express',
  });
  t.true(record.rules.includes('DE'));
  t.truthy(record.recorded_at);
  // Kept five years from the call: the same instant, five calendar years on.
  const recordedAt = new Date(record.recorded_at);
  const fiveYears = new Date(recordedAt);
  fiveYears.setUTCFullYear(recordedAt.getUTCFullYear() + 5);
  t.is(record.keep_until, fiveYears.toISOString());
  t.is(record.keep_until.slice(0, 4), String(recordedAt.getUTCFullYear() + 5));

  // The reseller produces the same record with its key, but without what the call did (the
  // opening played, the opt-out, the recording's start, the operator's `conduct`: the operator's
  // and the console's, never the API's, issue 23 §6); another account cannot read it.
  const { conduct, ...apiPart } = record;
  t.deepEqual([conduct.opening.played, conduct.opt_out.via, conduct.recording_started_at], [null, null, null], 'a test-mode German call in this test is never answered with an opening');
  t.deepEqual((await account.api.get(`/v1/calls/${queued.body.id}/compliance_record`)).body, apiPart);
  const other = await makeAccount(svc.url);
  t.is((await other.api.get(`/v1/calls/${queued.body.id}/compliance_record`)).body.error.code, 'call_not_found');

  // The operator's CLI produces the same record.
  const cli = await adminCli(svc.url, ['compliance-record', '--call', queued.body.id]);
  t.is(cli.code, 0);
  t.deepEqual(cli.out, record);

  // 4 years and 11 months after the call, every job runs; the record is as it was.
  const later = new Date(recordedAt);
  later.setUTCFullYear(recordedAt.getUTCFullYear() + 4);
  later.setUTCMonth(later.getUTCMonth() + 11);
  const now = new Date((await account.admin.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  await account.admin.post('/admin/v1/test_clock/advance', { seconds: Math.floor((later.getTime() - now.getTime()) / 1000) });
  for (const job of JOB_NAMES) {
    const ran = await account.admin.post(`/admin/v1/jobs/${job}/run`);
    t.is(ran.status, 200, job);
  }
  t.deepEqual((await account.admin.get(`/admin/v1/calls/${queued.body.id}/compliance_record`)).body, record);
  t.deepEqual((await account.api.get(`/v1/calls/${queued.body.id}/compliance_record`)).body, apiPart);
  t.like((await account.api.get(`/v1/calls/${queued.body.id}`)).body, { id: queued.body.id, finished: true });

  // Nor can a statement delete it before its term: the database refuses.
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  try {
    const err = await t.throwsAsync(db.query(`DELETE FROM call_compliance_records WHERE call_id = $1`, [queued.body.id]));
    t.regex(err!.message, /must be kept until/);
    t.is((await db.query(`SELECT count(*)::int AS n FROM call_compliance_records WHERE call_id = $1`, [queued.body.id])).rows[0].n, 1);
  } finally {
    await db.end();
  }
});

test.serial('no such call: call_not_found', async (t) => {
  for (const id of [crypto.randomUUID(), 'not-a-uuid']) {
    const r = await account.admin.get(`/admin/v1/calls/${id}/compliance_record`);
    t.is(r.status, 404);
    t.is(r.body.error.code, 'call_not_found');
  }
});
