import type { Queryable } from './pool.ts';

/** The callee's objection to the recording, on the call's compliance record (migration 044). */
export function createRecordingObjectionRepository(db: Queryable) {
  return {
    /** Writes the first objection of the call; false when one was already written (or the call has no record). */
    async record(callId: string, o: { action: 'continue_unrecorded' | 'end_call'; stopped: boolean; at: Date }): Promise<boolean> {
      const { rowCount } = await db.query(
        `UPDATE call_compliance_records SET recording_objected_at = $2, recording_objection_action = $3, recording_stopped = $4
          WHERE call_id = $1 AND recording_objected_at IS NULL`,
        [callId, o.at, o.action, o.stopped],
      );
      return (rowCount ?? 0) > 0;
    },

    /** Whether the callee objected to the recording of call `callId`. */
    async objected(callId: string): Promise<boolean> {
      const { rows } = await db.query(`SELECT recording_objected_at IS NOT NULL AS objected FROM call_compliance_records WHERE call_id = $1`, [callId]);
      return rows[0]?.objected === true;
    },
  };
}
