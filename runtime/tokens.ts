import crypto from 'node:crypto';
import zlib from 'node:zlib';

/**
 * Secret tokens in the format GitHub uses for its own: a readable prefix, 30 random base62
 * characters and a 6-character base62 CRC32 of prefix + random part. Secret scanners can match
 * the prefix, and a mistyped or truncated token is refused by its checksum without a lookup.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const RANDOM_LENGTH = 30;
export const CHECKSUM_LENGTH = 6;

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      // 248 = 4 * 62: rejection sampling keeps every character equally likely
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function base62(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62(zlib.crc32(body) >>> 0, CHECKSUM_LENGTH);
}

/** A new token `prefix + random + checksum`. */
export function mintToken(prefix: string): string {
  const body = prefix + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

/**
 * True when `token` is `prefix` followed by a well-formed random part and a matching checksum.
 * The checksum comparison is constant-time.
 */
export function isWellFormed(token: string, prefix: string): boolean {
  if (token.length !== prefix.length + RANDOM_LENGTH + CHECKSUM_LENGTH || !token.startsWith(prefix)) return false;
  const body = token.slice(0, -CHECKSUM_LENGTH);
  if (!/^[0-9A-Za-z]+$/.test(body.slice(prefix.length))) return false;
  const given = Buffer.from(token.slice(-CHECKSUM_LENGTH));
  const expected = Buffer.from(checksum(body));
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/**
 * SHA-256 of a token: the only form in which a secret is stored. The one-shot `crypto.hash`
 * (the same digest) makes no Hash object: every authenticated request hashes its key.
 */
export function hashToken(token: string): Buffer {
  return crypto.hash('sha256', token, 'buffer');
}

/** Random URL-safe identifier material (event ids, request ids). */
export function randomHex(bytes: number): string {
  return crypto.randomBytes(bytes).toString('hex');
}
