import ipaddr from 'ipaddr.js';

/** The window failed authentications are counted in, ms. */
export const FAILURE_WINDOW_MS = 60_000;
/** Most client addresses tracked at once; past it, windows that have ended are dropped first. */
const MAX_ADDRESSES = 100_000;

/**
 * Counts failed authentications (an unknown API key, a wrong admin token) per client address
 * (`throttleKey`) in fixed one-minute windows. Once an address has failed `limit` times in a
 * window, every further attempt from it is refused until the window ends, before its credential
 * is looked at: a guesser learns nothing more and costs nothing more. In-process: with several API
 * processes an address gets `limit` failures in each.
 */
export class FailureThrottle {
  private readonly windows = new Map<string, { startMs: number; failures: number }>();

  constructor(
    private readonly limit: number,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Seconds the client at `ip` must wait before it may try again, or 0 when it may try now. */
  retryAfterSeconds(ip: string): number {
    // Until anyone has failed, a request costs one size check here.
    if (this.windows.size === 0) return 0;
    const w = this.current(throttleKey(ip));
    if (!w || w.failures < this.limit) return 0;
    return Math.max(1, Math.ceil((w.startMs + FAILURE_WINDOW_MS - this.nowMs()) / 1000));
  }

  /** Records one failed attempt from the client at `ip`. */
  fail(ip: string): void {
    const address = throttleKey(ip);
    const w = this.current(address);
    if (w) {
      w.failures++;
      return;
    }
    if (this.windows.size >= MAX_ADDRESSES) this.sweep();
    this.windows.set(address, { startMs: this.nowMs(), failures: 1 });
  }

  /** The address's window if it has not ended. */
  private current(address: string) {
    const w = this.windows.get(address);
    if (w && this.nowMs() - w.startMs < FAILURE_WINDOW_MS) return w;
    if (w) this.windows.delete(address);
    return undefined;
  }

  private sweep(): void {
    const now = this.nowMs();
    for (const [address, w] of this.windows) if (now - w.startMs >= FAILURE_WINDOW_MS) this.windows.delete(address);
    // Still full: addresses spraying failures are forgotten rather than growing without bound.
    if (this.windows.size >= MAX_ADDRESSES) this.windows.clear();
  }
}

/**
 * Who failed, for the throttle: the address, or for IPv6 its /64, which one subscriber usually
 * holds whole (counting single IPv6 addresses would let one client rotate through 2^64 of them).
 */
export function throttleKey(ip: string): string {
  try {
    const address = ipaddr.process(ip);
    if (address.kind() === 'ipv6') return `${(address as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16)).join(':')}::/64`;
    return address.toString();
  } catch {
    return ip;
  }
}
