import test from 'ava';
import { loadConfig, SettingError } from '../../runtime/config.ts';
import { emailAddressProblem, headerText } from '../../runtime/email-address.ts';
import { HeaderRefused, messageIdFor, safeHeaders } from '../../email/headers.ts';
import { refusal } from '../../email/transport.ts';
import { nextEmailAttempt, EMAIL_RETRY_SPAN_SECONDS } from '../../actors/email/retry.ts';
import { recipientsOf } from '../../actors/email/recipients.ts';
import { formatCents } from '../../email/format.ts';

/** The email settings, header safety, the retry schedule and who receives billing emails. */

test('email settings: SMTP_URL, the From address (default no-reply@<public host>) and the platform name', (t) => {
  const plain = loadConfig({ SWITCHBOARD_PUBLIC_URL: 'https://calls.example.com' });
  t.deepEqual(plain.email, { smtpUrl: undefined, from: 'no-reply@calls.example.com', platformName: 'Switchboard' });
  const set = loadConfig({ SMTP_URL: 'smtps://mailer:p%40ss@smtp.example.com:465', SWITCHBOARD_EMAIL_FROM: 'Billing@Example.com', SWITCHBOARD_PLATFORM_NAME: ' Acme Voice ' });
  t.deepEqual(set.email, { smtpUrl: 'smtps://mailer:p%40ss@smtp.example.com:465', from: 'billing@example.com', platformName: 'Acme Voice' });
});

test('a malformed email setting stops start-up in one SettingError line that never shows the SMTP password', (t) => {
  for (const SMTP_URL of ['http://mailer:hunter2secret@smtp.example.com', 'mailer:hunter2secret@smtp example', 'smtp://mailer:hunter2secret@']) {
    const err = t.throws(() => loadConfig({ SMTP_URL }), { instanceOf: SettingError });
    t.regex(err!.message, /^SMTP_URL /);
    t.false(err!.message.includes('hunter2secret'), err!.message);
    t.false(err!.message.includes('\n'));
  }
  for (const from of ['billing', 'Billing <billing@example.com>', 'billing@example.com\r\nBcc: x@y.example', 'a b@example.com']) {
    t.throws(() => loadConfig({ SWITCHBOARD_EMAIL_FROM: from }), { instanceOf: SettingError, message: /^SWITCHBOARD_EMAIL_FROM must be a bare email address/ });
  }
  for (const name of ['Acme\nVoice', '   ', 'x'.repeat(101)]) {
    t.throws(() => loadConfig({ SWITCHBOARD_PLATFORM_NAME: name }), { instanceOf: SettingError, message: /^SWITCHBOARD_PLATFORM_NAME / });
  }
});

test('addresses: plain dot-atom addresses only; control characters never', (t) => {
  for (const ok of ['a@b.example', 'first.last+tag@sub.example.co.uk', "o'brien@example.com", 'no-reply@localhost', 'x@127.0.0.1', 'x@[10.0.0.1]']) t.is(emailAddressProblem(ok), null, ok);
  for (const bad of ['', 'a', '@b.example', 'a@', 'a@@b.example', 'a b@example.com', '"a"@example.com', 'a@exa mple.com', 'a@-x.example', 'a..b@example.com', 'a@b.example\r\nBcc: c@d.example', 'a\u0001@b.example', 'a@b.example\u2028']) {
    t.not(emailAddressProblem(bad), null, JSON.stringify(bad));
  }
});

test('header text: every control character becomes a space, so no value can start a header of its own', (t) => {
  t.is(headerText('Northwind\r\nBcc: thief@attacker.example'), 'Northwind Bcc: thief@attacker.example');
  t.is(headerText('a\tb\u0000c\u007fd\u0085e\u2028f\u2029g'), 'a b c d e f g');
  t.is(headerText('  Ünïcode 📞  '), 'Ünïcode 📞');
  t.is([...headerText('x'.repeat(300), 100)].length, 100);
  const h = safeHeaders({ from: { name: 'A\r\nB', address: 'no-reply@example.com' }, to: ['X@Example.com', 'x@example.com'], replyTo: { name: 'R\nS', address: 'help@example.com' }, subject: 'Hi\r\nBcc: y@z.example', messageId: '<id@example.com>' });
  t.deepEqual(h, { from: { name: 'A B', address: 'no-reply@example.com' }, to: ['x@example.com'], replyTo: { name: 'R S', address: 'help@example.com' }, subject: 'Hi Bcc: y@z.example', messageId: '<id@example.com>' });
  t.throws(() => safeHeaders({ ...h, to: ['x@example.com\r\nBcc: y@z.example'] }), { instanceOf: HeaderRefused });
  t.throws(() => safeHeaders({ ...h, replyTo: { address: 'help@example.com\u0001' } }), { instanceOf: HeaderRefused });
  t.throws(() => safeHeaders({ ...h, to: [] }), { instanceOf: HeaderRefused });
  t.is(messageIdFor('0b0c6a52-7d0c-4a53-9b8f-1a2b3c4d5e6f', 'billing@Mail.Example.com'), '<0b0c6a52-7d0c-4a53-9b8f-1a2b3c4d5e6f@mail.example.com>');
});

test('retries: 30 s, 2 min, 10 min, 1 h, 6 h, then every 6 h while the waits stay within 3 days, then dead', (t) => {
  const now = new Date('2026-11-27T12:00:00Z');
  const waits: number[] = [];
  let attempt = 1;
  for (;;) {
    const next = nextEmailAttempt(attempt, now);
    if (next.state === 'dead') break;
    waits.push((next.at.getTime() - now.getTime()) / 1000);
    attempt++;
  }
  t.deepEqual(waits.slice(0, 6), [30, 120, 600, 3600, 21_600, 21_600]);
  t.true(waits.slice(4).every((w) => w === 21_600));
  const total = waits.reduce((a, b) => a + b, 0);
  t.true(total <= EMAIL_RETRY_SPAN_SECONDS && total + 21_600 > EMAIL_RETRY_SPAN_SECONDS, `${total} s of waiting`);
  t.is(attempt, 16, 'the 16th failed attempt is the last');
});

test('an SMTP failure is permanent only when every recipient, or the message itself, was refused with a 5xx', (t) => {
  const rcpt = (codes: number[]) => Object.assign(new Error('all recipients were rejected'), { code: 'EENVELOPE', command: 'RCPT TO', responseCode: codes[0], rejectedErrors: codes.map((c) => ({ responseCode: c })) });
  t.true(refusal(rcpt([550, 553])).permanent);
  t.false(refusal(rcpt([550, 451])).permanent, 'one recipient only deferred');
  t.false(refusal(rcpt([451])).permanent);
  t.true(refusal(Object.assign(new Error('message refused'), { code: 'EMESSAGE', responseCode: 554 })).permanent);
  t.false(refusal(Object.assign(new Error('auth'), { code: 'EAUTH', responseCode: 535 })).permanent, 'our own sign-in: the operator can fix it');
  t.false(refusal(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ESOCKET' })).permanent);
});

test('billing emails go to the people whose role holds billing:write; person and customer emails to their address', (t) => {
  const people = [
    { email: 'o@x.example', role: 'owner' as const },
    { email: 'a@x.example', role: 'admin' as const },
    { email: 'b@x.example', role: 'billing' as const },
    { email: 'd@x.example', role: 'developer' as const },
    { email: 'v@x.example', role: 'viewer' as const },
  ];
  t.deepEqual(recipientsOf({ audience: 'billing', to_address: null }, people), ['o@x.example', 'a@x.example', 'b@x.example']);
  t.deepEqual(recipientsOf({ audience: 'billing', to_address: null }, people.slice(3)), []);
  t.deepEqual(recipientsOf({ audience: 'person', to_address: 'p@x.example' }, people), ['p@x.example']);
});

test('money in emails: $1,234.56', (t) => {
  t.is(formatCents(123456), '$1,234.56');
  t.is(formatCents(250000000), '$2,500,000.00');
  t.is(formatCents(5), '$0.05');
  t.is(formatCents(-1200), '-$12.00');
});
