import type { App } from './app-type.ts';
import type { AccountRegistry } from './deps.ts';
import { BrandBody, BrandSchema } from '../schemas/account.ts';
import { responses } from '../schemas/common.ts';
import { caller, sendWritten } from './helpers.ts';
import { UPDATED } from '../write-status.ts';

/** What these routes use. */
export interface BrandRouteDeps {
  accounts: AccountRegistry;
}

export function registerBrandRoutes(app: App, services: BrandRouteDeps): void {
  app.get(
    '/v1/brand',
    {
      config: { scope: 'brand:read', beforeGoLive: true },
      schema: {
        operationId: 'getBrand',
        summary: "The reseller's branding",
        description: 'The name, logo, colours and contact details shown to customers and callees instead of the service.',
        tags: ['brand'],
        response: responses({ 200: BrandSchema }, ['scope_missing']),
      },
    },
    async (request) => services.accounts.ask(caller(request).accountId, { type: 'get_brand' }),
  );

  app.patch(
    '/v1/brand',
    {
      config: { scope: 'brand:write', idempotent: true, writeStatus: UPDATED, beforeGoLive: true },
      schema: {
        operationId: 'updateBrand',
        summary: 'Change branding: send only what changes; null clears',
        description: 'Colours are #RRGGBB and URLs https; fields left out keep their value.',
        tags: ['brand'],
        body: BrandBody,
        response: responses({ 200: BrandSchema }, [
          'invalid_brand_field', 'unknown_parameter', 'field_too_long', 'invalid_json', 'idempotency_key_reused', 'idempotency_key_too_long',
          'scope_missing',
        ]),
      },
    },
    async (request, reply) =>
      sendWritten(reply, await services.accounts.ask(caller(request).accountId, { type: 'update_brand', patch: request.body, idempotency: request.idempotency })),
  );
}
