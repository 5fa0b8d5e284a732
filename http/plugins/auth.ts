import type { AnyApp } from '../routes/app-type.ts';
import type { FastifyRequest, RouteOptions } from 'fastify';
import crypto from 'node:crypto';
import { ApiError, apiErrorOf, type ErrorCode } from '../errors.ts';
import { hashToken } from '../../runtime/tokens.ts';
import type { KeyAuthenticator } from './authenticate.ts';
import { FailureThrottle } from './auth-throttle.ts';
import { authenticateConsole } from './console-session.ts';
import type { ConsolePeople } from '../../actors/console/people.ts';

/** Answers that mean "this credential is not one we know": what a guesser gets, so what is counted. */
const GUESS_FAILURES = new Set<ErrorCode>(['invalid_api_key', 'admin_unauthorized']);

export interface AuthOptions {
  keys: KeyAuthenticator;
  adminTokenHash: () => Buffer | null;
  /** The console's people and sessions (routes with auth 'session'). */
  consolePeople: ConsolePeople;
  /** The service's public origin (scheme, host, port): a console write from another origin is refused. */
  publicOrigin: () => string;
  /** Failed authentications one client address may make per minute before it is answered 429. */
  failuresPerMinute: number;
}

/**
 * Authentication by route: `key` checks the API key and its scope; `admin` checks the operator
 * token; `session` checks a console session cookie, its CSRF token and the role's permission
 * (http/plugins/console-session.ts); `none` is public. The mode is the matched route's, fixed when the route is declared:
 * its `config.auth`, or `key` for a route whose pattern is under /v1/. The request's URL never
 * decides, so a spelling the router still matches (`/%76%31/…`, `http://host/v1/…`) cannot skip
 * the check. A route that declares no mode stops the app from starting.
 *
 * It runs on onRequest, before the body is read, so a bad credential is refused before anything
 * else; failed attempts are counted per client address and throttled (429 with Retry-After).
 */
export function installAuth(app: AnyApp, opts: AuthOptions): void {
  app.decorateRequest('auth', null);
  app.decorateRequest('consoleSession', null);
  const throttle = new FailureThrottle(opts.failuresPerMinute);

  const undeclared: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    if (!route.config?.auth && route.url.startsWith('/v1/')) route.config = { ...route.config, auth: 'key' };
    // A plugin's hook running after this one may still declare it (the chat CORS preflight route).
    if (!route.config?.auth) undeclared.push(route);
    else if (route.config.auth === 'session' && !route.config.permission) undeclared.push(route);
  });
  app.addHook('onReady', async () => {
    const missing = undeclared.filter((route) => !route.config?.auth).map((route) => `${route.method} ${route.url}`);
    if (missing.length) throw new Error(`routes declare no authentication mode (config.auth): ${missing.join(', ')}`);
    const unguarded = undeclared.filter((route) => route.config?.auth === 'session' && !route.config.permission).map((route) => `${route.method} ${route.url}`);
    if (unguarded.length) throw new Error(`console routes declare no permission (config.permission): ${unguarded.join(', ')}`);
  });

  // The callback form, so a request that needs no credential (a public route, no route) costs no
  // promise; the others wait for `authenticateRequest`.
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    if (request.is404 || request.routeOptions.config.auth === 'none') return done();
    authenticateRequest(request).then(() => done(), done);
  });

  async function authenticateRequest(request: FastifyRequest): Promise<void> {
    const { auth, scope, beforeGoLive, permission, beforeTwoFactor, whileSuspended } = request.routeOptions.config;
    if (auth === 'session') {
      request.consoleSession = await authenticateConsole(request, opts.consolePeople, opts.publicOrigin(), { permission: permission!, beforeTwoFactor: beforeTwoFactor ?? false, whileSuspended: whileSuspended ?? false });
      return;
    }
    if (auth !== 'key' && auth !== 'admin') throw new Error(`route ${request.routeOptions.url} reached without an authentication mode`);

    const wait = throttle.retryAfterSeconds(request.ip);
    if (wait) {
      throw new ApiError('rate_limit_exceeded', 'Too many failed authentication attempts from this address; retry after the number of seconds in Retry-After.', {
        'retry-after': String(wait),
      });
    }
    try {
      if (auth === 'key') {
        request.auth = await opts.keys.authenticate(request.headers.authorization, request.ip, { scope: scope ?? null, beforeGoLive: beforeGoLive ?? false });
      } else {
        const expected = opts.adminTokenHash();
        const header = request.headers.authorization;
        const given = header?.startsWith('Bearer ') ? hashToken(header.slice(7).trim()) : null;
        if (!expected || !given || !crypto.timingSafeEqual(expected, given)) throw new ApiError('admin_unauthorized');
      }
    } catch (err) {
      const code = apiErrorOf(err)?.code;
      if (code && GUESS_FAILURES.has(code)) throttle.fail(request.ip);
      throw err;
    }
  }
}
