/**
 * Email addresses and header text, checked before anything reaches a mail header (the email
 * sender, email/, and the settings of runtime/config.ts share these). Pure.
 *
 * An address is the common dot-atom form `local@domain`: no quoted local part, no comments, no
 * display name, nothing a header could be split on. A domain is DNS labels (`localhost` and an IPv4
 * dotted quad included, as development set-ups use) or a bracketed IPv4 literal.
 */

/**
 * C0 and C1 controls, DEL, the Unicode line and paragraph separators, and the bidi embeddings,
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069: a From name `Support \u202egnp.exe`
 * reads as `Support exe.png`): never in a header.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g;
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const IPV4_LITERAL = /^\[(?:\d{1,3}\.){3}\d{1,3}\]$/;

export function hasControlCharacters(text: string): boolean {
  return CONTROL.test(text);
}

/** Why `value` is not an address the service sends to or from, or null when it is one. */
export function emailAddressProblem(value: string): string | null {
  if (hasControlCharacters(value)) return 'contains a control character';
  if (value.length > 254) return 'is longer than 254 characters';
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return 'is not of the form name@domain';
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  // RFC 2047 forbids encoded words in an address; some relays decode them into another address.
  if (value.includes('=?')) return 'has an encoded word (=?…?=) in it';
  if (local.length > 64 || !LOCAL.test(local)) return 'has a name part that is not a plain address (letters, digits, dots and !#$%&\'*+/=?^_`{|}~-)';
  if (IPV4_LITERAL.test(domain)) return null;
  const labels = domain.replace(/\.$/, '').split('.');
  if (labels.length === 0 || !labels.every((l) => LABEL.test(l))) return 'has a domain that is not a DNS name';
  return null;
}

export const isEmailAddress = (value: string): boolean => emailAddressProblem(value) === null;

/** The domain of an address (after its last `@`), lower-cased. */
export const addressDomain = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/**
 * Text for a header field (a display name, a subject): every run of control characters, line
 * breaks among them, becomes one space, so a value can never start a header of its own; the
 * result is trimmed and at most `maxLength` characters.
 */
export function headerText(text: string, maxLength = 200): string {
  const flat = text.replace(CONTROLS, ' ').replace(/\s{2,}/g, ' ').trim();
  const chars = [...flat];
  return chars.length > maxLength ? `${chars.slice(0, maxLength - 1).join('')}…` : flat;
}
