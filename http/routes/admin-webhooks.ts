import type { App } from './app-type.ts';
import type { WebhooksRegistry } from './deps.ts';
import { ModeSchema, Nullable, responses, Type, withCode } from '../schemas/common.ts';
import { MAX_ROLL_GRACE_SECONDS } from '../../actors/webhooks/endpoints.ts';

const ADMIN = { auth: 'admin' as const };
const hide = { hide: true, tags: ['admin'] };
const AccountParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const EndpointParams = Type.Object({ id: Type.String({ format: 'uuid' }), eid: Type.String({ maxLength: 64 }) });
const EventTypes = Type.Optional(withCode(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50 }), 'invalid_event_type'));

/** What these routes use. */
export interface AdminWebhookRouteDeps {
  webhooks: WebhooksRegistry;
  /** Runs one webhook sender round now and waits for its attempts; resolves to the deliveries claimed. */
  sendNow: () => Promise<number>;
}

/** Webhook endpoints: console only (spec). The signing secret is shown once, on create and roll. */
export function registerAdminWebhookRoutes(app: App, services: AdminWebhookRouteDeps): void {
  const ask = services.webhooks.ask.bind(services.webhooks);
  const base = '/admin/v1/accounts/:id/webhook_endpoints';

  app.post(
    base,
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        body: Type.Object(
          {
            url: withCode(Type.String({ minLength: 1, maxLength: 2048 }), 'invalid_webhook_url'),
            mode: withCode(ModeSchema, 'invalid_parameter'),
            event_types: EventTypes,
            description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: responses({}, ['account_not_found', 'invalid_webhook_url', 'invalid_event_type'], { auth: 'admin' }),
      },
    },
    async (request, reply) => reply.code(201).send(await ask(request.params.id, { type: 'create_endpoint', input: request.body })),
  );

  app.get(base, { config: ADMIN, schema: { ...hide, params: AccountParams } }, async (request) => ask(request.params.id, { type: 'list_endpoints' }));

  app.get(`${base}/:eid`, { config: ADMIN, schema: { ...hide, params: EndpointParams } }, async (request) =>
    ask(request.params.id, { type: 'get_endpoint', id: request.params.eid }),
  );

  app.patch(
    `${base}/:eid`,
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: EndpointParams,
        body: Type.Object(
          {
            url: Type.Optional(withCode(Type.String({ minLength: 1, maxLength: 2048 }), 'invalid_webhook_url')),
            event_types: EventTypes,
            description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => ask(request.params.id, { type: 'update_endpoint', id: request.params.eid, patch: request.body }),
  );

  app.delete(`${base}/:eid`, { config: ADMIN, schema: { ...hide, params: EndpointParams } }, async (request) =>
    ask(request.params.id, { type: 'delete_endpoint', id: request.params.eid }),
  );

  app.post(
    `${base}/:eid/roll_secret`,
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: EndpointParams,
        body: Type.Object(
          { grace_seconds: Type.Optional(withCode(Type.Integer({ minimum: 0, maximum: MAX_ROLL_GRACE_SECONDS }), 'invalid_parameter')) },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => ask(request.params.id, { type: 'roll_secret', id: request.params.eid, graceSeconds: request.body.grace_seconds ?? 86_400 }),
  );

  app.get(
    `${base}/:eid/deliveries`,
    {
      config: ADMIN,
      schema: { ...hide, params: EndpointParams, querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 200, default: 100 }) }, { additionalProperties: false }) },
    },
    async (request) => ask(request.params.id, { type: 'list_deliveries', id: request.params.eid, limit: request.query.limit }),
  );

  app.post(
    `${base}/:eid/deliveries/:did/resend`,
    { config: ADMIN, schema: { ...hide, params: Type.Object({ id: Type.String({ format: 'uuid' }), eid: Type.String({ maxLength: 64 }), did: Type.String({ maxLength: 64 }) }) } },
    async (request) => ask(request.params.id, { type: 'resend_delivery', id: request.params.eid, deliveryId: request.params.did }),
  );

  app.post(
    '/admin/v1/accounts/:id/test_events',
    {
      config: ADMIN,
      schema: { ...hide, params: AccountParams, body: Type.Object({ mode: withCode(ModeSchema, 'invalid_parameter') }, { additionalProperties: false }) },
    },
    async (request, reply) => reply.code(201).send(await ask(request.params.id, { type: 'send_test_event', mode: request.body.mode })),
  );

  app.post('/admin/v1/webhooks/run', { config: ADMIN, schema: { ...hide } }, async () => ({ object: 'sender_run', claimed: await services.sendNow() }));
}
