import { prepared, type Queryable } from './pool.ts';
import { updateColumns } from './update-columns.ts';
import type { Mode } from '../runtime/types.ts';
import { onClock } from './test-clocks.ts';

/** A customer's number (`phone_numbers`): rented at the carrier, or the customer's own as caller ID. */
export interface NumberRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  customer_id: string;
  e164: string;
  country: string;
  kind: 'rented' | 'caller_id';
  status: 'verifying' | 'active' | 'payment_due' | 'released' | 'failed';
  carrier_ref: string | null;
  monthly_cents: number;
  anchor_day: number | null;
  /** YYYY-MM-DD (dates are read as text: db/pool.ts). */
  renews_on: string | null;
  release_due_on: string | null;
  notice_sent_for: string | null;
  verification_code_sealed: Buffer | null;
  verification_expires_at: Date | null;
  failure_reason: string | null;
  failed_at: Date | null;
  created_at: Date;
  released_at: Date | null;
  updated_at: Date;
}

export type NewNumber = Pick<NumberRow, 'account_id' | 'mode' | 'customer_id' | 'e164' | 'country' | 'kind' | 'status' | 'carrier_ref' | 'monthly_cents' | 'anchor_day' | 'renews_on' | 'verification_code_sealed' | 'verification_expires_at'> & {
  id?: string;
  now: Date;
};

/** The fields a change may set. */
export type NumberChange = Partial<
  Pick<NumberRow, 'status' | 'carrier_ref' | 'renews_on' | 'release_due_on' | 'notice_sent_for' | 'anchor_day' | 'verification_code_sealed' | 'verification_expires_at' | 'failure_reason' | 'failed_at' | 'released_at'>
>;

const CHANGEABLE: ReadonlySet<string> = new Set<keyof NumberChange>([
  'status', 'carrier_ref', 'renews_on', 'release_due_on', 'notice_sent_for', 'anchor_day', 'verification_code_sealed', 'verification_expires_at',
  'failure_reason', 'failed_at', 'released_at',
]);

/**
 * Every column of `phone_numbers`, in the table's order, for the named statement below (why not
 * `*`: db/customers.ts CUSTOMER_COLUMNS; test/integration/named-statements.test.ts checks).
 */
export const NUMBER_COLUMNS = [
  'id', 'seq', 'account_id', 'mode', 'customer_id', 'e164', 'country', 'kind', 'status', 'created_at', 'released_at', 'carrier_ref',
  'monthly_cents', 'anchor_day', 'renews_on', 'release_due_on', 'notice_sent_for', 'verification_code_sealed', 'verification_expires_at',
  'failure_reason', 'failed_at', 'updated_at',
] as const;

/** A renewal paid: the number active until `renews_on`, its countdown (if any) over. */
const RENEWED = prepared(
  'number_renewed',
  `UPDATE phone_numbers SET status = 'active', renews_on = $2, release_due_on = NULL, updated_at = $3 WHERE id = $1 RETURNING ${NUMBER_COLUMNS.join(', ')}`,
);

export function createNumberRepository(db: Queryable) {
  return {
    async insert(n: NewNumber): Promise<NumberRow> {
      const { rows } = await db.query(
        `INSERT INTO phone_numbers (id, account_id, mode, customer_id, e164, country, kind, status, carrier_ref, monthly_cents, anchor_day,
                                    renews_on, verification_code_sealed, verification_expires_at, created_at, updated_at)
         VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15) RETURNING *`,
        [
          n.id ?? null, n.account_id, n.mode, n.customer_id, n.e164, n.country, n.kind, n.status, n.carrier_ref, n.monthly_cents, n.anchor_day,
          n.renews_on, n.verification_code_sealed, n.verification_expires_at, n.now,
        ],
      );
      return rows[0];
    },

    /** The number `id` of `customerId`, or null (another customer's number is no number). */
    async get(customerId: string, id: string): Promise<NumberRow | null> {
      const { rows } = await db.query(`SELECT * FROM phone_numbers WHERE id = $1 AND customer_id = $2`, [id, customerId]);
      return rows[0] ?? null;
    },

    async getById(id: string): Promise<NumberRow | null> {
      const { rows } = await db.query(`SELECT * FROM phone_numbers WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },

    /** Locks the number for a change; null when it is not `customerId`'s. */
    async lock(id: string, customerId?: string): Promise<NumberRow | null> {
      const { rows } = await db.query(`SELECT * FROM phone_numbers WHERE id = $1 AND ($2::uuid IS NULL OR customer_id = $2) FOR UPDATE`, [id, customerId ?? null]);
      return rows[0] ?? null;
    },

    /** Locks the number unless another transaction holds it (a job's claim). */
    async claim(id: string): Promise<NumberRow | null> {
      const { rows } = await db.query(`SELECT * FROM phone_numbers WHERE id = $1 FOR UPDATE SKIP LOCKED`, [id]);
      return rows[0] ?? null;
    },

    /** `update` with status active, `renewsOn` and no countdown: the renewal job's write, as one prepared statement. */
    async renewed(id: string, renewsOn: string, now: Date): Promise<NumberRow> {
      const { rows } = await db.query(RENEWED([id, renewsOn, now]));
      return rows[0];
    },

    /** `renewed` for many numbers at once (a renewal batch), each with its own next renewal. */
    async renewedAll(renewals: { id: string; renewsOn: string }[], now: Date): Promise<void> {
      if (renewals.length === 0) return;
      await db.query(
        `UPDATE phone_numbers p SET status = 'active', renews_on = v.renews_on, release_due_on = NULL, updated_at = $3
           FROM unnest($1::uuid[], $2::date[]) AS v(id, renews_on) WHERE p.id = v.id`,
        [renewals.map((r) => r.id), renewals.map((r) => r.renewsOn), now],
      );
    },

    async update(id: string, change: NumberChange, now: Date): Promise<NumberRow> {
      return updateColumns<NumberRow>(db, 'phone_numbers', CHANGEABLE, id, change, now);
    },

    /** A page of the customer's numbers, newest first, before `beforeSeq`. */
    async list(customerId: string, limit: number, beforeSeq: number | null): Promise<NumberRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM phone_numbers WHERE customer_id = $1 AND ($2::bigint IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $3`,
        [customerId, beforeSeq, limit],
      );
      return rows;
    },

    /** Whether the customer has a number that dials in `country` (active, or in its countdown). */
    async hasWorkingNumber(customerId: string, country: string): Promise<boolean> {
      const { rowCount } = await db.query(
        `SELECT 1 FROM phone_numbers WHERE customer_id = $1 AND country = $2 AND status IN ('active', 'payment_due')`,
        [customerId, country],
      );
      return (rowCount ?? 0) > 0;
    },

    /**
     * Numbers a renewal run looks at, by `seq` after `afterSeq`: rent due on or before `today`, or
     * a renewal within the notice window (up to `noticeUntil`) not yet looked at for its notice.
     * The next `limit` of them are locked for the rest of the transaction (the job's batch claim);
     * a number another transaction holds is skipped.
     */
    async claimDueForRenewal(today: string, noticeUntil: string, limit: number, afterSeq: number, clockId: string | null = null): Promise<NumberRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM phone_numbers
          WHERE status IN ('active', 'payment_due') AND seq > $4
            AND (renews_on <= $1 OR (renews_on <= $2 AND notice_sent_for IS DISTINCT FROM renews_on))
            AND ${onClock('phone_numbers.customer_id', '$5')}
          ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [today, noticeUntil, limit, afterSeq, clockId],
      );
      return rows;
    },

    /** Ids of numbers in their countdown whose release day has come. */
    async dueForRelease(today: string, limit: number, clockId: string | null = null): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT id FROM phone_numbers WHERE status = 'payment_due' AND release_due_on <= $1 AND ${onClock('phone_numbers.customer_id', '$3')}
          ORDER BY release_due_on LIMIT $2`,
        [today, limit, clockId],
      );
      return rows.map((r) => r.id);
    },

    /** Caller IDs still verifying after their verification expired. */
    async verificationsExpired(now: Date, limit: number): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT id FROM phone_numbers WHERE status = 'verifying' AND verification_expires_at <= $1 ORDER BY verification_expires_at LIMIT $2`,
        [now, limit],
      );
      return rows.map((r) => r.id);
    },

    /** The account's live numbers waiting on rent, locked unless a job holds them (a top-up pays them). */
    async claimUnpaidOf(accountId: string): Promise<NumberRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM phone_numbers WHERE account_id = $1 AND mode = 'live' AND status = 'payment_due' ORDER BY seq FOR UPDATE SKIP LOCKED`,
        [accountId],
      );
      return rows;
    },

    /**
     * Serialises caller ID verification starts of one account and mode until the transaction
     * ends, so two starts at once cannot both pass the account's limits.
     */
    async lockVerificationStarts(accountId: string, mode: Mode): Promise<void> {
      await db.query(`SELECT pg_advisory_xact_lock(hashtext('caller_id_starts'), hashtext($1 || ':' || $2))`, [accountId, mode]);
    },

    /** Verifications running at `now` (of the customer, of its account and mode) and started since `dayStart` by the account. */
    async verificationCounts(accountId: string, mode: Mode, customerId: string, now: Date, dayStart: Date): Promise<{ customerRunning: number; accountRunning: number; accountStartedToday: number }> {
      const { rows } = await db.query(
        `SELECT count(*) FILTER (WHERE status = 'verifying' AND verification_expires_at > $4 AND customer_id = $3)::int AS "customerRunning",
                count(*) FILTER (WHERE status = 'verifying' AND verification_expires_at > $4)::int AS "accountRunning",
                count(*) FILTER (WHERE created_at >= $5)::int AS "accountStartedToday"
           FROM phone_numbers
          WHERE account_id = $1 AND mode = $2 AND kind = 'caller_id' AND (status = 'verifying' OR created_at >= $5)`,
        [accountId, mode, customerId, now, dayStart],
      );
      return rows[0];
    },

    /** The caller ID of `e164` in `mode` that is verifying or working, whoever's it is (one at most). */
    async callerIdHolder(mode: Mode, e164: string): Promise<NumberRow | null> {
      const { rows } = await db.query(
        `SELECT * FROM phone_numbers WHERE mode = $1 AND e164 = $2 AND kind = 'caller_id' AND status IN ('verifying', 'active', 'payment_due')`,
        [mode, e164],
      );
      return rows[0] ?? null;
    },

    /** Which of the carrier ids `refs` are recorded as a number (a purchase whose transaction committed). */
    async keptCarrierRefs(refs: string[]): Promise<Set<string>> {
      if (refs.length === 0) return new Set();
      const { rows } = await db.query(`SELECT carrier_ref FROM phone_numbers WHERE carrier_ref = ANY ($1)`, [refs]);
      return new Set(rows.map((r) => r.carrier_ref as string));
    },

    /** The last failed try of the provisioning number step, recorded (or cleared with null). */
    async recordOrder(customerId: string, outcome: { code: string; message: string } | null, now: Date): Promise<void> {
      if (!outcome) {
        await db.query(`DELETE FROM number_orders WHERE customer_id = $1`, [customerId]);
        return;
      }
      await db.query(
        `INSERT INTO number_orders (customer_id, outcome, message, attempted_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (customer_id) DO UPDATE SET outcome = EXCLUDED.outcome, message = EXCLUDED.message, attempted_at = EXCLUDED.attempted_at`,
        [customerId, outcome.code, outcome.message, now],
      );
    },

    /** Live customers that asked for the number step, have no working number in their country, and whose last try is older than `triedBefore`. */
    async customersAwaitingNumber(triedBefore: Date, limit: number): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT c.id FROM customers c
          WHERE c.mode = 'live'
            AND EXISTS (SELECT 1 FROM provisioning_requests p WHERE p.customer_id = c.id AND 'number' = ANY (p.steps))
            AND NOT EXISTS (SELECT 1 FROM phone_numbers n WHERE n.customer_id = c.id AND n.country = c.country AND n.status IN ('active', 'payment_due'))
            AND NOT EXISTS (SELECT 1 FROM number_orders o WHERE o.customer_id = c.id AND o.attempted_at > $1)
          ORDER BY c.seq LIMIT $2`,
        [triedBefore, limit],
      );
      return rows.map((r) => r.id);
    },
  };
}
