import { prepared, type Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

export interface CustomerRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  external_ref: string | null;
  name: string;
  brand_name: string | null;
  /** The business's registered (legal) name, said in a call's identification; null: `name` (migration 038). */
  registered_name: string | null;
  /** The business's postal address, said in a UK call's opening (PECR reg. 24); null: none (migration 045). */
  registered_address: string | null;
  /** The call settings the reseller set, as stored; read through actors/customer/call-settings.ts `callSettingsOf`. */
  call_settings: unknown;
  /** The booking rules the reseller set (full, checked), null: the defaults; read through actors/customer/booking-settings.ts `bookingSettingsOf` (migration 046). */
  booking_settings: unknown;
  website_url: string | null;
  /** The business's own number, E.164 in its country (its website shows it); null when not given. */
  phone: string | null;
  country: string;
  timezone: string;
  status: 'prospect' | 'active' | 'paused';
  script_certified_at: Date | null;
  script: string | null;
  research_notes: string | null;
  terms_accepted_at: Date | null;
  terms_accepted_by: string | null;
  ready_at: Date | null;
  first_ready_at: Date | null;
  reserved_cents: number;
  open_calls: number;
  spend_day: string | null;
  spend_day_cents: number;
  spend_month: string | null;
  spend_month_cents: number;
  daily_spend_cap_cents: number | null;
  monthly_spend_cap_cents: number | null;
  max_concurrent_calls: number | null;
  created_at: Date;
}

export const CUSTOMER_LIMIT_FIELDS = ['daily_spend_cap_cents', 'monthly_spend_cap_cents', 'max_concurrent_calls'] as const;
export type CustomerLimitField = (typeof CUSTOMER_LIMIT_FIELDS)[number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

/**
 * Every column of `customers`, in the table's order, for the named statements below: a named
 * statement over `*` fails once a migration adds a column while a process keeps its connections
 * ("cached plan must not change result type": every old process of a rolling upgrade). A column
 * added by a migration is added here too (test/integration/named-statements.test.ts checks).
 */
export const CUSTOMER_COLUMNS = [
  'id', 'seq', 'account_id', 'mode', 'external_ref', 'name', 'brand_name', 'website_url', 'country', 'timezone', 'status',
  'script_certified_at', 'terms_accepted_at', 'terms_accepted_by', 'ready_at', 'daily_spend_cap_cents', 'monthly_spend_cap_cents',
  'max_concurrent_calls', 'created_at', 'reserved_cents', 'open_calls', 'spend_day', 'spend_day_cents', 'spend_month',
  'spend_month_cents', 'first_ready_at', 'script', 'research_notes', 'phone', 'test_clock_id', 'registered_name', 'call_settings',
  'registered_address', 'booking_settings',
] as const;
const CUSTOMER_COLUMNS_SQL = CUSTOMER_COLUMNS.join(', ');

const FIND_BY_ID_OR_REF = prepared(
  'customer_by_id_or_ref',
  `SELECT ${CUSTOMER_COLUMNS_SQL} FROM customers WHERE account_id = $1 AND mode = $2 AND (external_ref = $3 OR ($4::uuid IS NOT NULL AND id = $4::uuid))
   ORDER BY CASE WHEN id = $4::uuid THEN 0 ELSE 1 END LIMIT 1`,
);
const GET = prepared('customer_by_id', `SELECT ${CUSTOMER_COLUMNS_SQL} FROM customers WHERE id = $1`);

export function createCustomerRepository(db: Queryable) {
  return {
    async insert(c: {
      accountId: string;
      mode: Mode;
      externalRef: string | null;
      name: string;
      brandName: string | null;
      websiteUrl: string | null;
      phone?: string | null;
      country: string;
      timezone: string;
      registeredName?: string | null;
      registeredAddress?: string | null;
      /** As stored: only what the reseller set (actors/customer/call-settings-change.ts). */
      callSettings?: Record<string, unknown>;
      /** Null: the default booking rules. */
      bookingSettings?: object | null;
      now: Date;
    }): Promise<CustomerRow> {
      const { rows } = await db.query(
        `INSERT INTO customers (account_id, mode, external_ref, name, brand_name, website_url, country, timezone, created_at, phone, registered_name, call_settings, registered_address, booking_settings)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14::jsonb) RETURNING *`,
        [c.accountId, c.mode, c.externalRef, c.name, c.brandName, c.websiteUrl, c.country, c.timezone, c.now, c.phone ?? null, c.registeredName ?? null, JSON.stringify(c.callSettings ?? {}), c.registeredAddress ?? null, c.bookingSettings ? JSON.stringify(c.bookingSettings) : null],
      );
      return rows[0];
    },

    /** The customer an `{id}` path segment names: its service id or its external_ref, in one mode. */
    async findByIdOrRef(accountId: string, mode: Mode, idOrRef: string): Promise<CustomerRow | null> {
      const { rows } = await db.query(FIND_BY_ID_OR_REF([accountId, mode, idOrRef, isUuid(idOrRef) ? idOrRef : null]));
      return rows[0] ?? null;
    },

    /** Ids of an account's customers, in both modes. */
    async idsOfAccount(accountId: string): Promise<string[]> {
      const { rows } = await db.query(`SELECT id FROM customers WHERE account_id = $1`, [accountId]);
      return rows.map((r) => r.id);
    },

    /** Ids of the customers in countries whose calls are in `locale`. */
    async idsCallingIn(locale: string): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT cu.id FROM customers cu JOIN countries co ON co.country = cu.country WHERE co.calling_language = $1`,
        [locale],
      );
      return rows.map((r) => r.id);
    },

    /** Every customer that calls in `country` (both modes, every account). */
    async idsIn(country: string): Promise<string[]> {
      const { rows } = await db.query(`SELECT id FROM customers WHERE country = $1`, [country]);
      return rows.map((r) => r.id);
    },

    async get(id: string): Promise<CustomerRow | null> {
      const { rows } = await db.query(GET([id]));
      return rows[0] ?? null;
    },

    /** Locks customer `id` when it is `accountId`'s in `mode`; null otherwise (another's customer is no customer). */
    async lockOwned(id: string, accountId: string, mode: Mode): Promise<CustomerRow | null> {
      const { rows } = await db.query(`SELECT * FROM customers WHERE id = $1 AND account_id = $2 AND mode = $3 FOR NO KEY UPDATE`, [id, accountId, mode]);
      return rows[0] ?? null;
    },

    async lock(id: string): Promise<CustomerRow | null> {
      const { rows } = await db.query(`SELECT * FROM customers WHERE id = $1 FOR NO KEY UPDATE`, [id]);
      return rows[0] ?? null;
    },

    /** A page of an account's customers in one mode, newest first; `status` keeps only customers in that status. */
    async list(accountId: string, mode: Mode, limit: number, beforeSeq: number | null, status: CustomerRow['status'] | null = null): Promise<CustomerRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM customers WHERE account_id = $1 AND mode = $2 AND ($4::bigint IS NULL OR seq < $4) AND ($5::text IS NULL OR status = $5)
         ORDER BY seq DESC LIMIT $3`,
        [accountId, mode, limit, beforeSeq, status],
      );
      return rows;
    },

    async update(id: string, fields: Partial<CustomerRow>): Promise<CustomerRow> {
      const entries = Object.entries(fields);
      if (entries.length === 0) return (await this.get(id))!;
      const sets = entries.map(([k], i) => `${k} = $${i + 2}`).join(', ');
      const { rows } = await db.query(`UPDATE customers SET ${sets} WHERE id = $1 RETURNING *`, [id, ...entries.map(([, v]) => v)]);
      return rows[0];
    },
  };
}
