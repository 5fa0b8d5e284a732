import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

/**
 * A real SMTP receiver on loopback (the `smtp-server` package), for tests of the email sender.
 * Every message accepted is kept raw and parsed (headers decoded, multipart split, quoted-printable
 * and base64 undone). Controls: refuse the next attempts with a 4xx or 5xx at a chosen step, refuse
 * one recipient, go away (the port closes) and come back on the same port.
 */

export interface ReceivedMail {
  /** The envelope: MAIL FROM and RCPT TO. */
  envelope: { from: string; to: string[] };
  raw: string;
  /** Header lines as they came (unfolded), in order: `Name: value`. */
  headerLines: string[];
  /** The first value of a header, encoded words decoded; undefined when absent. */
  header(name: string): string | undefined;
  subject: string;
  messageId: string;
  /** The text/plain and text/html parts, decoded. */
  text: string | null;
  html: string | null;
  /** Content types of every leaf part. */
  partTypes: string[];
}

export interface Refusal {
  code: number;
  message?: string;
  /** Where the refusal comes: at RCPT TO (default), MAIL FROM, or after the message (DATA). */
  at?: 'rcpt' | 'mail' | 'data';
  /** How many attempts (messages) are refused before the receiver accepts again; unlimited when absent. */
  times?: number;
}

export interface SmtpReceiver {
  /** `smtp://127.0.0.1:<port>`: SMTP_URL for the service. */
  url: string;
  port: number;
  messages: ReceivedMail[];
  /** Attempts the receiver refused (message-level), in order: their codes. */
  refused: number[];
  /** Refuses from now on (or `times` attempts); null accepts again. */
  refuse(r: Refusal | null): void;
  /** Refuses one recipient with `code` at RCPT TO (null accepts it again). */
  refuseRecipient(address: string, code: number | null): void;
  /** Leaves RCPT TO for `address` unanswered (a tarpit) until the function returned is called. */
  holdRecipient(address: string): () => void;
  /** Closes the port: connections are refused until `comeBack`. */
  goAway(): Promise<void>;
  /** Listens again on the same port. */
  comeBack(): Promise<void>;
  /** Resolves when `n` messages have arrived (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

class SmtpAnswer extends Error {
  constructor(
    message: string,
    readonly responseCode: number,
  ) {
    super(message);
  }
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const refusedCodes: number[] = [];
  const refusedRecipients = new Map<string, number>();
  const heldRecipients = new Map<string, (() => void)[]>();
  let refusal: (Refusal & { left: number }) | null = null;
  let server: SMTPServer | null = null;
  let port = 0;

  /** The refusal for this step of an attempt, counted once per attempt (at its first refused step). */
  const refusalAt = (at: 'rcpt' | 'mail' | 'data', session: { refusedOnce?: boolean }): SmtpAnswer | null => {
    if (!refusal || (refusal.at ?? 'rcpt') !== at) return null;
    if (!session.refusedOnce) {
      if (refusal.left <= 0) return null;
      session.refusedOnce = true;
      refusal.left--;
      refusedCodes.push(refusal.code);
    }
    const answer = new SmtpAnswer(refusal.message ?? (refusal.code >= 500 ? 'Refused for good' : 'Try again later'), refusal.code);
    if (refusal.left <= 0 && refusal.times !== undefined) refusal = null;
    return answer;
  };

  const options: SMTPServerOptions = {
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    banner: 'test receiver',
    closeTimeout: 200,
    onMailFrom(_address, session, callback) {
      const s = session as unknown as { refusedOnce?: boolean };
      s.refusedOnce = false;
      callback(refusalAt('mail', s) ?? undefined);
    },
    onRcptTo(address, session, callback) {
      const held = heldRecipients.get(address.address.toLowerCase());
      if (held) return void held.push(() => callback());
      const own = refusedRecipients.get(address.address.toLowerCase());
      if (own) return callback(new SmtpAnswer(`Mailbox ${address.address} refused`, own));
      callback(refusalAt('rcpt', session as unknown as { refusedOnce?: boolean }) ?? undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const refused = refusalAt('data', session as unknown as { refusedOnce?: boolean });
        if (refused) return callback(refused);
        const raw = Buffer.concat(chunks).toString('utf8');
        messages.push(parseMail(raw, { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address) }));
        callback(null);
      });
    },
  };

  const listen = async () => {
    const s = new SMTPServer(options);
    s.on('error', () => {}); // a client that drops the connection is not the test's failure
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.server.address() as AddressInfo).port;
    server = s;
  };
  const stop = async () => {
    const s = server;
    server = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();

  return {
    get url() {
      return `smtp://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    messages,
    refused: refusedCodes,
    refuse(r) {
      refusal = r ? { ...r, left: r.times ?? Number.POSITIVE_INFINITY } : null;
    },
    refuseRecipient(address, code) {
      if (code === null) refusedRecipients.delete(address.toLowerCase());
      else refusedRecipients.set(address.toLowerCase(), code);
    },
    holdRecipient(address) {
      heldRecipients.set(address.toLowerCase(), []);
      return () => {
        const waiting = heldRecipients.get(address.toLowerCase()) ?? [];
        heldRecipients.delete(address.toLowerCase());
        for (const answer of waiting) answer();
      };
    },
    goAway: stop,
    comeBack: listen,
    async waitFor(n, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (messages.length < n) {
        if (Date.now() > until) throw new Error(`waited ${timeoutMs} ms for ${n} messages, ${messages.length} arrived`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return messages;
    },
    close: stop,
  };
}

// --- a small MIME reader: enough for what nodemailer writes ---

/** Decodes RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`); whitespace between two of them goes. */
export function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[QqBb]\?[^?]*\?=)\s+(?==\?[^?]+\?[QqBb]\?[^?]*\?=)/g, '$1')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, charset: string, enc: string, body: string) => {
      const bytes = enc.toUpperCase() === 'B' ? Buffer.from(body, 'base64') : qpBytes(body.replace(/_/g, ' '));
      return new TextDecoder(charset.toLowerCase()).decode(bytes);
    });
}

function qpBytes(text: string): Buffer {
  const out: number[] = [];
  const src = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < src.length; i++) {
    if (src[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(src.slice(i + 1, i + 3))) {
      out.push(parseInt(src.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(...Buffer.from(src[i], 'utf8'));
  }
  return Buffer.from(out);
}

interface Part {
  headerLines: string[];
  body: string;
}

function splitHead(raw: string): Part {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const headerLines: string[] = [];
  for (const line of head.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && headerLines.length) headerLines[headerLines.length - 1] += ` ${line.trim()}`;
    else if (line) headerLines.push(line);
  }
  return { headerLines, body };
}

const headerOf = (lines: string[], name: string) => {
  const line = lines.find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line === undefined ? undefined : line.slice(line.indexOf(':') + 1).trim();
};

function leaves(part: Part): { type: string; content: string }[] {
  const type = headerOf(part.headerLines, 'content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const sections = part.body.split(`--${boundary}`).slice(1);
    return sections.filter((s) => !s.startsWith('--')).flatMap((s) => leaves(splitHead(s.replace(/^\r?\n/, ''))));
  }
  const encoding = (headerOf(part.headerLines, 'content-transfer-encoding') ?? '7bit').toLowerCase();
  const bytes = encoding === 'base64' ? Buffer.from(part.body.replace(/\s+/g, ''), 'base64') : encoding === 'quoted-printable' ? qpBytes(part.body) : Buffer.from(part.body, 'utf8');
  return [{ type: type.split(';')[0].trim().toLowerCase(), content: bytes.toString('utf8').replace(/\r?\n$/, '') }];
}

export function parseMail(raw: string, envelope: { from: string; to: string[] }): ReceivedMail {
  const top = splitHead(raw);
  const parts = leaves(top);
  const header = (name: string) => {
    const v = headerOf(top.headerLines, name);
    return v === undefined ? undefined : decodeWords(v);
  };
  return {
    envelope,
    raw,
    headerLines: top.headerLines,
    header,
    subject: header('subject') ?? '',
    messageId: header('message-id') ?? '',
    text: parts.find((p) => p.type === 'text/plain')?.content ?? null,
    html: parts.find((p) => p.type === 'text/html')?.content ?? null,
    partTypes: parts.map((p) => p.type),
  };
}
