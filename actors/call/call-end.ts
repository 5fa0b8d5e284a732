import { createComplianceRecordRepository } from '../../db/compliance-records.ts';
import { withTransaction } from '../../db/pool.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { createAppointmentRepository } from '../../db/appointments.ts';
import { recordEvent } from '../../db/events.ts';
import { createCarrierReportRepository } from '../../db/carrier-reports.ts';
import { createMachineRecordRepository } from '../../db/compliance-machines.ts';
import type { CarrierStatusReport } from '../../telephony/carrier.ts';
import { decideOutcome, TIME_LIMIT_SECONDS } from './outcome.ts';
import { appointmentView, callView, isFinished } from './views.ts';
import { localTime } from './local-time.ts';
import { planNextAttempt } from './retries.ts';
import { mustGetCall, type CallDeps, type CallState } from './call-state.ts';
import { inboundBilledSeconds, inboundOutcome, inboundSummary } from './inbound.ts';
import { analysisAtEnd } from './call-summary.ts';
import { summaryWords } from './summary-words.ts';
import { createCoverageRepository } from '../../db/coverage.ts';

/** How long an answered call's `call.completed` waits for its recording (real time). */
export const RECORDING_WAIT_SECONDS = 45;

/** A call's end: hanging up, and writing the outcome with its charge once. */
export function createCallEnd(deps: CallDeps) {
  const { pool, clock, log, config, money } = deps;

  /**
   * Writes the end of the call once: outcome, duration, summary, the charge of the used minutes
   * (the hold's rest released), `call.completed` and `appointment.booked`, in one transaction,
   * with the inbox report that brought the end marked processed in it. An answered call's
   * `call.completed` waits for its recording (so the event carries what GET returns), until
   * RECORDING_WAIT_SECONDS at the latest (`emitOverdueCompletions`).
   */
  async function finish(
    state: CallState,
    report: Pick<CarrierStatusReport, 'status' | 'durationSeconds' | 'answeredBy'>,
    reportId?: string,
  ): Promise<CallRow | null> {
    const now = clock.now();
    return withTransaction(pool, async (client) => {
      if (reportId && !(await createCarrierReportRepository(client).lockUnprocessed(reportId))) return null;
      const calls = createCallRepository(client);
      // The call's lock and its open hold's claim in one statement (the settlement below takes it).
      const locked = await money.lockCallForEnd(client, state.id);
      const call = locked?.call;
      if (!locked || !call || isFinished(call.status)) {
        if (reportId) await createCarrierReportRepository(client).markProcessed(reportId);
        return null;
      }
      const answered = report.status === 'completed';
      const duration = answered ? Math.min(report.durationSeconds ?? 0, TIME_LIMIT_SECONDS) : 0;
      const facts = {
        carrierStatus: report.status,
        answeredBy: report.answeredBy ?? call.answered_by,
        durationSeconds: duration,
        appointmentBooked: call.appointment_id !== null,
        doNotCall: await calls.requestedDoNotCall(call.id),
        endReason: call.end_reason,
        hitTimeLimit: call.end_reason === 'time_limit',
      };
      // A call a person made to the customer's number (actors/call/inbound.ts) has outcomes of its own.
      const inbound = call.direction === 'inbound';
      const outcome = inbound ? inboundOutcome(call, facts) : decideOutcome(facts);
      const billed = inbound ? inboundBilledSeconds(call, duration) : duration;
      if (call.dialed_at) await money.settleCall(client, { accountId: call.account_id, reference: call.id, durationSeconds: billed, now }, locked);
      const appointment = call.appointment_id ? await createAppointmentRepository(client).get(call.appointment_id) : null;
      const local = appointment ? { startLocal: localTime(appointment.start_at, appointment.timezone), timezone: appointment.timezone, startAt: appointment.start_at } : null;
      // The summary, in the customer's calling language (summary-words.ts), with what the
      // transcript says (call-summary.ts: the model's reading stored before, else the rules');
      // an inbound call's is its own (inbound.ts).
      const language = await createCoverageRepository(client).callingLanguageOf(call.customer_id);
      const summary = inbound
        ? inboundSummary(call, outcome, duration, local, language)
        : (await analysisAtEnd(client, call, decideOutcome(facts), { durationSeconds: duration, appointment: local, language }, now)).summary;
      const ended = await calls.update(call.id, {
        status: 'completed',
        outcome,
        duration_seconds: duration,
        answered_by: report.answeredBy ?? call.answered_by,
        ended_at: now,
        updated_at: now,
        lease_expires_at: null,
        summary,
      });
      // The request's next attempt, if it tries again (retries.ts), is queued in this transaction;
      // a call a person made to the customer is never redialled.
      const updated = inbound ? ended : await planNextAttempt(client, deps.decideRetry, ended, now);
      // Only a recording that was started is waited for (none is at a machine stopped before the
      // notice, nor on an inbound call).
      const recordingDue = duration > 0 && !updated.recording_url && !inbound && (await createMachineRecordRepository(client).recordingStarted(call.id));
      if (recordingDue) await calls.awaitRecording(call.id, RECORDING_WAIT_SECONDS);
      else await recordEvent(client, { accountId: call.account_id, mode: call.mode, type: 'call.completed', data: callView(updated, config.publicUrl), now });
      if (appointment && outcome === 'appointment_booked') {
        await recordEvent(client, { accountId: call.account_id, mode: call.mode, type: 'appointment.booked', data: appointmentView(appointment), now });
      }
      if (reportId) await createCarrierReportRepository(client).markProcessed(reportId);
      return updated;
    });
  }

  /**
   * Ends a request the call actor will not dial after all (its number was listed do-not-call
   * after the dialler's admission, or a UK opening has neither an address nor a freephone caller
   * ID): `blocked` with that outcome, its hold released at zero, `call.completed`, never retried,
   * in one transaction. False when it had moved on.
   */
  async function blockUndialled(state: CallState, outcome: 'do_not_call_listed' | 'registered_address_required' = 'do_not_call_listed'): Promise<boolean> {
    const now = clock.now();
    return withTransaction(pool, async (client) => {
      const calls = createCallRepository(client);
      const call = await calls.lock(state.id);
      if (!call || call.status !== 'dialing' || call.dialed_at || call.carrier_call_id) return false;
      await money.settleCall(client, { accountId: call.account_id, reference: call.id, durationSeconds: 0, now });
      const row = await calls.update(call.id, {
        status: 'blocked',
        outcome,
        summary: summaryWords(await createCoverageRepository(client).callingLanguageOf(call.customer_id)).ended[outcome],
        duration_seconds: 0,
        ended_at: now,
        updated_at: now,
        lease_expires_at: null,
      });
      // The admission's record read the gates as passed: it now says what stopped the dial.
      await createComplianceRecordRepository(client).recordNotDialled(call.id, {
        at: now,
        outcome,
        ...(outcome === 'do_not_call_listed' ? { check: 'do_not_call', result: 'listed' } : { check: 'opening', result: 'registered_address_required' }),
      });
      await recordEvent(client, { accountId: row.account_id, mode: row.mode, type: 'call.completed', data: callView(row, config.publicUrl), now });
      return true;
    });
  }

  /** Asks the carrier to hang up, with the reason the call ends for (the first reason given stays). */
  async function hangUp(state: CallState, reason: string | null): Promise<void> {
    const call = await mustGetCall(pool, state.id);
    if (reason && !call.end_reason) await createCallRepository(pool).update(call.id, { end_reason: reason });
    state.media?.close();
    if (call.carrier_call_id) {
      await deps.carriers[state.mode].hangup(call.carrier_call_id).catch((err) => log.warn({ err, call_id: state.id }, 'hangup failed'));
    }
  }

  return { finish, hangUp, blockUndialled };
}

export type CallEnd = ReturnType<typeof createCallEnd>;
