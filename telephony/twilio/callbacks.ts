/**
 * Twilio's callbacks to our HTTP routes: the signature check and the parsing of the form
 * fields into the carrier-neutral reports. No I/O.
 */
import twilio from 'twilio';
import { AMD_VERDICTS, type AmdReport, type AmdVerdict, type CallerIdValidationReport, type CarrierCallStatus, type CarrierStatusReport, type RecordingReport } from '../carrier.ts';

/** A form-encoded callback body as `@fastify/formbody` (querystring) parses it. */
export type TwilioForm = Record<string, string | string[] | undefined>;

/**
 * A callback whose fields cannot be turned into a report. `malformed`: answer 400, Twilio sent
 * something we do not understand. `not_completed`: a recording event with no audio to fetch
 * (`absent`, `failed`); acknowledge it and do nothing.
 */
export class CarrierCallbackError extends Error {
  constructor(
    message: string,
    readonly reason: 'malformed' | 'not_completed',
  ) {
    super(message);
    this.name = 'CarrierCallbackError';
  }
}

const STATUSES: ReadonlySet<string> = new Set<CarrierCallStatus>([
  'queued',
  'initiated',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'failed',
  'no-answer',
  'canceled',
]);

/**
 * True when `signatureHeader` (X-Twilio-Signature) is Twilio's HMAC of `fullUrl` (scheme, host,
 * path and query string exactly as Twilio requested it) and the form parameters.
 */
export function verifyTwilioSignature(authToken: string, fullUrl: string, formParams: TwilioForm, signatureHeader: string | string[] | undefined): boolean {
  if (typeof signatureHeader !== 'string' || signatureHeader === '') return false;
  const params: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(formParams)) if (value !== undefined) params[key] = value;
  try {
    return twilio.validateRequest(authToken, signatureHeader, fullUrl, params);
  } catch {
    return false; // a URL that does not parse cannot be the one Twilio signed
  }
}

/** A status callback (StatusCallback URL) as a report about our call `callId`. */
export function parseStatusCallback(callId: string, form: TwilioForm): CarrierStatusReport {
  const carrierCallId = required(form, 'CallSid');
  const status = required(form, 'CallStatus');
  if (!STATUSES.has(status)) throw new CarrierCallbackError(`unknown CallStatus ${JSON.stringify(status)}`, 'malformed');
  const report: CarrierStatusReport = { callId, carrierCallId, status: status as CarrierCallStatus };
  const durationSeconds = wholeNumber(form, 'CallDuration');
  if (durationSeconds !== undefined) report.durationSeconds = durationSeconds;
  const answeredBy = field(form, 'AnsweredBy');
  if (answeredBy) report.answeredBy = answeredBy;
  const sequence = wholeNumber(form, 'SequenceNumber');
  if (sequence !== undefined) report.sequence = sequence;
  return report;
}

/** A recording status callback (RecordingStatusCallback URL) for a finished recording. */
export function parseRecordingCallback(callId: string, form: TwilioForm): RecordingReport {
  const carrierCallId = required(form, 'CallSid');
  const recordingId = required(form, 'RecordingSid');
  const recordingStatus = field(form, 'RecordingStatus');
  if (recordingStatus !== undefined && recordingStatus !== 'completed') {
    throw new CarrierCallbackError(`recording ${recordingId} is ${recordingStatus}`, 'not_completed');
  }
  const recordingUrl = required(form, 'RecordingUrl');
  const durationSeconds = wholeNumber(form, 'RecordingDuration');
  if (durationSeconds === undefined) throw new CarrierCallbackError('RecordingDuration is missing', 'malformed');
  return { callId, carrierCallId, recordingId, recordingUrl, durationSeconds };
}

/**
 * The asynchronous answering-machine verdict (AsyncAmdStatusCallback): `CallSid`, `AnsweredBy`
 * (human, machine_start, machine_end_beep, machine_end_silence, machine_end_other, fax, unknown)
 * and `MachineDetectionDuration` (ms). Source: twilio.com/docs/voice/answering-machine-detection.
 */
export function parseAmdCallback(callId: string, form: TwilioForm): AmdReport {
  const carrierCallId = required(form, 'CallSid');
  const answeredBy = required(form, 'AnsweredBy');
  if (!(AMD_VERDICTS as readonly string[]).includes(answeredBy)) throw new CarrierCallbackError(`unknown AnsweredBy ${JSON.stringify(answeredBy)}`, 'malformed');
  const report: AmdReport = { callId, carrierCallId, answeredBy: answeredBy as AmdVerdict };
  const detectionMs = wholeNumber(form, 'MachineDetectionDuration');
  if (detectionMs !== undefined) report.detectionMs = detectionMs;
  return report;
}

/**
 * The status callback of a caller ID validation (OutgoingCallerIds' StatusCallback): `To` is the
 * number, `VerificationStatus` `success` (with `OutgoingCallerIdSid`, the new caller ID) or
 * `failed` (a wrong code, no answer, busy). Source: Twilio's announcement of these callbacks,
 * http://www.twilio.com/blog/2012/03/introducing-status-callback-for-caller-id-verification-calls.html
 */
export function parseCallerIdValidationCallback(form: TwilioForm): CallerIdValidationReport {
  const e164 = required(form, 'To');
  const verification = required(form, 'VerificationStatus');
  const carrierCallId = field(form, 'CallSid');
  if (verification === 'success') {
    const report: CallerIdValidationReport = { e164, status: 'verified', carrierCallerIdId: required(form, 'OutgoingCallerIdSid') };
    return carrierCallId ? { ...report, carrierCallId } : report;
  }
  if (verification === 'failed') return carrierCallId ? { e164, status: 'failed', carrierCallId } : { e164, status: 'failed' };
  throw new CarrierCallbackError(`unknown VerificationStatus ${JSON.stringify(verification)}`, 'malformed');
}

/** A field's value; a repeated field (never sent by Twilio for these) counts as its first value. */
function field(form: TwilioForm, name: string): string | undefined {
  const value = form[name];
  return Array.isArray(value) ? value[0] : value;
}

function required(form: TwilioForm, name: string): string {
  const value = field(form, name);
  if (!value) throw new CarrierCallbackError(`${name} is missing`, 'malformed');
  return value;
}

function wholeNumber(form: TwilioForm, name: string): number | undefined {
  const value = field(form, name);
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new CarrierCallbackError(`${name} is not a whole number: ${JSON.stringify(value)}`, 'malformed');
  return Number(value);
}
