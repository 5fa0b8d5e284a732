import type { App } from './app-type.ts';
import type { BrandDomains } from '../../actors/account/brand-domain.ts';
import { BrandBody, BrandDomainSchema, BrandSchema } from '../schemas/account.ts';
import { responses } from '../schemas/common.ts';
import { consoleCaller } from '../plugins/console-session.ts';
import { patchBrand, type BrandRouteDeps } from './brand.ts';

/** What these routes use: those of /v1/brand (the account actor, and the brand domain's DNS look). */
export type ConsoleBrandRouteDeps = BrandRouteDeps & { brandDomains: Pick<BrandDomains, 'check'> };

const hide = { hide: true, tags: ['console'] };

/**
 * The console's Brand page (issue 21): the brand as /v1/brand has it (with its domain's DNS
 * state), changed with the same body, rules and actor message, and the domain's DNS look on
 * demand. The account is the session's, never one named in the request.
 */
export function registerConsoleBrandRoutes(app: App, services: ConsoleBrandRouteDeps): void {
  app.get(
    '/console/api/brand',
    { config: { auth: 'session', permission: 'account:read' }, schema: { ...hide, response: responses({ 200: BrandSchema }, [], { auth: 'session' }) } },
    async (request) => services.accounts.ask(consoleCaller(request).accountId, { type: 'get_brand' }),
  );

  app.patch(
    '/console/api/brand',
    {
      config: { auth: 'session', permission: 'account:write' },
      schema: {
        ...hide,
        body: BrandBody,
        response: responses({ 200: BrandSchema }, ['invalid_brand_field', 'brand_domain_taken', 'unknown_parameter', 'field_too_long', 'invalid_json'], { auth: 'session' }),
      },
    },
    async (request) => (await patchBrand(services, consoleCaller(request).accountId, request.body)).body,
  );

  app.post(
    '/console/api/brand/domain/check',
    { config: { auth: 'session', permission: 'account:write' }, schema: { ...hide, response: responses({ 200: BrandDomainSchema }, [], { auth: 'session' }) } },
    async (request) => services.brandDomains.check(consoleCaller(request).accountId),
  );
}
