import type { Queryable } from './pool.ts';
import type { CallRow } from './calls.ts';

/**
 * The compliance record of a call (table call_compliance_records, migration 015): the consent
 * and the rule it was admitted on, then the agent's identification. Written once each, never
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
  /** What the other gates read at the dial (migration 030); null for calls dialled before it. */
  checks: (Record<string, unknown> & { dnc_registries?: RegistryAtDial[] }) | null;
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

    async recordIdentification(callId: string, identification: string, optOutOffered: boolean, at: Date): Promise<void> {
      await db.query(
        `UPDATE call_compliance_records SET identification = $2, opt_out_offered = $3, identified_at = $4 WHERE call_id = $1 AND identified_at IS NULL`,
        [callId, identification, optOutOffered, at],
      );
    },

    /** The record of call `callId` with its request (null when there is no such call). */
    async produce(callId: string): Promise<ProducedRecordRow | null> {
      const { rows } = await db.query(
        `SELECT c.id AS call_id, c.account_id, c.customer_id, c.mode, c.to_e164, c.to_country, c.external_ref, c.created_at AS requested_at,
                c.consent_type AS request_consent_type, c.consent_obtained_at AS request_consent_obtained_at,
                c.consent_source AS request_consent_source, c.consent_evidence_ref AS request_consent_evidence_ref,
                c.consent_expires_at AS request_consent_expires_at,
                r.admitted_at, r.consent_type, r.consent_obtained_at, r.consent_source, r.consent_evidence_ref, r.consent_expires_at,
                r.line_type, r.required_consent, r.rules, r.citations, r.identification, r.opt_out_offered, r.identified_at, r.keep_until, r.checks
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
