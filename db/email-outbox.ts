import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/**
 * The email outbox (033_email_outbox.sql): an email is a row written in the transaction of the
 * fact it tells, sent later by the email sender (actors/email/), which renders it from `kind` and
 * `data` with the templates of email/. `enqueueEmail` is the one way in.
 */

export type EmailKind =
  | 'console_invitation'
  | 'password_reset'
  | 'balance_low'
  | 'auto_top_up_failed'
  | 'number_payment_due'
  | 'website_hosting_due'
  | 'onboarding_link';

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
  return rows[0]?.id ?? null;
}
