/**
 * Where a request to an address a customer or reseller gave may go (webhooks, site research, CalDAV
 * calendars). Outbound requests go only to public unicast addresses, so an
 * endpoint URL cannot be used to reach our own network, the cloud metadata service or the host
 * itself. Checked twice: when an endpoint is saved (`checkEndpointUrl`) and on every connection
 * (`guardedLookup`), because a name can resolve differently by the time we send (DNS rebinding).
 */
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Mode } from './types.ts';

/** How long saving an endpoint waits for its name to resolve before refusing it. */
const SAVE_LOOKUP_TIMEOUT_MS = 5_000;

// IPv6 prefixes whose last 32 bits are an IPv4 address the packet ends up at.
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
// Deprecated "IPv4-compatible" form (RFC 4291 2.5.5.1): ipaddr.js calls ::7f00:1 plain unicast.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
// The only IPv6 block IANA has allocated for global unicast; anything outside it is not a
// public host.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** Readable names for the ipaddr.js range labels and our own, used in refusal reasons. */
const CATEGORY_TEXT: Record<string, string> = {
  not_an_ip: 'not an IP address',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local (includes the cloud metadata address)',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved or documentation',
  uniqueLocal: 'unique-local',
  ipv4Compatible: 'IPv4-compatible IPv6',
  unallocated: 'outside IPv6 global unicast',
};

/**
 * Why `ip` must not be connected to, or null when it is a public unicast address.
 *
 * Allow-list rather than deny-list: IPv4 must be what ipaddr.js calls `unicast`, so besides
 * loopback, 0/8, link-local, RFC 1918, CGNAT, multicast and broadcast we also refuse its
 * `reserved` set (192.0.0/24 IETF assignments, the TEST-NET documentation blocks, 198.18/15
 * benchmarking, which some clouds use internally, 240/4, the old 6to4 relay 192.88.99/24) and
 * the AS112/AMT anycast blocks: none of them is a place a reseller hosts a webhook receiver, and
 * several are routed to internal infrastructure on real networks. IPv6 must be global unicast
 * (2000::/3) and outside every special block ipaddr.js knows (documentation, ORCHID, Teredo,
 * 6to4, benchmarking, …); the forms that carry an IPv4 address (mapped, RFC 6145 translated,
 * NAT64 64:ff9b::/96) are judged by that IPv4 address, so `::ffff:127.0.0.1` is loopback while
 * NAT64 to a public host still works on IPv6-only networks. Anything unparsable is refused.
 */
export function forbiddenCategory(ip: string): string | null {
  // net.isIP rejects the legacy IPv4 spellings ("0x7f.1", "010.0.0.1") ipaddr.js would accept.
  if (net.isIP(ip) === 0) return 'not_an_ip';
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return 'not_an_ip';
  }
  return addr.kind() === 'ipv4' ? ipv4Category(addr as ipaddr.IPv4) : ipv6Category(addr as ipaddr.IPv6);
}

/** True when a webhook must never be sent to `ip` (see `forbiddenCategory`). */
export function isForbiddenAddress(ip: string): boolean {
  return forbiddenCategory(ip) !== null;
}

function ipv4Category(addr: ipaddr.IPv4): string | null {
  const range = addr.range();
  return range === 'unicast' ? null : range;
}

function ipv6Category(addr: ipaddr.IPv6): string | null {
  const range = addr.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || addr.match(NAT64_WELL_KNOWN)) {
    return ipv4Category(embeddedIpv4(addr));
  }
  if (range !== 'unicast') return range;
  if (addr.match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  if (!addr.match(GLOBAL_UNICAST_V6)) return 'unallocated';
  return null;
}

function embeddedIpv4(addr: ipaddr.IPv6): ipaddr.IPv4 {
  const hi = addr.parts[6] ?? 0;
  const lo = addr.parts[7] ?? 0;
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function describe(ip: string, category: string): string {
  return `${ip} is ${CATEGORY_TEXT[category] ?? category}`;
}

/** A URL's hostname without the brackets of an IPv6 literal. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** The error a refused connection fails with; its message ends up in the delivery record. */
export function forbiddenAddressError(host: string, ip: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(
    `refused: ${host === ip ? '' : `${host} resolves to `}${describe(ip, forbiddenCategory(ip) ?? 'unknown')}`,
  );
  err.code = 'EFORBIDDENADDRESS';
  return err;
}

/**
 * A `lookup` for `http.request` that resolves like the default one but fails instead of
 * returning any forbidden address, so the socket connects only to an address that passed the
 * check. One forbidden answer refuses the whole name: a mixed answer is the shape of a rebinding
 * attempt, and the save-time check refuses it the same way. Node does not call `lookup` for IP
 * literals; the caller checks those itself.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const refused = allowPrivate ? undefined : addresses.find((a) => isForbiddenAddress(a.address));
      if (refused) return callback(forbiddenAddressError(hostname, refused.address), '');
      const first = addresses[0];
      if (!first) {
        const none: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        none.code = 'ENOTFOUND';
        return callback(none, '');
      }
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/** Options of the save-time check. */
export interface EndpointUrlOptions {
  mode: Mode;
  /** SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: local development and tests only. */
  allowPrivate: boolean;
}

export type EndpointUrlCheck = { ok: true } | { ok: false; reason: string };

function refuse(reason: string): EndpointUrlCheck {
  return { ok: false, reason };
}

/**
 * Whether `url` may be saved as a webhook endpoint: parses; https in live mode (http allowed in
 * test mode); no user or password; the host is a public IP literal or a name whose every
 * resolved address is public (unless `allowPrivate`).
 */
export async function checkEndpointUrl(url: string, opts: EndpointUrlOptions): Promise<EndpointUrlCheck> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse('not a valid URL');
  }
  const schemes = opts.mode === 'live' ? ['https:'] : ['https:', 'http:'];
  if (!schemes.includes(parsed.protocol)) {
    return refuse(opts.mode === 'live' ? 'live endpoints must use https' : 'the URL must use http or https');
  }
  // Credentials in the URL would be sent as Basic auth and shown wherever the URL is shown.
  if (parsed.username !== '' || parsed.password !== '') return refuse('the URL must not contain a user name or password');

  // WHATWG URL has already normalised numeric hosts ("2130706433", "0x7f.1") to dotted IPv4.
  const host = bareHost(parsed.hostname);
  if (host === '') return refuse('the URL has no host');
  if (net.isIP(host) !== 0) {
    const category = forbiddenCategory(host);
    return category && !opts.allowPrivate ? refuse(`address ${describe(host, category)}`) : { ok: true };
  }
  // RFC 6761: *.localhost is loopback by definition, whatever a resolver answers today.
  const lower = host.toLowerCase().replace(/\.$/, '');
  if (!opts.allowPrivate && (lower === 'localhost' || lower.endsWith('.localhost'))) {
    return refuse(`${host} is a loopback name`);
  }

  let addresses: dns.LookupAddress[];
  try {
    addresses = await lookupWithin(host, SAVE_LOOKUP_TIMEOUT_MS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return refuse(`dns: ${host} does not resolve (${code})`);
  }
  if (addresses.length === 0) return refuse(`dns: ${host} does not resolve (no addresses)`);
  if (!opts.allowPrivate) {
    for (const { address } of addresses) {
      const category = forbiddenCategory(address);
      if (category) return refuse(`${host} resolves to ${describe(address, category)}`);
    }
  }
  return { ok: true };
}

/** dns.promises.lookup bounded in time: getaddrinfo has no timeout of its own. */
async function lookupWithin(host: string, timeoutMs: number): Promise<dns.LookupAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('lookup timed out'), { code: 'ETIMEOUT' })), timeoutMs);
  });
  try {
    return await Promise.race([dns.promises.lookup(host, { all: true, verbatim: true }), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
