import type { AnyApp } from '../routes/app-type.ts';
import type { FastifyReply } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { ApiError } from '../errors.ts';
import type { Pool } from '../../db/pool.ts';
import { createRateLimitRepository } from '../../db/rate-limits.ts';
import type { AuthContext } from './authenticate.ts';

const MINUTE_MS = 60_000;
const BURST_WINDOW_MS = 10_000;

type StoreCallback = (err: Error | null, result?: { current: number; ttl: number }) => void;

/**
 * An @fastify/rate-limit store whose counters live in PostgreSQL, so every API process on the
 * database counts against one limit. Windows are fixed and aligned to the epoch (a minute window
 * runs from :00 to :00); one upsert per count.
 */
function postgresRateLimitStore(pool: Pool) {
  const repo = createRateLimitRepository(pool);
  return class PostgresRateLimitStore {
    incr(key: string, cb: StoreCallback, timeWindow: number): void {
      const now = Date.now();
      const start = Math.floor(now / timeWindow) * timeWindow;
      repo.hit(key, new Date(start)).then(
        (current) => cb(null, { current, ttl: start + timeWindow - now }),
        (err: Error) => cb(err),
      );
    }

    child(): PostgresRateLimitStore {
      return this;
    }
  };
}

export interface RateLimitOptions {
  /** `memory`: each process counts on its own (one API process); `postgres`: shared by all. */
  store: 'memory' | 'postgres';
  pool: Pool;
}

/** One window's count after a request was counted in it, and when the window ends (ms since the epoch). */
interface Counted {
  count: number;
  endsAtMs: number;
}

/** Counts one request of an account in its per-minute and its 10-second window at once. */
interface RequestCounter {
  count(accountId: string, nowMs: number): [Counted, Counted] | Promise<[Counted, Counted]>;
}

/** Accounts whose windows are kept in a process at most; past it, ended windows go, then the oldest. */
const MEMORY_ACCOUNTS = 100_000;

/**
 * The in-process counters: each window starts with the first request after the last one ended
 * (as @fastify/rate-limit's own memory store did) and lives for its length. Synchronous: counting
 * a request costs no promise and no microtask.
 */
class MemoryRequestCounter implements RequestCounter {
  private readonly windows = new Map<string, { minuteStartMs: number; minute: number; burstStartMs: number; burst: number }>();

  count(accountId: string, nowMs: number): [Counted, Counted] {
    let w = this.windows.get(accountId);
    if (!w) {
      if (this.windows.size >= MEMORY_ACCOUNTS) this.sweep(nowMs);
      w = { minuteStartMs: nowMs, minute: 0, burstStartMs: nowMs, burst: 0 };
      this.windows.set(accountId, w);
    }
    if (nowMs >= w.minuteStartMs + MINUTE_MS) {
      w.minuteStartMs = nowMs;
      w.minute = 0;
    }
    if (nowMs >= w.burstStartMs + BURST_WINDOW_MS) {
      w.burstStartMs = nowMs;
      w.burst = 0;
    }
    return [
      { count: ++w.minute, endsAtMs: w.minuteStartMs + MINUTE_MS },
      { count: ++w.burst, endsAtMs: w.burstStartMs + BURST_WINDOW_MS },
    ];
  }

  private sweep(nowMs: number): void {
    for (const [id, w] of this.windows) if (nowMs >= w.minuteStartMs + MINUTE_MS && nowMs >= w.burstStartMs + BURST_WINDOW_MS) this.windows.delete(id);
    // Still full: the accounts counted longest ago are forgotten first (a Map keeps insertion order).
    for (const id of this.windows.keys()) {
      if (this.windows.size < MEMORY_ACCOUNTS) break;
      this.windows.delete(id);
    }
  }
}

/**
 * The counters in PostgreSQL, shared by every API process: windows fixed and aligned to the
 * clock (a minute window runs from :00 to :00), both counted by one statement (one round trip).
 */
class PostgresRequestCounter implements RequestCounter {
  constructor(private readonly pool: Pool) {}

  async count(accountId: string, nowMs: number): Promise<[Counted, Counted]> {
    const minuteStartMs = nowMs - (nowMs % MINUTE_MS);
    const burstStartMs = nowMs - (nowMs % BURST_WINDOW_MS);
    const [minute, burst] = await createRateLimitRepository(this.pool).hitBoth(
      { key: `m:${accountId}`, windowStart: new Date(minuteStartMs) },
      { key: `b:${accountId}`, windowStart: new Date(burstStartMs) },
    );
    return [
      { count: minute, endsAtMs: minuteStartMs + MINUTE_MS },
      { count: burst, endsAtMs: burstStartMs + BURST_WINDOW_MS },
    ];
  }
}

/**
 * Per-account request limits (spec: Limits): a sustained per-minute window and a 10-second burst
 * window, both fixed. The counters are in-process or, with several API processes, in PostgreSQL
 * (docs/decisions.md). Headers describe the per-minute window, except on a 429 where they
 * describe the window that refused. @fastify/rate-limit stays registered (with the same store)
 * for the limits of other routes (`createRateLimit`: the calendar page's connection attempts).
 */
export async function installRateLimit(app: AnyApp, opts: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    cache: 100_000,
    ...(opts.store === 'postgres' ? { store: postgresRateLimitStore(opts.pool) } : {}),
  });
  const counter: RequestCounter = opts.store === 'postgres' ? new PostgresRequestCounter(opts.pool) : new MemoryRequestCounter();

  /** Sets the headers of the answer; the refusal when a window is over its limit. */
  const decide = (reply: FastifyReply, auth: AuthContext, [minute, burst]: [Counted, Counted], nowMs: number): ApiError | undefined => {
    // A window is exceeded by the request that takes its count past the limit (and every one after).
    // The shown window and its limit are picked without building an object per request.
    const minuteOver = minute.count > auth.requestsPerMinute;
    const refused = minuteOver ? minute : burst.count > auth.burst ? burst : null;
    const shown = refused ?? minute;
    const max = shown === minute ? auth.requestsPerMinute : auth.burst;
    // Strings, as fastify would make of the numbers.
    reply.header('x-ratelimit-limit', String(max));
    reply.header('x-ratelimit-remaining', String(Math.max(0, max - shown.count)));
    // The window's end, to the nearest second.
    reply.header('x-ratelimit-reset', String(Math.round(shown.endsAtMs / 1000)));
    if (!refused) return undefined;
    const retryAfter = String(Math.max(1, Math.ceil((refused.endsAtMs - nowMs) / 1000)));
    return new ApiError('rate_limit_exceeded', undefined, { 'retry-after': retryAfter });
  };

  // The callback form: a request without a key (a public route, the console) costs nothing, and
  // one counted in this process no promise either; the shared counters wait for their statement.
  app.addHook('onRequest', (request, reply, done) => {
    const auth = request.auth;
    if (!auth) return done();
    const nowMs = Date.now();
    const counted = counter.count(auth.accountId, nowMs);
    if (Array.isArray(counted)) return done(decide(reply, auth, counted, nowMs));
    counted.then((c) => done(decide(reply, auth, c, nowMs)), done);
  });
}
