import type { Queryable } from './pool.ts';
import type { CallRow } from './calls.ts';

/**
 * The compliance record of a call (table call_compliance_records, migration 015): the consent
 * and the rule it was admitted on, then the opening as played, the opt-out and when recording started (migration 039). Written once each, never
 * changed: a second write of either half is ignored (a call re-admitted after a crash keeps its
 * first record).
 */
export interface AdmissionRecord {
  callId: string;
  consent: Pick<CallRow, 'consent_type' | 'consent_obtained_at' | 'consent_source' | 'consent_evidence_ref' | 'consent_expires_at'>;
  lineType: string;
  requiredConsent: 'requested_call' | 'prior_express_written' | 'prior_express' | 'none';
  rules: string[];
  citations: string[];
  admittedAt: Date;
  /** Until when it must be kept (actors/scheduler/record-retention.ts); null where no law sets a term. */
  keepUntil: Date | null;
  /**
   * What the other gates read at the dial (actors/scheduler/admission-checks.ts); the statement adds
   * `dnc_registries`, the load of each do-not-call registry of `country` (migration 030).
   */
  checks: Record<string, unknown>;
  /** The called number's country: whose do-not-call registries were checked. */
  country: string;
}

/** One do-not-call registry of the called number's country as it stood at the dial. */
export interface RegistryAtDial {
  registry: string;
  source: string;
  numbers: number;
  imported_at: string;
}

/** A call's compliance record with the request it came from, as an operator produces it (migration 019's keep_until). */
export interface ProducedRecordRow {
  call_id: string;
  account_id: string;
  customer_id: string;
  mode: string;
  to_e164: string;
  to_country: string;
  external_ref: string | null;
  requested_at: Date;
  request_consent_type: string;
  request_consent_obtained_at: Date | null;
  request_consent_source: string | null;
  request_consent_evidence_ref: string | null;
  request_consent_expires_at: Date | null;
  /** Null when the request was never dialled (no record was written). */
  admitted_at: Date | null;
  consent_type: string | null;
  consent_obtained_at: Date | null;
  consent_source: string | null;
  consent_evidence_ref: string | null;
  consent_expires_at: Date | null;
  line_type: string | null;
  required_consent: string | null;
  rules: string[] | null;
  citations: string[] | null;
  identification: string | null;
  opt_out_offered: boolean | null;
  identified_at: Date | null;
  keep_until: Date | null;
  /** The opening as played (migration 039): its segments (kind, text, played to its end) and the rules that shaped it. */
  opening?: { segments: { kind: string; text: string; played: boolean }[]; rules: string[] } | null;
  opening_audio_sha256?: string | null;
  opening_language?: string | null;
  opening_started_at?: Date | null;
  opted_out_via?: 'dtmf' | 'tool' | null;
  opted_out_at?: Date | null;
  recording_started_at?: Date | null;
  /** What the other gates read at the dial (migration 030); null for calls dialled before it. */
  checks: (Record<string, unknown> & { dnc_registries?: RegistryAtDial[] }) | null;
}

/** The opening of a call as the callee heard it (migration 039). */
export interface PlayedOpening {
  segments: { kind: string; text: string; played: boolean }[];
  rules: string[];
  text: string;
  audioSha256: string;
  language: string;
  startedAt: Date;
}

export function createComplianceRecordRepository(db: Queryable) {
  return {
    async recordAdmission(r: AdmissionRecord): Promise<void> {
      const c = r.consent;
      await db.query(
        `INSERT INTO call_compliance_records (call_id, consent_type, consent_obtained_at, consent_source, consent_evidence_ref, consent_expires_at,
                                              line_type, required_consent, rules, citations, admitted_at, keep_until, checks)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                 $13::jsonb || jsonb_build_object('dnc_registries', (
                   SELECT coalesce(jsonb_agg(jsonb_build_object('registry', registry, 'source', source, 'numbers', numbers, 'imported_at', imported_at) ORDER BY registry), '[]')
                     FROM dnc_registry_imports WHERE country = $14)))
         ON CONFLICT (call_id) DO NOTHING`,
        [
          r.callId, c.consent_type, c.consent_obtained_at, c.consent_source, c.consent_evidence_ref, c.consent_expires_at, r.lineType, r.requiredConsent, r.rules, r.citations, r.admittedAt, r.keepUntil,
          JSON.stringify(r.checks), r.country,
        ],
      );
    },

    /**
     * `recordAdmission` for many calls in one statement (a dialler round's dials): each row is
     * what `recordAdmission` writes for it alone, `dnc_registries` of its own country included.
     */
    async recordAdmissions(records: readonly AdmissionRecord[]): Promise<void> {
      if (records.length === 0) return;
      const rows = records.map((r) => ({
        call_id: r.callId,
        consent_type: r.consent.consent_type,
        consent_obtained_at: r.consent.consent_obtained_at,
        consent_source: r.consent.consent_source,
        consent_evidence_ref: r.consent.consent_evidence_ref,
        consent_expires_at: r.consent.consent_expires_at,
        line_type: r.lineType,
        required_consent: r.requiredConsent,
        rules: r.rules,
        citations: r.citations,
        admitted_at: r.admittedAt,
        keep_until: r.keepUntil,
        checks: r.checks,
        country: r.country,
      }));
      await db.query(
        `INSERT INTO call_compliance_records (call_id, consent_type, consent_obtained_at, consent_source, consent_evidence_ref, consent_expires_at,
                                              line_type, required_consent, rules, citations, admitted_at, keep_until, checks)
         SELECT r.call_id, r.consent_type, r.consent_obtained_at, r.consent_source, r.consent_evidence_ref, r.consent_expires_at, r.line_type, r.required_consent,
                ARRAY(SELECT e FROM jsonb_array_elements_text(r.rules) WITH ORDINALITY AS t(e, i) ORDER BY i),
                ARRAY(SELECT e FROM jsonb_array_elements_text(r.citations) WITH ORDINALITY AS t(e, i) ORDER BY i),
                r.admitted_at, r.keep_until,
                r.checks || jsonb_build_object('dnc_registries', (
                  SELECT coalesce(jsonb_agg(jsonb_build_object('registry', registry, 'source', source, 'numbers', numbers, 'imported_at', imported_at) ORDER BY registry), '[]')
                    FROM dnc_registry_imports WHERE country = r.country))
           FROM jsonb_to_recordset($1::jsonb) AS r(call_id uuid, consent_type text, consent_obtained_at timestamptz, consent_source text,
                consent_evidence_ref text, consent_expires_at timestamptz, line_type text, required_consent text, rules jsonb, citations jsonb,
                admitted_at timestamptz, keep_until timestamptz, checks jsonb, country text)
         ON CONFLICT (call_id) DO NOTHING`,
        [JSON.stringify(rows)],
      );
    },

    /**
     * The opening as it was played (issue 23 §1), once: its segments with whether each played to
     * its end, its audio's sha256, language and start. The older fields stay filled: the
     * identification is the opening's text, the opt-out offered is its opt-out segment played.
     */
    async recordOpening(callId: string, o: PlayedOpening): Promise<void> {
      const optOutPlayed = o.segments.some((s) => s.kind === 'opt_out' && s.played);
      await db.query(
        `UPDATE call_compliance_records
            SET opening = $2, opening_audio_sha256 = $3, opening_language = $4, opening_started_at = $5,
                identification = $6, opt_out_offered = $7, identified_at = $5
          WHERE call_id = $1 AND opening IS NULL`,
        [callId, JSON.stringify({ segments: o.segments, rules: o.rules }), o.audioSha256, o.language, o.startedAt, o.text, optOutPlayed],
      );
    },

    /** The callee opted out (a 9 pressed, or the agent's do-not-call tool), once. */
    /**
     * The call was admitted but not dialled after all (the number listed do-not-call meanwhile, or
     * an opening that cannot be said lawfully): the gates say so beside what the admission read.
     */
    async recordNotDialled(callId: string, r: { at: Date; outcome: string; check: string; result: string }): Promise<void> {
      await db.query(
        `UPDATE call_compliance_records
            SET checks = coalesce(checks, '{}'::jsonb) || jsonb_build_object('before_dial', jsonb_build_object('checked_at', $2::timestamptz, $4::text, $5::text, 'dialled', false, 'outcome', $3::text))
          WHERE call_id = $1`,
        [callId, r.at, r.outcome, r.check, r.result],
      );
    },

    async recordOptOut(callId: string, via: 'dtmf' | 'tool', at: Date): Promise<void> {
      await db.query(`UPDATE call_compliance_records SET opted_out_via = $2, opted_out_at = $3 WHERE call_id = $1 AND opted_out_at IS NULL`, [callId, via, at]);
    },

    /** The carrier started recording (after the recording notice was played), once. */
    async recordRecordingStarted(callId: string, at: Date): Promise<void> {
      await db.query(`UPDATE call_compliance_records SET recording_started_at = $2 WHERE call_id = $1 AND recording_started_at IS NULL`, [callId, at]);
    },

    /** The record of call `callId` with its request (null when there is no such call). */
    async produce(callId: string): Promise<ProducedRecordRow | null> {
      const { rows } = await db.query(
        `SELECT c.id AS call_id, c.account_id, c.customer_id, c.mode, c.to_e164, c.to_country, c.external_ref, c.created_at AS requested_at,
                c.consent_type AS request_consent_type, c.consent_obtained_at AS request_consent_obtained_at,
                c.consent_source AS request_consent_source, c.consent_evidence_ref AS request_consent_evidence_ref,
                c.consent_expires_at AS request_consent_expires_at,
                r.admitted_at, r.consent_type, r.consent_obtained_at, r.consent_source, r.consent_evidence_ref, r.consent_expires_at,
                r.line_type, r.required_consent, r.rules, r.citations, r.identification, r.opt_out_offered, r.identified_at, r.keep_until, r.checks,
                r.opening, r.opening_audio_sha256, r.opening_language, r.opening_started_at, r.opted_out_via, r.opted_out_at, r.recording_started_at
           FROM calls c LEFT JOIN call_compliance_records r ON r.call_id = c.id
          WHERE c.id = $1`,
        [callId],
      );
      return rows[0] ?? null;
    },

    async get(callId: string) {
      const { rows } = await db.query(`SELECT * FROM call_compliance_records WHERE call_id = $1`, [callId]);
      return rows[0] ?? null;
    },
  };
}
