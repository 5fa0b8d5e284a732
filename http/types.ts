import type { Scope } from '../actors/account/api-key-rules.ts';
import type { IdempotencyClaim } from '../db/idempotency.ts';
import type { AuthContext } from './plugins/authenticate.ts';

/** How a route authenticates: an API key (default under /v1), the console token, or nothing. */
export type RouteAuth = 'key' | 'console' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /** Permission an API key needs; absent means any valid key (GET /v1/me, /v1/coverage). */
    scope?: Scope;
    /** The route accepts Idempotency-Key. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
    idempotency: IdempotencyClaim | undefined;
    startedAtNs: bigint;
  }
}
