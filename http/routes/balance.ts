import type { App } from './app-type.ts';
import type { AccountRegistry } from './deps.ts';
import { BalanceSchema, UsageEntrySchema } from '../schemas/money.ts';
import { ListOf, pageQueryWith, responses, Type } from '../schemas/common.ts';
import { caller, customerIdOf, pageOf, type CustomerLookupDeps } from './helpers.ts';

/** What these routes use. */
export interface BalanceRouteDeps extends CustomerLookupDeps {
  accounts: AccountRegistry;
}

export function registerBalanceRoutes(app: App, services: BalanceRouteDeps): void {
  app.get(
    '/v1/balance',
    {
      config: { scope: 'billing:read', beforeGoLive: true },
      schema: {
        operationId: 'getBalance',
        summary: 'The prepaid balance, holds, rates and spend',
        description: "What the account can spend now, what running calls hold, the rates it pays and its spend against its caps, in the key's mode.",
        tags: ['billing'],
        response: responses({ 200: BalanceSchema }, ['scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      return services.accounts.ask(auth.accountId, { type: 'get_balance', mode: auth.mode });
    },
  );

  app.get(
    '/v1/usage',
    {
      config: { scope: 'billing:read', beforeGoLive: true },
      schema: {
        operationId: 'listUsage',
        summary: 'The itemised ledger, newest first; customer_id narrows it to one customer',
        description: 'Every charge, top-up, bonus and refund with the balance after it, each attributed to its customer and cause.',
        tags: ['billing'],
        querystring: pageQueryWith({ customer_id: Type.Optional(Type.String({ maxLength: 255, description: 'service id or external_ref' })) }),
        response: responses({ 200: ListOf(UsageEntrySchema, 'UsageEntryList') }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      const customerId = request.query.customer_id ? await customerIdOf(services, request, request.query.customer_id) : null;
      return services.accounts.ask(auth.accountId, { type: 'list_usage', mode: auth.mode, page: pageOf(request.query), customerId });
    },
  );
}
