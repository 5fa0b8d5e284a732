import type { Queryable } from '../../db/pool.ts';
import { createEmailOutboxRepository, type EmailRow, type ListedEmail } from '../../db/email-outbox.ts';
import { isUuid } from '../../db/customers.ts';
import { Refusal } from '../../runtime/refusal.ts';

/** An outbox row as the operator sees it (`GET /admin/v1/emails`): never the sealed secret. */
export interface EmailView {
  object: 'email';
  id: string;
  account_id: string;
  mode: 'test' | 'live';
  customer_id: string | null;
  kind: string;
  audience: string;
  to: string | null;
  dedupe_key: string;
  data: Record<string, unknown>;
  status: EmailRow['status'];
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  recipients: string[] | null;
  message_id: string | null;
  created_at: string;
  sent_at: string | null;
}

export function emailView(row: ListedEmail): EmailView {
  return {
    object: 'email',
    id: row.id,
    account_id: row.account_id,
    mode: row.mode,
    customer_id: row.customer_id,
    kind: row.kind,
    audience: row.audience,
    to: row.to_address,
    dedupe_key: row.dedupe_key,
    data: row.data,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    last_error: row.last_error,
    recipients: row.recipients,
    message_id: row.message_id,
    created_at: row.created_at.toISOString(),
    sent_at: row.sent_at ? row.sent_at.toISOString() : null,
  };
}

/** The operator's list of emails: newest first, by account and status, paged by `starting_after` (an email id). */
export function createEmailList(db: Queryable) {
  return {
    async list(q: { accountId?: string; status?: EmailRow['status']; limit: number; startingAfter?: string }) {
      const repo = createEmailOutboxRepository(db);
      let beforeSeq: number | null = null;
      if (q.startingAfter !== undefined) {
        beforeSeq = isUuid(q.startingAfter) ? await repo.seqOf(q.startingAfter) : null;
        if (beforeSeq === null) throw new Refusal('invalid_cursor', 'starting_after does not name an email.');
      }
      const rows = await repo.list({ accountId: q.accountId ?? null, status: q.status ?? null, limit: q.limit + 1, beforeSeq });
      return { object: 'list' as const, data: rows.slice(0, q.limit).map(emailView), has_more: rows.length > q.limit };
    },
  };
}
export type EmailList = ReturnType<typeof createEmailList>;
