import { prepared, type Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/** One chat session (see 005_chat.sql). The token itself is never stored, only its hash. */
export interface ChatSessionRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  customer_id: string;
  prefix: string;
  end_user_ref: string;
  display_name: string | null;
  expires_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  messages_sent: number;
  message_limit: number;
  created_at: Date;
}

/** A session with what its next message is decided on: its customer, its account and brand, the balance. */
export interface ChatGateRow extends ChatSessionRow {
  customer_name: string;
  customer_brand_name: string | null;
  customer_status: string;
  account_status: string;
  account_name: string;
  brand_display_name: string | null;
  logo_url: string | null;
  primary_color: string | null;
  accent_color: string | null;
  support_email: string | null;
  email_from_name: string | null;
  domain: string | null;
  /** The customer's calling language (its country's), which its chat page is written in. */
  calling_language: string | null;
  /** Balance less money held for running calls, in this session's mode. */
  available_cents: number;
}

/** Every column but the hash: nothing read back from this table ever carries it. */
const COLUMNS = `s.id, s.seq, s.account_id, s.mode, s.customer_id, s.prefix, s.end_user_ref, s.display_name, s.expires_at,
  s.revoked_at, s.last_used_at, s.messages_sent, s.message_limit, s.created_at`;
const RETURNING = COLUMNS.replace(/s\./g, '');

const BY_TOKEN_HASH = prepared('chat_session_by_token', `SELECT s.id FROM chat_sessions s WHERE s.token_hash = $1`);
const GATE = prepared(
  'chat_session_gate',
  `SELECT ${COLUMNS}, c.name AS customer_name, c.brand_name AS customer_brand_name, c.status AS customer_status,
          a.status AS account_status, a.name AS account_name, a.display_name AS brand_display_name, a.logo_url,
          a.primary_color, a.accent_color, a.support_email, a.email_from_name, a.domain,
          COALESCE(m.balance_cents - m.reserved_cents, 0) AS available_cents, co.calling_language
     FROM chat_sessions s
     JOIN customers c ON c.id = s.customer_id
     LEFT JOIN countries co ON co.country = c.country
     JOIN accounts a ON a.id = s.account_id
     LEFT JOIN account_money m ON m.account_id = s.account_id AND m.mode = s.mode
    WHERE s.id = $1`,
);
/**
 * Claims one message slot, if and only if the session is still open at `now`: one statement, so
 * any number of parallel requests (in any number of processes) never count past the limit.
 */
const CLAIM_SLOT = prepared(
  'chat_session_claim',
  `UPDATE chat_sessions SET messages_sent = messages_sent + 1
    WHERE id = $1 AND messages_sent < message_limit AND revoked_at IS NULL AND expires_at > $2
    RETURNING messages_sent, message_limit, expires_at`,
);
const RELEASE_SLOT = prepared('chat_session_release', `UPDATE chat_sessions SET messages_sent = messages_sent - 1 WHERE id = $1 AND messages_sent > 0`);
const TOUCH = prepared('chat_session_touch', `UPDATE chat_sessions SET last_used_at = GREATEST(last_used_at, $2) WHERE id = $1`);

export function createChatSessionRepository(db: Queryable) {
  return {
    async insert(s: {
      id: string;
      accountId: string;
      mode: Mode;
      customerId: string;
      tokenHash: Buffer;
      prefix: string;
      endUserRef: string;
      displayName: string | null;
      expiresAt: Date;
      messageLimit: number;
      now: Date;
    }): Promise<ChatSessionRow> {
      const { rows } = await db.query(
        `INSERT INTO chat_sessions (id, account_id, mode, customer_id, token_hash, prefix, end_user_ref, display_name, expires_at, message_limit, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${RETURNING}`,
        [s.id, s.accountId, s.mode, s.customerId, s.tokenHash, s.prefix, s.endUserRef, s.displayName, s.expiresAt, s.messageLimit, s.now],
      );
      return rows[0];
    },

    async get(id: string): Promise<ChatSessionRow | null> {
      const { rows } = await db.query(`SELECT ${COLUMNS} FROM chat_sessions s WHERE s.id = $1`, [id]);
      return rows[0] ?? null;
    },

    /** The id of the session a token's hash names, or null. */
    async idByTokenHash(hash: Buffer): Promise<string | null> {
      const { rows } = await db.query(BY_TOKEN_HASH([hash]));
      return rows[0]?.id ?? null;
    },

    /** The session with everything its next message is decided on, read in one snapshot. */
    async gate(id: string): Promise<ChatGateRow | null> {
      const { rows } = await db.query(GATE([id]));
      return rows[0] ?? null;
    },

    async listForCustomer(customerId: string, limit: number, beforeSeq: number | null): Promise<ChatSessionRow[]> {
      const { rows } = await db.query(
        `SELECT ${COLUMNS} FROM chat_sessions s WHERE s.customer_id = $1 AND ($3::bigint IS NULL OR s.seq < $3)
          ORDER BY s.seq DESC LIMIT $2`,
        [customerId, limit, beforeSeq],
      );
      return rows;
    },

    /** Sessions of one person that can still send a message at `now`. */
    async openIdsOfPerson(customerId: string, endUserRef: string, now: Date): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT id FROM chat_sessions WHERE customer_id = $1 AND end_user_ref = $2 AND revoked_at IS NULL
            AND expires_at > $3 AND messages_sent < message_limit`,
        [customerId, endUserRef, now],
      );
      return rows.map((r) => r.id);
    },

    /** Ends a session that is still open; null when it had already ended (revoked, expired or used up). */
    async revoke(id: string, now: Date): Promise<ChatSessionRow | null> {
      const { rows } = await db.query(
        `UPDATE chat_sessions SET revoked_at = $2
          WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2 AND messages_sent < message_limit RETURNING ${RETURNING}`,
        [id, now],
      );
      return rows[0] ?? null;
    },

    /** Claims a message slot; null when the session is revoked, expired or used up at `now`. */
    async claimSlot(id: string, now: Date): Promise<{ messages_sent: number; message_limit: number; expires_at: Date } | null> {
      const { rows } = await db.query(CLAIM_SLOT([id, now]));
      return rows[0] ?? null;
    },

    /** Gives a claimed slot back: the message got no answer, so it does not count. */
    async releaseSlot(id: string): Promise<void> {
      await db.query(RELEASE_SLOT([id]));
    },

    async touch(id: string, now: Date): Promise<void> {
      await db.query(TOUCH([id, now]));
    },
  };
}
