import test from 'ava';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createMailTransport, type OutgoingEmail } from '../../email/transport.ts';

/**
 * The SMTP transport against servers that misbehave (issue 22 review), on raw sockets: one that
 * greets and then answers a byte at a time forever (no phase timeout fires: every byte is
 * activity), one that takes DATA and drops the connection before its final answer.
 */

const message: OutgoingEmail = {
  id: 'a3c2b1d0-0000-4000-8000-000000000001',
  kind: 'password_reset',
  from: { name: 'Acme Voice', address: 'mail@platform.example' },
  to: ['person@agency.example'],
  subject: 'Reset your password',
  messageId: '<a3c2b1d0-0000-4000-8000-000000000001@platform.example>',
  text: 'text',
  html: '<p>html</p>',
};

/** A server on loopback; `onSocket` speaks (or not). Resolves its URL and a count of sockets still open. */
async function rawServer(onSocket: (s: net.Socket) => void) {
  const open = new Set<net.Socket>();
  const server = net.createServer((s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => {});
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open,
    close: () => {
      for (const s of open) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

test('a server that answers one byte at a time forever: the attempt ends at its deadline as a retryable failure, and the connection is closed', async (t) => {
  const timers: NodeJS.Timeout[] = [];
  const server = await rawServer((s) => {
    s.write('220 slow.example ESMTP\r\n');
    s.once('data', () => timers.push(setInterval(() => s.write('2'), 100))); // "2", "2", "2", … never a line
  });
  t.teardown(async () => {
    timers.forEach(clearInterval);
    await server.close();
  });
  const transport = createMailTransport({ smtpUrl: server.url, dataDir: '/nonexistent', log: pino({ level: 'silent' }), attemptTimeoutMs: 1_500 });
  const started = Date.now();
  const outcome = await Promise.race([transport.send(message), new Promise<'hung'>((r) => setTimeout(() => r('hung'), 6_000))]);
  t.not(outcome, 'hung', 'the attempt ended');
  if (outcome === 'hung') return;
  t.like(outcome, { ok: false, permanent: false, error: 'the server did not finish within 1.5 s; the connection was closed' });
  t.true(Date.now() - started < 4_000, `${Date.now() - started} ms`);
  await new Promise((r) => setTimeout(r, 200));
  t.is(server.open.size, 0, 'its connection is closed, not left open');
});

test('a server that takes DATA and drops the connection before its final answer: a retryable failure', async (t) => {
  const server = await rawServer((s) => {
    s.write('220 drop.example ESMTP\r\n');
    let inData = false;
    s.on('data', (chunk) => {
      for (const line of chunk.toString().split('\r\n').filter(Boolean)) {
        if (inData) {
          if (line === '.') s.destroy();
          continue;
        }
        if (/^EHLO|^HELO/i.test(line)) s.write('250 drop.example\r\n');
        else if (/^DATA/i.test(line)) {
          inData = true;
          s.write('354 go ahead\r\n');
        } else s.write('250 OK\r\n');
      }
    });
  });
  t.teardown(() => server.close());
  const transport = createMailTransport({ smtpUrl: server.url, dataDir: '/nonexistent', log: pino({ level: 'silent' }) });
  const outcome = await transport.send(message);
  t.like(outcome, { ok: false, permanent: false });
});

test('an encoded word typed into a display name or subject is never decoded by a lenient reader into a line break or another address', async (t) => {
  const fs = await import('node:fs/promises');
  const os = await import('node:os');
  const path = await import('node:path');
  const { parseMail } = await import('../helpers/smtp.ts');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'email-review-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const word = (text: string) => `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`;
  const transport = createMailTransport({ smtpUrl: undefined, dataDir: dir, log: pino({ level: 'silent' }) });
  const outcome = await transport.send({
    ...message,
    from: { name: `${word('Bank\r\nBcc: thief@attacker.example')} Support`, address: 'mail@platform.example' },
    replyTo: { name: word('security@bank.example'), address: 'help@reseller.example' },
    subject: `Hello ${word('\r\nX-Priority: 1')}`,
  });
  t.true(outcome.ok);
  const [file] = await fs.readdir(path.join(dir, 'outbox-mail'));
  // parseMail decodes encoded words wherever they are, inside quotes too, as many mail programs do.
  const mail = parseMail(await fs.readFile(path.join(dir, 'outbox-mail', file!), 'utf8'), { from: '', to: [] });
  for (const name of ['from', 'reply-to', 'subject']) {
    const value = mail.header(name) ?? '';
    t.notRegex(value, /[\r\n]/, `${name}: ${JSON.stringify(value)}`);
    t.false(value.includes('security@bank.example') || value.includes('thief@attacker.example'), `${name}: ${JSON.stringify(value)}`);
  }
});
