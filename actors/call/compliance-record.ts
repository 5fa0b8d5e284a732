import type { Queryable } from '../../db/pool.ts';
import { createComplianceRecordRepository, type ProducedRecordRow } from '../../db/compliance-records.ts';
import { isUuid } from '../../db/customers.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { iso } from '../../runtime/types.ts';

/**
 * A call's compliance record as it is produced on request (UWG § 7a(2) sentence 2: the proof of
 * consent is shown to the authority without delay): what was stored and when, from which request.
 * `call_not_found` for no such call; a request never dialled has no record (`compliance_record_not_found`).
 */
export async function produceComplianceRecord(db: Queryable, callId: string) {
  const row = isUuid(callId) ? await createComplianceRecordRepository(db).produce(callId) : null;
  if (!row) throw new Refusal('call_not_found');
  if (!row.admitted_at) throw new Refusal('compliance_record_not_found');
  return complianceRecordView(row);
}

function complianceRecordView(r: ProducedRecordRow) {
  return {
    object: 'compliance_record' as const,
    call_id: r.call_id,
    request: {
      id: r.call_id,
      account_id: r.account_id,
      customer_id: r.customer_id,
      mode: r.mode,
      phone: r.to_e164,
      country: r.to_country,
      external_ref: r.external_ref,
      requested_at: iso(r.requested_at),
      consent: {
        type: r.request_consent_type,
        obtained_at: iso(r.request_consent_obtained_at),
        source: r.request_consent_source,
        evidence_ref: r.request_consent_evidence_ref,
        expires_at: iso(r.request_consent_expires_at),
      },
    },
    recorded_at: iso(r.admitted_at),
    consent: {
      type: r.consent_type,
      obtained_at: iso(r.consent_obtained_at),
      source: r.consent_source,
      evidence_ref: r.consent_evidence_ref,
      expires_at: iso(r.consent_expires_at),
    },
    line_type: r.line_type,
    required_consent: r.required_consent,
    rules: r.rules ?? [],
    citations: r.citations ?? [],
    identification: r.identification,
    opt_out_offered: r.opt_out_offered,
    identified_at: iso(r.identified_at),
    opening: r.opening
      ? { segments: r.opening.segments, rules: r.opening.rules, audio_sha256: r.opening_audio_sha256 ?? null, language: r.opening_language ?? null, started_at: iso(r.opening_started_at ?? null) }
      : null,
    opt_out: r.opted_out_at ? { via: r.opted_out_via ?? null, at: iso(r.opted_out_at) } : null,
    recording_started_at: iso(r.recording_started_at ?? null),
    keep_until: iso(r.keep_until),
  };
}

export type ComplianceRecordView = ReturnType<typeof complianceRecordView>;
