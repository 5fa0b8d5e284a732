import type { AnyApp } from '../routes/app-type.ts';
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import stringify from 'safe-stable-stringify';
import type { Pool } from '../../db/pool.ts';
import { findIdempotencyRecord } from '../../db/idempotency.ts';
import type { Clock } from '../../runtime/clock.ts';
import { ApiError } from '../errors.ts';
import { MAX } from '../schemas/customers.ts';
import { writeStatusOf } from '../write-status.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * Idempotency-Key on the write routes that take it. After validation (a refused request stores
 * nothing) the key and a hash of the request are attached to the request; the actor claims the
 * key in the transaction that carries out the effect. A finished record is replayed here at once.
 */
export function installIdempotency(app: AnyApp, opts: { pool: Pool; clock: Clock }): void {
  app.decorateRequest('idempotency', undefined);
  // A replay answers with the status the route gives what the write did, so the route must say it.
  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent && !route.config.writeStatus) throw new Error(`${route.method} ${route.url} takes Idempotency-Key but declares no writeStatus`);
  });
  // The callback form, so a request without an Idempotency-Key costs no promise; one with a key
  // waits for `lookUp`.
  app.addHook('preHandler', (request, reply, done) => {
    if (!request.routeOptions.config.idempotent || !request.auth || request.headers[IDEMPOTENCY_HEADER] === undefined) return done();
    lookUp(request, reply).then(() => done(), done);
  });

  async function lookUp(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    if (!request.auth) return;
    const header = request.headers[IDEMPOTENCY_HEADER]!;
    const key = Array.isArray(header) ? header[0] : header;
    if (key.length < 1 || key.length > MAX.idempotencyKey) throw new ApiError('idempotency_key_too_long');
    // The whole request: method, path with its query string, and the body in a canonical form.
    const requestHash = crypto
      .createHash('sha256')
      .update(`${request.method} ${request.url}\n${stringify(request.body ?? null)}`)
      .digest();
    const claim = { accountId: request.auth.accountId, mode: request.auth.mode, key, requestHash };
    const existing = await findIdempotencyRecord(opts.pool, claim, opts.clock.now());
    if (existing?.kind === 'mismatch') throw new ApiError('idempotency_key_reused');
    if (existing?.kind === 'replay') {
      reply.header(REPLAYED_HEADER, 'true');
      return reply.code(writeStatusOf(request.routeOptions.config.writeStatus!, existing.created)).send(existing.body);
    }
    request.idempotency = claim;
  }
}
