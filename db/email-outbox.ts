import type { Queryable } from './pool.ts';
import type { ConsoleRole, EmailKind, Mode } from '../runtime/types.ts';
import type { AccountRow } from './accounts.ts';

/**
 * The email outbox (033_email_outbox.sql): an email is a row written in the transaction of the
 * fact it tells, sent later by the email sender (actors/email/), which renders it from `kind` and
 * `data` with the templates of email/. `enqueueEmail` is the one way in.
 */

/**
 * Who receives it: `person` one console person (to_address), `billing` the account's people who
 * hold billing:write (resolved when sent), `customer` a reseller's customer (to_address; sent on
 * the reseller's behalf, in its brand, and never naming the service).
 */
export type EmailAudience = 'person' | 'billing' | 'customer';

export interface EmailRequest {
  accountId: string;
  mode: Mode;
  customerId?: string | null;
  kind: EmailKind;
  audience: EmailAudience;
  /** Required for `person` and `customer`, absent for `billing`. Lower-cased here. */
  to?: string | null;
  /** One email per key and account, whatever retries or repeats: e.g. `event:<event id>`, `invitation:<id>`. */
  dedupeKey: string;
  /** What the template needs, as JSON (no secrets). */
  data: Record<string, unknown>;
  /** A secret the template needs (a link with a token), already sealed with the secret box. */
  secretSealed?: Buffer | null;
  /** Dated when the fact happened (the caller's clock); sending runs on the database's real time. */
  now?: Date;
}

export interface EmailRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  customer_id: string | null;
  kind: EmailKind;
  audience: EmailAudience;
  to_address: string | null;
  dedupe_key: string;
  data: Record<string, unknown>;
  secret_sealed: Buffer | null;
  status: 'pending' | 'sent' | 'dead' | 'skipped';
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  recipients: string[] | null;
  message_id: string | null;
  created_at: Date;
  sent_at: Date | null;
}

/**
 * Serialises counting (and writing) an account's emails until the caller's transaction ends, so two
 * concurrent requests (for different customers) cannot both count under a limit and both write.
 */
export async function lockAccountEmailCounts(db: Queryable, accountId: string): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('email_outbox_counts:' || $1::text, 0))`, [accountId]);
}

/**
 * How many emails of `kind` were written for an account (and, given, one of its customers) at or
 * after `since`, in the caller's transaction (the limits on emails a reseller asks for).
 */
export async function countEmailsSince(db: Queryable, q: { accountId: string; customerId?: string; kind: EmailKind; since: Date }): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM email_outbox
      WHERE account_id = $1 AND kind = $2 AND created_at >= $3 AND ($4::uuid IS NULL OR customer_id = $4)`,
    [q.accountId, q.kind, q.since, q.customerId ?? null],
  );
  return rows[0].n;
}

/**
 * Writes one email in the caller's transaction; a second request with the same dedupe key writes
 * nothing. Returns the row's id, or null when it was already there.
 */
export async function enqueueEmail(db: Queryable, e: EmailRequest): Promise<string | null> {
  const to = e.audience === 'billing' ? null : (e.to ?? '').trim().toLowerCase();
  if (e.audience !== 'billing' && !to) throw new Error(`an email to a ${e.audience} needs an address`);
  const { rows } = await db.query(
    `INSERT INTO email_outbox (account_id, mode, customer_id, kind, audience, to_address, dedupe_key, data, secret_sealed, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, COALESCE($10, now()))
     ON CONFLICT (account_id, dedupe_key) DO NOTHING RETURNING id`,
    [e.accountId, e.mode, e.customerId ?? null, e.kind, e.audience, to, e.dedupeKey, JSON.stringify(e.data), e.secretSealed ?? null, e.now ?? null],
  );
  const id: string | null = rows[0]?.id ?? null;
  // Wakes the email senders at commit (the change feed's `email`), so an email leaves at once.
  if (id) await db.query(`SELECT pg_notify('switchboard_changes', 'email:' || $1)`, [id]);
  return id;
}


/** The operator's view of a row: everything but the sealed secret. */
export type ListedEmail = Omit<EmailRow, 'secret_sealed'>;

/** What the outcome of an attempt writes; `attempt` is the claim's count, so a finisher whose lease ran out (and was claimed again) writes nothing. */
export interface EmailOutcome {
  id: string;
  attempt: number;
  status: EmailRow['status'];
  nextAttemptAt: Date;
  error: string | null;
  recipients: string[] | null;
  messageId: string | null;
  sentAt: Date | null;
}

/** The account's facts an email is written with: its name and brand. */
export type EmailAccount = Pick<AccountRow, 'name' | 'display_name' | 'logo_url' | 'primary_color' | 'accent_color' | 'email_from_name' | 'support_email'>;

const LISTED_COLUMNS =
  'id, seq, account_id, mode, customer_id, kind, audience, to_address, dedupe_key, data, status, attempts, next_attempt_at, last_error, recipients, message_id, created_at, sent_at';

/** The email sender's statements (actors/email/). */
export function createEmailOutboxRepository(db: Queryable) {
  return {
    /**
     * Claims up to `limit` due emails: pending ones whose time has come, a dead sender's claims
     * included once their lease has run out (the lease is `next_attempt_at` itself, moved to
     * `leaseUntil`). SKIP LOCKED keeps senders off each other's rows. `now` has milliseconds and
     * the column microseconds: a row written in the millisecond `now` names is due too.
     */
    async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<EmailRow[]> {
      const { rows } = await db.query(
        `WITH due AS (
           SELECT id FROM email_outbox WHERE status = 'pending' AND next_attempt_at < $1::timestamptz + interval '1 millisecond'
            ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
         UPDATE email_outbox o SET attempts = o.attempts + 1, next_attempt_at = $2
           FROM due WHERE o.id = due.id RETURNING o.*`,
        [now, leaseUntil, limit],
      );
      return rows;
    },

    /** Records an attempt's outcome if this claim still holds the row. True when it did. */
    async finish(o: EmailOutcome): Promise<boolean> {
      const { rowCount } = await db.query(
        `UPDATE email_outbox SET status = $3, next_attempt_at = $4, last_error = $5, recipients = COALESCE($6, recipients), message_id = COALESCE($7, message_id), sent_at = $8
          WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
        [o.id, o.attempt, o.status, o.nextAttemptAt, o.error, o.recipients, o.messageId, o.sentAt],
      );
      return (rowCount ?? 0) > 0;
    },

    async account(accountId: string): Promise<EmailAccount | null> {
      const { rows } = await db.query(
        `SELECT name, display_name, logo_url, primary_color, accent_color, email_from_name, support_email FROM accounts WHERE id = $1`,
        [accountId],
      );
      return rows[0] ?? null;
    },

    /** The account's console people who may receive its email: not removed, and who accepted an invitation. Oldest first. */
    async people(accountId: string): Promise<{ email: string; role: ConsoleRole }[]> {
      const { rows } = await db.query(
        `SELECT u.email, u.role FROM console_users u
          WHERE u.account_id = $1 AND u.removed_at IS NULL
            AND EXISTS (SELECT 1 FROM console_invitations i WHERE i.accepted_user_id = u.id AND i.accepted_at IS NOT NULL)
          ORDER BY u.created_at, u.email`,
        [accountId],
      );
      return rows;
    },

    /** The position of an email in the list (its `seq`), for a cursor; null when there is none with this id. */
    async seqOf(id: string): Promise<number | null> {
      const { rows } = await db.query(`SELECT seq FROM email_outbox WHERE id = $1`, [id]);
      return rows[0] ? Number(rows[0].seq) : null;
    },

    /** Newest first, filtered by account and status; `beforeSeq` pages on. */
    async list(f: { accountId: string | null; status: EmailRow['status'] | null; limit: number; beforeSeq: number | null }): Promise<ListedEmail[]> {
      const { rows } = await db.query(
        `SELECT ${LISTED_COLUMNS} FROM email_outbox
          WHERE ($1::uuid IS NULL OR account_id = $1) AND ($2::text IS NULL OR status = $2) AND ($3::bigint IS NULL OR seq < $3)
          ORDER BY seq DESC LIMIT $4`,
        [f.accountId, f.status, f.beforeSeq, f.limit],
      );
      return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
    },

    async get(id: string): Promise<EmailRow | null> {
      const { rows } = await db.query(`SELECT * FROM email_outbox WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },
  };
}
export type EmailOutboxRepository = ReturnType<typeof createEmailOutboxRepository>;
