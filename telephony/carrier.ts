/**
 * The carrier: places outbound calls whose audio comes back over a Twilio Media Streams
 * WebSocket to our media server, and reports call progress. Adapters: `twilio/` (the twilio
 * SDK) and `simulated/` (in-process, for test mode and machines without carrier credentials).
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

export interface Carrier {
  readonly name: 'twilio' | 'simulated';
  dial(request: DialRequest): Promise<DialResult>;
  hangup(carrierCallId: string): Promise<void>;
  /**
   * What the carrier knows of a call now, as a status report (final once the call ended), or null
   * if it does not know the call. Throws when the carrier cannot be asked. Used to recover a call
   * whose reports were lost or whose process died.
   */
  fetchStatus(callId: string, carrierCallId: string): Promise<CarrierStatusReport | null>;
  /** The recording's audio (WAV), fetched with the carrier's credentials. */
  fetchRecording(recordingUrl: string): Promise<{ contentType: string; body: Buffer }>;
  /**
   * The line type of `e164` (E.164). Throws when the carrier cannot be asked; a number the
   * carrier knows nothing of is `unknown`. Callers cache the answer (db/line-types.ts).
   */
  lookupLineType(e164: string): Promise<LineType>;
}
