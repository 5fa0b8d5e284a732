import pg from 'pg';
import { SecretBox } from '../../runtime/secret-box.ts';
import { TEST_ENCRYPTION_KEY } from './service.ts';

/** An email the service asked for (email_outbox, 033), its sealed secret opened. */
export interface OutboxEmail {
  id: string;
  account_id: string;
  mode: string;
  customer_id: string | null;
  kind: string;
  audience: string;
  to_address: string | null;
  dedupe_key: string;
  data: Record<string, any>;
  /** The secret (a link) in clear, or null. */
  secret: string | null;
  status: string;
  recipients: string[] | null;
  created_at: Date;
}

const box = SecretBox.fromKey(TEST_ENCRYPTION_KEY);

/** The emails of the outbox, oldest first: of an account (and a kind), or every one to an address. */
export async function outboxEmails(databaseUrl: string, f: { accountId?: string; kind?: string; to?: string }): Promise<OutboxEmail[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query(
      `SELECT * FROM email_outbox WHERE ($1::uuid IS NULL OR account_id = $1) AND ($2::text IS NULL OR kind = $2) AND ($3::text IS NULL OR to_address = lower($3))
        ORDER BY seq`,
      [f.accountId ?? null, f.kind ?? null, f.to ?? null],
    );
    return rows.map(({ secret_sealed, ...r }) => ({ ...r, secret: secret_sealed ? box.open(secret_sealed) : null }));
  } finally {
    await db.end();
  }
}

/**
 * The emails of `kind` of an account are exactly one per event of `events` (oldest first): to the
 * billing people, deduped on the event, carrying its data and id (issue 22, db/events.ts).
 */
export async function emailsTellEvents(
  t: { deepEqual: (actual: unknown, expected: unknown, message?: string) => void },
  databaseUrl: string,
  f: { accountId: string; kind: string },
  events: Array<{ id: string; mode: string; data: Record<string, unknown> }>,
): Promise<void> {
  const emails = await outboxEmails(databaseUrl, f);
  t.deepEqual(
    emails.map((e) => ({ mode: e.mode, audience: e.audience, to: e.to_address, dedupe: e.dedupe_key, data: e.data })),
    events.map((e) => ({ mode: e.mode, audience: 'billing', to: null, dedupe: `event:${e.id}`, data: { ...e.data, event_id: e.id } })),
    `one ${f.kind} email per event, telling it`,
  );
}

/** Runs the service's email sender (`mailNow`) until none of the account's emails is pending; throws if they never leave. */
export async function sendOutbox(svc: { databaseUrl: string; services: { mailNow(): Promise<number> } }, accountId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await svc.services.mailNow();
    if (!(await outboxEmails(svc.databaseUrl, { accountId })).some((e) => e.status === 'pending')) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the outbox was not sent');
}
