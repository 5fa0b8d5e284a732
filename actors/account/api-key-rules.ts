import ipaddr from 'ipaddr.js';
import type { Mode } from '../../runtime/types.ts';
import type { Clock } from '../../runtime/clock.ts';

/** Every permission a key can hold (spec: Authentication 2). */
export const SCOPES = [
  'customers:read',
  'customers:write',
  'calls:read',
  'calls:write',
  'chat:write',
  'numbers:read',
  'numbers:order',
  'brand:read',
  'brand:write',
  'events:read',
  'billing:read',
  'sites:read',
  'sites:order',
] as const;
export type Scope = (typeof SCOPES)[number];

export const KEY_PREFIX: Record<Mode, string> = { test: 'svc_test_', live: 'svc_live_' };

/** How long a rotated secret keeps working (spec: 24-hour grace window). */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * The clock a key's dates are on (created, expires, rotated with its grace, revoked), and so the
 * one its checks compare with: a live key is a live credential, on real time, which no test clock
 * moves; a test key follows the schedule clock (docs/decisions.md, "Real time and the test clock").
 */
export function keyClock(mode: Mode, schedule: Clock, real: Clock): Clock {
  return mode === 'live' ? real : schedule;
}

/** The facts about a presented secret that decide whether it is accepted. */
export interface KeyFacts {
  mode: Mode;
  scopes: readonly string[];
  ipAllowlist: readonly string[] | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** Set when this secret was replaced by a rotation. */
  secretGraceUntil: Date | null;
  accountStatus: 'active' | 'suspended';
  accountMode: Mode;
}

export type KeyRejection =
  | 'key_revoked'
  | 'key_rotated'
  | 'key_expired'
  | 'ip_not_allowed'
  | 'reseller_suspended'
  | 'live_not_enabled'
  | 'scope_missing';

/** What a request brings to the check: when, from where, and what its route needs. */
export interface KeyRequestFacts {
  now: Date;
  ip: string;
  /** Permission the route needs; null: any valid key. */
  scope: Scope | null;
  /**
   * The route admits a live key before its account has gone live: it reads the account's own data
   * (balance, usage, brand) or sets it up (brand), and acts on no live customer or call.
   */
  beforeGoLive?: boolean;
}

/**
 * Decides whether a known secret may make a request. Credential problems come first (they are
 * true whatever the request), then where the request comes from, then the account, then scope.
 */
export function checkKey(key: KeyFacts, request: KeyRequestFacts): KeyRejection | null {
  if (key.revokedAt && key.revokedAt <= request.now) return 'key_revoked';
  if (key.secretGraceUntil && key.secretGraceUntil <= request.now) return 'key_rotated';
  if (key.expiresAt && key.expiresAt <= request.now) return 'key_expired';
  if (key.ipAllowlist && key.ipAllowlist.length > 0 && !ipAllowed(request.ip, key.ipAllowlist)) return 'ip_not_allowed';
  if (key.accountStatus === 'suspended') return 'reseller_suspended';
  if (key.mode === 'live' && key.accountMode !== 'live' && !request.beforeGoLive) return 'live_not_enabled';
  if (request.scope && !key.scopes.includes(request.scope)) return 'scope_missing';
  return null;
}

/**
 * Normalises an allowlist entry (an address or a CIDR range, IPv4 or IPv6) to `address/bits`.
 * Returns null when the entry is neither.
 */
export function normaliseAllowlistEntry(entry: string): string | null {
  const text = entry.trim();
  const [address] = text.split('/');
  // ipaddr.js also reads legacy IPv4 forms (octal "010.0.0.1", "1.2.3", hex): refuse them, or a
  // zero-padded entry would silently open another network. IPv6 zone ids are refused too.
  const plainIpv4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!plainIpv4 && !(address.includes(':') && !address.includes('%') && ipaddr.IPv6.isValid(address))) return null;
  try {
    if (text.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(text);
      return `${addr.toString()}/${bits}`;
    }
    const addr = ipaddr.parse(text);
    return `${addr.toString()}/${addr.kind() === 'ipv4' ? 32 : 128}`;
  } catch {
    return null;
  }
}

/** True when `ip` (as the socket reports it, IPv4-mapped IPv6 included) is inside one entry. */
export function ipAllowed(ip: string, allowlist: readonly string[]): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return false;
  }
  for (const entry of allowlist) {
    try {
      const range = ipaddr.parseCIDR(entry);
      let candidate = addr;
      // An IPv4 client may be listed as an IPv4-mapped IPv6 range and the reverse.
      if (range[0].kind() === 'ipv6' && candidate.kind() === 'ipv4') candidate = (candidate as ipaddr.IPv4).toIPv4MappedAddress();
      if (candidate.kind() === range[0].kind() && candidate.match(range)) return true;
    } catch {
      /* a malformed stored entry never matches */
    }
  }
  return false;
}
