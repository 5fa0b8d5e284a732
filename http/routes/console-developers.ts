import type { FastifyRequest } from 'fastify';
import type { App } from './app-type.ts';
import type { AccountRegistry, WebhooksRegistry } from './deps.ts';
import { ListOf, responses, Type, withCode } from '../schemas/common.ts';
import {
  ConsoleApiKeySchema,
  ConsoleEventSchema,
  consolePageQuery,
  CONSOLE_PAGE_LIMIT,
  CreateEndpointBody,
  CreateKeyBody,
  DeletedEndpointSchema,
  ModeQuery,
  RollSecretBody,
  UpdateEndpointBody,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
} from '../schemas/console-devs.ts';
import { consoleCaller, requireLiveFor } from '../plugins/console-session.ts';
import { ROTATION_GRACE_MS } from '../../actors/account/api-key-rules.ts';
import type { apiKeyView } from '../../actors/account/views.ts';
import type { Mode } from '../../runtime/types.ts';

/** What these routes use. */
export interface ConsoleDeveloperRouteDeps {
  accounts: AccountRegistry;
  webhooks: WebhooksRegistry;
}

const hide = { hide: true, tags: ['console'] };
const READ = { auth: 'session' as const, permission: 'developers:read' as const };
const WRITE = { auth: 'session' as const, permission: 'developers:write' as const };

/** An id in a path: anything that is not one (a made-up id) is the same 404 as an unknown one. */
const idOf = (code: 'key_not_found' | 'webhook_endpoint_not_found') => withCode(Type.String({ format: 'uuid' }), code);
const KeyParams = Type.Object({ id: idOf('key_not_found') });
const EndpointParams = Type.Object({ id: idOf('webhook_endpoint_not_found') });
const DeliveryParams = Type.Object({ id: idOf('webhook_endpoint_not_found'), did: withCode(Type.String({ format: 'uuid' }), 'webhook_delivery_not_found') });

/** A key as the console shows it: until when the secret a rotation replaced keeps working. */
function consoleKey(k: ReturnType<typeof apiKeyView>) {
  return { ...k, previous_secret_expires_at: k.rotated_at ? new Date(Date.parse(k.rotated_at) + ROTATION_GRACE_MS).toISOString() : null };
}

/** A list of both modes' objects narrowed to `mode` when one is asked for (keys and endpoints are short lists, not paged). */
function ofMode<T extends { mode: string }>(list: { object: 'list'; data: T[]; has_more: boolean }, mode: Mode | undefined) {
  return mode ? { ...list, data: list.data.filter((x) => x.mode === mode) } : list;
}

/**
 * The console's developer pages: API keys, webhook endpoints with their deliveries, and the
 * events browser. Each asks the same actor message as the operator's route (admin-accounts.ts,
 * admin-webhooks.ts, events.ts) with the session's account; nothing is decided here.
 */
export function registerConsoleDeveloperRoutes(app: App, services: ConsoleDeveloperRouteDeps): void {
  const account = (request: FastifyRequest) => consoleCaller(request).accountId;
  const askAccount = services.accounts.ask.bind(services.accounts);
  const askWebhooks = services.webhooks.ask.bind(services.webhooks);

  // --- API keys ---

  app.get(
    '/console/api/keys',
    {
      config: READ,
      schema: { ...hide, querystring: Type.Object({ mode: ModeQuery }, { additionalProperties: false }), response: responses({ 200: ListOf(ConsoleApiKeySchema) }, ['invalid_parameter'], { auth: 'session' }) },
    },
    async (request) => {
      const list = ofMode(await askAccount(account(request), { type: 'list_keys' }), request.query.mode);
      return { ...list, data: list.data.map(consoleKey) };
    },
  );

  app.post(
    '/console/api/keys',
    {
      config: WRITE,
      schema: {
        ...hide,
        body: CreateKeyBody,
        response: responses({ 201: ConsoleApiKeySchema }, ['parameter_missing', 'invalid_parameter', 'invalid_scope', 'invalid_ip_allowlist', 'invalid_expires_at', 'kyb_incomplete'], {
          auth: 'session',
        }),
      },
    },
    async (request, reply) => reply.code(201).send(consoleKey(await askAccount(account(request), { type: 'create_key', input: { ...request.body, label: request.body.label.trim() } }))),
  );

  app.post(
    '/console/api/keys/:id/rotate',
    { config: WRITE, schema: { ...hide, params: KeyParams, response: responses({ 200: ConsoleApiKeySchema }, ['key_not_found', 'key_already_revoked'], { auth: 'session' }) } },
    async (request) => consoleKey(await askAccount(account(request), { type: 'rotate_key', keyId: request.params.id })),
  );

  app.delete(
    '/console/api/keys/:id',
    { config: WRITE, schema: { ...hide, params: KeyParams, response: responses({ 200: ConsoleApiKeySchema }, ['key_not_found', 'key_already_revoked'], { auth: 'session' }) } },
    async (request) => consoleKey(await askAccount(account(request), { type: 'revoke_key', keyId: request.params.id })),
  );

  // --- webhook endpoints ---

  app.get(
    '/console/api/webhook_endpoints',
    {
      config: READ,
      schema: { ...hide, querystring: Type.Object({ mode: ModeQuery }, { additionalProperties: false }), response: responses({ 200: ListOf(WebhookEndpointSchema) }, ['invalid_parameter'], { auth: 'session' }) },
    },
    async (request) => {
      return ofMode(await askWebhooks(account(request), { type: 'list_endpoints' }), request.query.mode);
    },
  );

  app.post(
    '/console/api/webhook_endpoints',
    {
      config: WRITE,
      schema: {
        ...hide,
        body: CreateEndpointBody,
        response: responses({ 201: WebhookEndpointSchema }, ['invalid_parameter', 'invalid_webhook_url', 'invalid_event_type', 'live_not_enabled'], { auth: 'session' }),
      },
    },
    async (request, reply) => {
      requireLiveFor(request, request.body.mode);
      return reply.code(201).send(await askWebhooks(account(request), { type: 'create_endpoint', input: request.body }));
    },
  );

  app.get(
    '/console/api/webhook_endpoints/:id',
    { config: READ, schema: { ...hide, params: EndpointParams, response: responses({ 200: WebhookEndpointSchema }, ['webhook_endpoint_not_found'], { auth: 'session' }) } },
    async (request) => askWebhooks(account(request), { type: 'get_endpoint', id: request.params.id }),
  );

  app.patch(
    '/console/api/webhook_endpoints/:id',
    {
      config: WRITE,
      schema: {
        ...hide,
        params: EndpointParams,
        body: UpdateEndpointBody,
        response: responses({ 200: WebhookEndpointSchema }, ['webhook_endpoint_not_found', 'invalid_parameter', 'invalid_webhook_url', 'invalid_event_type', 'live_not_enabled'], {
          auth: 'session',
        }),
      },
    },
    async (request) => {
      requireLiveFor(request, request.body.mode);
      return askWebhooks(account(request), { type: 'update_endpoint', id: request.params.id, patch: request.body });
    },
  );

  app.delete(
    '/console/api/webhook_endpoints/:id',
    { config: WRITE, schema: { ...hide, params: EndpointParams, response: responses({ 200: DeletedEndpointSchema }, ['webhook_endpoint_not_found'], { auth: 'session' }) } },
    async (request) => askWebhooks(account(request), { type: 'delete_endpoint', id: request.params.id }),
  );

  app.post(
    '/console/api/webhook_endpoints/:id/roll_secret',
    {
      config: WRITE,
      schema: { ...hide, params: EndpointParams, body: RollSecretBody, response: responses({ 200: WebhookEndpointSchema }, ['webhook_endpoint_not_found', 'invalid_parameter'], { auth: 'session' }) },
    },
    async (request) => askWebhooks(account(request), { type: 'roll_secret', id: request.params.id, graceSeconds: request.body.grace_seconds ?? 86_400 }),
  );

  app.post(
    '/console/api/webhook_endpoints/:id/test_event',
    { config: WRITE, schema: { ...hide, params: EndpointParams, response: responses({ 201: ConsoleEventSchema }, ['webhook_endpoint_not_found'], { auth: 'session' }) } },
    async (request, reply) => reply.code(201).send(await askWebhooks(account(request), { type: 'send_endpoint_test_event', id: request.params.id })),
  );

  app.get(
    '/console/api/webhook_endpoints/:id/deliveries',
    {
      config: READ,
      schema: {
        ...hide,
        params: EndpointParams,
        querystring: consolePageQuery({}),
        response: responses({ 200: ListOf(WebhookDeliverySchema) }, ['webhook_endpoint_not_found', 'invalid_cursor'], { auth: 'session' }),
      },
    },
    async (request) =>
      askWebhooks(account(request), {
        type: 'list_deliveries',
        id: request.params.id,
        limit: request.query.limit ?? CONSOLE_PAGE_LIMIT,
        startingAfter: request.query.starting_after,
      }),
  );

  app.post(
    '/console/api/webhook_endpoints/:id/deliveries/:did/resend',
    {
      config: WRITE,
      schema: {
        ...hide,
        params: DeliveryParams,
        response: responses({ 200: WebhookDeliverySchema }, ['webhook_endpoint_not_found', 'webhook_delivery_not_found', 'webhook_delivery_in_progress'], { auth: 'session' }),
      },
    },
    async (request) => askWebhooks(account(request), { type: 'resend_delivery', id: request.params.id, deliveryId: request.params.did }),
  );

  // --- events ---

  app.get(
    '/console/api/events',
    {
      config: READ,
      schema: {
        ...hide,
        querystring: consolePageQuery({ mode: ModeQuery, type: Type.Optional(Type.String({ maxLength: 64 })) }),
        response: responses({ 200: ListOf(ConsoleEventSchema) }, ['invalid_parameter', 'invalid_cursor'], { auth: 'session' }),
      },
    },
    async (request) => {
      const q = request.query;
      return askWebhooks(account(request), {
        type: 'list_events',
        mode: q.mode ?? 'test',
        eventType: q.type ?? null,
        order: 'desc',
        page: { limit: q.limit ?? CONSOLE_PAGE_LIMIT, startingAfter: q.starting_after },
      });
    },
  );

  app.get(
    '/console/api/events/:id',
    {
      config: READ,
      schema: {
        ...hide,
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({ mode: ModeQuery }, { additionalProperties: false }),
        response: responses({ 200: ConsoleEventSchema }, ['event_not_found', 'invalid_parameter'], { auth: 'session' }),
      },
    },
    async (request) => askWebhooks(account(request), { type: 'get_event', mode: request.query.mode ?? 'test', id: request.params.id }),
  );
}
