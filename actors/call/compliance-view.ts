/**
 * A call's compliance record in full (issue 23 §6), for the operator (`/admin/v1/calls/{id}/
 * compliance_record`) and the reseller's console: the record the API produces (the proof of
 * consent, UWG § 7a: `compliance-record.ts`, whose fields the API keeps exactly) plus `conduct`,
 * how the call itself went: the gates' readings at the dial, the answering-machine verdict, the
 * opening as played, the opt-out, the callee's objection to the recording, and any column a later
 * migration adds to the record. `conduct` is decision-making the spec keeps out of the API.
 */
import type { Queryable } from '../../db/pool.ts';
import type { Mode } from '../../runtime/types.ts';
import { isUuid } from '../../db/customers.ts';
import { createCallRepository } from '../../db/calls.ts';
import { createComplianceConductRepository, type ConductRow } from '../../db/compliance-conduct.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { iso } from '../../runtime/types.ts';
import { produceComplianceRecord } from './compliance-record.ts';
import { openingAsPlayed } from './opening.ts';

/** Columns of the record shown elsewhere in the view (the /v1 fields, `checks` as `gates`, the objection). */
const SHOWN = new Set([
  'call_id', 'consent_type', 'consent_obtained_at', 'consent_source', 'consent_evidence_ref', 'consent_expires_at', 'line_type', 'required_consent', 'rules', 'citations',
  'admitted_at', 'keep_until', 'checks', 'identification', 'opt_out_offered', 'identified_at', 'recording_objected_at', 'recording_objection_action', 'recording_stopped',
  'opening', 'opening_audio_sha256', 'opening_language', 'opening_started_at', 'opted_out_at', 'opted_out_via', 'recording_started_at', 'amd_verdict',
]);

/** A timestamp of the record's JSON (PostgreSQL's text) as the API writes dates. */
const isoText = (v: unknown): string | null => (typeof v === 'string' ? new Date(v).toISOString() : null);

/** What the call played and did, as the produced record has it (compliance-record.ts): shown under `conduct`, never in the API. */
type Played = Pick<Awaited<ReturnType<typeof produceComplianceRecord>>, 'opening' | 'opt_out' | 'recording_started_at'>;

/** Pure: the `conduct` part of a call's full record. */
export function conductView(c: ConductRow, played: Played = { opening: null, opt_out: null, recording_started_at: null }) {
  const r = c.record ?? {};
  const more: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(r)) if (!SHOWN.has(key) && value !== null) more[key] = value;
  return {
    gates: (r.checks as Record<string, unknown> | null | undefined) ?? null,
    // The call row takes the verdict only while the call runs; one reported after its end is on the record.
    answered_by: c.answered_by ?? (r.amd_verdict as string | null | undefined) ?? null,
    opening: {
      identification: openingAsPlayed(r.opening, (r.identification as string | null | undefined) ?? null),
      opt_out_offered: (r.opt_out_offered as boolean | null | undefined) ?? null,
      played_at: isoText(r.identified_at),
      // Each segment as played (its text, whether it played to its end), the rules that shaped it, its audio's hash.
      played: played.opening,
    },
    opt_out: { during_call: c.opted_out_at !== null, at: iso(c.opted_out_at), reason: c.opt_out_reason, via: played.opt_out?.via ?? null },
    recording_started_at: played.recording_started_at,
    recording_objection: {
      objected: r.recording_objected_at != null,
      at: isoText(r.recording_objected_at),
      action: (r.recording_objection_action as string | null | undefined) ?? null,
      carrier_stopped: (r.recording_stopped as boolean | null | undefined) ?? null,
    },
    end_reason: c.end_reason,
    analysis: c.analysis_source ? { callback_at: iso(c.callback_at), objection: c.objection, source: c.analysis_source } : null,
    more,
  };
}

/** The full record of call `callId`: `call_not_found`, `compliance_record_not_found` as the API's. */
export async function fullComplianceRecord(db: Queryable, callId: string) {
  const { opening, opt_out, recording_started_at, ...proof } = await produceComplianceRecord(db, callId);
  const conduct = await createComplianceConductRepository(db).read(callId);
  if (!conduct) throw new Refusal('call_not_found');
  return { ...proof, conduct: conductView(conduct, { opening, opt_out, recording_started_at }) };
}

/** The full record of an account's call in `mode` (the console): another account's or mode's is `call_not_found`. */
export async function fullComplianceRecordOf(db: Queryable, accountId: string, mode: Mode, callId: string) {
  const own = isUuid(callId) ? await createCallRepository(db).findForAccount(accountId, mode, callId) : null;
  if (!own) throw new Refusal('call_not_found');
  return fullComplianceRecord(db, own.id);
}

export type FullComplianceRecord = Awaited<ReturnType<typeof fullComplianceRecord>>;
