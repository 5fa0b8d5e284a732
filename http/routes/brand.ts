import type { App } from './app-type.ts';
import type { AccountRegistry } from './deps.ts';
import type { BrandDomains } from '../../actors/account/brand-domain.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import type { Static } from '../schemas/common.ts';
import { BrandBody, BrandSchema } from '../schemas/account.ts';
import { responses } from '../schemas/common.ts';
import { caller, sendWritten } from './helpers.ts';
import { UPDATED } from '../write-status.ts';

/** What these routes use. */
export interface BrandRouteDeps {
  accounts: AccountRegistry;
  brandDomains: Pick<BrandDomains, 'check'>;
}

/**
 * A PATCH of the brand (here and in the console, one message to the account actor): a domain
 * set or changed is looked up in DNS at once, after the change commits, so the answer says
 * whether it is already verified. A replayed request answers what was stored.
 */
export async function patchBrand(services: BrandRouteDeps, accountId: string, body: Static<typeof BrandBody>, idempotency?: IdempotencyClaim) {
  const written = await services.accounts.ask(accountId, { type: 'update_brand', patch: body, idempotency });
  if (written.replayed || typeof body.domain !== 'string' || written.body.domain_status.status !== 'pending') return written;
  return { ...written, body: { ...written.body, domain_status: await services.brandDomains.check(accountId) } };
}

export function registerBrandRoutes(app: App, services: BrandRouteDeps): void {
  app.get(
    '/v1/brand',
    {
      config: { scope: 'brand:read', beforeGoLive: true },
      schema: {
        operationId: 'getBrand',
        summary: "The reseller's branding",
        description: 'The name, logo, colours and contact details shown to customers and callees instead of the service, and the state of its domain.',
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
        description:
          'Colours are #RRGGBB and URLs https; fields left out keep their value. A new `domain` is a pending claim until its CNAME names `domain_status.cname_target` (looked up at once, then every 10 minutes); customer-facing URLs use it once verified.',
        tags: ['brand'],
        body: BrandBody,
        response: responses({ 200: BrandSchema }, [
          'invalid_brand_field', 'brand_domain_taken', 'unknown_parameter', 'field_too_long', 'invalid_json', 'idempotency_key_reused', 'idempotency_key_too_long',
          'scope_missing',
        ]),
      },
    },
    async (request, reply) => sendWritten(reply, await patchBrand(services, caller(request).accountId, request.body, request.idempotency)),
  );
}
