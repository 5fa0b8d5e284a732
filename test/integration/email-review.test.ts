import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.ts';
import { TestClock } from '../../runtime/clock.ts';
import { SecretBox } from '../../runtime/secret-box.ts';
import { createEmailOutboxRepository, enqueueEmail } from '../../db/email-outbox.ts';

/**
 * The second look at email (issue 22 review), against a real SMTP receiver: many queued emails,
 * a receiver that holds one recipient without answering, hostile text in header fields.
 */

let svc: TestService;
let smtp: SmtpReceiver;
const wall = new TestClock();
const box = SecretBox.fromKey(Buffer.alloc(32, 7).toString('base64'));
const FROM = 'billing@platform.example';

test.before(async () => {
  smtp = await startSmtpReceiver();
  // No poll: only the wake-up of a written row (and mailNow) sends.
  svc = await startTestService({ SMTP_URL: smtp.url, SWITCHBOARD_EMAIL_FROM: FROM, SWITCHBOARD_PLATFORM_NAME: 'Acme Voice', SWITCHBOARD_SENDER_POLL_MS: '3600000' }, { realClock: wall });
});
test.after.always(async () => {
  await svc?.stop();
  await smtp?.close();
});

const row = (id: string) => createEmailOutboxRepository(svc.services.pool).get(id);

/** Invitations to `addresses`, written in one transaction (one wake-up of the sender). */
async function inviteAll(accountId: string, addresses: string[]): Promise<string[]> {
  const client = await svc.services.pool.connect();
  const ids: string[] = [];
  try {
    await client.query('BEGIN');
    for (const to of addresses) {
      ids.push(
        (await enqueueEmail(client, {
          accountId,
          mode: 'live',
          kind: 'console_invitation',
          audience: 'person',
          to,
          dedupeKey: `invitation:${to}`,
          data: { account_name: 'Northwind Calls', role: 'viewer', invited_by: null, expires_at: '2026-12-04T10:00:00.000Z' },
          secretSealed: box.seal(`${svc.url}/console/invitations/accept?token=t-${to}`),
        }))!,
      );
    }
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  return ids;
}

test.serial('200 emails written at once all leave on their one wake-up while a receiver holds one recipient unanswered', async (t) => {
  const a = await makeAccount(svc.url);
  const release = smtp.holdRecipient('tarpit@agency.example');
  t.teardown(release);
  const before = smtp.messages.length;
  const addresses = ['tarpit@agency.example', ...Array.from({ length: 200 }, (_, i) => `person-${i}@agency.example`)];
  const [held, ...ids] = await inviteAll(a.id, addresses);
  // The sender polls once an hour here: everything must leave on the wake-up the commit gave.
  await smtp.waitFor(before + 200, 30_000);
  t.is(smtp.messages.length - before, 200, 'every email but the held one arrived');
  t.like(await row(held!), { status: 'pending', attempts: 1 }, 'the held one is still being tried');
  release();
  await smtp.waitFor(before + 201, 10_000);
  for (let i = 0; i < 100 && (await row(held!))!.status !== 'sent'; i++) await new Promise((r) => setTimeout(r, 50));
  t.is((await row(held!))!.status, 'sent');
  const statuses = await Promise.all(ids.map(async (id) => (await row(id))!.status));
  t.deepEqual([...new Set(statuses)], ['sent']);
  t.is(new Set(smtp.messages.slice(before).map((m) => m.messageId)).size, 201, 'each sent once');
});
