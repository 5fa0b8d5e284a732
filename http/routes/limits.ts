import type { App } from './app-type.ts';
import type { Services } from '../../runtime/services.ts';
import { CustomerIdParams, CustomerLimitsBody, CustomerLimitsSchema } from '../schemas/customers.ts';
import { responses } from '../schemas/common.ts';
import { customerIdOf, sendOutcome } from './helpers.ts';

export function registerLimitRoutes(app: App, services: Services): void {
  app.get(
    '/v1/customers/:id/limits',
    {
      config: { scope: 'customers:read' },
      schema: {
        summary: "A customer's spend and concurrency caps, with its spend today and this month",
        tags: ['customers'],
        params: CustomerIdParams,
        response: responses({ 200: CustomerLimitsSchema }, ['customer_not_found', 'scope_missing']),
      },
    },
    async (request) => services.customers.ask(await customerIdOf(services, request, request.params.id), { type: 'get_limits' }),
  );

  app.patch(
    '/v1/customers/:id/limits',
    {
      config: { scope: 'customers:write', idempotent: true },
      schema: {
        summary: "Change a customer's caps: send only what changes; null clears",
        tags: ['customers'],
        params: CustomerIdParams,
        body: CustomerLimitsBody,
        response: responses({ 200: CustomerLimitsSchema }, [
          'invalid_limit', 'customer_not_found', 'unknown_parameter', 'invalid_json', 'idempotency_key_reused', 'idempotency_key_too_long',
          'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const id = await customerIdOf(services, request, request.params.id);
      return sendOutcome(reply, await services.customers.ask(id, { type: 'update_limits', patch: request.body, idempotency: request.idempotency }));
    },
  );
}
