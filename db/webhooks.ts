import { prepared, type Queryable } from './pool.ts';
import type { EventRow } from './events.ts';
import type { Mode } from '../runtime/types.ts';

export interface EndpointRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  url: string;
  description: string | null;
  event_types: string[];
  enabled: boolean;
  secret_ciphertext: Buffer;
  previous_secret_ciphertext: Buffer | null;
  previous_secret_expires_at: Date | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  seq: number;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  status: 'pending' | 'sending' | 'succeeded' | 'failed' | 'dead';
  attempts: number;
  next_attempt_at: Date;
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  id: string;
  delivery_id: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

/** A claimed delivery with its event and endpoint (one statement claims all three). */
export type ClaimedDelivery = DeliveryRow & {
  event: EventRow;
  endpoint: EndpointRow;
  /** Set when the delivery was taken from a sender whose claim lapsed (it died mid-attempt): that claim's start and end. */
  taken_over: { claimed_at: Date; locked_until: Date } | null;
};

/** to_jsonb renders bytea as "\\x…" hex. */
function hexBytes(text: string): Buffer {
  return Buffer.from(text.replace(/^\\x/, ''), 'hex');
}

const FINISH_ATTEMPT = prepared(
  'finish_webhook_attempt',
  `WITH attempt AS (
     INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, duration_ms, error, response_excerpt) VALUES ($1, $2, $3, $4, $5, $6, $10)
   )
   UPDATE webhook_deliveries SET status = $7, attempts = $2, next_attempt_at = $8, last_status_code = $4, last_error = $6,
          locked_until = NULL, updated_at = $9
    WHERE id = $1 AND status = 'sending'`,
);

export function createWebhookRepository(db: Queryable) {
  return {
    async insertEndpoint(e: { accountId: string; mode: Mode; url: string; description: string | null; eventTypes: string[]; secret: Buffer; now: Date }) {
      const { rows } = await db.query(
        `INSERT INTO webhook_endpoints (account_id, mode, url, description, event_types, secret_ciphertext, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING *`,
        [e.accountId, e.mode, e.url, e.description, e.eventTypes, e.secret, e.now],
      );
      return rows[0] as EndpointRow;
    },

    async getEndpoint(accountId: string, id: string): Promise<EndpointRow | null> {
      if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
      const { rows } = await db.query(`SELECT * FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`, [id, accountId]);
      return rows[0] ?? null;
    },

    async listEndpoints(accountId: string): Promise<EndpointRow[]> {
      const { rows } = await db.query(`SELECT * FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL ORDER BY seq DESC`, [accountId]);
      return rows;
    },

    async updateEndpoint(id: string, fields: Partial<EndpointRow>): Promise<EndpointRow> {
      const entries = Object.entries(fields);
      const sets = entries.map(([k], i) => `${k} = $${i + 2}`).join(', ');
      const { rows } = await db.query(`UPDATE webhook_endpoints SET ${sets} WHERE id = $1 RETURNING *`, [id, ...entries.map(([, v]) => v)]);
      return rows[0];
    },

    /**
     * Claims due deliveries for one sender: pending or failed ones whose time has come, and ones
     * a dead sender left `sending` past their lock. SKIP LOCKED keeps senders off each other's rows.
     */
    async claimDue(now: Date, lockUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
      const { rows } = await db.query(
        `WITH due AS (
           SELECT id, status AS was_status, locked_until AS was_locked_until, updated_at AS was_updated_at FROM webhook_deliveries
            WHERE (status IN ('pending', 'failed') AND next_attempt_at <= $1) OR (status = 'sending' AND locked_until <= $1)
            ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED),
         claimed AS (
           UPDATE webhook_deliveries d SET status = 'sending', locked_until = $2, updated_at = $1
             FROM due WHERE d.id = due.id
            RETURNING d.*, due.was_status, due.was_locked_until, due.was_updated_at)
         SELECT c.*, to_jsonb(e) AS event, to_jsonb(w) AS endpoint
           FROM claimed c JOIN events e ON e.id = c.event_id JOIN webhook_endpoints w ON w.id = c.endpoint_id`,
        [now, lockUntil, limit],
      );
      return rows.map(({ was_status, was_locked_until, was_updated_at, ...r }) => ({
        ...r,
        // Only a claim leaves a delivery `sending` (its update sets updated_at): found so, its sender stopped.
        taken_over: was_status === 'sending' ? { claimed_at: was_updated_at, locked_until: was_locked_until } : null,
        event: { ...r.event, created_at: new Date(r.event.created_at) },
        endpoint: {
          ...r.endpoint,
          secret_ciphertext: hexBytes(r.endpoint.secret_ciphertext),
          previous_secret_ciphertext: r.endpoint.previous_secret_ciphertext ? hexBytes(r.endpoint.previous_secret_ciphertext) : null,
          previous_secret_expires_at: r.endpoint.previous_secret_expires_at ? new Date(r.endpoint.previous_secret_expires_at) : null,
        },
      }));
    },

    /** Records an attempt and its result in one statement, only if this sender still holds the delivery. */
    async finishAttempt(
      d: { id: string; attempt: number; attemptedAt: Date; durationMs: number },
      f: { status: DeliveryRow['status']; nextAttemptAt: Date; statusCode: number | null; error: string | null; now: Date; responseExcerpt?: string | null },
    ): Promise<void> {
      await db.query(FINISH_ATTEMPT([d.id, d.attempt, d.attemptedAt, f.statusCode, d.durationMs, f.error, f.status, f.nextAttemptAt, f.now, f.responseExcerpt ?? null]));
    },

    /** An endpoint's deliveries, newest first, each with every attempt; `beforeSeq` pages on. */
    async listDeliveries(endpointId: string, limit: number, beforeSeq: number | null = null) {
      const { rows } = await db.query(
        `SELECT d.*, e.type AS event_type,
                COALESCE((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.seq) FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS attempt_log
           FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE d.endpoint_id = $1 AND ($3::bigint IS NULL OR d.seq < $3) ORDER BY d.seq DESC LIMIT $2`,
        [endpointId, limit, beforeSeq],
      );
      return rows as (DeliveryRow & { event_type: string; attempt_log: AttemptRow[] })[];
    },

    /** Queues a failed or dead delivery for a fresh series of attempts. */
    async resend(endpointId: string, deliveryId: string, now: Date): Promise<DeliveryRow | null> {
      if (!/^[0-9a-f-]{36}$/i.test(deliveryId)) return null;
      const { rows } = await db.query(
        `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $3, locked_until = NULL, updated_at = $3
          WHERE id = $2 AND endpoint_id = $1 AND status IN ('failed', 'dead', 'succeeded') RETURNING *`,
        [endpointId, deliveryId, now],
      );
      return rows[0] ?? null;
    },

    async getDelivery(endpointId: string, deliveryId: string): Promise<DeliveryRow | null> {
      if (!/^[0-9a-f-]{36}$/i.test(deliveryId)) return null;
      const { rows } = await db.query(`SELECT * FROM webhook_deliveries WHERE id = $2 AND endpoint_id = $1`, [endpointId, deliveryId]);
      return rows[0] ?? null;
    },
  };
}
