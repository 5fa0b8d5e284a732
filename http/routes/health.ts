import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import { probeDatabase } from '../../db/health.ts';
import { ApiError } from '../errors.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../plugins/error-boundary.ts';
import type { App } from './app-type.ts';
import { isClosing } from '../plugins/graceful-close.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../runtime/config.ts';
import { genRequestId, REQUEST_ID_HEADER, requestLineLevel, requestLineWriter, SECURITY_HEADERS, type RequestLine } from '../plugins/request-log.ts';
import { hostOf, isServiceHost } from '../plugins/brand-host.ts';
import { hostLines } from '../plugins/request-head.ts';
import { observeRequest } from '../../runtime/metrics.ts';

/** What these routes use. */
export interface HealthRouteDeps {
  pool: Pool;
  config: Pick<Config, 'publicUrl'>;
}

/** Apps whose process is draining: readiness fails so a load balancer sends no new requests. */
const draining = new WeakSet<object>();

/**
 * Marks an app as draining: from now on `/readyz` answers 503. A graceful close
 * (plugins/graceful-close.ts, from its first moment, while it still serves) and `app.close()`
 * (fastify's preClose) do it too, so a load balancer moves away while requests in flight finish.
 */
export function markDraining(app: FastifyInstance | App): void {
  draining.add(app);
}

/** Whether `app` was marked draining or has begun to close. */
export function isDraining(app: FastifyInstance | App): boolean {
  return draining.has(app) || isClosing(app as FastifyInstance);
}

/** The body of `/healthz`. */
const ALIVE = '{"ok":true}';
const ALIVE_HEADERS = {
  [REQUEST_ID_HEADER]: '',
  ...SECURITY_HEADERS,
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(Buffer.byteLength(ALIVE)),
};

/**
 * `GET /healthz` answered before fastify sees the request, where nothing of the API's work
 * applies: the service's own host (a brand domain's or a site's host is the API's to answer), one
 * Host line, no body, no query, and the server not closing. The answer, its headers, its request
 * line in the log and its count in the metrics are those of the fastify route, which answers
 * every other `/healthz` (HEAD, another host, a closing server, `app.inject`). Liveness is
 * asked every few seconds by every supervisor and load balancer: this keeps it to a few µs, and
 * its request line is at debug (`requestLineLevel`).
 */
function healthzFastPath(app: App, publicHost: string) {
  const writeLine = requestLineWriter(app.log);
  const log = app.log as typeof app.log & { isLevelEnabled(level: string): boolean };
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.url !== '/healthz' || req.method !== 'GET') return false;
    const { headers } = req;
    if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
    if (!isServiceHost(hostOf(req), publicHost) || hostLines(req.rawHeaders) > 1 || isDraining(app)) return false;
    const startedAtNs = process.hrtime.bigint();
    const id = genRequestId();
    res.writeHead(200, { ...ALIVE_HEADERS, [REQUEST_ID_HEADER]: id });
    res.end(ALIVE);
    const seconds = Number(process.hrtime.bigint() - startedAtNs) / 1e9;
    // Its line is at debug (requestLineLevel): made only when that level is written.
    if (log.isLevelEnabled(requestLineLevel('/healthz', 200))) {
      const line: RequestLine = { request_id: id, account_id: null, mode: null, method: 'GET', route: '/healthz', status: 200, duration_ms: Math.round(seconds * 1e5) / 100 };
      writeLine(line);
    }
    observeRequest('GET', '/healthz', 200, seconds);
    return true;
  };
}

/**
 * Puts `healthzFastPath` in front of fastify's handler of the HTTP server's requests (the server's
 * `request` listeners), so fastify's own server settings (timeouts, keep-alive) stay as they are.
 */
function answerHealthzFirst(app: App, publicHost: string): void {
  const fast = healthzFastPath(app, publicHost);
  const server = app.server;
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (fast(req, res)) return;
    for (const handler of handlers) handler.call(server, req, res);
  });
}

/**
 * Health for supervisors and load balancers (docs/api.md, "Health"):
 * - `/healthz` is liveness: the process answers HTTP. No key, no database, no work; a supervisor
 *   restarts a process that fails it. Most are answered before fastify (`healthzFastPath`).
 * - `/readyz` is readiness: 200 `{ready: true}` while this process can serve, that is its database
 *   answers a trivial statement within 2 s and it is not draining; otherwise 503
 *   service_unavailable in the error shape with Retry-After, so a load balancer takes it out of
 *   rotation until it is back. No key; nothing in the answer names the database or its error.
 */
export function registerHealthRoutes(app: App, services: HealthRouteDeps): void {
  app.addHook('preClose', async () => {
    draining.add(app);
  });
  app.get('/healthz', { config: { auth: 'none' }, schema: { hide: true } }, async () => ({ ok: true }));
  answerHealthzFirst(app, new URL(services.config.publicUrl).hostname.toLowerCase());
  app.get('/readyz', { config: { auth: 'none' }, schema: { hide: true } }, async () => {
    if (isDraining(app)) {
      throw new ApiError('service_unavailable', 'This process is shutting down; retry after the number of seconds in Retry-After.', {
        'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
      });
    }
    try {
      await probeDatabase(services.pool);
    } catch (err) {
      // A query timeout (the server accepts but does not answer) is the same for a load balancer.
      if (isDatabaseUnreachable(err) || /Query read timeout/.test(String((err as Error)?.message))) {
        throw new ApiError('service_unavailable', undefined, { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) });
      }
      throw err;
    }
    return { ready: true };
  });
}
