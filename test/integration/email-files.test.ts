import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { parseMail } from '../helpers/smtp.ts';
import { SecretBox } from '../../runtime/secret-box.ts';
import { enqueueEmail } from '../../db/email-outbox.ts';

/** Without SMTP_URL (local development) every email is written whole as an .eml file and logged, never lost. */

let svc: TestService;
let dataDir: string;
const box = SecretBox.fromKey(Buffer.alloc(32, 7).toString('base64'));

test.before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'email-files-'));
  svc = await startTestService({ SMTP_URL: '', SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_SENDER_POLL_MS: '3600000' });
});
test.after.always(async () => {
  await svc?.stop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

test('without SMTP_URL an email is written as an .eml file under <dataDir>/outbox-mail/ and logged with its kind and recipients, never its link', async (t) => {
  const a = await makeAccount(svc.url);
  await a.api.patch('/v1/brand', { display_name: 'Northwind', email_from_name: 'Northwind Team', support_email: 'help@northwind.example' });
  const id = await enqueueEmail(svc.services.pool, {
    accountId: a.id,
    mode: 'test',
    kind: 'onboarding_link',
    audience: 'customer',
    to: 'owner@harbour.example',
    dedupeKey: 'onboarding:files',
    data: { customer_name: 'Harbour Dental', link_id: 'l1', expires_at: '2026-12-27T10:00:00.000Z', language: 'de-DE' },
    secretSealed: box.seal('https://calls.northwind.example/onboarding/ob_secret_token'),
  });
  await svc.services.mailNow();
  const file = path.join(dataDir, 'outbox-mail', `onboarding_link-${id}.eml`);
  const mail = parseMail(await fs.readFile(file, 'utf8'), { from: '', to: [] });
  t.is(mail.header('to'), 'owner@harbour.example');
  t.is(mail.header('from'), 'Northwind Team <no-reply@127.0.0.1>');
  t.is(mail.header('reply-to'), 'Northwind Team <help@northwind.example>');
  t.is(mail.subject, 'Bitte nehmen Sie die Bedingungen für Anrufe für Harbour Dental an');
  t.is(mail.messageId, `<${id}@127.0.0.1>`);
  t.deepEqual(mail.partTypes, ['text/plain', 'text/html']);
  t.regex(mail.text!, /ob_secret_token/);

  const line = svc.logs.lines.find((l) => l.email_id === id && l.msg === 'email written to a file (SMTP_URL is not set)');
  t.like(line, { kind: 'onboarding_link', to: ['owner@harbour.example'], file, level: 30 });
  t.false(svc.logs.raw.some((l) => l.includes('ob_secret_token')), 'the link is never logged');
  const listed = await a.admin.get(`/admin/v1/emails?account_id=${a.id}`);
  t.like(listed.body.data[0], { id, status: 'sent', recipients: ['owner@harbour.example'] });
});
