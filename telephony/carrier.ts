/**
 * The carrier: places outbound calls whose audio comes back over a Twilio Media Streams
 * WebSocket to our media server, and reports call progress. Adapters: `twilio/` (the twilio
 * SDK) and `simulated/` (in-process, for test mode and machines without carrier credentials).
 * It also sells numbers and verifies caller IDs (`NumberCarrier`).
 */
import type { LineType } from '../runtime/types.ts';

/** Carrier call statuses (Twilio's names). */
export type CarrierCallStatus =
  | 'queued'
  | 'initiated'
  | 'ringing'
  | 'in-progress'
  | 'completed'
  | 'busy'
  | 'failed'
  | 'no-answer'
  | 'canceled';

export const FINAL_CARRIER_STATUSES: readonly CarrierCallStatus[] = ['completed', 'busy', 'failed', 'no-answer', 'canceled'];

export interface DialRequest {
  /** Our call id; travels to the media stream as the `<Parameter name="call_id">` of `<Stream>`. */
  callId: string;
  /**
   * A per-call secret that travels as `<Parameter name="stream_token">`: the media server's URL is
   * public, so a stream is bound to its call only when it brings this back.
   */
  streamToken?: string;
  /** Called number, E.164. */
  to: string;
  /** Caller ID, E.164. */
  from: string;
  /** wss:// URL of the media server of the process that holds the call (no query string: Twilio drops it). */
  mediaUrl: string;
  /** Where progress is reported (initiated, ringing, answered, completed); may carry a query string. */
  statusCallbackUrl: string;
  /** Where the finished recording is reported. */
  recordingCallbackUrl: string;
  /**
   * Where the asynchronous answering-machine verdict is reported (Twilio `AsyncAmdStatusCallback`,
   * `MachineDetection=DetectMessageEnd`, `AsyncAmd=true`): the call is connected at once and the
   * verdict follows, so a person is never kept waiting for it. Absent: no detection.
   */
  amdCallbackUrl?: string;
  /** Hard limit of the call, seconds (1,200: the spec's 20 minutes). */
  timeLimitSeconds: number;
  /** How long to let it ring, seconds. */
  ringTimeoutSeconds: number;
}

export interface DialResult {
  /** The carrier's id of the call (Twilio CallSid). */
  carrierCallId: string;
}

/** Progress of a call as the carrier reports it, normalised. */
export interface CarrierStatusReport {
  callId: string;
  carrierCallId: string;
  status: CarrierCallStatus;
  /** Billable length the carrier measured, seconds (final statuses). */
  durationSeconds?: number;
  /** Answering-machine detection result: `human`, `machine_start`, `fax`, `unknown`, … */
  answeredBy?: string;
  /** Sequence number of the report, to drop stale ones. */
  sequence?: number;
}

export interface RecordingReport {
  callId: string;
  carrierCallId: string;
  recordingId: string;
  /** Where the carrier keeps the audio (fetched with the carrier's credentials, never handed out). */
  recordingUrl: string;
  durationSeconds: number;
}

/** The answering-machine verdicts (Twilio's `AnsweredBy` names). */
export const AMD_VERDICTS = ['human', 'machine_start', 'machine_end_beep', 'machine_end_silence', 'machine_end_other', 'fax', 'unknown'] as const;
export type AmdVerdict = (typeof AMD_VERDICTS)[number];

/** The asynchronous answering-machine verdict of an answered call (`DialRequest.amdCallbackUrl`). */
export interface AmdReport {
  callId: string;
  carrierCallId: string;
  answeredBy: AmdVerdict;
  /** How long detection took from the answer, ms (Twilio `MachineDetectionDuration`), when given. */
  detectionMs?: number;
}

export interface Carrier extends NumberCarrier {
  /** `none`: live mode without a configured carrier (telephony/unconfigured-carrier.ts), which refuses everything. */
  readonly name: 'twilio' | 'simulated' | 'none';
  dial(request: DialRequest): Promise<DialResult>;
  hangup(carrierCallId: string): Promise<void>;
  /**
   * What the carrier knows of a call now, as a status report (final once the call ended), or null
   * if it does not know the call. Throws when the carrier cannot be asked. Used to recover a call
   * whose reports were lost or whose process died.
   */
  fetchStatus(callId: string, carrierCallId: string): Promise<CarrierStatusReport | null>;
  /**
   * Starts recording an answered call (both sides), reported to `recordingCallbackUrl` when it
   * ends. Calls are not recorded from the answer: recording starts only after the opening's
   * recording notice has played (issue 23).
   */
  startRecording(carrierCallId: string, recordingCallbackUrl: string): Promise<void>;
  /** Stops the call's recording for good (the callee objected); what was recorded before stays. */
  stopRecording(carrierCallId: string): Promise<void>;
  /** The recording's audio (WAV), fetched with the carrier's credentials. */
  fetchRecording(recordingUrl: string): Promise<{ contentType: string; body: Buffer }>;
  /**
   * The line type of `e164` (E.164). Throws when the carrier cannot be asked; a number the
   * carrier knows nothing of is `unknown`. Callers cache the answer (db/line-types.ts).
   */
  lookupLineType(e164: string): Promise<LineType>;
}

// ---- Numbers at the carrier: search, buy, release; caller IDs verified by a call ----

/** A number the carrier offers for sale. */
export interface AvailableNumber {
  /** E.164. */
  e164: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** City or town, when the carrier names one. */
  locality?: string;
  /** State, province or region, when the carrier names one. */
  region?: string;
  capabilities: { voice: boolean; sms: boolean; mms: boolean };
}

export interface NumberSearch {
  /** ISO 3166-1 alpha-2. */
  country: string;
  /**
   * A preference: an area code (NPA) for US and CA numbers. Other countries ignore it (Twilio's
   * AreaCode filter applies to the US and Canada only). No match is an empty list, not a fallback.
   */
  areaCode?: string;
  /** How many to offer at most (default 20). */
  limit?: number;
}

export interface BuyNumberRequest {
  /** E.164, one the carrier offered. */
  e164: string;
  /** Where the carrier reports the progress of calls to the number (Twilio's StatusCallback of the number). */
  statusCallbackUrl?: string;
  /** Where a call to the number is answered (Twilio's VoiceUrl, POST): people calling back (actors/call/inbound.ts). */
  voiceUrl?: string;
}

export interface BoughtNumber {
  /** The carrier's id of the number (Twilio IncomingPhoneNumber sid, PN…): what `releaseNumber` takes. */
  carrierNumberId: string;
  e164: string;
}

export interface CallerIdValidationRequest {
  /** The number to verify, E.164: the carrier calls it. */
  e164: string;
  /** A label for the carrier's records (Twilio: 64 characters at most). */
  friendlyName: string;
  /** Where the outcome is reported (signed like call status callbacks); may carry a query string. */
  statusCallbackUrl: string;
}

export interface CallerIdValidationStarted {
  /** The digits the person types when the carrier calls (Twilio: six). */
  validationCode: string;
  /** The verification call (Twilio CallSid), when the carrier names it. */
  carrierCallId?: string;
}

/** The outcome of a caller ID verification call, normalised. */
export interface CallerIdValidationReport {
  e164: string;
  status: 'verified' | 'failed';
  /** The carrier's id of the verified caller ID (Twilio OutgoingCallerId sid, PN…), when verified. */
  carrierCallerIdId?: string;
  carrierCallId?: string;
}

/** Whether the carrier holds `e164` as a verified caller ID of our account now. */
export type CallerIdStatus = { verified: true; carrierCallerIdId: string } | { verified: false };

/**
 * Why the carrier refused a number operation. `regulatory_bundle_required` and
 * `address_required`: the country's regulator wants documents or an address the service has not
 * filed (a blocker for the service, not the customer); `no_stock`: the number is no longer for
 * sale; `not_found`: the carrier does not know the number or caller ID; `already_verified`: the
 * caller ID is verified on our account already; `carrier_error`: anything else (unreachable,
 * refused credentials, an answer we do not understand).
 */
export type CarrierNumberErrorReason = 'regulatory_bundle_required' | 'address_required' | 'no_stock' | 'not_found' | 'already_verified' | 'carrier_error';

export class CarrierNumberError extends Error {
  constructor(
    readonly reason: CarrierNumberErrorReason,
    message: string,
    /** The carrier's own error code (Twilio's `code`, e.g. 21649), when it gave one. */
    readonly carrierCode?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CarrierNumberError';
  }
}

/** The number half of the carrier port. Every refusal is a `CarrierNumberError`. */
export interface NumberCarrier {
  /** Numbers for sale in a country; an empty list when the carrier has none (or sells none there). */
  searchNumbers(search: NumberSearch): Promise<AvailableNumber[]>;
  buyNumber(request: BuyNumberRequest): Promise<BoughtNumber>;
  /** Gives the number back to the carrier: permanent. */
  releaseNumber(carrierNumberId: string): Promise<void>;
  /** The carrier calls `e164` and asks for the code; the outcome arrives at `statusCallbackUrl`. */
  startCallerIdValidation(request: CallerIdValidationRequest): Promise<CallerIdValidationStarted>;
  /** Asks the carrier now, for a verification whose report was lost. */
  callerIdStatus(e164: string): Promise<CallerIdStatus>;
  /** Removes a verified caller ID from our account: permanent. */
  removeCallerId(carrierCallerIdId: string): Promise<void>;
}
