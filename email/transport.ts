import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from '../runtime/logger.ts';
import { safeHeaders, type MessageHeaders } from './headers.ts';

/**
 * How an email leaves: nodemailer over SMTP_URL, or, without it (local development), each message
 * written whole as an .eml file under `<dataDir>/outbox-mail/` and logged (kind and recipients,
 * never the body: it may hold a link with a token). Either way the header fields pass through
 * `safeHeaders` first, so no caller can put a line break into a header.
 */

export interface OutgoingEmail extends MessageHeaders {
  /** The outbox row: names the file, and the Message-ID is made from it. */
  id: string;
  /** For the log only. */
  kind: string;
  html: string;
  text: string;
}

export type SendOutcome =
  | { ok: true; messageId: string; accepted: string[]; rejected: string[]; response: string }
  /** `permanent`: the receiving server refused for good (5xx for every recipient, or for the message itself). */
  | { ok: false; permanent: boolean; error: string; responseCode: number | null };

export interface MailTransport {
  /** `smtp` or `files`. */
  readonly kind: 'smtp' | 'files';
  send(message: OutgoingEmail): Promise<SendOutcome>;
  close(): void;
}

/** Waits on a slow server, ms: each phase bounded, so an attempt always ends well within the sender's lease. */
const TIMEOUTS = { connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 45_000, dnsTimeout: 10_000 };
/**
 * The whole attempt, ms: a server that answers a byte at a time never trips `socketTimeout` (every
 * byte is activity), so the attempt is aborted at this deadline and its connection closed. Below
 * the sender's own cap (90 s) and lease (2 min).
 */
export const ATTEMPT_TIMEOUT_MS = 80_000;

/** Where the .eml files go without SMTP_URL. */
const outboxMailDir = (dataDir: string) => path.join(dataDir, 'outbox-mail');

export function createMailTransport(options: { smtpUrl: string | undefined; dataDir: string; log: Logger; attemptTimeoutMs?: number }): MailTransport {
  return options.smtpUrl ? smtpTransport(options.smtpUrl, options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS) : fileTransport(outboxMailDir(options.dataDir), options.log);
}

/** nodemailer's message options: the checked headers, both parts, and nothing read from disk or the network. */
function mailOptions(message: OutgoingEmail) {
  const h = safeHeaders(message);
  return {
    headers: h,
    options: {
      from: { name: h.from.name, address: h.from.address },
      to: h.to,
      replyTo: h.replyTo ? (h.replyTo.name ? { name: h.replyTo.name, address: h.replyTo.address } : h.replyTo.address) : undefined,
      subject: h.subject,
      messageId: h.messageId,
      date: new Date(),
      text: message.text,
      html: message.html,
      headers: { 'Auto-Submitted': 'auto-generated' },
      disableFileAccess: true,
      disableUrlAccess: true,
    },
  };
}

/** The message options, or the permanent refusal of a header that cannot be sent (an address that is not one). */
function prepare(message: OutgoingEmail): ReturnType<typeof mailOptions> | (SendOutcome & { ok: false }) {
  try {
    return mailOptions(message);
  } catch (err) {
    return { ok: false, permanent: true, error: (err as Error).message, responseCode: null };
  }
}

function smtpTransport(url: string, attemptTimeoutMs: number): MailTransport {
  const transporter = nodemailer.createTransport({ url, ...TIMEOUTS });
  return {
    kind: 'smtp',
    async send(message) {
      const prepared = prepare(message);
      if ('ok' in prepared) return prepared;
      try {
        const info = await transporter.sendMail({ ...prepared.options, signal: AbortSignal.timeout(attemptTimeoutMs) });
        return {
          ok: true,
          messageId: prepared.headers.messageId,
          accepted: (info.accepted ?? []).map(String),
          rejected: (info.rejected ?? []).map(String),
          response: String(info.response ?? ''),
        };
      } catch (err) {
        if ((err as SmtpError)?.code === 'EABORT') return { ok: false, permanent: false, error: `the server did not finish within ${attemptTimeoutMs / 1000} s; the connection was closed`, responseCode: null };
        return refusal(err);
      }
    },
    close: () => transporter.close(),
  };
}

interface SmtpError extends Error {
  code?: string;
  command?: string;
  responseCode?: number;
  rejectedErrors?: { responseCode?: number }[];
}

/**
 * A failed send, classified. Permanent: every recipient refused with a 5xx, or the message itself
 * refused with a 5xx after DATA. Everything else (a 4xx, the server away, a timeout, a refusal of
 * our own sign-in or sender address, which the operator can fix) is tried again later.
 */
export function refusal(err: unknown): SendOutcome & { ok: false } {
  const e = err as SmtpError;
  const code = typeof e?.responseCode === 'number' ? e.responseCode : null;
  const allRecipients5xx =
    e?.code === 'EENVELOPE' && e.command === 'RCPT TO' && (e.rejectedErrors ?? []).length > 0 && (e.rejectedErrors ?? []).every((r) => (r.responseCode ?? 0) >= 500);
  const message5xx = e?.code === 'EMESSAGE' && code !== null && code >= 500;
  return { ok: false, permanent: allRecipients5xx || message5xx, error: String(e?.message ?? err).slice(0, 500), responseCode: code };
}

function fileTransport(dir: string, log: Logger): MailTransport {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    kind: 'files',
    async send(message) {
      const prepared = prepare(message);
      if ('ok' in prepared) return prepared;
      try {
        const info = await composer.sendMail(prepared.options);
        await fs.mkdir(dir, { recursive: true });
        // One file per outbox row: sending the same row again (after a crash) writes the same file.
        const file = path.join(dir, `${message.kind}-${message.id}.eml`);
        await fs.writeFile(`${file}.tmp`, info.message as Buffer, { mode: 0o600 });
        await fs.rename(`${file}.tmp`, file);
        log.info({ email_id: message.id, kind: message.kind, to: prepared.headers.to, file }, 'email written to a file (SMTP_URL is not set)');
        return { ok: true, messageId: prepared.headers.messageId, accepted: prepared.headers.to, rejected: [], response: `written to ${file}` };
      } catch (err) {
        return { ok: false, permanent: false, error: String((err as Error)?.message ?? err), responseCode: null };
      }
    },
    close: () => composer.close(),
  };
}
