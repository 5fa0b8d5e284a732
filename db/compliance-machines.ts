import type { Queryable } from './pool.ts';

/**
 * What a call's compliance record keeps of a machine (migration 040): the answering-machine
 * verdict and when it came, and the message left after the beep. Each written once.
 */
export function createMachineRecordRepository(db: Queryable) {
  return {
    async recordVerdict(callId: string, verdict: string, at: Date): Promise<void> {
      await db.query(`UPDATE call_compliance_records SET amd_verdict = $2, amd_at = $3 WHERE call_id = $1 AND amd_at IS NULL`, [callId, verdict, at]);
    },

    async recordVoicemailLeft(callId: string, text: string): Promise<void> {
      await db.query(`UPDATE call_compliance_records SET voicemail_left = $2 WHERE call_id = $1 AND voicemail_left IS NULL`, [callId, text]);
    },

    /** Whether the carrier was asked to record the call (recording starts after the opening's notice). */
    async recordingStarted(callId: string): Promise<boolean> {
      const { rows } = await db.query(`SELECT recording_started_at FROM call_compliance_records WHERE call_id = $1`, [callId]);
      return rows[0]?.recording_started_at != null;
    },

    async get(callId: string): Promise<{ amd_verdict: string | null; amd_at: Date | null; voicemail_left: string | null } | null> {
      const { rows } = await db.query(`SELECT amd_verdict, amd_at, voicemail_left FROM call_compliance_records WHERE call_id = $1`, [callId]);
      return rows[0] ?? null;
    },
  };
}
