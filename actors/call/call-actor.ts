import crypto from 'node:crypto';
import type { Behaviour, EntityRegistry } from '../../runtime/actor-system.ts';
import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import { withTransaction } from '../../db/pool.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { createAppointmentRepository } from '../../db/appointments.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { createDncRepository } from '../../db/dnc.ts';
import { recordEvent } from '../../db/events.ts';
import { EntityGone } from '../../runtime/refusal.ts';
import { FINAL_CARRIER_STATUSES, type Carrier, type CarrierStatusReport, type RecordingReport } from '../../telephony/carrier.ts';
import { createCarrierReportRepository } from '../../db/carrier-reports.ts';
import type { MediaSession } from '../../telephony/media.ts';
import type { BridgeConnection, SpeechBridge } from '../../telephony/speech-bridge.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import { agentSetup, identificationOf } from './agent-setup.ts';
import { scrubSuppliers } from '../shared/output-filter.ts';
import { createComplianceRecordRepository } from '../../db/compliance-records.ts';
import { businessName } from '../customer/views.ts';
import { decideOutcome, summarise, TIME_LIMIT_SECONDS } from './outcome.ts';
import { readToolCall } from './tool-args.ts';
import { appointmentView, callView, isFinished } from './views.ts';
import type { CallMessage, CallReplies } from './messages.ts';

/** What the call actor needs besides the database: the carriers, the agents, where media arrives. */
export interface CallDeps extends Deps {
  /** The one money writer: a call's end settles through it, in the call's own transaction. */
  money: MoneyWriter;
  carriers: Record<Mode, Carrier>;
  bridges: Record<Mode, SpeechBridge>;
  /** ws(s):// URL of this process's media server (`…/media`). */
  mediaUrl: () => string;
  /** Calls this process is running now (for platform capacity). */
  liveCalls: Set<string>;
  /** The registry of call actors (tools and bridge events come back to the actor through it). */
  calls: () => EntityRegistry<CallMessage, CallReplies, CallState>;
  /** The per-call secret a media stream must bring back (the same in every process). */
  streamToken: (callId: string) => string;
  /** Told when a call's media stream stops, before anything else (the database may be away): its end is then watched for. */
  mediaStopped?: (callId: string) => void;
}

/**
 * The call actor owns one call from dial to outcome: it dials through the carrier, bridges the
 * carrier's media stream to the speech agent, carries out the agent's tools, enforces the
 * 20-minute limit and writes the outcome, the charge and the events in one transaction.
 * Its state is the call's live connections; every fact lives in the `calls` row.
 */
export interface CallState {
  id: string;
  accountId: string;
  mode: Mode;
  customerId: string;
  media: MediaSession | null;
  bridge: BridgeConnection | null;
  limitTimer: NodeJS.Timeout | null;
}

const RING_TIMEOUT_SECONDS = 30;
/** How long an answered call's `call.completed` waits for its recording (real time). */
export const RECORDING_WAIT_SECONDS = 45;
/** Margin after the carrier's own time limit before we hang up ourselves. */
const LIMIT_MARGIN_MS = 15_000;

export function callBehaviour(deps: CallDeps): Behaviour<CallMessage, CallState> {
  const { pool, clock, log, config, money } = deps;
  /**
   * The live handles of this process's calls, kept beside the actors: an actor that crashes and
   * is reset reloads its call from the database and picks its handles up again from here.
   */
  const liveHandles = new Map<string, Pick<CallState, 'media' | 'bridge' | 'limitTimer'>>();
  const repo = () => createCallRepository(pool);

  /** The call's row. A call actor exists only for an inserted call (rows are never deleted), so none is a broken invariant: the actor stops. */
  async function mustGet(id: string): Promise<CallRow> {
    const row = await repo().get(id);
    if (!row) throw new EntityGone('call', id);
    return row;
  }

  function release(state: CallState): CallState {
    if (state.limitTimer) clearTimeout(state.limitTimer);
    state.bridge?.close();
    state.media?.close();
    deps.liveCalls.delete(state.id);
    return { ...state, media: null, bridge: null, limitTimer: null };
  }

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
      const call = await calls.lock(state.id);
      if (!call || isFinished(call.status)) {
        if (reportId) await createCarrierReportRepository(client).markProcessed(reportId);
        return null;
      }
      const answered = report.status === 'completed';
      const duration = answered ? Math.min(report.durationSeconds ?? 0, TIME_LIMIT_SECONDS) : 0;
      const outcome = decideOutcome({
        carrierStatus: report.status,
        answeredBy: report.answeredBy ?? call.answered_by,
        durationSeconds: duration,
        appointmentBooked: call.appointment_id !== null,
        doNotCall: await calls.requestedDoNotCall(call.id),
        endReason: call.end_reason,
        hitTimeLimit: call.end_reason === 'time_limit',
      });
      if (call.dialed_at) await money.settleCall(client, { accountId: call.account_id, reference: call.id, durationSeconds: duration, now });
      const appointment = call.appointment_id ? await createAppointmentRepository(client).get(call.appointment_id) : null;
      const updated = await calls.update(call.id, {
        status: 'completed',
        outcome,
        duration_seconds: duration,
        answered_by: report.answeredBy ?? call.answered_by,
        ended_at: now,
        updated_at: now,
        lease_expires_at: null,
        summary: summarise(
          outcome,
          duration,
          appointment ? { startLocal: localTime(appointment.start_at, appointment.timezone), timezone: appointment.timezone } : null,
        ),
      });
      if (duration > 0 && !updated.recording_url) await calls.awaitRecording(call.id, RECORDING_WAIT_SECONDS);
      else await recordEvent(client, { accountId: call.account_id, mode: call.mode, type: 'call.completed', data: callView(updated, config.publicUrl), now });
      if (appointment && outcome === 'appointment_booked') {
        await recordEvent(client, { accountId: call.account_id, mode: call.mode, type: 'appointment.booked', data: appointmentView(appointment), now });
      }
      if (reportId) await createCarrierReportRepository(client).markProcessed(reportId);
      return updated;
    });
  }

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

  async function dial(state: CallState, from: string): Promise<CallState> {
    const call = await mustGet(state.id);
    const carrier = deps.carriers[state.mode];
    deps.liveCalls.add(state.id);
    try {
      const base = config.publicUrl;
      const { carrierCallId } = await carrier.dial({
        callId: call.id,
        streamToken: deps.streamToken(call.id),
        to: call.to_e164,
        from,
        mediaUrl: deps.mediaUrl(),
        statusCallbackUrl: `${base}/telephony/twilio/status?call_id=${call.id}`,
        recordingCallbackUrl: `${base}/telephony/twilio/recording?call_id=${call.id}`,
        timeLimitSeconds: TIME_LIMIT_SECONDS,
        ringTimeoutSeconds: RING_TIMEOUT_SECONDS,
      });
      const now = clock.now();
      await repo().update(call.id, { carrier: carrier.name, carrier_call_id: carrierCallId, from_e164: from, dialed_at: now, updated_at: now });
      // The carrier enforces the limit too (TimeLimit); this is the backstop if it does not.
      const timer = setTimeout(() => void deps.calls().ask(state.id, { type: 'time_limit_reached' }).catch(() => {}), TIME_LIMIT_SECONDS * 1000 + LIMIT_MARGIN_MS);
      timer.unref();
      return { ...state, limitTimer: timer };
    } catch (err) {
      log.warn({ err, call_id: state.id }, 'the carrier refused the call');
      // Mark it dialled so the hold is settled (at zero) with the outcome.
      await repo().update(call.id, { dialed_at: clock.now() });
      await finish(state, { status: 'failed' });
      return release(state);
    }
  }

  async function onStatus(state: CallState, report: CarrierStatusReport, reportId: string): Promise<{ state: CallState; processed: boolean; finished: boolean }> {
    if (FINAL_CARRIER_STATUSES.includes(report.status)) {
      const ended = await finish(state, report, reportId);
      return { state: release(state), processed: ended !== null, finished: true };
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

  /** Processes one inbox report of this call (status or recording), once. */
  async function onReport(state: CallState, reportId: string): Promise<{ state: CallState; reply: CallReplies['carrier_report_received'] }> {
    const row = await createCarrierReportRepository(pool).get(reportId);
    if (!row || row.call_id !== state.id) throw new Error(`no carrier report ${reportId} for call ${state.id}`);
    if (row.processed_at) return { state, reply: { processed: false, finished: isFinished((await mustGet(state.id)).status) } };
    if (row.kind === 'recording') {
      const processed = await onRecording(state, row.report as unknown as RecordingReport, row.id);
      return { state, reply: { processed, finished: isFinished((await mustGet(state.id)).status) } };
    }
    const r = await onStatus(state, row.report as unknown as CarrierStatusReport, row.id);
    return { state: r.state, reply: { processed: r.processed, finished: r.finished } };
  }

  /** Starts the agent for a connected media stream; audio flows directly between the two. */
  async function connectMedia(state: CallState, session: MediaSession): Promise<CallState> {
    if (!sameSecret(session.streamToken, deps.streamToken(state.id))) {
      log.warn({ call_id: state.id }, 'a media stream without this call’s stream token was refused');
      session.close();
      return state;
    }
    const call = await mustGet(state.id);
    if (isFinished(call.status)) {
      session.close();
      return state;
    }
    const customer = await createCustomerRepository(pool).get(call.customer_id);
    if (!customer) {
      // A call row references its customer (foreign key): a broken invariant, never a nameless agent.
      session.close();
      throw new Error(`call ${call.id}: customer ${call.customer_id} not found`);
    }
    const country = await createCoverageRepository(pool).get(customer.country);
    const setup = agentSetup({
      businessName: businessName(customer),
      callbackNumber: call.from_e164,
      website: customer.website_url,
      calledBusiness: call.business_name,
      language: country?.calling_language ?? 'en-US',
      timezone: customer.timezone,
      to: call.to_e164,
      script: customer.script,
      researchNotes: customer.research_notes,
    });
    const { identification, optOutOffered } = identificationOf(setup);
    await createComplianceRecordRepository(pool).recordIdentification(call.id, identification, optOutOffered, clock.now());
    const self = () => deps.calls();
    const bridgeFor = deps.bridges[state.mode];
    // Connecting runs outside the mailbox: the agent may call a tool while it connects.
    bridgeFor
      .connect(setup, {
        onAudio: (payload) => session.sendAudio(payload),
        // Bridges that track playback ask for carrier marks (MarkingBridgeHandlers).
        onMark: (name: string) => session.sendMark(name),
        onInterrupted: () => session.clear(),
        onToolCall: (name, args) => self().ask(state.id, { type: 'tool_called', name, args }),
        // The agent speaks for the business alone: a supplier it names anyway (a model saying
        // where it comes from) is the business in the transcript the reseller and its customer
        // read. The callee's words are kept as said.
        onTranscript: (role, text) =>
          void self()
            .ask(state.id, { type: 'transcript_heard', role, text: role === 'agent' ? scrubSuppliers(text, setup.businessName) : text })
            .catch(() => {}),
        onError: (error) => void self().ask(state.id, { type: 'bridge_failed', error }).catch(() => {}),
      })
      .then(
        (connection) => self().ask(state.id, { type: 'bridge_connected', connection }),
        (error: Error) => self().ask(state.id, { type: 'bridge_failed', error }),
      )
      .catch((err) => log.error({ err, call_id: state.id }, 'bridge hand-over failed'));
    session.onStop(() => void self().ask(state.id, { type: 'media_stopped' }).catch(() => {}));
    return { ...state, media: session };
  }

  async function hangUp(state: CallState, reason: string | null): Promise<void> {
    const call = await mustGet(state.id);
    if (reason && !call.end_reason) await repo().update(call.id, { end_reason: reason });
    state.media?.close();
    if (call.carrier_call_id) {
      await deps.carriers[state.mode].hangup(call.carrier_call_id).catch((err) => log.warn({ err, call_id: state.id }, 'hangup failed'));
    }
  }

  /** Carries out the agent's call of a tool; its arguments are read (and made safe to write) by tool-args.ts. */
  async function tool(state: CallState, name: string, args: Record<string, unknown>): Promise<unknown> {
    const call = await mustGet(state.id);
    const now = clock.now();
    const read = readToolCall(name, args, now);
    if ('reply' in read) return read.reply;
    const wanted = read.act;
    switch (wanted.tool) {
      case 'book_appointment': {
        if (call.appointment_id) return { booked: true, appointment_id: call.appointment_id, note: 'already booked on this call' };
        const customer = await createCustomerRepository(pool).get(call.customer_id);
        const timezone = customer?.timezone ?? 'UTC';
        const appointment = await withTransaction(pool, async (client) => {
          const a = await createAppointmentRepository(client).insert({
            account_id: call.account_id,
            mode: call.mode,
            customer_id: call.customer_id,
            call_id: call.id,
            start_at: wanted.startAt,
            end_at: wanted.endAt,
            timezone,
            attendee_name: wanted.attendeeName,
            notes: wanted.notes,
            created_at: now,
          });
          await createCallRepository(client).update(call.id, { appointment_id: a.id, updated_at: now });
          return a;
        });
        return { booked: true, appointment_id: appointment.id, starts: localTime(appointment.start_at, timezone), timezone };
      }
      case 'mark_do_not_call': {
        await createDncRepository(pool).add({
          accountId: call.account_id,
          e164: call.to_e164,
          source: 'callee_request',
          reason: wanted.reason,
          callId: call.id,
          now,
        });
        return { recorded: true };
      }
      case 'end_call': {
        // Hang up after this message: the agent's goodbye has already been sent to the carrier.
        setTimeout(() => void hangUp(state, wanted.reason).catch((err) => log.warn({ err }, 'hangup failed')), 50).unref();
        return { ending: true };
      }
      default: {
        const unhandled: never = wanted;
        throw new Error(`unhandled tool ${(unhandled as { tool: string }).tool}`);
      }
    }
  }

  async function receive(state: CallState, msg: CallMessage): Promise<{ state: CallState; reply: unknown }> {
    switch (msg.type) {
      case 'dial':
        return { state: await dial(state, msg.from), reply: { dialed: true } };
      case 'carrier_report_received':
        return onReport(state, msg.reportId);
      case 'media_connected':
        return { state: await connectMedia(state, msg.session), reply: { bridged: true } };
      case 'bridge_connected': {
        const media = state.media;
        if (!media) {
          msg.connection.close();
          return { state, reply: { ok: true } };
        }
        media.onAudio((payload, timestampMs) => msg.connection.sendAudio(payload, timestampMs));
        media.onMark((name) => msg.connection.markPlayed(name));
        return { state: { ...state, bridge: msg.connection }, reply: { ok: true } };
      }
      case 'bridge_failed':
        log.error({ err: msg.error, call_id: state.id }, 'the speech agent failed; hanging up');
        await hangUp(state, 'other');
        return { state, reply: { ok: true } };
      case 'tool_called':
        return { state, reply: await tool(state, msg.name, msg.args) };
      case 'transcript_heard':
        await repo().appendTranscript(state.id, { role: msg.role, text: msg.text, at: clock.now().toISOString() });
        return { state, reply: { ok: true } };
      case 'media_stopped': {
        deps.mediaStopped?.(state.id);
        state.bridge?.close();
        // Another process may have written the end (the carrier's report reached its API):
        // then nothing is left to wait for here.
        const ended = isFinished((await mustGet(state.id)).status);
        return { state: ended ? release(state) : { ...state, bridge: null, media: null }, reply: { ok: true } };
      }
      case 'time_limit_reached':
        await hangUp(state, 'time_limit');
        return { state: { ...state, limitTimer: null }, reply: { ok: true } };
      case 'get_live':
        return { state, reply: { media: state.media !== null, bridge: state.bridge !== null } };
      default: {
        const unhandled: never = msg;
        throw new Error(`unhandled call message ${(unhandled as { type: string }).type}`);
      }
    }
  }

  return {
    kind: 'call',
    async load(id) {
      const call = await mustGet(id);
      const live = liveHandles.get(id);
      return {
        id,
        accountId: call.account_id,
        mode: call.mode,
        customerId: call.customer_id,
        media: live?.media ?? null,
        bridge: live?.bridge ?? null,
        limitTimer: live?.limitTimer ?? null,
      };
    },
    isRead: (msg) => msg.type === 'get_live',
    // A call's audio flows without messages for minutes: the actor must outlive the quiet.
    holdsLiveResources: (state) => state.media !== null || state.bridge !== null || state.limitTimer !== null,
    async receive(state, msg) {
      const result = await receive(state, msg);
      const { media, bridge, limitTimer } = result.state;
      if (media || bridge || limitTimer) liveHandles.set(state.id, { media, bridge, limitTimer });
      else liveHandles.delete(state.id);
      return result;
    },
  };
}

function sameSecret(given: string | null, expected: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** "2026-11-24 10:00" in `timezone`. */
export function localTime(at: Date, timezone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}
