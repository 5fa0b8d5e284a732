import type { AnyApp } from '../routes/app-type.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { ApiError } from '../errors.ts';
import type { Pool } from '../../db/pool.ts';
import { createRateLimitRepository } from '../../db/rate-limits.ts';

const MINUTE_MS = 60_000;
const BURST_WINDOW_MS = 10_000;

type Window = { max?: number; remaining?: number; ttl?: number; isExceeded?: boolean };

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

/**
 * Per-account request limits (spec: Limits): a sustained per-minute window and a 10-second burst
 * window, both fixed. The counters are in-process (@fastify/rate-limit's store) or, with several
 * API processes, in PostgreSQL (docs/decisions.md). Headers describe the per-minute window,
 * except on a 429 where they describe the window that refused.
 */
export async function installRateLimit(app: AnyApp, opts: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    cache: 100_000,
    ...(opts.store === 'postgres' ? { store: postgresRateLimitStore(opts.pool) } : {}),
  });
  const perMinute = app.createRateLimit({
    timeWindow: MINUTE_MS,
    max: (req: FastifyRequest) => req.auth!.requestsPerMinute,
    keyGenerator: (req: FastifyRequest) => `m:${req.auth!.accountId}`,
  });
  const burst = app.createRateLimit({
    timeWindow: BURST_WINDOW_MS,
    max: (req: FastifyRequest) => req.auth!.burst,
    keyGenerator: (req: FastifyRequest) => `b:${req.auth!.accountId}`,
  });

  const setHeaders = (reply: FastifyReply, r: Window) => {
    reply.header('x-ratelimit-limit', r.max);
    reply.header('x-ratelimit-remaining', r.remaining);
    // The window's end, to the nearest second: the ttl was measured a moment before this line, so
    // rounding up would push an aligned window's end one second late.
    reply.header('x-ratelimit-reset', Math.round((Date.now() + (r.ttl ?? 0)) / 1000));
  };

  // The callback form, so a request without a key (a public route, the console) costs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.auth) return done();
    limit(request, reply).then(() => done(), done);
  });

  async function limit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const [minute, tenSeconds] = (await Promise.all([perMinute(request), burst(request)])) as [Window, Window];
    const refused = minute.isExceeded ? minute : tenSeconds.isExceeded ? tenSeconds : null;
    setHeaders(reply, refused ?? minute);
    if (refused) {
      const retryAfter = String(Math.max(1, Math.ceil((refused.ttl ?? 1000) / 1000)));
      throw new ApiError('rate_limit_exceeded', undefined, { 'retry-after': retryAfter });
    }
  }
}
