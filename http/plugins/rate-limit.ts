import type { AnyApp } from '../routes/app-type.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { ApiError } from '../errors.ts';

const MINUTE_MS = 60_000;
const BURST_WINDOW_MS = 10_000;

type Window = { max?: number; remaining?: number; ttl?: number; isExceeded?: boolean };

/**
 * Per-account request limits (spec: Limits): a sustained per-minute window and a 10-second burst
 * window, both fixed. The counters are @fastify/rate-limit's in-process store; with several API
 * processes each counts its own share (docs/decisions.md). Headers describe the per-minute
 * window, except on a 429 where they describe the window that refused.
 */
export async function installRateLimit(app: AnyApp): Promise<void> {
  await app.register(rateLimit, { global: false, cache: 100_000 });
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
    reply.header('x-ratelimit-reset', Math.ceil((Date.now() + (r.ttl ?? 0)) / 1000));
  };

  app.addHook('onRequest', async (request, reply) => {
    if (!request.auth) return;
    const minute = (await perMinute(request)) as Window;
    const tenSeconds = (await burst(request)) as Window;
    const refused = minute.isExceeded ? minute : tenSeconds.isExceeded ? tenSeconds : null;
    setHeaders(reply, refused ?? minute);
    if (refused) {
      const retryAfter = String(Math.max(1, Math.ceil((refused.ttl ?? 1000) / 1000)));
      throw new ApiError('rate_limit_exceeded', undefined, { 'retry-after': retryAfter });
    }
  });
}
