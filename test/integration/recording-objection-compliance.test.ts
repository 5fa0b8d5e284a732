import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { consoleAs, type ConsoleClient } from '../helpers/console.ts';

/**
 * Issue 23 §6: the compliance record's fuller view (gates, AMD verdict, opening, opt-out,
 * objection to the recording) is read by the operator and, in the console, by the reseller; the
 * API's record keeps exactly its fields (the proof of consent, UWG § 7a), nothing of how the call went.
 */
let svc: TestService;
let account: TestAccount;
let owner: ConsoleClient;
let db: pg.Client;

/** The /v1 compliance record's fields, exactly as before issue 23. */
const V1_FIELDS = [
  'call_id', 'citations', 'consent', 'identification', 'identified_at', 'keep_until', 'line_type', 'object', 'opt_out_offered', 'recorded_at', 'request', 'required_consent', 'rules',
];

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  owner = await consoleAs(svc.url, account.id, 'owner');
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

test.serial('the operator and the console read the full record; the API keeps exactly its fields', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  // Last digit 5: the callee asks not to be called again (the agent's mark_do_not_call).
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550305' });
  const done = await dialUntilFinished(account, account.api, queued.body.id);
  t.is(done.outcome, 'do_not_call');
  // An objection to the recording on the call (the agent's tool after the call is over still writes it: the record's only writer).
  await svc.services.calls.ask(queued.body.id, { type: 'tool_called', name: 'recording_objection', args: {} });

  const admin = await account.admin.get(`/admin/v1/calls/${queued.body.id}/compliance_record`);
  t.is(admin.status, 200);
  const c = admin.body.conduct;
  t.like(c, {
    answered_by: 'human',
    opt_out: { during_call: true },
    recording_objection: { objected: true, action: 'continue_unrecorded' },
  });
  t.truthy(c.opt_out.at);
  t.regex(c.recording_objection.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.truthy(c.opening.identification);
  t.truthy(c.opening.played_at);
  t.truthy(c.gates?.calling_window, 'what the gates read at the dial');
  t.truthy(c.gates?.dnc_registries);
  t.deepEqual(typeof c.more, 'object');

  const consoleRecord = await owner.get(`/console/api/calls/${queued.body.id}/compliance_record`);
  t.is(consoleRecord.status, 200);
  t.deepEqual(consoleRecord.body, admin.body);

  const v1 = await account.api.get(`/v1/calls/${queued.body.id}/compliance_record`);
  t.is(v1.status, 200);
  t.deepEqual(Object.keys(v1.body).sort(), V1_FIELDS);
  t.notRegex(JSON.stringify(v1.body), /conduct|objection|answered_by|opt_out_reason|during_call/);
  // Without how the call went (`conduct`: the opening as played, the opt-out, the recording's start, …).
  const { conduct: _conduct, ...apiPart } = admin.body;
  t.deepEqual(v1.body, apiPart, 'the API record is the full record without how the call went');
});

test.serial("the console answers only the signed-in account's own calls", async (t) => {
  const other = await makeAccount(svc.url);
  const customer = await makeReadyCustomer(svc.url, other.api);
  const queued = await other.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550310' });
  await dialUntilFinished(other, other.api, queued.body.id);
  const r = await owner.get(`/console/api/calls/${queued.body.id}/compliance_record`);
  t.is(r.status, 404);
  t.is(r.body.error.code, 'call_not_found');
  const notDialled = await account.api.post('/v1/calls', { called_party: 'business', customer_id: (await makeReadyCustomer(svc.url, account.api)).id, phone: '+12025550320', dial_before: new Date(Date.now() + 86_400_000 * 6).toISOString() });
  t.is((await owner.get(`/console/api/calls/${notDialled.body.id}/compliance_record`)).body.error?.code, 'compliance_record_not_found');
  t.is((await owner.get(`/console/api/calls/not-a-uuid/compliance_record`)).status, 404);
});
