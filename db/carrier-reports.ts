import type { Queryable } from './pool.ts';

/** A carrier report as stored in the inbox (see 009_carrier_inbox_and_leases.sql). */
export interface CarrierReportRow {
  id: string;
  seq: number;
  call_id: string;
  kind: 'status' | 'recording' | 'amd';
  dedupe_key: string;
  report: Record<string, unknown>;
  source: 'callback' | 'reconciled';
  received_at: Date;
  processed_at: Date | null;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
}

/** The inbox of carrier reports. Scheduling is on the database's clock (real time). */
export function createCarrierReportRepository(db: Queryable) {
  return {
    /**
     * Stores a report once (a repeat of the same report answers the stored row). Whoever stores it
     * makes the first attempt at once, so the row counts that attempt and is not due for the retry
     * loop until `leaseSeconds` later (or sooner, when that attempt records its failure).
     */
    async insert(r: { callId: string; kind: CarrierReportRow['kind']; dedupeKey: string; report: unknown; source: CarrierReportRow['source'] }, leaseSeconds: number): Promise<CarrierReportRow> {
      const { rows } = await db.query(
        `WITH ins AS (
           INSERT INTO carrier_reports (call_id, kind, dedupe_key, report, source, attempts, next_attempt_at)
           VALUES ($1, $2, $3, $4, $5, 1, now() + make_interval(secs => $6))
           ON CONFLICT (call_id, dedupe_key) DO NOTHING RETURNING *
         )
         SELECT * FROM ins UNION ALL SELECT * FROM carrier_reports WHERE call_id = $1 AND dedupe_key = $3 AND NOT EXISTS (SELECT 1 FROM ins)`,
        [r.callId, r.kind, r.dedupeKey, JSON.stringify(r.report), r.source, leaseSeconds],
      );
      return rows[0];
    },

    /**
     * A progress report (queued, initiated, ringing, in-progress) stored and acted on in one
     * statement: the row goes in already processed, and the call moves `dialing` → `ringing`, or to
     * `in_progress` with its answer, as the call actor's processing of the report would (the same
     * conditions: a progress report after the call's end, or out of order, changes nothing). False
     * when a row with its key is already stored (a repeat): nothing was changed, and the caller
     * treats it as the stored row says.
     */
    async recordProgress(r: { callId: string; dedupeKey: string; report: { status: string; answeredBy?: string | null }; source: CarrierReportRow['source'] }, now: Date): Promise<boolean> {
      const { rows } = await db.query(
        `WITH ins AS (
           INSERT INTO carrier_reports (call_id, kind, dedupe_key, report, source, attempts, next_attempt_at, processed_at)
           VALUES ($1, 'status', $2, $3, $4, 1, now(), now())
           ON CONFLICT (call_id, dedupe_key) DO NOTHING RETURNING id
         ), moved AS (
           UPDATE calls SET status = CASE WHEN $5 = 'ringing' THEN 'ringing' ELSE 'in_progress' END,
                  answered_at = CASE WHEN $5 = 'ringing' THEN answered_at ELSE $6 END,
                  answered_by = CASE WHEN $5 = 'ringing' THEN answered_by ELSE $7 END,
                  updated_at = $6
            WHERE id = $1 AND EXISTS (SELECT 1 FROM ins)
              AND (($5 = 'ringing' AND status = 'dialing')
                   OR ($5 = 'in-progress' AND status NOT IN ('in_progress', 'completed', 'cancelled', 'expired', 'blocked')))
           RETURNING id
         )
         SELECT EXISTS (SELECT 1 FROM ins) AS stored, EXISTS (SELECT 1 FROM moved) AS moved`,
        [r.callId, r.dedupeKey, JSON.stringify(r.report), r.source, r.report.status, now, r.report.answeredBy ?? null],
      );
      return rows[0].stored;
    },

    /**
     * `recordProgress` for many reports in one statement, in order (each report's key stored once;
     * each call moved as its report says). At most one report that moves a call per call: the
     * caller sends the others alone.
     */
    async recordProgressMany(
      reports: readonly { callId: string; dedupeKey: string; report: { status: string; answeredBy?: string | null }; source: CarrierReportRow['source'] }[],
      now: Date,
    ): Promise<boolean[]> {
      const moving = reports.filter((r) => r.report.status === 'ringing' || r.report.status === 'in-progress').map((r) => r.callId);
      if (new Set(moving).size !== moving.length) throw new Error('two progress reports of one call in a batch');
      const { rows } = await db.query(
        `WITH q AS (
           SELECT * FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (call_id uuid, dedupe_key text, report jsonb, source text)) WITH ORDINALITY AS q(call_id, dedupe_key, report, source, n)
         ), ins AS (
           INSERT INTO carrier_reports (call_id, kind, dedupe_key, report, source, attempts, next_attempt_at, processed_at)
           SELECT q.call_id, 'status', q.dedupe_key, q.report, q.source, 1, now(), now() FROM q ORDER BY q.n
           ON CONFLICT (call_id, dedupe_key) DO NOTHING RETURNING call_id, dedupe_key
         ), moved AS (
           UPDATE calls c SET status = CASE WHEN q.report->>'status' = 'ringing' THEN 'ringing' ELSE 'in_progress' END,
                  answered_at = CASE WHEN q.report->>'status' = 'ringing' THEN c.answered_at ELSE $2 END,
                  answered_by = CASE WHEN q.report->>'status' = 'ringing' THEN c.answered_by ELSE q.report->>'answeredBy' END,
                  updated_at = $2
             FROM q JOIN ins ON ins.call_id = q.call_id AND ins.dedupe_key = q.dedupe_key
            WHERE c.id = q.call_id AND q.report->>'status' IN ('ringing', 'in-progress')
              AND ((q.report->>'status' = 'ringing' AND c.status = 'dialing')
                   OR (q.report->>'status' = 'in-progress' AND c.status NOT IN ('in_progress', 'completed', 'cancelled', 'expired', 'blocked')))
           RETURNING c.id
         )
         SELECT q.n, EXISTS (SELECT 1 FROM ins WHERE ins.call_id = q.call_id AND ins.dedupe_key = q.dedupe_key) AS stored,
                (SELECT count(*) FROM moved) AS moved
           FROM q ORDER BY q.n`,
        [JSON.stringify(reports.map((r) => ({ call_id: r.callId, dedupe_key: r.dedupeKey, report: r.report, source: r.source }))), now],
      );
      return rows.map((r) => r.stored);
    },

    async get(id: string): Promise<CarrierReportRow | null> {
      const { rows } = await db.query(`SELECT * FROM carrier_reports WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },

    /** Locks an unprocessed report for the rest of the transaction; null if it was processed meanwhile. */
    async lockUnprocessed(id: string): Promise<CarrierReportRow | null> {
      const { rows } = await db.query(`SELECT * FROM carrier_reports WHERE id = $1 AND processed_at IS NULL FOR UPDATE`, [id]);
      return rows[0] ?? null;
    },

    async markProcessed(id: string): Promise<void> {
      await db.query(`UPDATE carrier_reports SET processed_at = now(), last_error = NULL WHERE id = $1`, [id]);
    },

    /**
     * Claims due unprocessed reports for one processing attempt: each is pushed `leaseSeconds`
     * ahead, so another process does not take it while this one works on it, and counted.
     */
    async claimDue(limit: number, leaseSeconds: number): Promise<CarrierReportRow[]> {
      const { rows } = await db.query(
        `UPDATE carrier_reports SET next_attempt_at = now() + make_interval(secs => $2), attempts = attempts + 1
          WHERE id IN (SELECT id FROM carrier_reports WHERE processed_at IS NULL AND next_attempt_at <= now()
                        ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [limit, leaseSeconds],
      );
      return rows.sort((a, b) => a.seq - b.seq);
    },

    /**
     * Claims the unprocessed machine verdicts of the running calls `owner` (a dialler process)
     * holds, due or not: only the process with a call's media stream can leave its voicemail
     * message, and a verdict whose callback reached another process waits for it (call-machine.ts).
     */
    async claimMachineVerdictsOf(owner: string, leaseSeconds: number): Promise<CarrierReportRow[]> {
      const { rows } = await db.query(
        `UPDATE carrier_reports SET next_attempt_at = now() + make_interval(secs => $2), attempts = attempts + 1
          WHERE id IN (SELECT r.id FROM carrier_reports r JOIN calls c ON c.id = r.call_id
                        WHERE r.kind = 'amd' AND r.processed_at IS NULL AND c.claimed_by = $1
                          AND c.status IN ('dialing', 'ringing', 'in_progress')
                        ORDER BY r.seq FOR UPDATE OF r SKIP LOCKED)
          RETURNING *`,
        [owner, leaseSeconds],
      );
      return rows.sort((a, b) => a.seq - b.seq);
    },

    /** Records a failed attempt: when to try again and why it failed. Returns the attempts so far. */
    async recordFailure(id: string, retryInSeconds: number, error: string): Promise<number> {
      const { rows } = await db.query(
        `UPDATE carrier_reports SET next_attempt_at = now() + make_interval(secs => $2), last_error = $3
          WHERE id = $1 AND processed_at IS NULL RETURNING attempts`,
        [id, retryInSeconds, error.slice(0, 2000)],
      );
      return rows[0]?.attempts ?? 0;
    },

    /** Reports not processed yet, oldest first (the operator's list). */
    async listPending(limit: number): Promise<CarrierReportRow[]> {
      const { rows } = await db.query(`SELECT * FROM carrier_reports WHERE processed_at IS NULL ORDER BY seq LIMIT $1`, [limit]);
      return rows;
    },
  };
}
