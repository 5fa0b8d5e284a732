import test from 'ava';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { consoleAs } from '../helpers/console.ts';
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

/** Bidi embeddings, overrides and isolates, and the Unicode line and paragraph separators. */
const BIDI_OR_SEPARATOR = /[\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

test.serial("hostile brand and customer text on the wire: no bidi override or line separator in a header, names cut to 100 characters, HTML escaped, a logo that is not https never rendered", async (t) => {
  const a = await makeAccount(svc.url);
  const fromName = `Support \u202egnp.exe\u202c 📞 ${'long '.repeat(60)}`;
  await svc.services.pool.query(`UPDATE accounts SET display_name = $2, email_from_name = $3, support_email = 'help@northwind.example', logo_url = $4 WHERE id = $1`, [
    a.id,
    '<script>alert(1)</script> Northwind',
    fromName,
    'javascript:alert(1)//https://logo.example/x.png',
  ]);
  const before = smtp.messages.length;
  const id = (await enqueueEmail(svc.services.pool, {
    accountId: a.id,
    mode: 'live',
    kind: 'onboarding_link',
    audience: 'customer',
    to: 'owner@harbour.example',
    dedupeKey: 'onboarding:hostile',
    data: { customer_name: 'Harbour\u2028Bcc: x@attacker.example \u2066Café\u2069 <b>bold</b>', link_id: 'x', expires_at: '2026-12-27T10:00:00.000Z', language: 'de-DE' },
    secretSealed: box.seal('https://calls.northwind.example/onboarding/ob_1'),
  }))!;
  await svc.services.mailNow();
  await smtp.waitFor(before + 1);
  const [mail] = smtp.messages.slice(before);
  t.is((await row(id))!.status, 'sent');
  for (const name of ['from', 'reply-to', 'subject']) {
    const value = mail.header(name) ?? '';
    t.false(BIDI_OR_SEPARATOR.test(value), `${name}: ${JSON.stringify(value)}`);
  }
  t.deepEqual(mail.headerLines.filter((l) => /^bcc:/i.test(l)), []);
  const display = /^"?(.*?)"? <billing@platform\.example>$/.exec(mail.header('from') ?? '')?.[1] ?? '';
  t.true(display.startsWith('Support gnp.exe 📞 long'), display);
  t.true([...display].length <= 100, `${[...display].length} characters`);
  t.regex(mail.subject, /Harbour Bcc: x@attacker\.example Café <b>bold<\/b>/, 'the customer’s name, flattened, in German words');
  t.false(mail.html!.includes('<script>'), 'the brand’s name is text, not markup');
  t.false(mail.html!.includes('<b>bold'), 'the customer’s name is text, not markup');
  t.notRegex(mail.html!, /javascript:|<img/i, 'a logo address that is not https is not shown');
});

test.serial("test mode, as Stripe's: an onboarding link emailed for a test customer goes only to an address of the account's own people; any other is skipped, and live mode sends to the customer", async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const viewer = await consoleAs(svc.url, a.id, 'viewer');
  await svc.services.mailNow(); // the people's own invitations
  const before = smtp.messages.length;
  const testCustomer = await makeCustomer(a.api, { name: 'Test Dental' });
  const stranger = await a.api.post(`/v1/customers/${testCustomer.id}/onboarding_link`, { email: 'real.person@dental.example' });
  t.is(stranger.status, 201, stranger.text);
  t.is(stranger.body.emailed_to, 'real.person@dental.example', 'the mint answers as before: the email was asked for');
  const team = await a.api.post(`/v1/customers/${testCustomer.id}/onboarding_link`, { email: viewer.user.email.toUpperCase() });
  t.is(team.status, 201, team.text);
  const liveCustomer = await makeCustomer(a.liveApi!, { name: 'Live Dental' });
  const live = await a.liveApi!.post(`/v1/customers/${liveCustomer.id}/onboarding_link`, { email: 'front-desk@dental.example' });
  t.is(live.status, 201, live.text);
  for (let i = 0; i < 5; i++) await svc.services.mailNow();
  await new Promise((r) => setTimeout(r, 200));
  const arrived = smtp.messages.slice(before).flatMap((m) => m.envelope.to);
  t.deepEqual(arrived.sort(), [viewer.user.email, 'front-desk@dental.example'].sort(), 'the team member and the live customer; never the test customer’s outside address');
  const rows = (await createEmailOutboxRepository(svc.services.pool).list({ accountId: a.id, status: null, limit: 50, beforeSeq: null })).filter((r) => r.kind === 'onboarding_link');
  const byTo = Object.fromEntries(rows.map((r) => [r.to_address, r]));
  t.like(byTo['real.person@dental.example'], { mode: 'test', status: 'skipped', last_error: "test mode: an email to a customer goes only to the account's own people" });
  t.like(byTo[viewer.user.email], { mode: 'test', status: 'sent' });
  t.like(byTo['front-desk@dental.example'], { mode: 'live', status: 'sent' });
});

test.serial('two service processes on one database send 100 emails written at once: each exactly once', async (t) => {
  const other = await startTestService({ DATABASE_URL: svc.databaseUrl, SMTP_URL: smtp.url, SWITCHBOARD_EMAIL_FROM: FROM, SWITCHBOARD_PLATFORM_NAME: 'Acme Voice', SWITCHBOARD_SENDER_POLL_MS: '3600000' }, { realClock: wall });
  t.teardown(() => other.stop());
  const a = await makeAccount(svc.url);
  const before = smtp.messages.length;
  const ids = await inviteAll(a.id, Array.from({ length: 100 }, (_, i) => `twice-${i}@agency.example`));
  // Both are woken by the commit; both are also asked for rounds at once.
  await Promise.all([svc.services.mailNow(), other.services.mailNow(), svc.services.mailNow(), other.services.mailNow()]);
  await smtp.waitFor(before + 100, 20_000);
  await new Promise((r) => setTimeout(r, 300));
  const arrived = smtp.messages.slice(before);
  t.is(arrived.length, 100);
  t.deepEqual(arrived.map((m) => m.messageId).sort(), ids.map((id) => `<${id}@platform.example>`).sort());
  const sentBy = (s: TestService) => s.logs.lines.filter((l) => ids.includes(String(l.email_id))).length;
  t.is(sentBy(svc) + sentBy(other), 0, 'no failure logged by either');
  for (const id of ids) t.like(await row(id), { status: 'sent', attempts: 1 });
});

test.serial("white label on the wire: onboarding link emails in Spanish, French, German, Dutch and (a language we lack) English carry only the message's own headers and never name the service, the platform or a supplier", async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const brand = await a.api.patch('/v1/brand', { display_name: 'Harbourline Calls', email_from_name: 'Harbourline', support_email: 'help@harbourline.example' });
  t.is(brand.status, 200, brand.text);
  const before = smtp.messages.length;
  const want: Record<string, string> = {};
  for (const [country, lang] of [['ES', 'es'], ['FR', 'fr'], ['DE', 'de'], ['NL', 'nl']] as const) {
    const c = await makeCustomer(a.liveApi!, { name: `Cliente ${country}`, country });
    const to = `owner-${country.toLowerCase()}@customer.example`;
    const minted = await a.liveApi!.post(`/v1/customers/${c.id}/onboarding_link`, { email: to });
    t.is(minted.status, 201, minted.text);
    want[to] = lang;
  }
  // No country the service covers speaks a language it lacks: the row is written as a mint would for one.
  await enqueueEmail(svc.services.pool, {
    accountId: a.id,
    mode: 'live',
    kind: 'onboarding_link',
    audience: 'customer',
    to: 'owner-jp@customer.example',
    dedupeKey: 'onboarding_link:ja',
    data: { customer_name: 'Sakura Dental', link_id: 'l-ja', expires_at: '2026-12-27T10:00:00.000Z', language: 'ja-JP' },
    secretSealed: box.seal('https://calls.harbourline.example/onboarding/ob_ja'),
  });
  want['owner-jp@customer.example'] = 'en';
  await svc.services.mailNow();
  await smtp.waitFor(before + 5);
  const mails = smtp.messages.slice(before);
  t.deepEqual(mails.map((m) => m.envelope.to[0]).sort(), Object.keys(want).sort());
  const ALLOWED = ['from', 'to', 'reply-to', 'subject', 'message-id', 'date', 'mime-version', 'content-type', 'auto-submitted'];
  for (const m of mails) {
    const to = m.envelope.to[0]!;
    t.regex(m.html!, new RegExp(`<html[^>]* lang="${want[to]}"`), to);
    const names = m.headerLines.map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
    t.deepEqual(names.filter((n) => !ALLOWED.includes(n)), [], `${to}: no X-Mailer, List-* or other header of the software`);
    t.is(m.envelope.from, FROM, 'the envelope sender (Return-Path) is the operator’s address');
    t.regex(m.messageId, /@platform\.example>$/, 'the Message-ID’s domain is the From address’s');
    const everything = [m.raw, m.headerLines.map((l) => l).join('\n'), m.subject, m.text, m.html].join('\n');
    t.notRegex(everything, /switchboard|twilio|openai|chatgpt|nodemailer|react-email|stripe|Acme Voice/i, to);
  }
});

test.serial('an onboarding email address: plus-addressing is one mailbox and kept; an encoded word (a second address a relay may decode), quotes, a list, a display name or a non-ASCII domain is refused 400 and nothing is written', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const c = await makeCustomer(a.liveApi!, { name: 'Bright Dental' });
  for (const email of [
    '=?utf-8?q?thief=40attacker.example=3e?=@bright-dental.example',
    'x=?utf-8?b?dGhpZWZAYXR0YWNrZXIuZXhhbXBsZQ==?=@bright-dental.example',
    '"thief@attacker.example"@bright-dental.example',
    'owner@bright-dental.example,thief@attacker.example',
    'Owner <owner@bright-dental.example>',
    'owner@brïght-dental.example',
  ]) {
    const r = await a.liveApi!.post(`/v1/customers/${c.id}/onboarding_link`, { email });
    t.is(r.status, 400, `${email}: ${r.text}`);
    t.is(r.body.error?.code, 'invalid_parameter', email);
  }
  t.is((await a.liveApi!.get(`/v1/customers/${c.id}/onboarding_link`)).body.data.length, 0, 'no link minted');
  const before = smtp.messages.length;
  const plus = await a.liveApi!.post(`/v1/customers/${c.id}/onboarding_link`, { email: 'Owner+Calls@Bright-Dental.example' });
  t.is(plus.status, 201, plus.text);
  t.is(plus.body.emailed_to, 'owner+calls@bright-dental.example');
  await svc.services.mailNow();
  await smtp.waitFor(before + 1);
  t.deepEqual(smtp.messages[before]!.envelope.to, ['owner+calls@bright-dental.example']);

  // A row that carries one anyway (written before this rule) is never sent: dead at once.
  const smuggled = (await enqueueEmail(svc.services.pool, {
    accountId: a.id,
    mode: 'live',
    kind: 'console_invitation',
    audience: 'person',
    to: '=?utf-8?q?thief=40attacker.example=3e?=@agency.example',
    dedupeKey: 'invitation:smuggled',
    data: { account_name: 'Bright', role: 'viewer', invited_by: null, expires_at: '2026-12-04T10:00:00.000Z' },
    secretSealed: box.seal(`${svc.url}/console/invitations/accept?token=t`),
  }))!;
  await svc.services.mailNow();
  t.like(await row(smuggled), { status: 'dead' });
  t.regex((await row(smuggled))!.last_error!, /encoded word/);
  t.is(smtp.messages.length, before + 1);
});

test.serial('emails written while a receiver holds one recipient unanswered leave at once: the held attempt never holds the next wake-ups', async (t) => {
  const a = await makeAccount(svc.url);
  const release = smtp.holdRecipient('tarpit-2@agency.example');
  t.teardown(release);
  const before = smtp.messages.length;
  const [held] = await inviteAll(a.id, ['tarpit-2@agency.example']);
  for (let i = 0; i < 200 && (await row(held!))!.attempts === 0; i++) await new Promise((r) => setTimeout(r, 25));
  t.is((await row(held!))!.attempts, 1, 'the held email is being tried');
  for (let i = 0; i < 5; i++) await inviteAll(a.id, [`later-${i}@agency.example`]); // five commits, five wake-ups
  await smtp.waitFor(before + 5, 10_000);
  t.deepEqual(smtp.messages.slice(before).map((m) => m.envelope.to[0]).sort(), Array.from({ length: 5 }, (_, i) => `later-${i}@agency.example`));
  t.like(await row(held!), { status: 'pending', attempts: 1 });
  release();
  await smtp.waitFor(before + 6, 10_000);
});

test.serial('a server that accepts the connection and never answers: stopping the service while an attempt waits on it is not held up', async (t) => {
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const url = `smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  // Its own database: no other sender can take the row.
  const hung = await startTestService({ SMTP_URL: url, SWITCHBOARD_EMAIL_FROM: FROM, SWITCHBOARD_SENDER_POLL_MS: '3600000' }, { realClock: wall });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : hung.stop()));
  const a = await makeAccount(hung.url);
  await enqueueEmail(hung.services.pool, {
    accountId: a.id,
    mode: 'live',
    kind: 'password_reset',
    audience: 'person',
    to: 'waiting@agency.example',
    dedupeKey: 'password_reset:hung',
    data: { expires_at: '2026-12-04T10:00:00.000Z' },
    secretSealed: box.seal('https://console.example/reset?token=r'),
  });
  for (let i = 0; i < 200 && sockets.size === 0; i++) await new Promise((r) => setTimeout(r, 25));
  t.true(sockets.size > 0, 'the silent server was reached: an attempt waits on it');
  const stopAt = Date.now();
  await hung.stop();
  stopped = true;
  t.true(Date.now() - stopAt < 10_000, `stopping took ${Date.now() - stopAt} ms`);
});
