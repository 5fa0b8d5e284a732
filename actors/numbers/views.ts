import type { NumberRow } from '../../db/numbers.ts';

/** The number resource (docs/api.md, "Numbers"). */
export interface NumberView {
  object: 'number';
  id: string;
  customer_id: string;
  kind: 'rented' | 'caller_id';
  phone_number: string;
  country: string;
  status: NumberRow['status'];
  monthly_cents: number;
  renews_on: string | null;
  release_due_on: string | null;
  released_at: string | null;
  /** Why a caller ID's verification failed (`verification_failed`, `verification_expired`), else null. */
  failure_reason: string | null;
  /** Only while a caller ID is verifying: the digits the person types when the carrier calls. */
  verification: { code: string | null; expires_at: string } | null;
  mode: NumberRow['mode'];
  created_at: string;
}

/**
 * The number as the API shows it. `code` is the verification code in clear (opened by the
 * caller), or undefined where it must not appear (events, stored idempotent replies): then
 * `verification.code` is null and GET shows it.
 */
export function numberView(row: NumberRow, code?: string): NumberView {
  return {
    object: 'number',
    id: row.id,
    customer_id: row.customer_id,
    kind: row.kind,
    phone_number: row.e164,
    country: row.country,
    status: row.status,
    monthly_cents: row.monthly_cents,
    renews_on: row.renews_on,
    release_due_on: row.release_due_on,
    released_at: row.released_at ? row.released_at.toISOString() : null,
    failure_reason: row.failure_reason,
    verification:
      row.status === 'verifying' && row.verification_expires_at
        ? { code: code ?? null, expires_at: row.verification_expires_at.toISOString() }
        : null,
    mode: row.mode,
    created_at: row.created_at.toISOString(),
  };
}
