import type { Scope } from '../actors/account/api-key-rules.ts';
import type { IdempotencyClaim } from '../db/idempotency.ts';
import type { AuthContext } from './plugins/authenticate.ts';
import type { WriteStatus } from './write-status.ts';
import type { ConsolePermission } from '../actors/account/console-roles.ts';
import type { ConsoleSession } from './plugins/console-session.ts';

/**
 * How a route authenticates: an API key (default for routes under /v1), the admin token, a
 * console session cookie (routes under /console/api), or nothing.
 */
export type RouteAuth = 'key' | 'admin' | 'session' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /** Permission a console role needs (auth 'session'; required there). */
    permission?: ConsolePermission;
    /** A console route open to a person who has not set up a two-factor method the account requires (session, two-factor setup, sign-out). */
    beforeTwoFactor?: boolean;
    /** A console write a person may still make while the account is suspended (their own sign-out, password, two-factor, sessions). */
    whileSuspended?: boolean;
    /** Permission an API key needs; absent means any valid key (GET /v1/me, /v1/coverage). */
    scope?: Scope;
    /**
     * A live key may use the route before its account goes live: it reads the account's own data
     * or sets it up, and acts on no live customer or call (docs/api.md, Authentication).
     */
    beforeGoLive?: boolean;
    /** The route accepts Idempotency-Key. */
    idempotent?: boolean;
    /** A write route's statuses by what the write did: its answers and their replays use them (http/write-status.ts). */
    writeStatus?: WriteStatus;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
    /** The console session of a route with auth 'session'. */
    consoleSession: ConsoleSession | null;
    idempotency: IdempotencyClaim | undefined;
  }
}
