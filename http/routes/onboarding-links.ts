import type { App } from './app-type.ts';
import type { CustomerRegistry } from './deps.ts';
import { CustomerIdParams, OnboardingLinkBody, OnboardingLinkSchema } from '../schemas/customers.ts';
import { ListOf, PageQuery, responses } from '../schemas/common.ts';
import { customerIdOf, pageOf, sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { CREATED_OR_EXISTING } from '../write-status.ts';

/** What these routes use. */
export interface OnboardingLinkRouteDeps extends CustomerLookupDeps {
  customers: CustomerRegistry;
}

export function registerOnboardingLinkRoutes(app: App, services: OnboardingLinkRouteDeps): void {
  app.post(
    '/v1/customers/:id/onboarding_link',
    {
      config: { scope: 'customers:write', idempotent: true, writeStatus: CREATED_OR_EXISTING },
      schema: {
        operationId: 'createOnboardingLink',
        summary: 'Mint the link a customer opens to accept the calling terms (revokes the previous one)',
        description:
          'The body is optional. The URL is shown once, in this response. With `email`, the link is also emailed to that address on your behalf ' +
          "(your brand, the customer's calling language, Reply-To your support email): `emailed_to` says it was queued.",
        tags: ['customers'],
        params: CustomerIdParams,
        body: OnboardingLinkBody,
        response: responses({ 201: OnboardingLinkSchema }, [
          'customer_not_found', 'invalid_parameter', 'unknown_parameter', 'invalid_json', 'onboarding_link_not_created', 'onboarding_email_limit', 'idempotency_key_reused',
          'idempotency_key_too_long', 'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const id = await customerIdOf(services, request, request.params.id);
      return sendWritten(reply, await services.customers.ask(id, { type: 'mint_onboarding_link', email: request.body?.email, idempotency: request.idempotency }));
    },
  );

  app.get(
    '/v1/customers/:id/onboarding_link',
    {
      config: { scope: 'customers:read' },
      schema: {
        operationId: 'listOnboardingLinks',
        summary: "A customer's onboarding links, newest first (never the URL)",
        description: 'Every link minted for the customer with its status: active, completed (and by whom), replaced or expired.',
        tags: ['customers'],
        params: CustomerIdParams,
        querystring: PageQuery,
        response: responses({ 200: ListOf(OnboardingLinkSchema, 'OnboardingLinkList') }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => {
      const id = await customerIdOf(services, request, request.params.id);
      return services.customers.ask(id, { type: 'list_onboarding_links', page: pageOf(request.query) });
    },
  );
}
