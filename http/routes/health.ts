import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import { probeDatabase } from '../../db/health.ts';
import { ApiError } from '../errors.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../plugins/error-boundary.ts';
import type { App } from './app-type.ts';
import { isClosing } from '../plugins/graceful-close.ts';

/** What these routes use. */
export interface HealthRouteDeps {
  pool: Pool;
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

/**
 * Health for supervisors and load balancers (docs/api.md, "Health"):
 * - `/healthz` is liveness: the process answers HTTP. No key, no database, no work; a supervisor
 *   restarts a process that fails it (registered in http/app.ts, unchanged).
 * - `/readyz` is readiness: 200 `{ready: true}` while this process can serve, that is its database
 *   answers a trivial statement within 2 s and it is not draining; otherwise 503
 *   service_unavailable in the error shape with Retry-After, so a load balancer takes it out of
 *   rotation until it is back. No key; nothing in the answer names the database or its error.
 */
export function registerHealthRoutes(app: App, services: HealthRouteDeps): void {
  app.addHook('preClose', async () => {
    draining.add(app);
  });
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
