import { calledJurisdictionOf, pecrReg24Rule } from './opening.ts';
import { withTransaction } from '../../db/pool.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { createCarrierReportRepository } from '../../db/carrier-reports.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { createMachineRecordRepository } from '../../db/compliance-machines.ts';
import { createInboundCallRepository } from '../../db/inbound-calls.ts';
import type { AmdReport, AmdVerdict } from '../../telephony/carrier.ts';
import { playPrepared, stopOpening } from './call-media.ts';
import { prepareSpeech } from './prepared-speech.ts';
import { callSettingsOf, registeredNameOf } from '../customer/call-settings.ts';
import { isFinished } from './views.ts';
import { voicemailMessage } from './voicemail.ts';
import { mustGetCall, type CallDeps, type CallState } from './call-state.ts';
import type { CallEnd } from './call-end.ts';

/** The mark sent after the voicemail message: when it comes back, the message has played to its end. */
export const VOICEMAIL_MARK = 'voicemail_message_end';

/** Verdicts that are a machine (DetectMessageEnd gives its machine verdict at the greeting's end). */
const MACHINE_VERDICTS: ReadonlySet<AmdVerdict> = new Set(['machine_start', 'machine_end_beep', 'machine_end_silence', 'machine_end_other']);

/**
 * The carrier's answering-machine verdict (issue 23 §3), processed once from the carrier inbox.
 * The opening plays at once and a person never waits for detection; when the verdict says a
 * machine answered, the opening stops and, per the customer's `voicemail.action`, the call hangs
 * up or leaves the voicemail message after the beep (voicemail.ts) and hangs up once it has
 * played. A fax is hung up on at once (outcome `fax`). `human` and `unknown` change nothing.
 * The verdict and what was left go on the call's compliance record; the minutes are billed as the
 * carrier measured them (call-end.ts).
 */
export function createCallMachine(deps: CallDeps, end: CallEnd) {
  const { pool, clock, log } = deps;

  /** Stores the verdict once (the call's `answered_by` and its compliance record), then acts on it. */
  async function onAmd(state: CallState, report: AmdReport, reportId: string): Promise<{ state: CallState; processed: boolean; finished: boolean }> {
    // The callback reached a process that does not hold the call's stream while the one that does
    // is alive: left for that process (its call keeper takes its calls' verdicts every round).
    if (!deps.liveCalls.has(state.id)) {
      const call = await mustGetCall(pool, state.id);
      const heldElsewhere = !isFinished(call.status) && call.claimed_by !== null && call.lease_expires_at !== null && call.lease_expires_at.getTime() > Date.now();
      if (heldElsewhere) return { state, processed: false, finished: false };
    }
    const now = clock.now();
    const stored = await withTransaction(pool, async (client) => {
      const inbox = createCarrierReportRepository(client);
      if (!(await inbox.lockUnprocessed(reportId))) return null;
      const calls = createCallRepository(client);
      const call = await calls.lock(state.id);
      if (!call) throw new Error(`no call ${state.id} for carrier report ${reportId}`);
      const finished = isFinished(call.status);
      if (!finished) await calls.update(call.id, { answered_by: report.answeredBy, updated_at: now });
      await createMachineRecordRepository(client).recordVerdict(call.id, report.answeredBy, now);
      await inbox.markProcessed(reportId);
      return { call, finished };
    });
    if (!stored) return { state, processed: false, finished: false };
    if (stored.finished) return { state, processed: true, finished: true };
    return { state: await act(state, report.answeredBy, stored.call), processed: true, finished: false };
  }

  async function act(state: CallState, verdict: AmdVerdict, call: CallRow): Promise<CallState> {
    if (verdict === 'fax') {
      const stopped = silenceForMachine(state);
      await end.hangUp(stopped, 'fax');
      return stopped;
    }
    if (!MACHINE_VERDICTS.has(verdict)) return state; // human, unknown: the call goes on
    const stopped = silenceForMachine(state);
    // The callee opted out first (a 9): nothing more is said; the opt-out hangs up.
    if (stopped.line?.optedOut) return stopped;
    const customer = await createCustomerRepository(pool).get(call.customer_id);
    const settings = customer ? callSettingsOf(customer) : null;
    // machine_start comes before the greeting's end: a message now would be cut by the greeting.
    // No stream here (another process holds it, or it never connected), or no opt-out number to
    // give: nothing can be left lawfully. Then the call just hangs up.
    // The opt-out number the message gives is the caller ID: only a number rented for the customer
    // is answered by us with an automated opt-out (inbound.ts); a verified caller ID rings the
    // customer's own line (64.1200(b)(3) wants the number to reach an automated opt-out).
    const rented = call.from_e164 ? await createInboundCallRepository(pool).rentedNumber(call.from_e164) : null;
    const leave = settings?.voicemail.action === 'leave_message' && verdict !== 'machine_start' && !!stopped.line?.media && rented?.customer_id === call.customer_id;
    if (!leave || !customer || !settings) {
      await end.hangUp(stopped, 'voicemail');
      return stopped;
    }
    try {
      const country = await createCoverageRepository(pool).get(customer.country);
      const language = country?.calling_language ?? 'en-US';
      // PECR reg. 24: a message left at a UK number gives the address too, unless the caller ID is freephone.
      const ukAddress = calledJurisdictionOf(call.to_e164, call.to_country).country === 'GB' && pecrReg24Rule({ callerId: call.from_e164, registeredAddress: customer.registered_address }) === 'gb_pecr_reg24_address';
      const text = voicemailMessage({ registeredName: registeredNameOf(customer), optOutNumber: call.from_e164!, customMessage: settings.voicemail.message, callingLanguage: language, address: ukAddress ? customer.registered_address : null });
      const speech = await prepareSpeech(deps, { customerId: customer.id, language, voice: settings.voice, text, mode: state.mode });
      playMessage(stopped, text, speech.frames);
    } catch (err) {
      log.error({ err, call_id: state.id }, 'the voicemail message could not be prepared; hanging up');
      await end.hangUp(stopped, 'voicemail');
    }
    return stopped;
  }

  /**
   * Nothing more is said to a machine: the opening stops (call-media.ts `stopOpening`: the carrier
   * drops what it has not played, the agent does not take over) and an agent already speaking is
   * cut and closed.
   */
  function silenceForMachine(state: CallState): CallState {
    stopOpening(state);
    const line = state.line;
    if (line) {
      line.wantTakeOver = false;
      line.media?.clear();
      line.bridge?.close();
      line.bridge = null;
    }
    state.bridge?.close();
    return { ...state, bridge: null };
  }

  /**
   * Plays the message after the beep (call-media.ts `playPrepared`); once its mark comes back it
   * has been played whole: it is written to the compliance record and the call hangs up. Outside
   * the mailbox: the actor goes on taking messages while the message plays.
   */
  function playMessage(state: CallState, text: string, frames: string[]): void {
    void playPrepared(state, frames, VOICEMAIL_MARK)
      .then(async () => {
        if (!state.line?.media) return; // the stream ended first: nothing was left
        // A 9 cut it (call-media.ts: the carrier's clear sends its mark back unplayed): not left;
        // the opt-out hangs up.
        if (state.line.optedOut) return;
        await createMachineRecordRepository(pool).recordVoicemailLeft(state.id, text);
        await createCallRepository(pool).appendTranscript(state.id, { role: 'agent', text, at: clock.now().toISOString() });
        await end.hangUp(state, 'voicemail');
      })
      .catch((err) => log.error({ err, call_id: state.id }, 'hanging up after the voicemail message failed'));
  }

  return { onAmd };
}
