import type { App } from './app-type.ts';
import type { WebhooksRegistry } from './deps.ts';
import { pageQueryWith, responses, Type } from '../schemas/common.ts';
import { EventListSchema, EventSchema } from '../schemas/events.ts';
import { caller, pageOf } from './helpers.ts';

/**
 * Event bodies are written as stored (JSON.stringify), not through the union schema: an event
 * recorded before a field was added to its data would match no branch and fail serialization.
 */
const asStored = () => (data: unknown) => JSON.stringify(data);

/** What these routes use. */
export interface EventRouteDeps {
  webhooks: WebhooksRegistry;
}

/** Events by read: the same envelopes the webhooks carry. */
export function registerEventRoutes(app: App, services: EventRouteDeps): void {
  app.get(
    '/v1/events',
    {
      config: { scope: 'events:read' },
      serializerCompiler: asStored,
      schema: {
        operationId: 'listEvents',
        summary: 'Events, newest first; order=asc with starting_after=<last handled id> reads forward to catch up',
        description: "The same envelopes the webhooks deliver, in the key's mode, filtered by type.",
        tags: ['events'],
        querystring: pageQueryWith({
          type: Type.Optional(Type.String({ maxLength: 64, description: 'only events of this type, such as call.completed' })),
          order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'desc (the default): newest first; asc: oldest first' })),
        }),
        response: responses(
          { 200: EventListSchema },
          ['invalid_parameter', 'invalid_cursor', 'scope_missing'],
        ),
      },
    },
    async (request) => {
      const auth = caller(request);
      const q = request.query;
      return services.webhooks.ask(auth.accountId, { type: 'list_events', mode: auth.mode, eventType: q.type ?? null, order: q.order ?? 'desc', page: pageOf(q) });
    },
  );

  app.get(
    '/v1/events/:id',
    {
      config: { scope: 'events:read' },
      serializerCompiler: asStored,
      schema: {
        operationId: 'getEvent',
        summary: 'One event',
        description: 'One envelope by its id, as a webhook delivered it.',
        tags: ['events'],
        params: Type.Object({ id: Type.String({ maxLength: 64, description: 'the id of the event (evt_…)' }) }),
        response: responses({ 200: EventSchema }, ['event_not_found', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      return services.webhooks.ask(auth.accountId, { type: 'get_event', mode: auth.mode, id: request.params.id });
    },
  );
}
