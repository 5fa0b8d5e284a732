import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

export interface AccountRow {
  id: string;
  slug: string;
  name: string;
  country: string;
  status: 'active' | 'suspended';
  mode: Mode;
  kyb_status: 'pending' | 'verified' | 'rejected';
  /** The operator's word on the last review (why it was rejected), shown to the reseller. */
  kyb_note: string | null;
  agreement_version: string | null;
  agreement_signed_at: Date | null;
  went_live_at: Date | null;
  requests_per_minute: number;
  burst: number;
  concurrent_calls: number;
  max_customers: number | null;
  daily_spend_cap_cents: number | null;
  monthly_spend_cap_cents: number | null;
  display_name: string | null;
  logo_url: string | null;
  primary_color: string | null;
  accent_color: string | null;
  email_from_name: string | null;
  support_email: string | null;
  domain: string | null;
  /** The brand domain's DNS state (migration 029): none without a domain. */
  domain_status: 'none' | 'pending' | 'verified' | 'failed';
  domain_claimed_at: Date | null;
  domain_checked_at: Date | null;
  domain_verified_at: Date | null;
  created_at: Date;
}

/** One signature of the reseller agreement (`agreement_signatures`). */
export interface AgreementSignatureRow {
  account_id: string;
  version: string;
  signed_at: Date;
  /** The console person who signed ("Name <email>"); null when the operator recorded it. */
  signed_by: string | null;
}

export const BRAND_FIELDS = [
  'display_name',
  'logo_url',
  'primary_color',
  'accent_color',
  'email_from_name',
  'support_email',
  'domain',
] as const;
export type BrandField = (typeof BRAND_FIELDS)[number];

export const LIMIT_FIELDS = [
  'requests_per_minute',
  'burst',
  'concurrent_calls',
  'max_customers',
  'daily_spend_cap_cents',
  'monthly_spend_cap_cents',
] as const;
export type AccountLimitField = (typeof LIMIT_FIELDS)[number];

/** Tells every process (including this one) that an account's cached facts are stale. */
export async function notifyAccountChanged(db: Queryable, accountId: string): Promise<void> {
  await db.query(`SELECT pg_notify('switchboard_changes', $1)`, [`account:${accountId}`]);
}

export function createAccountRepository(db: Queryable) {
  return {
    async insert(a: { id: string; name: string; slug: string; country: string; now: Date }): Promise<AccountRow> {
      const { rows } = await db.query(
        `INSERT INTO accounts (id, name, slug, country, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
        [a.id, a.name, a.slug, a.country, a.now],
      );
      return rows[0];
    },

    async get(id: string): Promise<AccountRow | null> {
      const { rows } = await db.query(`SELECT * FROM accounts WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },

    /** Locks the account row for the rest of the transaction (serialises changes across processes). */
    async lock(id: string): Promise<AccountRow | null> {
      const { rows } = await db.query(`SELECT * FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, [id]);
      return rows[0] ?? null;
    },

    async list(limit: number, afterSeq: number | null): Promise<(AccountRow & { seq: number })[]> {
      const { rows } = await db.query(
        `SELECT * FROM accounts WHERE ($2::bigint IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $1`,
        [limit, afterSeq],
      );
      return rows;
    },

    async update(id: string, fields: Partial<AccountRow>): Promise<AccountRow | null> {
      const entries = Object.entries(fields);
      if (entries.length === 0) return this.get(id);
      const sets = entries.map(([k], i) => `${k} = $${i + 2}`).join(', ');
      const { rows } = await db.query(`UPDATE accounts SET ${sets} WHERE id = $1 RETURNING *`, [id, ...entries.map(([, v]) => v)]);
      return rows[0] ?? null;
    },

    /**
     * Records a signature of the agreement; the caller updates the account row in the same
     * transaction. `signer` is the console person who signed; null when the operator recorded it.
     */
    async insertAgreementSignature(accountId: string, version: string, signedAt: Date, signer: { userId: string; label: string } | null = null): Promise<void> {
      await db.query(
        `INSERT INTO agreement_signatures (account_id, version, signed_at, signed_by_user_id, signed_by) VALUES ($1, $2, $3, $4, $5)`,
        [accountId, version, signedAt, signer?.userId ?? null, signer?.label ?? null],
      );
    },

    /** Each account's agreement signatures, newest first; one query for a whole page of accounts. */
    async agreementHistory(accountIds: string[]): Promise<Map<string, AgreementSignatureRow[]>> {
      const history = new Map<string, AgreementSignatureRow[]>(accountIds.map((id) => [id, []]));
      if (accountIds.length === 0) return history;
      const { rows } = await db.query<AgreementSignatureRow>(
        `SELECT account_id, version, signed_at, signed_by FROM agreement_signatures WHERE account_id = ANY($1::uuid[]) ORDER BY seq DESC`,
        [accountIds],
      );
      for (const row of rows) history.get(row.account_id)!.push(row);
      return history;
    },

    async customerCount(accountId: string, mode: Mode): Promise<number> {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM customers WHERE account_id = $1 AND mode = $2`, [accountId, mode]);
      return rows[0].n;
    },
  };
}
