import type { AnyApp } from '../routes/app-type.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';
import { hashToken } from '../../runtime/tokens.ts';
import type { KeyAuthenticator } from './authenticate.ts';
import crypto from 'node:crypto';

/**
 * Authentication by route: `key` (every /v1 route unless it says otherwise) checks the API key
 * and its scope; `console` checks the operator token; `none` is public. It runs on onRequest,
 * before the body is read, so a bad credential is refused before anything else.
 */
export function installAuth(app: AnyApp, opts: { keys: KeyAuthenticator; consoleTokenHash: () => Buffer | null }): void {
  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const config = request.routeOptions.config;
    const auth = config.auth ?? (request.url.startsWith('/v1/') ? 'key' : 'none');
    if (auth === 'key') {
      request.auth = await opts.keys.authenticate(request.headers.authorization, request.ip, config.scope ?? null);
    } else if (auth === 'console') {
      const expected = opts.consoleTokenHash();
      const header = request.headers.authorization;
      const given = header?.startsWith('Bearer ') ? hashToken(header.slice(7).trim()) : null;
      if (!expected || !given || !crypto.timingSafeEqual(expected, given)) throw new ApiError('console_unauthorized');
    }
  });
}
