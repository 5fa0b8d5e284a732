import { Resolver } from 'node:dns/promises';
import type { CnameCheck } from './room.ts';

/**
 * The DNS check of a customer's domain: verified when its CNAME record names the site's target.
 * Asks `servers` (`host` or `host:port`, SWITCHBOARD_DNS_SERVERS) when given, else the system's
 * resolvers. A domain without a CNAME (an apex, or one not pointed yet) is not verified; a lookup
 * that fails for any other reason throws (the caller checks again later).
 */
export function createCnameCheck(servers: string[] | undefined, timeoutMs = 3_000): CnameCheck {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers?.length) resolver.setServers(servers);
  const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');
  return async (domain, target) => {
    try {
      const names = await resolver.resolveCname(domain);
      return names.some((n) => bare(n) === bare(target));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // No such name, or no CNAME at it (node says NXDOMAIN with ENOTFOUND): a definite "not pointed".
      if (code === 'ENODATA' || code === 'ENOTFOUND') return false;
      throw err;
    }
  };
}
