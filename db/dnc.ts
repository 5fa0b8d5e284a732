import type { Queryable } from './pool.ts';

export interface DncRow {
  account_id: string;
  e164: string;
  source: 'api' | 'callee_request' | 'console';
  /** The mode of the key that added it; null for a callee's own request or an entry older than migration 019. */
  mode: 'test' | 'live' | null;
  reason: string | null;
  call_id: string | null;
  created_at: Date;
  seq: number;
}

/** The last load of a national registry (dnc_registry_imports, migration 019). */
export interface RegistryImportRow {
  registry: string;
  country: string;
  source: string;
  numbers: number;
  imported_at: Date;
}

export function createDncRepository(db: Queryable) {
  return {
    /**
     * Adds a number (kept as it was if already listed). In the same statement, the account's
     * requests still queued for the number (a planned retry among them) are made due now: the
     * dialler's do-not-call gate ends them at its next round (`blocked`, `do_not_call_listed`,
     * which withdraws the retry an earlier attempt announced: migration 041) instead of at the
     * time they were planned for.
     */
    async add(d: { accountId: string; e164: string; source: DncRow['source']; mode?: DncRow['mode']; reason: string | null; callId: string | null; now: Date }): Promise<{ row: DncRow; created: boolean }> {
      const { rows } = await db.query(
        `WITH listed AS (
           INSERT INTO dnc_numbers (account_id, e164, source, reason, call_id, created_at, mode) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT DO NOTHING RETURNING *
         ), woken AS (
           UPDATE calls SET next_attempt_at = $6
            WHERE account_id = $1 AND to_e164 = $2 AND status = 'queued' AND next_attempt_at > $6 AND EXISTS (SELECT 1 FROM listed)
         )
         SELECT * FROM listed`,
        [d.accountId, d.e164, d.source, d.reason, d.callId, d.now, d.mode ?? null],
      );
      if (rows[0]) return { row: rows[0], created: true };
      const existing = await db.query(`SELECT * FROM dnc_numbers WHERE account_id = $1 AND e164 = $2`, [d.accountId, d.e164]);
      return { row: existing.rows[0], created: false };
    },

    /** Whether `e164` may not be called for `accountId`: on the account's list or a national registry (as the admission reads it). */
    async listed(accountId: string, e164: string): Promise<boolean> {
      const { rows } = await db.query(
        `SELECT EXISTS (SELECT 1 FROM dnc_numbers WHERE account_id = $1 AND e164 = $2) OR EXISTS (SELECT 1 FROM dnc_registry WHERE e164 = $2) AS listed`,
        [accountId, e164],
      );
      return rows[0].listed === true;
    },

    /** `listed` for many numbers in one statement, in order. */
    async listedMany(items: readonly { accountId: string; e164: string }[]): Promise<boolean[]> {
      const { rows } = await db.query(
        `SELECT EXISTS (SELECT 1 FROM dnc_numbers d WHERE d.account_id = q.account_id AND d.e164 = q.e164) OR EXISTS (SELECT 1 FROM dnc_registry r WHERE r.e164 = q.e164) AS listed
           FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS q(account_id, e164, n) ORDER BY q.n`,
        [items.map((i) => i.accountId), items.map((i) => i.e164)],
      );
      return rows.map((r) => r.listed === true);
    },

    async get(accountId: string, e164: string): Promise<DncRow | null> {
      const { rows } = await db.query(`SELECT * FROM dnc_numbers WHERE account_id = $1 AND e164 = $2`, [accountId, e164]);
      return rows[0] ?? null;
    },

    /**
     * Removes a number unless a callee asked for it or a key of another mode added it, in one
     * statement: a read then a delete could remove an entry that replaced the row in between. An
     * entry of no recorded mode (older than migration 019) is taken as live's: a test key never
     * relaxes live compliance.
     */
    async removeIfAddedBy(accountId: string, e164: string, mode: 'test' | 'live'): Promise<boolean> {
      const { rowCount } = await db.query(
        `DELETE FROM dnc_numbers WHERE account_id = $1 AND e164 = $2 AND source <> 'callee_request' AND COALESCE(mode, 'live') = $3`,
        [accountId, e164, mode],
      );
      return (rowCount ?? 0) > 0;
    },

    async list(accountId: string, limit: number, beforeSeq: number | null): Promise<DncRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM dnc_numbers WHERE account_id = $1 AND ($3::bigint IS NULL OR seq < $3) ORDER BY seq DESC LIMIT $2`,
        [accountId, limit, beforeSeq],
      );
      return rows;
    },

    /**
     * Replaces registry `registry`'s list with `numbers` and records the load (run it in one
     * transaction). Numbers that left the registry leave the list; the accounts' own lists are
     * another table and untouched. Returns how many numbers were new and how many left.
     */
    async replaceRegistry(r: { registry: string; country: string; source: string; numbers: string[]; now: Date }): Promise<{ added: number; removed: number }> {
      // One load at a time per registry: a second waits here, then replaces the first's list.
      await db.query(`SELECT pg_advisory_xact_lock(hashtext('dnc_registry:' || $1))`, [r.registry]);
      const removed = await db.query(`DELETE FROM dnc_registry WHERE registry = $1 AND NOT (e164 = ANY($2::text[]))`, [r.registry, r.numbers]);
      const added = await db.query(
        `INSERT INTO dnc_registry (registry, e164, country, source, imported_at) SELECT $1, unnest($2::text[]), $3, $4, $5 ON CONFLICT DO NOTHING`,
        [r.registry, r.numbers, r.country, r.source, r.now],
      );
      await db.query(
        `INSERT INTO dnc_registry_imports (registry, country, source, numbers, imported_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (registry) DO UPDATE SET country = $2, source = $3, numbers = $4, imported_at = $5`,
        [r.registry, r.country, r.source, r.numbers.length, r.now],
      );
      return { added: added.rowCount ?? 0, removed: removed.rowCount ?? 0 };
    },

    /** The last load of every registry (of `country` when given). */
    async registryImports(country?: string): Promise<RegistryImportRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM dnc_registry_imports WHERE ($1::text IS NULL OR country = $1) ORDER BY registry`,
        [country ?? null],
      );
      return rows;
    },
  };
}
