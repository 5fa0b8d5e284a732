import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/** A request's research of the called business (migration 044); never returned by the API. */
export interface ProspectResearchRow {
  request_id: string;
  account_id: string;
  mode: Mode;
  customer_id: string;
  website_url: string;
  status: 'pending' | 'done' | 'failed';
  findings: Record<string, unknown> | null;
  notes: string | null;
  failure: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export function createProspectResearchRepository(db: Queryable) {
  return {
    /** The research a new request asks for; a request found again (idempotent insert) keeps its first. */
    async insert(r: { requestId: string; accountId: string; mode: Mode; customerId: string; websiteUrl: string; now: Date }): Promise<void> {
      await db.query(
        `INSERT INTO prospect_research (request_id, account_id, mode, customer_id, website_url, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (request_id) DO NOTHING`,
        [r.requestId, r.accountId, r.mode, r.customerId, r.websiteUrl, r.now],
      );
    },

    async get(requestId: string): Promise<ProspectResearchRow | null> {
      const { rows } = await db.query(`SELECT * FROM prospect_research WHERE request_id = $1`, [requestId]);
      return rows[0] ?? null;
    },

    /**
     * Takes up to `limit` pending researches of queued requests for this round: none started, or
     * started before `staleBefore` (a process that died mid-research). Marks them started.
     */
    async claim(now: Date, staleBefore: Date, limit: number): Promise<ProspectResearchRow[]> {
      const { rows } = await db.query(
        `UPDATE prospect_research SET started_at = $1
          WHERE request_id IN (SELECT r.request_id FROM prospect_research r JOIN calls c ON c.id = r.request_id
                                WHERE r.status = 'pending' AND c.status = 'queued' AND (r.started_at IS NULL OR r.started_at < $2)
                                ORDER BY r.created_at LIMIT $3 FOR UPDATE OF r SKIP LOCKED)
          RETURNING *`,
        [now, staleBefore, limit],
      );
      return rows;
    },

    /** The pending research locked, for the transaction that ends it; null when it already ended. */
    async lockPending(requestId: string): Promise<ProspectResearchRow | null> {
      const { rows } = await db.query(`SELECT * FROM prospect_research WHERE request_id = $1 AND status = 'pending' FOR UPDATE`, [requestId]);
      return rows[0] ?? null;
    },

    async finish(requestId: string, f: { status: 'done' | 'failed'; findings?: Record<string, unknown> | null; notes?: string | null; failure?: string | null; now: Date }): Promise<void> {
      await db.query(
        `UPDATE prospect_research SET status = $2, findings = $3, notes = $4, failure = $5, finished_at = $6 WHERE request_id = $1`,
        [requestId, f.status, f.findings ? JSON.stringify(f.findings) : null, f.notes ?? null, f.failure ?? null, f.now],
      );
    },

    /** A research still pending that was asked for before `before` counts as failed (the call goes ahead without it); true when it did now. */
    async failIfOlder(requestId: string, before: Date, now: Date): Promise<boolean> {
      const { rowCount } = await db.query(
        `UPDATE prospect_research SET status = 'failed', failure = 'not finished in time', finished_at = $3
          WHERE request_id = $1 AND status = 'pending' AND created_at < $2`,
        [requestId, before, now],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}
