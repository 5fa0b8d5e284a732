import type { CallRow } from '../../db/calls.ts';
import type { AppointmentRow } from '../../db/appointments.ts';
import type { CarrierReportRow } from '../../db/carrier-reports.ts';
import { iso } from '../../runtime/types.ts';

const FINISHED = new Set(['completed', 'cancelled', 'expired', 'blocked']);

/** Read `finished`, not `status` (spec): anything not known to be final is not finished. */
export const isFinished = (status: string) => FINISHED.has(status);

/**
 * The consent carried with a request: on the call_request object only (the POST answer and
 * `GET /v1/calls?view=requests`), never on the call object, so never in an event (docs/api.md).
 */
export function consentView(c: CallRow) {
  return {
    type: c.consent_type,
    obtained_at: iso(c.consent_obtained_at),
    source: c.consent_source,
    evidence_ref: c.consent_evidence_ref,
    expires_at: iso(c.consent_expires_at),
  };
}

/** One call of a request, as the request lists it. */
export function requestCallView(c: CallRow) {
  return {
    id: c.id,
    attempt: c.attempt,
    status: c.status,
    finished: isFinished(c.status),
    outcome: c.outcome,
    dialed_at: iso(c.dialed_at),
    ended_at: iso(c.ended_at),
  };
}

/**
 * The request as POST /v1/calls answers it, from its attempts (first to last; at least one). Its
 * id and what the reseller sent are its first attempt's; where it stands (status, outcome, what
 * it waits on) is its latest attempt's: an attempt is queued in the same transaction as the one
 * before it ends, so the latest attempt finished means the request did.
 */
export function callRequestView(attempts: readonly CallRow[]) {
  const first = attempts[0];
  const c = attempts[attempts.length - 1];
  return {
    object: 'call_request' as const,
    id: first.id,
    customer_id: first.customer_id,
    phone: first.to_e164,
    business_name: first.business_name,
    external_ref: first.external_ref,
    status: c.status,
    finished: isFinished(c.status),
    // How the request's latest call ended: null while it is not finished.
    outcome: c.outcome,
    waiting_reason: c.status === 'queued' ? c.waiting_reason : null,
    waiting_detail: c.status === 'queued' ? c.waiting_detail : null,
    next_attempt_at: c.status === 'queued' ? iso(c.next_attempt_at) : null,
    dial_before: iso(first.dial_before),
    consent: consentView(first),
    attempts: attempts.length,
    calls: attempts.map(requestCallView),
    mode: first.mode,
    created_at: iso(first.created_at),
  };
}

/** The call with its outcome (GET /v1/calls/{id}, the call.completed event); no consent (consentView). */
export function callView(c: CallRow, publicUrl: string) {
  const finished = isFinished(c.status);
  return {
    object: 'call' as const,
    id: c.id,
    request_id: c.request_id,
    attempt: c.attempt,
    customer_id: c.customer_id,
    external_ref: c.external_ref,
    phone: c.to_e164,
    // Migration 043: an inbound call's phone is the caller's number (actors/call/inbound.ts).
    direction: c.direction,
    business_name: c.business_name,
    status: c.status,
    finished,
    outcome: c.outcome,
    duration_seconds: c.duration_seconds ?? 0,
    appointment_id: c.appointment_id,
    summary: c.summary,
    recording_url: c.recording_url ? `${publicUrl}/v1/calls/${c.id}/recording` : null,
    transcript_url: finished && c.transcript.length > 0 ? `${publicUrl}/v1/calls/${c.id}/transcript` : null,
    waiting_reason: c.status === 'queued' ? c.waiting_reason : null,
    waiting_detail: c.status === 'queued' ? c.waiting_detail : null,
    next_attempt_at: c.status === 'queued' ? iso(c.next_attempt_at) : null,
    dial_before: iso(c.dial_before),
    dialed_at: iso(c.dialed_at),
    answered_at: iso(c.answered_at),
    ended_at: iso(c.ended_at),
    // Whether the request tries again after this call, and from when (retries.ts); false once the planned attempt was withdrawn.
    will_retry: c.retry_at !== null,
    retry_at: iso(c.retry_at),
    mode: c.mode,
    created_at: iso(c.created_at),
  };
}

export function appointmentView(a: AppointmentRow) {
  return {
    object: 'appointment' as const,
    id: a.id,
    call_id: a.call_id,
    customer_id: a.customer_id,
    start_at: iso(a.start_at),
    end_at: iso(a.end_at),
    timezone: a.timezone,
    status: a.status,
    attendee_name: a.attendee_name,
    notes: a.notes,
    on_calendar: a.calendar_event_id !== null,
    mode: a.mode,
    created_at: iso(a.created_at),
    updated_at: iso(a.updated_at ?? a.created_at),
    cancelled_at: iso(a.cancelled_at),
  };
}

/** A carrier report of the inbox as the operator's console lists it. */
export function carrierReportView(r: CarrierReportRow) {
  return {
    object: 'carrier_report' as const,
    id: r.id,
    call_id: r.call_id,
    kind: r.kind,
    source: r.source,
    report: r.report,
    received_at: iso(r.received_at),
    processed_at: iso(r.processed_at),
    attempts: r.attempts,
    next_attempt_at: iso(r.next_attempt_at),
    last_error: r.last_error,
  };
}
