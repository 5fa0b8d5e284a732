import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Outcome } from '../../actors/shared/transaction.ts';
import type { Services } from '../../runtime/services.ts';
import type { AuthContext } from '../plugins/authenticate.ts';
import { REPLAYED_HEADER } from '../plugins/idempotency.ts';
import type { Page } from '../../actors/shared/list.ts';
import { DEFAULT_PAGE_LIMIT } from '../schemas/common.ts';

/** The caller of an authenticated route (set by the auth hook). */
export function caller(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error('route reached without authentication');
  return request.auth;
}

/** Answers with a write's status and body, marking an idempotent replay. */
export function sendOutcome<T>(reply: FastifyReply, outcome: Outcome<T>) {
  if (outcome.replayed) reply.header(REPLAYED_HEADER, 'true');
  return reply.code(outcome.status).send(outcome.body);
}

/** The customer id an `{id}` path segment names (service id or external_ref) in the caller's mode. */
export async function customerIdOf(services: Services, request: FastifyRequest, idOrRef: string): Promise<string> {
  const auth = caller(request);
  return services.accounts.ask(auth.accountId, { type: 'resolve_customer', mode: auth.mode, idOrRef });
}

/** The page a list query asks for (the validator has filled in the default `limit`). */
export function pageOf(query: { limit?: number; starting_after?: string }): Page {
  return { limit: query.limit ?? DEFAULT_PAGE_LIMIT, startingAfter: query.starting_after };
}
