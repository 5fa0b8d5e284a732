import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, makeReadyCustomer } from '../helpers/calls.ts';
import { OBJECTION_GOODBYE_MS, recordingRefused, RECORDING_OBJECTION_REASON } from '../../actors/call/recording-objection.ts';
import { TOOLS } from '../../actors/call/agent-setup.ts';

/**
 * Issue 23 §6: the callee objects to the recording. The recording stops at the carrier; per the
 * customer's `recording.on_objection` the call goes on unrecorded or ends; the objection is on
 * the compliance record, and a recording not started yet must never start (`recordingRefused`).
 */
let svc: TestService;
let account: TestAccount;
let db: pg.Client;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

interface SimulatedCalls {
  calls: Map<string, { recordingState?: 'recording' | 'stopped' }>;
}

/** A running call (the simulated callee talks until the time limit: last digit 6) with its recording started at the carrier. */
async function runningCall(customerId: string, phone: string, startRecording = true) {
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customerId, phone });
  t_assert(queued.status === 201, JSON.stringify(queued.body));
  await account.admin.post('/admin/v1/dialler/run');
  let carrierCallId: string | null = null;
  for (let i = 0; i < 100 && !carrierCallId; i++) {
    carrierCallId = (await db.query(`SELECT carrier_call_id FROM calls WHERE id = $1`, [queued.body.id])).rows[0]?.carrier_call_id ?? null;
    if (!carrierCallId) await new Promise((r) => setTimeout(r, 50));
  }
  if (!carrierCallId) throw new Error('the call was not dialled');
  const carrier = svc.services.carriers.test;
  if (startRecording) await carrier.startRecording(carrierCallId, 'http://127.0.0.1/recording');
  const state = () => (carrier as unknown as SimulatedCalls).calls.get(carrierCallId!)?.recordingState;
  return { id: queued.body.id as string, carrierCallId, state };
}

function t_assert(ok: boolean, message: string) {
  if (!ok) throw new Error(message);
}

const objection = async (callId: string) =>
  (await db.query(`SELECT recording_objected_at, recording_objection_action, recording_stopped FROM call_compliance_records WHERE call_id = $1`, [callId])).rows[0];

test.serial('the agent has the tool', (t) => {
  t.true(TOOLS.some((tool) => tool.name === 'recording_objection'));
});

test.serial('continue_unrecorded (the default): the recording stops at the carrier, the call goes on, the objection is on the compliance record', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  const call = await runningCall(customer.id, '+12025550206');
  t.is(call.state(), 'recording');
  t.false(await recordingRefused(svc.services.pool, call.id));
  const stops: string[] = [];
  const carrier = svc.services.carriers.test;
  const original = carrier.stopRecording.bind(carrier);
  carrier.stopRecording = async (id: string) => {
    stops.push(id);
    return original(id);
  };
  try {
    const reply = (await svc.services.calls.ask(call.id, { type: 'tool_called', name: 'recording_objection', args: {} })) as Record<string, unknown>;
    t.is(reply.recording, 'stopped');
    t.regex(String(reply.next), /carry on/);
  } finally {
    carrier.stopRecording = original;
  }
  t.deepEqual(stops, [call.carrierCallId]);
  t.is(call.state(), 'stopped');
  t.like(await objection(call.id), { recording_objection_action: 'continue_unrecorded', recording_stopped: true });
  t.truthy((await objection(call.id)).recording_objected_at);
  t.true(await recordingRefused(svc.services.pool, call.id));
  // The call goes on.
  await new Promise((r) => setTimeout(r, 300));
  t.is((await account.api.get(`/v1/calls/${call.id}`)).body.finished, false);
  await svc.services.calls.ask(call.id, { type: 'time_limit_reached' });
});

test.serial('end_call: the recording stops, the agent is told to say goodbye, and the call is hung up at the carrier for the objection', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  await db.query(`UPDATE customers SET call_settings = '{"recording":{"on_objection":"end_call"}}'::jsonb WHERE id = $1`, [customer.id]);
  const call = await runningCall(customer.id, '+12025550216');
  const carrier = svc.services.carriers.test;
  const hangups: string[] = [];
  const original = carrier.hangup.bind(carrier);
  carrier.hangup = async (id: string) => {
    hangups.push(id);
    return original(id);
  };
  try {
    const reply = (await svc.services.calls.ask(call.id, { type: 'tool_called', name: 'recording_objection', args: {} })) as Record<string, unknown>;
    t.is(reply.recording, 'stopped');
    t.regex(String(reply.next), /say goodbye/);
    t.is(call.state(), 'stopped');
    t.like(await objection(call.id), { recording_objection_action: 'end_call', recording_stopped: true });
    t.is((await db.query(`SELECT end_reason FROM calls WHERE id = $1`, [call.id])).rows[0].end_reason, RECORDING_OBJECTION_REASON);
    // Hung up after the goodbye's grace at the latest.
    const deadline = Date.now() + OBJECTION_GOODBYE_MS + 2_000;
    while (!hangups.includes(call.carrierCallId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    t.deepEqual(hangups, [call.carrierCallId]);
  } finally {
    carrier.hangup = original;
  }
});

test.serial('an objection during the opening, before the recording started: recorded, so the recording never starts', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  const call = await runningCall(customer.id, '+12025550226', false);
  t.is(call.state(), undefined);
  await svc.services.calls.ask(call.id, { type: 'tool_called', name: 'recording_objection', args: {} });
  t.true(await recordingRefused(svc.services.pool, call.id));
  t.is(call.state(), undefined, 'nothing was recording and nothing started');
  // A second objection keeps the first record.
  const first = await objection(call.id);
  await svc.services.calls.ask(call.id, { type: 'tool_called', name: 'recording_objection', args: {} });
  t.deepEqual(await objection(call.id), first);
  await svc.services.calls.ask(call.id, { type: 'time_limit_reached' });
});
