import type { AnyApp } from '../routes/app-type.ts';
import type { FastifyInstance } from 'fastify';
import crypto from 'node:crypto';

export const REQUEST_ID_HEADER = 'request-id';

/**
 * Headers of every response. `nosniff`: a browser never reads a JSON error or a download as HTML.
 * `no-store`: no cache keeps what the service answers, above all the one-time secrets (key
 * secrets, session tokens, onboarding URLs, webhook signing secrets); a route may say otherwise.
 */
export const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' } as const;

/**
 * One pino line per request (request id, account, route, status, duration). The route is the
 * pattern (`/onboarding/:token`), never the raw URL, so a token in a path is never logged; no
 * header is logged at all.
 */
export function installRequestLog(app: AnyApp): void {
  app.decorateRequest('startedAtNs', 0n);
  // Hooks that never wait take fastify's callback form: no promise and no microtask per request.
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAtNs = process.hrtime.bigint();
    reply.header(REQUEST_ID_HEADER, request.id);
    reply.headers(SECURITY_HEADERS);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const durationMs = Number(process.hrtime.bigint() - request.startedAtNs) / 1e6;
    request.log.info(
      {
        request_id: request.id,
        account_id: request.auth?.accountId ?? null,
        mode: request.auth?.mode ?? null,
        method: request.method,
        route: request.routeOptions.url ?? 'unknown',
        status: reply.statusCode,
        duration_ms: Math.round(durationMs * 100) / 100,
      },
      'request',
    );
    done();
  });
}

/** `req_` + 24 hex characters. randomUUID draws from a cached entropy pool: far cheaper per request than randomBytes. */
export const genRequestId = () => `req_${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`;
