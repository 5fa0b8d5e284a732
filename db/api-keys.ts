import { prepared, type Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';
import type { AccountRow } from './accounts.ts';

export interface ApiKeyRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  label: string;
  prefix: string;
  last_four: string;
  scopes: string[];
  ip_allowlist: string[] | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  rotated_at: Date | null;
  created_at: Date;
}

/** A stored secret joined with its key and account: everything authentication decides on. */
export interface SecretLookup {
  key: ApiKeyRow;
  account: AccountRow;
  grace_until: Date | null;
}

const FIND_SECRET = prepared(
  'find_api_key_secret',
  `SELECT to_jsonb(k) AS key, to_jsonb(a) AS account, s.grace_until
     FROM api_key_secrets s JOIN api_keys k ON k.id = s.key_id JOIN accounts a ON a.id = k.account_id
    WHERE s.secret_hash = $1`,
);

export function createApiKeyRepository(db: Queryable) {
  return {
    async insert(k: {
      accountId: string;
      mode: Mode;
      label: string;
      prefix: string;
      lastFour: string;
      scopes: string[];
      ipAllowlist: string[] | null;
      expiresAt: Date | null;
      secretHash: Buffer;
      now: Date;
    }): Promise<ApiKeyRow> {
      const { rows } = await db.query(
        `INSERT INTO api_keys (account_id, mode, label, prefix, last_four, scopes, ip_allowlist, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
        [k.accountId, k.mode, k.label, k.prefix, k.lastFour, k.scopes, k.ipAllowlist, k.expiresAt, k.now],
      );
      await db.query(`INSERT INTO api_key_secrets (secret_hash, key_id, created_at) VALUES ($1, $2, $3)`, [k.secretHash, rows[0].id, k.now]);
      return rows[0];
    },

    async get(accountId: string, keyId: string): Promise<ApiKeyRow | null> {
      const { rows } = await db.query(`SELECT * FROM api_keys WHERE account_id = $1 AND id = $2`, [accountId, keyId]);
      return rows[0] ?? null;
    },

    async list(accountId: string): Promise<ApiKeyRow[]> {
      const { rows } = await db.query(`SELECT * FROM api_keys WHERE account_id = $1 ORDER BY seq DESC`, [accountId]);
      return rows;
    },

    async findBySecretHash(hash: Buffer): Promise<SecretLookup | null> {
      const { rows } = await db.query(FIND_SECRET([hash]));
      if (!rows[0]) return null;
      return { key: reviveDates(rows[0].key), account: reviveDates(rows[0].account), grace_until: rows[0].grace_until };
    },

    /** Retires the current secret (it keeps working until `graceUntil`) and stores the new one. */
    async rotate(keyId: string, r: { secretHash: Buffer; prefix: string; lastFour: string; graceUntil: Date; now: Date }): Promise<ApiKeyRow> {
      await db.query(
        `UPDATE api_key_secrets SET retired_at = $2, grace_until = $3 WHERE key_id = $1 AND grace_until IS NULL`,
        [keyId, r.now, r.graceUntil],
      );
      await db.query(`INSERT INTO api_key_secrets (secret_hash, key_id, created_at) VALUES ($1, $2, $3)`, [r.secretHash, keyId, r.now]);
      const { rows } = await db.query(
        `UPDATE api_keys SET prefix = $2, last_four = $3, rotated_at = $4 WHERE id = $1 RETURNING *`,
        [keyId, r.prefix, r.lastFour, r.now],
      );
      return rows[0];
    },

    async revoke(keyId: string, now: Date): Promise<ApiKeyRow> {
      const { rows } = await db.query(`UPDATE api_keys SET revoked_at = $2 WHERE id = $1 RETURNING *`, [keyId, now]);
      return rows[0];
    },
  };
}

const DATE_FIELDS = /(_at|_until)$/;
/** to_jsonb renders timestamps as strings; turn them back into Dates. */
function reviveDates<T>(obj: Record<string, unknown>): T {
  for (const [k, v] of Object.entries(obj)) {
    if (DATE_FIELDS.test(k) && typeof v === 'string') obj[k] = new Date(v);
  }
  return obj as T;
}
