import type { App } from './app-type.ts';
import type { AccountRegistry, CustomerRegistry } from './deps.ts';
import { CreateCustomerBody, CustomerIdParams, CustomerSchema, CoverageSchema, UpdateCustomerBody } from '../schemas/customers.ts';
import { ListOf, PageQuery, responses, Type } from '../schemas/common.ts';
import { caller, customerIdOf, pageOf, sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { CREATED_OR_EXISTING, UPDATED } from '../write-status.ts';

/** What these routes use. */
export interface CustomerRouteDeps extends CustomerLookupDeps {
  accounts: AccountRegistry;
  customers: CustomerRegistry;
}

export function registerCustomerRoutes(app: App, services: CustomerRouteDeps): void {
  app.post(
    '/v1/customers',
    {
      config: { scope: 'customers:write', idempotent: true, writeStatus: CREATED_OR_EXISTING },
      schema: {
        operationId: 'createCustomer',
        summary: 'Create a customer (provisions nothing)',
        description: 'Records a business the reseller sells calling to, in the mode of the key, with the coverage of its country.',
        tags: ['customers'],
        body: CreateCustomerBody,
        response: responses({ 201: Type.Intersect([CustomerSchema, Type.Object({ coverage: CoverageSchema })], { $id: 'CreatedCustomer' }) }, [
          'name_required', 'country_not_supported', 'invalid_timezone', 'invalid_url', 'invalid_phone_number', 'unknown_parameter', 'field_too_long',
          'invalid_parameter', 'forward_needs_phone', 'invalid_json', 'payload_too_large', 'customer_limit_reached', 'external_ref_taken', 'idempotency_key_reused',
          'idempotency_key_too_long', 'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      const outcome = await services.accounts.ask(auth.accountId, {
        type: 'create_customer',
        mode: auth.mode,
        input: request.body,
        idempotency: request.idempotency,
      });
      return sendWritten(reply, outcome);
    },
  );

  app.get(
    '/v1/customers',
    {
      config: { scope: 'customers:read' },
      schema: {
        operationId: 'listCustomers',
        summary: 'List customers, newest first',
        description: "The account's customers in the key's mode, a page at a time.",
        tags: ['customers'],
        querystring: PageQuery,
        response: responses({ 200: ListOf(CustomerSchema, 'CustomerList') }, ['invalid_parameter', 'invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      return services.accounts.ask(auth.accountId, { type: 'list_customers', mode: auth.mode, page: pageOf(request.query) });
    },
  );

  app.get(
    '/v1/customers/:id',
    {
      config: { scope: 'customers:read' },
      schema: {
        operationId: 'getCustomer',
        summary: 'A customer by service id or external_ref',
        description: 'One customer, named by the id the service gave it or by the external_ref the reseller gave it.',
        tags: ['customers'],
        params: CustomerIdParams,
        response: responses({ 200: CustomerSchema }, ['customer_not_found', 'scope_missing']),
      },
    },
    async (request) => services.customers.ask(await customerIdOf(services, request, request.params.id), { type: 'get_customer' }),
  );

  app.patch(
    '/v1/customers/:id',
    {
      config: { scope: 'customers:write', idempotent: true, writeStatus: UPDATED },
      schema: {
        operationId: 'updateCustomer',
        summary: "Change a customer's registered name and call settings: send only what changes; null resets",
        description: 'Call settings merge group by group into what was set; the answer shows the settings in force, defaults filled in.',
        tags: ['customers'],
        params: CustomerIdParams,
        body: UpdateCustomerBody,
        response: responses({ 200: CustomerSchema }, [
          'invalid_parameter', 'field_too_long', 'forward_needs_phone', 'customer_not_found', 'unknown_parameter', 'invalid_json', 'idempotency_key_reused',
          'idempotency_key_too_long', 'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const id = await customerIdOf(services, request, request.params.id);
      return sendWritten(reply, await services.customers.ask(id, { type: 'update_customer', patch: request.body ?? {}, idempotency: request.idempotency }));
    },
  );
}
