/**
 * The callee objects to being recorded (issue 23 §6): the agent calls the `recording_objection`
 * tool; the recording stops at the carrier (`Carrier.stopRecording`) and, per the customer's
 * `recording.on_objection` (actors/customer/call-settings.ts), the call goes on unrecorded or
 * ends politely. The objection is written to the call's compliance record. An objection heard
 * before the recording started (during the opening) is the same record: the recording must then
 * never start, which the code that starts it asks with `recordingRefused`.
 */
import type { Queryable } from '../../db/pool.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { createCallRepository } from '../../db/calls.ts';
import { createRecordingObjectionRepository } from '../../db/recording-objections.ts';
import { callSettingsOf } from '../customer/call-settings.ts';
import { mustGetCall, type CallDeps, type CallState } from './call-state.ts';
import type { CallEnd } from './call-end.ts';

/** After telling the agent to say goodbye, the call is hung up this long later at the latest, ms. */
export const OBJECTION_GOODBYE_MS = 6_000;
/** The end reason of a call ended because the callee objected to the recording. */
export const RECORDING_OBJECTION_REASON = 'recording_objection';


/** Whether the callee of call `callId` objected to the recording: then the recording must not start (or start again). */
export async function recordingRefused(db: Queryable, callId: string): Promise<boolean> {
  return createRecordingObjectionRepository(db).objected(callId);
}

/** Carries out the tool: stop at the carrier, record the objection, go on or end per the customer's setting. Returns the agent's reply. */
export async function objectToRecording(deps: CallDeps, end: CallEnd, state: CallState): Promise<Record<string, unknown>> {
  const { pool, clock, log } = deps;
  const call = await mustGetCall(pool, state.id);
  const customer = await createCustomerRepository(pool).get(call.customer_id);
  const action = customer ? callSettingsOf(customer).recording.on_objection : 'continue_unrecorded';
  let stopped = false;
  if (call.carrier_call_id) {
    try {
      await deps.carriers[state.mode].stopRecording(call.carrier_call_id);
      stopped = true;
    } catch (err) {
      // Nothing recording yet (the objection came during the opening) is the usual reason: the record below keeps it from starting.
      log.warn({ err, call_id: call.id }, 'the carrier did not stop a recording');
    }
  }
  await createRecordingObjectionRepository(pool).record(call.id, { action, stopped, at: clock.now() });
  if (action === 'end_call') {
    // The call ends for the objection, whoever hangs up first (the agent's end_call, or the timer below).
    if (!call.end_reason) await createCallRepository(pool).update(call.id, { end_reason: RECORDING_OBJECTION_REASON });
    const timer = setTimeout(() => void end.hangUp(state, RECORDING_OBJECTION_REASON).catch((err) => log.warn({ err, call_id: call.id }, 'hangup failed')), OBJECTION_GOODBYE_MS);
    timer.unref();
    return {
      recording: 'stopped',
      next: 'Apologise briefly, say that without a recording you will end the call now and that the business can be reached on the number that called, say goodbye, then call end_call with reason other.',
    };
  }
  return { recording: 'stopped', next: 'Tell the person in one short sentence that the recording has stopped, then carry on the conversation.' };
}
