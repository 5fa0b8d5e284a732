import type { App } from './app-type.ts';
import type { CustomerRegistry } from './deps.ts';
import { CustomerIdParams, CustomerLimitsBody, CustomerLimitsSchema } from '../schemas/customers.ts';
import { responses } from '../schemas/common.ts';
import { customerIdOf, sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { UPDATED } from '../write-status.ts';

/** What these routes use. */
export interface LimitRouteDeps extends CustomerLookupDeps {
  customers: CustomerRegistry;
}

export function registerLimitRoutes(app: App, services: LimitRouteDeps): void {
  app.get(
    '/v1/customers/:id/limits',
    {
      config: { scope: 'customers:read' },
      schema: {
        operationId: 'getCustomerLimits',
        summary: "A customer's spend and concurrency caps, with its spend today and this month",
        description: 'The caps the reseller set on one customer; null means no cap of that kind.',
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
      config: { scope: 'customers:write', idempotent: true, writeStatus: UPDATED },
      schema: {
        operationId: 'updateCustomerLimits',
        summary: "Change a customer's caps: send only what changes; null clears",
        description: 'A cap reached stops new calls of that customer until the day or month turns or the cap is raised.',
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
      return sendWritten(reply, await services.customers.ask(id, { type: 'update_limits', patch: request.body, idempotency: request.idempotency }));
    },
  );
}
