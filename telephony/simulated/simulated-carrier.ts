/**
 * The simulated carrier: plays the callee's side of the scenario the called number picks
 * (`scenarios.ts`) in a few hundred milliseconds, through the same Twilio Media Streams protocol
 * the real carrier uses, so everything above the carrier runs unchanged in test mode. It sells
 * numbers from fictional ranges (`fictional-numbers.ts`) and verifies caller IDs by itself:
 * every number but one ending in 9 is verified, reported through `onCallerIdValidation`.
 */
import WebSocket from 'ws';
import type { Logger } from '../../runtime/logger.ts';
import { randomHex } from '../../runtime/tokens.ts';
import {
  CarrierNumberError,
  type AvailableNumber,
  type BoughtNumber,
  type BuyNumberRequest,
  type CallerIdStatus,
  type CallerIdValidationReport,
  type CallerIdValidationRequest,
  type CallerIdValidationStarted,
  type Carrier,
  type CarrierCallStatus,
  type CarrierStatusReport,
  type DialRequest,
  type DialResult,
  type NumberSearch,
  type RecordingReport,
  type AmdReport,
} from '../carrier.ts';
import { fictionalNumbers, isFictional } from './fictional-numbers.ts';
import type { LineType } from '../../runtime/types.ts';
import { FRAME_MS, SILENCE_FRAME_BASE64, toneFrames, wavFromMulaw } from '../mulaw.ts';
import { scenarioFor, simulatedCallerIdVerifies, simulatedLineType, type Scenario } from './scenarios.ts';

/** Wall time between the progress steps (initiated, ringing, answer or give up). */
const STEP_MS = 40;
/** Wall time standing in for the 1,200 s limit in the talk-until-limit scenario. */
const LIMIT_SCENARIO_MS = 1_000;
/** A call nobody ends is cut off after this much wall time, as the carrier's TimeLimit would. */
const SAFETY_LIMIT_MS = 60_000;
/** The callee's "Hello?": a short tone, then silence. */
const CALLEE_FRAMES = [...toneFrames(120, 440), ...Array<string>(4).fill(SILENCE_FRAME_BASE64)];
/** A machine's greeting (a voice-like tone), its beep (1 kHz), a fax's CNG tone (1,100 Hz). */
const GREETING_FRAMES = toneFrames(200, 300);
const BEEP_FRAMES = toneFrames(100, 1000);
const FAX_FRAMES = toneFrames(200, 1100);
/** Wall time from the answer to the machine verdict: a person soon, a machine at its greeting's end (DetectMessageEnd). */
const AMD_DELAY_MS: Record<NonNullable<Scenario['answeredBy']>, number> = {
  human: 2 * STEP_MS,
  machine_start: 2 * STEP_MS,
  machine_end_beep: 300,
  machine_end_silence: 300,
  fax: 2 * STEP_MS,
};

function calleeFrames(scenario: Scenario): string[] {
  switch (scenario.answeredBy) {
    case 'machine_end_beep':
      return [...GREETING_FRAMES, ...BEEP_FRAMES, ...Array<string>(4).fill(SILENCE_FRAME_BASE64)];
    case 'machine_end_silence':
    case 'machine_start':
      return [...GREETING_FRAMES, ...Array<string>(4).fill(SILENCE_FRAME_BASE64)];
    case 'fax':
      return FAX_FRAMES;
    default:
      return CALLEE_FRAMES;
  }
}
const RECORDING_SCHEME = 'simulated://';
const ACCOUNT_SID = `AC${'0'.repeat(32)}`;

export interface SimulatedCarrierOptions {
  log: Logger;
  onStatus: (report: CarrierStatusReport) => void;
  onRecording?: (report: RecordingReport) => void;
  /** The asynchronous answering-machine verdict of a call dialled with `amdCallbackUrl`. */
  onAmd?: (report: AmdReport) => void;
  /** The WebSocket client class (tests may wrap `ws`). */
  WebSocketImpl?: typeof WebSocket;
  /** Wall time of the talk-until-limit scenario (digit 6), ms; default 1,000. */
  talkUntilLimitMs?: number;
  /**
   * Wall time a call rings before its scenario answers it or gives up (no answer, busy, failed), ms;
   * default 80. A real call rings for seconds: the dialler's bench holds every call ringing
   * (a long ring) and ends them with `releaseRinging` after its measured window.
   */
  ringMs?: number;
  /**
   * The outcome of each caller ID verification, as the carrier's status callback would report it,
   * with the request it answers (its `statusCallbackUrl` names what the report is for).
   */
  onCallerIdValidation?: (report: CallerIdValidationReport, request: CallerIdValidationRequest) => void;
  /** Wall time from starting a caller ID verification to its outcome, ms; default 2,000. */
  callerIdValidationMs?: number;
  /** Where in a fictional range a number search starts, in [0,1) (Math.random by default). */
  pickStart?: () => number;
}

const DEFAULT_SEARCH_LIMIT = 20;
const CALLER_ID_VALIDATION_MS = 2_000;
/** Simulated number and caller ID ids carry the number's digits, so none needs remembering. */
const NUMBER_ID_PREFIX = 'SIMPN';

/** How many ended calls the simulated carrier remembers for `fetchStatus`, as a carrier keeps its call records. */
const REMEMBERED_CALLS = 10_000;

type EndReason = 'stream_closed' | 'hangup' | 'time_limit' | 'stream_failed';

interface SimulatedCall {
  request: DialRequest;
  scenario: Scenario;
  sid: string;
  streamSid: string;
  reported: Set<CarrierCallStatus>;
  sequence: number;
  /** Media Streams messages carry a sequenceNumber counting from 1 (after `connected`). */
  messageSequence: number;
  answered: boolean;
  streamOpened: boolean;
  ended: boolean;
  ws?: WebSocket;
  timers: Set<NodeJS.Timeout>;
  /** `none` until `startRecording`; a call never started recording reports no recording. */
  recordingState?: 'recording' | 'stopped';
  /** The verdict once reported (carried by the final status, as Twilio's AnsweredBy). */
  amdReported?: boolean;
}

export class SimulatedCarrier implements Carrier {
  readonly name = 'simulated' as const;
  private readonly calls = new Map<string, SimulatedCall>();
  /** The final report of each ended call, oldest first. */
  private readonly ended = new Map<string, CarrierStatusReport>();
  private readonly log: Logger;
  private readonly WebSocketImpl: typeof WebSocket;

  constructor(private readonly options: SimulatedCarrierOptions) {
    this.log = options.log.child({ carrier: 'simulated' });
    this.WebSocketImpl = options.WebSocketImpl ?? WebSocket;
  }

  /** Decided by the number (scenarios.ts `simulatedLineType`), as the outcome is by its last digit. */
  async lookupLineType(e164: string): Promise<LineType> {
    return simulatedLineType(e164);
  }

  /** Fictional numbers only; a country without a fictional range has no stock. */
  async searchNumbers(search: NumberSearch): Promise<AvailableNumber[]> {
    const country = search.country.toUpperCase();
    const start = (this.options.pickStart ?? Math.random)();
    const numbers = fictionalNumbers(country, { areaCode: search.areaCode, limit: search.limit ?? DEFAULT_SEARCH_LIMIT, start });
    return numbers.map((e164) => ({ e164, country, capabilities: { voice: true, sms: false, mms: false } }));
  }

  /** Any fictional number can be bought, again and again: test mode shares the ranges. */
  async buyNumber(request: BuyNumberRequest): Promise<BoughtNumber> {
    if (!isFictional(request.e164)) throw new CarrierNumberError('no_stock', `${request.e164} is not a fictional number: test mode sells no other`);
    return { carrierNumberId: numberId(request.e164), e164: request.e164 };
  }

  async releaseNumber(carrierNumberId: string): Promise<void> {
    if (!isNumberId(carrierNumberId)) throw new CarrierNumberError('not_found', `no simulated number ${carrierNumberId}`);
  }

  /** The outcome follows after `callerIdValidationMs`: failed for a number ending in 9, else verified. */
  async startCallerIdValidation(request: CallerIdValidationRequest): Promise<CallerIdValidationStarted> {
    const carrierCallId = `SIM${randomHex(16)}`;
    const validationCode = String(parseInt(randomHex(4), 16) % 1_000_000).padStart(6, '0');
    const report: CallerIdValidationReport = simulatedCallerIdVerifies(request.e164)
      ? { e164: request.e164, status: 'verified', carrierCallerIdId: numberId(request.e164), carrierCallId }
      : { e164: request.e164, status: 'failed', carrierCallId };
    const timer = setTimeout(() => this.deliver('caller id validation', () => this.options.onCallerIdValidation?.(report, request)), this.options.callerIdValidationMs ?? CALLER_ID_VALIDATION_MS);
    timer.unref();
    return { validationCode, carrierCallId };
  }

  /** By the same rule as the verification: nothing is remembered. */
  async callerIdStatus(e164: string): Promise<CallerIdStatus> {
    return simulatedCallerIdVerifies(e164) ? { verified: true, carrierCallerIdId: numberId(e164) } : { verified: false };
  }

  async removeCallerId(carrierCallerIdId: string): Promise<void> {
    if (!isNumberId(carrierCallerIdId)) throw new CarrierNumberError('not_found', `no simulated caller id ${carrierCallerIdId}`);
  }

  async dial(request: DialRequest): Promise<DialResult> {
    const call: SimulatedCall = {
      request,
      scenario: scenarioFor(request.to),
      sid: `SIM${randomHex(16)}`,
      streamSid: `MZ${randomHex(16)}`,
      reported: new Set(),
      sequence: 0,
      messageSequence: 0,
      answered: false,
      streamOpened: false,
      ended: false,
      timers: new Set(),
    };
    this.calls.set(call.sid, call);
    this.after(call, STEP_MS, () => this.report(call, 'initiated'));
    this.after(call, 2 * STEP_MS, () => this.report(call, 'ringing'));
    this.after(call, 2 * STEP_MS + (this.options.ringMs ?? 2 * STEP_MS), () => this.ringOut(call));
    this.log.debug({ callId: request.callId, carrierCallId: call.sid, scenario: call.scenario.digit }, 'simulated call dialled');
    return { carrierCallId: call.sid };
  }

  /** The end of the ring: the scenario answers, or gives up with its status. */
  private ringOut(call: SimulatedCall): void {
    if (call.ended || call.answered) return;
    if (call.scenario.answered) this.answer(call);
    else this.giveUp(call, call.scenario.status);
  }

  /**
   * Ends the ring of every call still ringing at once, as if its ring time ran out now (each then
   * goes on as its scenario says). How many calls it released. The dialler's bench calls it after
   * its measured window (`POST /admin/v1/simulated_carrier/release_ringing`).
   */
  releaseRinging(): number {
    let released = 0;
    for (const call of [...this.calls.values()]) {
      if (call.ended || call.answered) continue;
      this.clearTimers(call);
      // A call dialled a moment ago reports its progress first, in order (each status once).
      this.report(call, 'initiated');
      this.report(call, 'ringing');
      this.ringOut(call);
      released++;
    }
    return released;
  }

  async hangup(carrierCallId: string): Promise<void> {
    const call = this.calls.get(carrierCallId);
    if (!call || call.ended) return;
    if (call.answered) this.end(call, 'hangup');
    else this.giveUp(call, 'canceled');
  }

  async fetchStatus(callId: string, carrierCallId: string): Promise<CarrierStatusReport | null> {
    const running = this.calls.get(carrierCallId);
    if (running) return { callId, carrierCallId, status: running.answered ? 'in-progress' : running.reported.has('ringing') ? 'ringing' : 'queued' };
    const ended = this.ended.get(carrierCallId);
    return ended ? { ...ended, callId } : null;
  }

  /** The simulated call is recorded from here on (its recording is reported when it ends). */
  async startRecording(carrierCallId: string): Promise<void> {
    const call = this.calls.get(carrierCallId);
    if (call) call.recordingState = 'recording';
  }

  async stopRecording(carrierCallId: string): Promise<void> {
    const call = this.calls.get(carrierCallId);
    if (call && call.recordingState === 'recording') call.recordingState = 'stopped';
  }

  async fetchRecording(recordingUrl: string): Promise<{ contentType: string; body: Buffer }> {
    if (!recordingUrl.startsWith(RECORDING_SCHEME)) throw new Error('not a simulated recording');
    const audio = Buffer.concat(CALLEE_FRAMES.map((frame) => Buffer.from(frame, 'base64')));
    return { contentType: 'audio/wav', body: wavFromMulaw(audio) };
  }

  /** The answering-machine verdict of an answered call dialled with `amdCallbackUrl`, once. */
  private reportVerdictNow(call: SimulatedCall): void {
    const verdict = call.scenario.answeredBy;
    if (!call.answered || call.amdReported || !call.request.amdCallbackUrl || !verdict) return;
    call.amdReported = true;
    const report: AmdReport = { callId: call.request.callId, carrierCallId: call.sid, answeredBy: verdict, detectionMs: AMD_DELAY_MS[verdict] };
    this.deliver('amd', () => this.options.onAmd?.(report));
  }

  private answer(call: SimulatedCall): void {
    call.answered = true;
    this.report(call, 'in-progress');
    // Asynchronous detection, as the Twilio adapter asks for it: connected at once, the verdict after.
    const verdict = call.scenario.answeredBy;
    if (call.request.amdCallbackUrl && verdict) this.after(call, AMD_DELAY_MS[verdict], () => this.reportVerdictNow(call));
    const ws = new this.WebSocketImpl(call.request.mediaUrl);
    call.ws = ws;
    ws.on('open', () => {
      call.streamOpened = true;
      this.startStream(call);
    });
    ws.on('message', (data) => this.receive(call, String(data)));
    ws.on('error', (err) => this.log.warn({ carrierCallId: call.sid, err: err.message }, 'simulated media stream error'));
    // As with Twilio, a stream that cannot connect ends the call (no TwiML follows <Connect>).
    ws.on('close', () => this.end(call, call.streamOpened ? 'stream_closed' : 'stream_failed'));
    const limitMs = call.scenario.agent === 'talk_until_limit' ? (this.options.talkUntilLimitMs ?? LIMIT_SCENARIO_MS) : SAFETY_LIMIT_MS;
    this.after(call, limitMs, () => this.end(call, 'time_limit'));
  }

  private startStream(call: SimulatedCall): void {
    this.send(call, { event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send(call, {
      event: 'start',
      sequenceNumber: String(++call.messageSequence),
      start: {
        accountSid: ACCOUNT_SID,
        streamSid: call.streamSid,
        callSid: call.sid,
        tracks: ['inbound'],
        customParameters: { call_id: call.request.callId, ...(call.request.streamToken ? { stream_token: call.request.streamToken } : {}) },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
      streamSid: call.streamSid,
    });
    // One frame every FRAME_MS, each scheduled by the one before: timers set all at once for
    // different delays can fire out of order when the event loop is late (Node runs every expired
    // timer of one duration's list before the next list), and a stream never reorders its frames.
    // Each delay is measured from the stream's start, so a late loop does not slow the pace.
    const started = Date.now();
    const frames = calleeFrames(call.scenario);
    const sendFrame = (i: number) => {
      this.send(call, {
        event: 'media',
        sequenceNumber: String(++call.messageSequence),
        media: { track: 'inbound', chunk: String(i + 1), timestamp: String(i * FRAME_MS), payload: frames[i] },
        streamSid: call.streamSid,
      });
      if (i + 1 < frames.length) this.after(call, Math.max(0, started + (i + 1) * FRAME_MS - Date.now()), () => sendFrame(i + 1));
    };
    this.after(call, 0, () => sendFrame(0));
  }

  /** Agent audio is "played" at once (wall time is compressed), so a mark comes straight back. */
  private receive(call: SimulatedCall, text: string): void {
    let message: { event?: string; mark?: { name?: string } };
    try {
      message = JSON.parse(text);
    } catch {
      this.log.warn({ carrierCallId: call.sid }, 'simulated carrier got a message that is not JSON');
      return;
    }
    if (message.event === 'mark' && typeof message.mark?.name === 'string') {
      this.send(call, { event: 'mark', sequenceNumber: String(++call.messageSequence), streamSid: call.streamSid, mark: { name: message.mark.name } });
    }
    // `media` and `clear` need no answer: nothing is buffered to drop.
  }

  /** The call ends after it was answered: stop the stream, report completed, then the recording. */
  private end(call: SimulatedCall, reason: EndReason): void {
    if (call.ended) return;
    call.ended = true;
    this.clearTimers(call);
    // A call over before its verdict was due still gets it, as Twilio posts the asynchronous
    // verdict of every call it was asked for (the scripted agent can end a call within milliseconds).
    this.reportVerdictNow(call);
    const ws = call.ws;
    if (ws && ws.readyState === ws.OPEN) {
      this.send(call, { event: 'stop', sequenceNumber: String(++call.messageSequence), streamSid: call.streamSid, stop: { accountSid: ACCOUNT_SID, callSid: call.sid } });
      ws.close(1000);
    } else if (ws && ws.readyState === ws.CONNECTING) {
      ws.terminate();
    }
    // The scripted length, not wall time; a call that hit the safety limit ran to TimeLimit.
    const durationSeconds =
      reason === 'stream_failed' ? 0 : reason === 'time_limit' && call.scenario.agent !== 'talk_until_limit' ? call.request.timeLimitSeconds : call.scenario.durationSeconds;
    this.log.debug({ carrierCallId: call.sid, reason, durationSeconds }, 'simulated call ended');
    this.report(call, 'completed', { durationSeconds, ...(call.amdReported && call.scenario.answeredBy ? { answeredBy: call.scenario.answeredBy } : {}) });
    this.calls.delete(call.sid);
    // Only a call whose recording was started (after the opening's notice) has one.
    if (!call.recordingState) return;
    const recording: RecordingReport = {
      callId: call.request.callId,
      carrierCallId: call.sid,
      recordingId: `RE${randomHex(16)}`,
      recordingUrl: `${RECORDING_SCHEME}${call.sid}`,
      durationSeconds,
    };
    // Like Twilio, the recording is reported a moment after the call's final status.
    setTimeout(() => this.deliver('recording', () => this.options.onRecording?.(recording)), STEP_MS);
  }

  /** The call ends before it was answered (no-answer, busy, failed, or hung up while ringing). */
  private giveUp(call: SimulatedCall, status: CarrierCallStatus): void {
    if (call.ended) return;
    call.ended = true;
    this.clearTimers(call);
    this.report(call, status, { durationSeconds: 0 });
    this.calls.delete(call.sid);
  }

  private report(call: SimulatedCall, status: CarrierCallStatus, extra: Pick<CarrierStatusReport, 'durationSeconds' | 'answeredBy'> = {}): void {
    if (call.reported.has(status)) return;
    call.reported.add(status);
    const report: CarrierStatusReport = { callId: call.request.callId, carrierCallId: call.sid, status, sequence: call.sequence++, ...extra };
    if (call.ended) {
      this.ended.set(call.sid, report);
      if (this.ended.size > REMEMBERED_CALLS) this.ended.delete(this.ended.keys().next().value!);
    }
    this.deliver('status', () => this.options.onStatus(report));
  }

  /** A throwing handler must not break the call's timers. */
  private deliver(kind: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err }, `simulated carrier ${kind} handler threw`);
    }
  }

  private send(call: SimulatedCall, message: object): void {
    if (call.ws?.readyState === WebSocket.OPEN) call.ws.send(JSON.stringify(message));
  }

  private after(call: SimulatedCall, ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      call.timers.delete(timer);
      fn();
    }, ms);
    call.timers.add(timer);
  }

  private clearTimers(call: SimulatedCall): void {
    for (const timer of call.timers) clearTimeout(timer);
    call.timers.clear();
  }
}

function numberId(e164: string): string {
  return NUMBER_ID_PREFIX + e164.replace(/\D/g, '');
}

function isNumberId(id: string): boolean {
  return new RegExp(`^${NUMBER_ID_PREFIX}\\d{6,15}$`).test(id);
}
