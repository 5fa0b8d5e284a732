import type { App } from './app-type.ts';
import type { CustomerRegistry } from './deps.ts';
import { CustomerIdParams, ProvisioningBody, ProvisioningSchema, ReadinessSchema } from '../schemas/customers.ts';
import { responses } from '../schemas/common.ts';
import { customerIdOf, sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { ACCEPTED } from '../write-status.ts';

/** What these routes use. */
export interface ReadinessRouteDeps extends CustomerLookupDeps {
  customers: CustomerRegistry;
}

export function registerReadinessRoutes(app: App, services: ReadinessRouteDeps): void {
  app.get(
    '/v1/customers/:id/readiness',
    {
      config: { scope: 'customers:read' },
      // readinessView builds exactly the schema's document (test/unit/readiness-view-schema.test.ts
      // proves it for every combination of facts), so JSON.stringify writes what the schema's
      // serialiser would, at less cost: that one tries each branch of a blocker's `action` union
      // with a validator, for every blocker of every answer.
      serializerCompiler: () => JSON.stringify,
      schema: {
        operationId: 'getReadiness',
        summary: 'Whether a live call (and a test call) would be turned away, exactly why, who owes the next move and what clears it',
        description: 'One answer per mode: a false check always comes with its blocker, and each blocker says who moves next and how.',
        tags: ['customers'],
        params: CustomerIdParams,
        response: responses({ 200: ReadinessSchema }, ['customer_not_found', 'scope_missing']),
      },
    },
    async (request) => services.customers.ask(await customerIdOf(services, request, request.params.id), { type: 'get_readiness' }),
  );

  app.get(
    '/v1/customers/:id/provisioning',
    {
      config: { scope: 'customers:read' },
      schema: {
        operationId: 'getProvisioning',
        summary: 'Provisioning steps and who owes the next move',
        description: "Where the customer's number, script, agent and calendar stand, step by step.",
        tags: ['customers'],
        params: CustomerIdParams,
        response: responses({ 200: ProvisioningSchema }, ['customer_not_found', 'scope_missing']),
      },
    },
    async (request) => services.customers.ask(await customerIdOf(services, request, request.params.id), { type: 'get_provisioning' }),
  );

  app.post(
    '/v1/customers/:id/provisioning',
    {
      config: { scope: 'customers:write', idempotent: true, writeStatus: ACCEPTED },
      schema: {
        operationId: 'requestProvisioning',
        summary: 'Ask the service to provision a customer (number, script, agent, calendar)',
        description: 'Starts the steps named in `steps`, or number, script and agent when the body is empty or absent; answers at once with where they stand.',
        tags: ['customers'],
        params: CustomerIdParams,
        body: ProvisioningBody,
        response: responses({ 202: ProvisioningSchema }, [
          'customer_not_found', 'invalid_provisioning_step', 'unknown_parameter', 'invalid_json', 'provisioning_not_recorded',
          'idempotency_key_reused', 'idempotency_key_too_long', 'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const id = await customerIdOf(services, request, request.params.id);
      return sendWritten(
        reply,
        await services.customers.ask(id, { type: 'request_provisioning', steps: request.body?.steps, idempotency: request.idempotency }),
      );
    },
  );
}
