import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { consoleAs } from '../helpers/console.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.ts';
import { TestClock } from '../../runtime/clock.ts';
import { SecretBox } from '../../runtime/secret-box.ts';
import { createEmailOutboxRepository, enqueueEmail, type EmailRequest } from '../../db/email-outbox.ts';
import { EMAIL_LEASE_MS } from '../../actors/email/email-sender.ts';
import { refuseRowChange } from '../helpers/db.ts';

/**
 * The email sender against a real SMTP receiver (test/helpers/smtp.ts): arrival with both parts
 * and the right headers, recipients of billing emails, refusals and an absent server, permanent
 * refusal, a claim left by a dead process, header injection, and the operator's list.
 */

let svc: TestService;
let smtp: SmtpReceiver;
/** Real time as the sender sees it: moved forward by these tests to reach retries and leases. */
const wall = new TestClock();
const box = SecretBox.fromKey(Buffer.alloc(32, 7).toString('base64'));
const FROM = 'billing@platform.example';

test.before(async () => {
  smtp = await startSmtpReceiver();
  // The sender polls only when asked (or when woken by a new row), so retries follow `wall`.
  svc = await startTestService({ SMTP_URL: smtp.url, SWITCHBOARD_EMAIL_FROM: FROM, SWITCHBOARD_PLATFORM_NAME: 'Acme Voice', SWITCHBOARD_SENDER_POLL_MS: '3600000' }, { realClock: wall });
});
test.after.always(async () => {
  await svc?.stop();
  await smtp?.close();
});

const queue = async (request: Omit<EmailRequest, 'mode'> & { mode?: 'test' | 'live' }) => {
  const id = await enqueueEmail(svc.services.pool, { mode: 'test', ...request });
  if (!id) throw new Error('not queued');
  return id;
};
const row = (id: string) => createEmailOutboxRepository(svc.services.pool).get(id);
const newMessages = (before: number) => smtp.messages.slice(before);
const invitation = (a: TestAccount, to: string, extra: Partial<EmailRequest> = {}) =>
  queue({
    accountId: a.id,
    kind: 'console_invitation',
    audience: 'person',
    to,
    dedupeKey: `invitation:${Math.random()}`,
    data: { account_name: 'Northwind Calls', role: 'billing', invited_by: 'Ada Lovelace', expires_at: '2026-12-04T10:00:00.000Z' },
    secretSealed: box.seal(`${svc.url}/console/invitations/accept?token=secret-token-123`),
    ...extra,
  });
/** Logs about one email. */
const logsOf = (id: string) => svc.logs.lines.filter((l) => l.email_id === id);

test.serial('an email queued arrives once, with HTML and text parts and its headers, and is listed as sent without its link', async (t) => {
  const a = await makeAccount(svc.url);
  const before = smtp.messages.length;
  const id = await invitation(a, 'Ada.New@Agency.example');
  await svc.services.mailNow();
  const [mail] = await smtp.waitFor(before + 1).then(() => newMessages(before));
  t.is(newMessages(before).length, 1);
  t.deepEqual(mail.envelope.to, ['ada.new@agency.example']);
  t.is(mail.envelope.from, FROM);
  t.is(mail.header('from'), `Acme Voice <${FROM}>`);
  t.is(mail.header('to'), 'ada.new@agency.example');
  t.is(mail.subject, 'You are invited to Northwind Calls on Acme Voice');
  t.is(mail.messageId, `<${id}@platform.example>`);
  t.is(mail.header('auto-submitted'), 'auto-generated');
  t.is(mail.header('reply-to'), undefined, 'the platform’s own emails have no Reply-To');
  t.deepEqual(mail.partTypes, ['text/plain', 'text/html']);
  t.regex(mail.text!, /Ada Lovelace invited you to join Northwind Calls on Acme Voice with the billing role/);
  t.regex(mail.text!, /secret-token-123/);
  t.regex(mail.html!, /<html[^>]*lang="en"/);
  t.regex(mail.html!, /href="http:\/\/127\.0\.0\.1:\d+\/console\/invitations\/accept\?token=secret-token-123"/);

  const sent = await row(id);
  t.is(sent!.status, 'sent');
  t.deepEqual(sent!.recipients, ['ada.new@agency.example']);
  t.is(sent!.message_id, `<${id}@platform.example>`);
  t.is(sent!.attempts, 1);

  const listed = await a.admin.get(`/admin/v1/emails?account_id=${a.id}`);
  t.is(listed.status, 200);
  t.is(listed.body.data.length, 1);
  t.like(listed.body.data[0], { object: 'email', id, kind: 'console_invitation', status: 'sent', to: 'ada.new@agency.example', message_id: `<${id}@platform.example>` });
  t.notRegex(listed.text, /secret-token-123|secret_sealed/);

  // A second round sends nothing more.
  await svc.services.mailNow();
  t.is(newMessages(before).length, 1);
});

test.serial('an email written is sent at once: the sender is woken by the row, not by its poll', async (t) => {
  const a = await makeAccount(svc.url);
  const before = smtp.messages.length;
  const id = await invitation(a, 'woken@agency.example');
  await smtp.waitFor(before + 1, 5_000);
  t.is(newMessages(before)[0].messageId, `<${id}@platform.example>`);
});

test.serial('billing emails go to the people whose role holds billing:write; with no one, the email is skipped', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const billing = await consoleAs(svc.url, a.id, 'billing');
  await consoleAs(svc.url, a.id, 'developer');
  await consoleAs(svc.url, a.id, 'viewer');
  const before = smtp.messages.length;
  // The people's own invitations are emails too (sent whenever the sender wakes): left out here.
  const lowBalance = () => newMessages(before).filter((m) => !m.subject.startsWith('You are invited'));
  const data = { object: 'balance', available_cents: 123456, balance_cents: 130000, low_balance: 'below_25_percent', event_id: 'evt_1' };
  const id = await queue({ accountId: a.id, mode: 'live', kind: 'balance_low', audience: 'billing', dedupeKey: 'event:evt_1', data });
  await svc.services.mailNow();
  for (let i = 0; i < 500 && lowBalance().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  const [mail] = lowBalance();
  t.deepEqual([...mail.envelope.to].sort(), [owner.user.email, billing.user.email].sort());
  t.regex(mail.subject, /balance below 25 % \(\$1,234\.56 available\)/);
  t.deepEqual([...(await row(id))!.recipients!].sort(), [owner.user.email, billing.user.email].sort());

  const alone = await makeAccount(svc.url);
  await consoleAs(svc.url, alone.id, 'developer');
  const skipped = await queue({ accountId: alone.id, mode: 'live', kind: 'balance_low', audience: 'billing', dedupeKey: 'event:evt_2', data });
  await svc.services.mailNow();
  t.like(await row(skipped), { status: 'skipped', last_error: 'no one on the account holds billing:write' });
  t.is(lowBalance().length, 1);
});

test.serial('a receiver that refuses with 421 and 451, then goes away and comes back, gets the email once', async (t) => {
  const a = await makeAccount(svc.url);
  const before = smtp.messages.length;
  smtp.refuse({ code: 421, at: 'mail', times: 1, message: 'Service not available, closing channel' });
  const id = await invitation(a, 'patient@agency.example');
  await svc.services.mailNow();
  let r = (await row(id))!;
  t.like(r, { status: 'pending', attempts: 1 });
  t.regex(r.last_error!, /421/);
  t.true(Math.abs(r.next_attempt_at.getTime() - (wall.now().getTime() + 30_000)) < 5_000, 'the first retry waits 30 s');

  smtp.refuse({ code: 451, at: 'rcpt', times: 1, message: 'Greylisted, try again later' });
  wall.advance(30_000);
  await svc.services.mailNow();
  r = (await row(id))!;
  t.like(r, { status: 'pending', attempts: 2 });
  t.regex(r.last_error!, /451/);
  t.true(Math.abs(r.next_attempt_at.getTime() - (wall.now().getTime() + 120_000)) < 5_000, 'the second waits 2 min');

  await smtp.goAway();
  wall.advance(120_000);
  await svc.services.mailNow();
  r = (await row(id))!;
  t.like(r, { status: 'pending', attempts: 3 });
  t.true(Math.abs(r.next_attempt_at.getTime() - (wall.now().getTime() + 600_000)) < 5_000, 'the third waits 10 min');
  await smtp.comeBack();

  // Not due yet: nothing is sent before its time.
  await svc.services.mailNow();
  t.is((await row(id))!.attempts, 3);
  wall.advance(600_000);
  await svc.services.mailNow();
  await smtp.waitFor(before + 1);
  t.is(newMessages(before).length, 1);
  t.like(await row(id), { status: 'sent', attempts: 4 });
  t.deepEqual(smtp.refused.slice(-2), [421, 451]);
  const failures = logsOf(id).filter((l) => l.msg === 'email not sent; it is tried again');
  t.is(failures.length, 3, 'one line per failure');
  t.like(failures[0], { kind: 'console_invitation', attempt: 1, response_code: 421 });
  t.false(JSON.stringify(logsOf(id)).includes('secret-token-123'), 'the link is never logged');
});

test.serial('a permanent refusal of every recipient (550) is dead at once, logged once', async (t) => {
  const a = await makeAccount(svc.url);
  smtp.refuseRecipient('nobody@agency.example', 550);
  t.teardown(() => smtp.refuseRecipient('nobody@agency.example', null));
  const before = smtp.messages.length;
  const id = await invitation(a, 'nobody@agency.example');
  await svc.services.mailNow();
  const r = (await row(id))!;
  t.like(r, { status: 'dead', attempts: 1 });
  t.regex(r.last_error!, /550/);
  t.is(newMessages(before).length, 0);
  const deaths = logsOf(id).filter((l) => l.msg === 'email dead: it will not be sent');
  t.is(deaths.length, 1);
  t.like(deaths[0], { kind: 'console_invitation', response_code: 550, permanent: true, level: 50 });
  wall.advance(24 * 3600_000);
  await svc.services.mailNow();
  t.is(newMessages(before).length, 0, 'a dead email is never tried again');

  const listed = await a.admin.get(`/admin/v1/emails?account_id=${a.id}&status=dead`);
  t.deepEqual(listed.body.data.map((e: { id: string }) => e.id), [id]);
  t.is((await a.admin.get(`/admin/v1/emails?account_id=${a.id}&status=sent`)).body.data.length, 0);
});

test.serial('a recipient refused while another is accepted: sent to the one accepted, the refusal logged', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const billing = await consoleAs(svc.url, a.id, 'billing');
  smtp.refuseRecipient(billing.user.email, 550);
  t.teardown(() => smtp.refuseRecipient(billing.user.email, null));
  const before = smtp.messages.length;
  const id = await queue({ accountId: a.id, mode: 'live', kind: 'balance_low', audience: 'billing', dedupeKey: 'event:evt_p', data: { available_cents: 0, low_balance: 'zero' } });
  await svc.services.mailNow();
  await smtp.waitFor(before + 1);
  t.deepEqual(newMessages(before)[0].envelope.to, [owner.user.email]);
  t.like(await row(id), { status: 'sent', recipients: [owner.user.email] });
  t.like(logsOf(id).find((l) => l.msg === 'email sent, but some recipients were refused'), { rejected: [billing.user.email], level: 40 });
});

test.serial('a row claimed by a process that died is sent by another once the lease has run out, with the same Message-ID', async (t) => {
  const a = await makeAccount(svc.url);
  const before = smtp.messages.length;
  // Written and claimed in one transaction, as a sender that then died would have: no other round sees it first.
  const client = await svc.services.pool.connect();
  let id: string;
  try {
    await client.query('BEGIN');
    id = (await enqueueEmail(client, { accountId: a.id, mode: 'test', kind: 'password_reset', audience: 'person', to: 'lost@agency.example', dedupeKey: 'reset:1', data: { expires_at: '2026-12-04T10:00:00.000Z' }, secretSealed: box.seal('https://console.example/reset?token=r1') }))!;
    const claimed = await createEmailOutboxRepository(client).claimDue(wall.now(), new Date(wall.now().getTime() + EMAIL_LEASE_MS), 100);
    t.true(claimed.some((c) => c.id === id));
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  await svc.services.mailNow();
  t.is(newMessages(before).length, 0, 'the claim still holds');
  t.like(await row(id), { status: 'pending', attempts: 1 });

  wall.advance(EMAIL_LEASE_MS + 1_000);
  await svc.services.mailNow();
  await smtp.waitFor(before + 1);
  t.is(newMessages(before).length, 1);
  t.is(newMessages(before)[0].messageId, `<${id}@platform.example>`);
  t.like(await row(id), { status: 'sent', attempts: 2 });
  // The dead process's late record (its claim was attempt 1) changes nothing.
  t.false(await createEmailOutboxRepository(svc.services.pool).finish({ id, attempt: 1, status: 'dead', nextAttemptAt: wall.now(), error: 'late', recipients: null, messageId: null, sentAt: null }));
  t.is((await row(id))!.status, 'sent');
});

test.serial('a database blip when recording a sent email: the record is tried again, the email arrives once and the row ends sent', async (t) => {
  const a = await makeAccount(svc.url);
  const before = smtp.messages.length;
  // The server accepts the email; the first write of `sent` fails, as a PostgreSQL blip would.
  const allow = await refuseRowChange(svc.services.pool, { name: 'refuse_sent_once', table: 'email_outbox', event: 'UPDATE', condition: "NEW.status = 'sent'", message: 'blip', once: true });
  t.teardown(allow);
  const id = await invitation(a, 'blip@agency.example');
  await svc.services.mailNow();
  await smtp.waitFor(before + 1);
  t.like(await row(id), { status: 'sent', attempts: 1 });
  // After the lease, nothing is sent again.
  wall.advance(EMAIL_LEASE_MS + 1_000);
  await svc.services.mailNow();
  t.is(newMessages(before).length, 1);
  t.like(await row(id), { status: 'sent', attempts: 1 });
});

test.serial('CR and LF in a brand’s email_from_name or a subject never reach the wire as a header', async (t) => {
  const a = await makeAccount(svc.url);
  const injected = 'Northwind\r\nBcc: thief@attacker.example';
  // The brand API may refuse such a name; the sender must hold even when the database has one.
  await svc.services.pool.query(`UPDATE accounts SET display_name = 'Northwind', email_from_name = $2, support_email = 'help@northwind.example' WHERE id = $1`, [a.id, injected]);
  const before = smtp.messages.length;
  const id = await queue({
    accountId: a.id,
    mode: 'live',
    kind: 'onboarding_link',
    audience: 'customer',
    to: 'owner@harbour.example',
    dedupeKey: 'onboarding:1',
    data: { customer_name: 'Harbour\r\nBcc: thief2@attacker.example\r\n\r\nbody', link_id: 'x', expires_at: '2026-12-27T10:00:00.000Z', language: 'en' },
    secretSealed: box.seal('https://calls.northwind.example/onboarding/ob_1'),
  });
  await svc.services.mailNow();
  await smtp.waitFor(before + 1);
  const [mail] = newMessages(before);
  t.deepEqual(mail.envelope.to, ['owner@harbour.example']);
  t.deepEqual(mail.headerLines.filter((l) => /^bcc:/i.test(l)), []);
  t.false(mail.headerLines.some((l) => /attacker/.test(l) && !/^(from|subject|reply-to):/i.test(l)), mail.headerLines.join('\n'));
  t.is(mail.header('from'), `"Northwind Bcc: thief@attacker.example" <${FROM}>`);
  t.is(mail.header('reply-to'), '"Northwind Bcc: thief@attacker.example" <help@northwind.example>');
  t.is(mail.subject, 'Please accept the calling terms for Harbour Bcc: thief2@attacker.example body');
  t.is((await row(id))!.status, 'sent');

  // An address that carries a line break is refused whole: nothing is sent, and the row is dead.
  const bad = await invitation(a, 'victim@agency.example\r\nbcc: thief3@attacker.example');
  await svc.services.mailNow();
  t.like(await row(bad), { status: 'dead' });
  t.regex((await row(bad))!.last_error!, /control character/);
  t.is(newMessages(before).length, 1);
});

test.serial('the operator’s list: newest first, filtered, paged, and a bad filter is a 400', async (t) => {
  const a = await makeAccount(svc.url);
  const first = await invitation(a, 'one@agency.example');
  const second = await invitation(a, 'two@agency.example');
  await svc.services.mailNow();
  const page = await a.admin.get(`/admin/v1/emails?account_id=${a.id}&limit=1`);
  t.is(page.status, 200);
  t.deepEqual(page.body.data.map((e: { id: string }) => e.id), [second]);
  t.true(page.body.has_more);
  const next = await a.admin.get(`/admin/v1/emails?account_id=${a.id}&limit=1&starting_after=${second}`);
  t.deepEqual(next.body.data.map((e: { id: string }) => e.id), [first]);
  t.false(next.body.has_more);
  t.is((await a.admin.get('/admin/v1/emails?status=lost')).status, 400);
  t.is((await a.admin.get('/admin/v1/emails?account_id=nope')).status, 400);
  t.is((await a.admin.get(`/admin/v1/emails?starting_after=${a.id}`)).body.error.code, 'invalid_cursor');
  t.is((await a.api.get('/admin/v1/emails')).status, 401, 'an API key is not the operator');
});
