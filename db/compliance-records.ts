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
}

export function createComplianceRecordRepository(db: Queryable) {
  return {
    async recordAdmission(r: AdmissionRecord): Promise<void> {
      const c = r.consent;
      await db.query(
        `INSERT INTO call_compliance_records (call_id, consent_type, consent_obtained_at, consent_source, consent_evidence_ref, consent_expires_at,
                                              line_type, required_consent, rules, citations, admitted_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (call_id) DO NOTHING`,
        [r.callId, c.consent_type, c.consent_obtained_at, c.consent_source, c.consent_evidence_ref, c.consent_expires_at, r.lineType, r.requiredConsent, r.rules, r.citations, r.admittedAt],
      );
    },

    async recordIdentification(callId: string, identification: string, optOutOffered: boolean, at: Date): Promise<void> {
      await db.query(
        `UPDATE call_compliance_records SET identification = $2, opt_out_offered = $3, identified_at = $4 WHERE call_id = $1 AND identified_at IS NULL`,
        [callId, identification, optOutOffered, at],
      );
    },

    async get(callId: string) {
      const { rows } = await db.query(`SELECT * FROM call_compliance_records WHERE call_id = $1`, [callId]);
      return rows[0] ?? null;
    },
  };
}
