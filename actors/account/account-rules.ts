import crypto from 'node:crypto';
import { Refusal } from '../../runtime/refusal.ts';
import { SCOPES, normaliseAllowlistEntry, type Scope } from './api-key-rules.ts';
import type { BrandField } from '../../db/accounts.ts';
import { brandDomainRefusal } from './brand-domain-rules.ts';
import { addressDomain, emailAddressProblem, hasControlCharacters } from '../../runtime/email-address.ts';

/**
 * A URL-safe account slug from its name; `n` > 1 adds a suffix to step past a taken one: `-2`
 * and `-3`, then `randomWord` (many agencies share a name; counting up would take a query each).
 * Pure: the caller draws the random word (`randomSlugWord`).
 */
export function slugify(name: string, n = 1, randomWord?: string): string {
  const base =
    name
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, 40)
      .replace(/^-+|-+$/g, '') || 'account';
  if (n <= 1) return base;
  if (n <= 3) return `${base}-${n}`;
  if (!randomWord || !/^[a-z0-9]+$/.test(randomWord)) throw new RangeError('slugify needs a random word of a-z0-9 past the third attempt');
  return `${base}-${randomWord}`;
}

/** A random suffix for `slugify`: up to 7 base-36 characters. */
export function randomSlugWord(): string {
  return crypto.randomBytes(4).readUInt32BE(0).toString(36);
}

/** Scopes of a new key: every scope when none are given; an unknown one is refused. */
export function parseScopes(scopes: string[] | undefined): Scope[] {
  if (scopes === undefined) return [...SCOPES];
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new Refusal('invalid_scope', `Unknown scope(s): ${unknown.join(', ')}. Known: ${SCOPES.join(', ')}.`);
  return [...new Set(scopes)] as Scope[];
}

export function parseAllowlist(entries: string[] | null | undefined): string[] | null {
  if (!entries || entries.length === 0) return null;
  return entries.map((e) => {
    const normalised = normaliseAllowlistEntry(e);
    if (!normalised) throw new Refusal('invalid_ip_allowlist', `"${e}" is not an IPv4/IPv6 address or CIDR range.`);
    return normalised;
  });
}

export function parseFutureTimestamp(value: string | null | undefined, now: Date): Date | null {
  if (value === undefined || value === null) return null;
  // A zone is required (no server-local guesses) and the date must exist (no 30 February).
  const match = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.exec(value);
  const d = new Date(value);
  const [y, m, day] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0];
  const calendar = new Date(Date.UTC(y, m - 1, day));
  if (!match || Number.isNaN(d.getTime()) || calendar.getUTCMonth() !== m - 1 || calendar.getUTCDate() !== day) {
    throw new Refusal('invalid_expires_at', 'expires_at must be an ISO 8601 timestamp with a zone, such as 2027-01-31T00:00:00.000Z.');
  }
  if (d <= now) throw new Refusal('invalid_expires_at', 'expires_at must be in the future.');
  return d;
}

const HEX_COLOUR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** Checks one brand field's value (null clears and is always allowed); throws invalid_brand_field. */
export function checkBrandField(field: BrandField, value: string | null): void {
  if (value === null) return;
  const bad = (why: string) => {
    throw new Refusal('invalid_brand_field', `${field} ${why}.`);
  };
  // Brand fields become mail headers (From name, Reply-To) and page text: a line break would start a header of its own.
  // The email sender's own check (runtime/email-address.ts), so a brand never saves what its emails would drop.
  if (hasControlCharacters(value)) bad('must not contain control characters such as line breaks or tabs');
  switch (field) {
    case 'primary_color':
    case 'accent_color':
      if (!HEX_COLOUR.test(value)) bad('must be a hex colour such as #1A2B3C');
      return;
    case 'logo_url': {
      let url: URL | null = null;
      try {
        url = new URL(value);
      } catch {
        /* reported below */
      }
      if (!url || url.protocol !== 'https:') bad('must be an https URL');
      return;
    }
    case 'support_email': {
      // An address mail is sent from and replied to: the sender's check, and a public domain (a dot in it).
      const problem = emailAddressProblem(value) ?? (addressDomain(value).includes('.') ? null : 'has a domain without a dot');
      if (problem) bad(`must be an email address (it ${problem})`);
      return;
    }
    case 'domain': {
      const refused = brandDomainRefusal(value);
      if (refused) throw new Refusal('invalid_brand_field', `${refused}.`);
      return;
    }
    case 'display_name':
    case 'email_from_name':
      if (value.trim() === '') bad('must not be blank');
      return;
  }
}

/**
 * Signing the reseller agreement: a version other than the one on file is a new signature, dated
 * `now` (and kept in the history); the version already on file is no change at all, so a retried
 * or repeated request neither moves `signed_at` nor adds to the history. Returns null then.
 */
export function agreementSignature(
  onFile: { agreement_version: string | null; agreement_signed_at: Date | null },
  version: string,
  now: Date,
): { version: string; signedAt: Date } | null {
  if (onFile.agreement_signed_at !== null && onFile.agreement_version === version) return null;
  return { version, signedAt: now };
}
