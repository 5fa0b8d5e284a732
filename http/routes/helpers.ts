import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Written } from '../../actors/shared/transaction.ts';
import type { CustomerDirectory } from '../../actors/customer/customer-directory.ts';
import type { AuthContext } from '../plugins/authenticate.ts';
import { REPLAYED_HEADER } from '../plugins/idempotency.ts';
import { writeStatusOf } from '../write-status.ts';
import type { Page } from '../../actors/shared/list.ts';
import { DEFAULT_PAGE_LIMIT } from '../schemas/common.ts';

/** The caller of an authenticated route (set by the auth hook). */
export function caller(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error('route reached without authentication');
  return request.auth;
}

/**
 * Answers a write with its body and the status the route declares for what it did
 * (`config.writeStatus`), marking an idempotent replay.
 */
export function sendWritten<T>(reply: FastifyReply, written: Written<T>) {
  const declared = reply.request.routeOptions.config.writeStatus;
  if (!declared) throw new Error(`route ${reply.request.routeOptions.url} answers a write but declares no writeStatus`);
  if (written.replayed) reply.header(REPLAYED_HEADER, 'true');
  return reply.code(writeStatusOf(declared, written.created)).send(written.body);
}

/** What a route needs to name customers. */
export interface CustomerLookupDeps {
  customerDirectory: CustomerDirectory;
}

/** The customer id an `{id}` path segment names (service id or external_ref) in the caller's account and mode. */
export async function customerIdOf(deps: CustomerLookupDeps, request: FastifyRequest, idOrRef: string): Promise<string> {
  const auth = caller(request);
  return (await deps.customerDirectory.find(auth.accountId, auth.mode, idOrRef)).id;
}

/** The account, mode and customer an `{id}` path segment names: who owns a customer's numbers and websites. */
export async function customerOwnerOf(deps: CustomerLookupDeps, request: FastifyRequest, idOrRef: string) {
  const auth = caller(request);
  return { accountId: auth.accountId, mode: auth.mode, customerId: await customerIdOf(deps, request, idOrRef) };
}

/** The page a list query asks for (the validator has filled in the default `limit`). */
export function pageOf(query: { limit?: number; starting_after?: string }): Page {
  return { limit: query.limit ?? DEFAULT_PAGE_LIMIT, startingAfter: query.starting_after };
}
