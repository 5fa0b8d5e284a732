import type { App } from './app-type.ts';
import type { ChatSessions } from './deps.ts';
import { TTL_SECONDS } from '../../actors/chat/session-rules.ts';
import { CustomerIdParams } from '../schemas/customers.ts';
import { ChatSessionSchema, MintSessionBody, RevocationSchema, RevokeSessionsQuery } from '../schemas/chat.ts';
import { ListOf, PageQuery, responses } from '../schemas/common.ts';
import { caller, customerIdOf, pageOf, sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { CREATED_OR_EXISTING } from '../write-status.ts';

/** What these routes use. */
export interface SessionRouteDeps extends CustomerLookupDeps {
  chat: ChatSessions;
}

/** The reseller's side of the assistant: minting, listing and ending a customer's chat sessions. */
export function registerSessionRoutes(app: App, services: SessionRouteDeps): void {
  const { chat } = services;
  const ownerOf = async (request: Parameters<typeof caller>[0], idOrRef: string) => {
    const auth = caller(request);
    return { accountId: auth.accountId, mode: auth.mode, customerId: await customerIdOf(services, request, idOrRef) };
  };

  app.post(
    '/v1/customers/:id/sessions',
    {
      config: { scope: 'chat:write', idempotent: true, writeStatus: CREATED_OR_EXISTING },
      schema: {
        operationId: 'createChatSession',
        summary: "Mint a short-lived session token for one person of a customer's staff to talk to the assistant",
        description: 'The token is shown once, in this response; hand it to the browser, never an API key.',
        tags: ['chat'],
        params: CustomerIdParams,
        body: MintSessionBody,
        response: responses({ 201: ChatSessionSchema }, [
          'end_user_ref_required', 'ttl_out_of_range', 'field_too_long', 'customer_not_found', 'session_not_created', 'unknown_parameter',
          'invalid_json', 'idempotency_key_reused', 'idempotency_key_too_long', 'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const owner = await ownerOf(request, request.params.id);
      return sendWritten(reply, await chat.mint(owner, { ...request.body, ttl_seconds: request.body.ttl_seconds ?? TTL_SECONDS.default }, request.idempotency));
    },
  );

  app.get(
    '/v1/customers/:id/sessions',
    {
      config: { scope: 'customers:read' },
      schema: {
        operationId: 'listChatSessions',
        summary: "A customer's chat sessions, newest first (never the token)",
        description: 'Every session minted for the customer with its status and the messages it has used.',
        tags: ['chat'],
        params: CustomerIdParams,
        querystring: PageQuery,
        response: responses({ 200: ListOf(ChatSessionSchema, 'ChatSessionList') }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => {
      const owner = await ownerOf(request, request.params.id);
      return chat.list(owner.customerId, pageOf(request.query));
    },
  );

  app.delete(
    '/v1/customers/:id/sessions',
    {
      config: { scope: 'chat:write' },
      schema: {
        operationId: 'revokeChatSessions',
        summary: 'End one session (session_id) or every open session of one person (end_user_ref); 0 ended is a success',
        description: 'An ended session refuses its token at once.',
        tags: ['chat'],
        params: CustomerIdParams,
        querystring: RevokeSessionsQuery,
        response: responses({ 200: RevocationSchema }, [
          'session_selector_required', 'session_not_found', 'customer_not_found', 'invalid_parameter', 'unknown_parameter', 'field_too_long',
          'scope_missing',
        ]),
      },
    },
    async (request) => chat.revoke(await ownerOf(request, request.params.id), request.query),
  );
}
