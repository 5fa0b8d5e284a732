import type { Mode } from '../../runtime/types.ts';

/**
 * Which host names a customer may point at a site (pure). A live site takes a name of the public
 * DNS with at least one label below its registrable domain (`www.brightdental.com`, not
 * `brightdental.com`: an apex cannot carry a CNAME). Special-use names (RFC 6761 and after) are
 * nobody's to claim. A test site takes only a name reserved for testing (`.test`, `.example`,
 * `example.com`/`.net`/`.org`): a free test build never holds a real domain.
 */

/** A host name shape: letters, digits and hyphens in labels, a dot, a top-level domain of letters (so no IP literal). */
export function normaliseDomain(text: string): string | null {
  const name = text.trim().toLowerCase().replace(/\.$/, '');
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(name)) return null;
  return name;
}

/**
 * Special-use and private names: RFC 6761 (localhost, test, invalid, example and example.com,
 * .net, .org), RFC 6762 (local), RFC 7686 (onion), RFC 8375 (home.arpa), RFC 9476 (alt), ICANN's
 * reserved private `internal` (2024), `arpa`, and the suffixes private networks commonly use.
 */
const SPECIAL_TLDS = new Set(['localhost', 'test', 'invalid', 'example', 'local', 'onion', 'alt', 'internal', 'arpa', 'lan', 'home', 'corp', 'intranet', 'private', 'localdomain']);
const RESERVED_DOMAINS = ['example.com', 'example.net', 'example.org'];
/** Names reserved for testing (RFC 2606 / 6761): what a test site may claim. */
const TEST_TLDS = new Set(['test', 'example']);

/** Second-level labels under a country code that are public suffixes themselves ("co.uk", "com.au"). */
const COUNTRY_SECOND_LEVELS = new Set(['co', 'com', 'net', 'org', 'gov', 'edu', 'ac', 'ltd', 'plc', 'me', 'nom', 'gob', 'or', 'ne', 'go', 'sch', 'nhs', 'police', 'mil', 'int', 'info', 'biz']);

const under = (name: string, domain: string) => name === domain || name.endsWith(`.${domain}`);
const tldOf = (name: string) => name.slice(name.lastIndexOf('.') + 1);

/** Whether `name` is a special-use or reserved name. */
export function isSpecialUse(name: string): boolean {
  return SPECIAL_TLDS.has(tldOf(name)) || RESERVED_DOMAINS.some((d) => under(name, d));
}

/** Whether `name` is reserved for testing (`.test`, `.example`, example.com/.net/.org). */
export function isTestingName(name: string): boolean {
  return TEST_TLDS.has(tldOf(name)) || RESERVED_DOMAINS.some((d) => under(name, d));
}

/**
 * Whether `name` is a registrable domain itself (an apex: `brightdental.com`,
 * `brightdental.co.uk`, `bright.test`), which cannot carry a CNAME. The registrable domain is
 * read from the name's last labels: two, or three under a country code's public second level.
 */
export function isApex(name: string): boolean {
  const labels = name.split('.');
  if (RESERVED_DOMAINS.includes(name)) return true;
  const tld = labels[labels.length - 1];
  const registrable = tld.length === 2 && labels.length >= 3 && COUNTRY_SECOND_LEVELS.has(labels[labels.length - 2]) ? 3 : 2;
  return labels.length <= registrable;
}

/** Why `name` (normalised) cannot be a site's domain in `mode`, as an error code and message; null when it can. */
export function domainRefusal(name: string, mode: Mode): { code: 'invalid_domain' | 'test_mode_domain'; message: string } | null {
  if (isSpecialUse(name) && !(mode === 'test' && isTestingName(name))) {
    return { code: 'invalid_domain', message: `${name} is a special-use or reserved name, not a domain of the customer.` };
  }
  if (mode === 'test' && !isTestingName(name)) {
    return { code: 'test_mode_domain', message: `A test site takes only a name reserved for testing (such as www.${name.split('.')[0]}.test); real domains are for live sites.` };
  }
  if (isApex(name)) return { code: 'invalid_domain', message: `${name} is an apex domain, which cannot carry a CNAME; use a name under it, such as www.${name}.` };
  return null;
}
