import { addressDomain, emailAddressProblem, headerText } from '../runtime/email-address.ts';

/**
 * The header fields of an email, made safe: display names and the subject lose every control
 * character (a CR or LF in a brand's `email_from_name` or in a subject becomes a space, never a
 * header of its own); an address that is not a plain address (control characters included) is
 * refused. Pure.
 */

export interface MessageHeaders {
  from: { name: string; address: string };
  to: string[];
  replyTo?: { name?: string | null; address: string } | null;
  subject: string;
  /** `<id@domain>`: `messageIdFor`. */
  messageId: string;
}

/** A header field that cannot be sent as it is (an address that is not one). */
export class HeaderRefused extends Error {
  override name = 'HeaderRefused';
}

/** Longest display name and subject kept, characters. */
const NAME_MAX = 100;
const SUBJECT_MAX = 200;
const MESSAGE_ID = /^<[A-Za-z0-9._-]+@[A-Za-z0-9.[\]-]+>$/;

/**
 * The stable Message-ID of an outbox row: `<row id@from domain>`. Sending the row again (after a
 * crash between the server's answer and our record of it) sends the same Message-ID, which
 * receivers use to recognise the repeat.
 */
export function messageIdFor(rowId: string, fromAddress: string): string {
  return `<${rowId}@${addressDomain(fromAddress)}>`;
}

function address(field: string, value: string): string {
  const trimmed = value.trim();
  const problem = emailAddressProblem(trimmed);
  if (problem) throw new HeaderRefused(`${field} address ${JSON.stringify(value)} ${problem}`);
  return trimmed;
}

/**
 * Header text with no encoded word of its own: `=?` becomes `= ?`. Many mail programs decode an
 * RFC 2047 word even where the standard says not to (inside a quoted display name), so a name
 * typed as `=?UTF-8?B?…?=` could show a line break or another address once read.
 */
const plainText = (text: string, max: number): string => headerText(text.replace(/=\?/g, '= ?'), max);

export function safeHeaders(h: MessageHeaders): Required<Omit<MessageHeaders, 'replyTo'>> & { replyTo: { name: string; address: string } | null } {
  const to = [...new Set(h.to.map((a) => address('To', a).toLowerCase()))];
  if (to.length === 0) throw new HeaderRefused('no recipient');
  if (!MESSAGE_ID.test(h.messageId)) throw new HeaderRefused(`Message-ID ${JSON.stringify(h.messageId)} is not of the form <id@domain>`);
  return {
    from: { name: plainText(h.from.name, NAME_MAX), address: address('From', h.from.address) },
    to,
    replyTo: h.replyTo ? { name: plainText(h.replyTo.name ?? '', NAME_MAX), address: address('Reply-To', h.replyTo.address) } : null,
    subject: plainText(h.subject, SUBJECT_MAX),
    messageId: h.messageId,
  };
}
