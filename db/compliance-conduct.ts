import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/**
 * How a call went, as its compliance record's fuller view shows it to the operator and the
 * reseller's console (never the API): the whole compliance row (every column, so what later
 * migrations add is shown too), the carrier's answering-machine verdict, why the call ended,
 * and the callee's opt-out made during the call.
 */
export interface ConductRow {
  call_id: string;
  account_id: string;
  mode: Mode;
  answered_by: string | null;
  end_reason: string | null;
  /** call_compliance_records as JSON; null before the dial. */
  record: Record<string, unknown> | null;
  opted_out_at: Date | null;
  opt_out_reason: string | null;
  /** What the transcript says (call_analyses); null when it was not read. */
  callback_at: Date | null;
  objection: string | null;
  analysis_source: string | null;
}

export function createComplianceConductRepository(db: Queryable) {
  return {
    async read(callId: string): Promise<ConductRow | null> {
      const { rows } = await db.query(
        `SELECT c.id AS call_id, c.account_id, c.mode, c.answered_by, c.end_reason, to_jsonb(r) AS record,
                d.created_at AS opted_out_at, d.reason AS opt_out_reason,
                a.callback_at, a.objection, a.source AS analysis_source
           FROM calls c
           LEFT JOIN call_analyses a ON a.call_id = c.id
           LEFT JOIN call_compliance_records r ON r.call_id = c.id
           LEFT JOIN dnc_numbers d ON d.account_id = c.account_id AND d.e164 = c.to_e164 AND d.call_id = c.id AND d.source = 'callee_request'
          WHERE c.id = $1`,
        [callId],
      );
      return rows[0] ?? null;
    },
  };
}
