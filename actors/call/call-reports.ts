import { withTransaction } from '../../db/pool.ts';
import { createCallRepository } from '../../db/calls.ts';
import { recordEvent } from '../../db/events.ts';
import { createCarrierReportRepository } from '../../db/carrier-reports.ts';
import { FINAL_CARRIER_STATUSES, type AmdReport, type CarrierStatusReport, type RecordingReport } from '../../telephony/carrier.ts';
import { callView, isFinished } from './views.ts';
import { mustGetCall, releaseCall, type CallDeps, type CallState } from './call-state.ts';
import type { CallEnd } from './call-end.ts';
import type { CallReplies } from './messages.ts';
import { createCallMachine } from './call-machine.ts';

/** What the carrier reports about a call (progress, its end, its recording, its machine verdict), each processed once from the inbox. */
export function createCallReports(deps: CallDeps, end: CallEnd) {
  const { pool, clock, config } = deps;
  const machine = createCallMachine(deps, end);

  /** Stores the recording; a finished call whose `call.completed` waited for it is announced now. */
  async function onRecording(state: CallState, report: RecordingReport, reportId: string): Promise<boolean> {
    const now = clock.now();
    return withTransaction(pool, async (client) => {
      const inbox = createCarrierReportRepository(client);
      if (!(await inbox.lockUnprocessed(reportId))) return false;
      const calls = createCallRepository(client);
      await calls.lock(state.id);
      const updated = await calls.update(state.id, {
        recording_id: report.recordingId,
        recording_url: report.recordingUrl,
        recording_seconds: report.durationSeconds,
      });
      if (isFinished(updated.status) && updated.completion_event_due_at) {
        const announced = await calls.update(state.id, { completion_event_due_at: null });
        await recordEvent(client, { accountId: updated.account_id, mode: updated.mode, type: 'call.completed', data: callView(announced, config.publicUrl), now });
      }
      await inbox.markProcessed(reportId);
      return true;
    });
  }

  async function onStatus(state: CallState, report: CarrierStatusReport, reportId: string): Promise<{ state: CallState; processed: boolean; finished: boolean }> {
    if (FINAL_CARRIER_STATUSES.includes(report.status)) {
      const ended = await end.finish(state, report, reportId);
      return { state: releaseCall(deps, state), processed: ended !== null, finished: true };
    }
    const now = clock.now();
    return withTransaction(pool, async (client) => {
      const inbox = createCarrierReportRepository(client);
      if (!(await inbox.lockUnprocessed(reportId))) return { state, processed: false, finished: false };
      const calls = createCallRepository(client);
      const call = await calls.lock(state.id);
      if (!call) throw new Error(`no call ${state.id} for carrier report ${reportId}`);
      const finished = isFinished(call.status);
      // A progress report arriving after the end (reports may come out of order) changes nothing.
      if (!finished && report.status === 'ringing' && call.status === 'dialing') await calls.update(call.id, { status: 'ringing', updated_at: now });
      if (!finished && report.status === 'in-progress' && call.status !== 'in_progress') {
        await calls.update(call.id, { status: 'in_progress', answered_at: now, answered_by: report.answeredBy ?? null, updated_at: now });
      }
      await inbox.markProcessed(reportId);
      return { state, processed: true, finished };
    });
  }

  /** Processes one inbox report of this call (status, recording or machine verdict), once. */
  async function onReport(state: CallState, reportId: string): Promise<{ state: CallState; reply: CallReplies['carrier_report_received'] }> {
    const row = await createCarrierReportRepository(pool).get(reportId);
    if (!row || row.call_id !== state.id) throw new Error(`no carrier report ${reportId} for call ${state.id}`);
    if (row.processed_at) return { state, reply: { processed: false, finished: isFinished((await mustGetCall(pool, state.id)).status) } };
    if (row.kind === 'amd') {
      const r = await machine.onAmd(state, row.report as unknown as AmdReport, row.id);
      return { state: r.state, reply: { processed: r.processed, finished: r.finished } };
    }
    if (row.kind === 'recording') {
      const processed = await onRecording(state, row.report as unknown as RecordingReport, row.id);
      return { state, reply: { processed, finished: isFinished((await mustGetCall(pool, state.id)).status) } };
    }
    const r = await onStatus(state, row.report as unknown as CarrierStatusReport, row.id);
    return { state: r.state, reply: { processed: r.processed, finished: r.finished } };
  }

  return { onReport };
}
