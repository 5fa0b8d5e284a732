import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';

/**
 * Closing the HTTP server without losing a request (a rolling upgrade: `pm2 reload` starts a new
 * worker, waits for its `ready`, then sends the old one SIGINT):
 *
 * 1. linger (`lingerMs`): the server still listens and serves as usual, but every answer from now
 *    on (also to a request that came before) carries `Connection: close`, so a busy keep-alive connection is closed by us right after an answer
 *    instead of while the client may be sending on it;
 * 2. the listener closes: no new connection (under pm2's cluster mode the primary hands new
 *    connections to the other workers; a lone process refuses them). Only the listener: node's
 *    `server.close()` would also close every connection without a request in progress, including
 *    one accepted a moment ago whose request is on its way (the client sees a reset). For
 *    `settleMs` those connections deliver their requests, answered as in the linger;
 * 3. `app.close()`: connections still idle are closed, requests in flight run to their end;
 * 4. a request that still arrives on an open connection is served as usual until `graceMs` after
 *    the close began, and after that answered `503 service_unavailable` in the error shape with
 *    `Retry-After` (never fastify's own 503: app.ts sets `return503OnClosing: false`).
 *
 * `closeGracefully` resolves once every connection is closed.
 */
export const CLOSE_LINGER_MS = 1_000;
export const CLOSE_SETTLE_MS = 500;
export const CLOSE_GRACE_MS = 3_000;
export const CLOSING_RETRY_AFTER_SECONDS = 1;

export interface GracefulClose {
  /** Starts closing (idempotent); resolves when the server is closed. */
  closeGracefully(): Promise<void>;
}

const closers = new WeakMap<FastifyInstance, GracefulClose>();
/** Apps whose graceful close has begun (readiness fails from its first moment: routes/health.ts). */
const closingApps = new WeakSet<FastifyInstance>();

/** Whether `app`'s graceful close has begun. */
export function isClosing(app: FastifyInstance): boolean {
  return closingApps.has(app);
}

/** Installed before the other hooks, so a refusal during close costs no authentication or rate-limit round trip. */
export function installGracefulClose(app: FastifyInstance, opts: { lingerMs?: number; settleMs?: number; graceMs?: number } = {}): void {
  const lingerMs = opts.lingerMs ?? CLOSE_LINGER_MS;
  const settleMs = opts.settleMs ?? CLOSE_SETTLE_MS;
  const graceMs = opts.graceMs ?? CLOSE_GRACE_MS;
  let closingSince: number | undefined;
  let closing: Promise<void> | undefined;
  // Both hooks take fastify's callback form: no promise and no microtask per request while open.
  app.addHook('onRequest', (request, reply, done) => {
    if (closingSince === undefined) return done();
    reply.header('connection', 'close');
    if (Date.now() - closingSince < graceMs) return done();
    request.log.info({ request_id: request.id }, 'a request reached a closing server; answered 503 with Retry-After');
    done(
      new ApiError('service_unavailable', 'This server is restarting; retry after the number of seconds in Retry-After (another server takes the request).', {
        'retry-after': String(CLOSING_RETRY_AFTER_SECONDS),
      }),
    );
  });
  // A request that came before the close but is answered during it: its connection is closed after
  // the answer, or an idle keep-alive connection would hold the close up for keepAliveTimeout.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closingSince !== undefined) reply.header('connection', 'close');
    done(null, payload);
  });
  closers.set(app, {
    closeGracefully: () =>
      (closing ??= (async () => {
        closingSince = Date.now();
        closingApps.add(app);
        const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
        await sleep(lingerMs);
        if (app.server.listening) {
          net.Server.prototype.close.call(app.server);
          await sleep(settleMs);
        }
        await app.close();
      })()),
  });
}

/** Closes an app built with `installGracefulClose` gracefully (a plain `close()` otherwise). */
export function closeGracefully(app: FastifyInstance): Promise<void> {
  const closer = closers.get(app);
  return closer ? closer.closeGracefully() : app.close();
}
