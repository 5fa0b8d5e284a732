import type { App } from './app-type.ts';
import type { Websites } from '../../actors/websites/websites.ts';
import { DnsRecordSchema, DomainBody, EmptyBody, RevisionBody, WebsiteOrderBody, WebsiteParams, WebsiteSchema } from '../schemas/websites.ts';
import { CustomerIdParams } from '../schemas/customers.ts';
import { ListOf, PageQuery, responses } from '../schemas/common.ts';
import { customerOwnerOf, pageOf, sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { ACCEPTED, UPDATED } from '../write-status.ts';

/** What these routes use. */
export interface WebsiteRouteDeps extends CustomerLookupDeps {
  websites: Pick<Websites, 'order' | 'get' | 'list' | 'publish' | 'revise' | 'setDomain' | 'reissuePreview' | 'cancel'>;
}

const WRITE_CODES = ['customer_not_found', 'website_not_found', 'idempotency_key_reused', 'idempotency_key_too_long', 'scope_missing', 'unknown_parameter', 'invalid_json'] as const;

/** Rows 30 to 32 of the spec: a customer's websites (docs/api.md, "Websites"). */
export function registerWebsiteRoutes(app: App, services: WebsiteRouteDeps): void {
  const ownerOf = (request: Parameters<typeof customerOwnerOf>[1], id: string) => customerOwnerOf(services, request, id);

  app.post(
    '/v1/customers/:id/websites',
    {
      config: { scope: 'sites:order', idempotent: true, writeStatus: ACCEPTED },
      schema: {
        operationId: 'orderWebsite',
        summary: 'Order a one-page website for the customer',
        description:
          'Answers 202 with the build `building`; poll it (or listen for website.ready). The build fee (35,000 cents) is charged now and refunded in full if the site is never delivered.',
        tags: ['websites'],
        params: CustomerIdParams,
        body: WebsiteOrderBody,
        response: responses({ 202: WebsiteSchema }, ['customer_not_found', 'insufficient_balance', 'invalid_parameter', 'field_too_long', 'unknown_parameter', 'invalid_json', 'idempotency_key_reused', 'idempotency_key_too_long', 'scope_missing']),
      },
    },
    async (request, reply) => {
      const owner = await ownerOf(request, request.params.id);
      return sendWritten(reply, await services.websites.order(owner, { brief: request.body?.brief, idempotency: request.idempotency }));
    },
  );

  app.get(
    '/v1/customers/:id/websites',
    {
      config: { scope: 'sites:read' },
      schema: {
        operationId: 'listWebsites',
        summary: "A customer's website builds, newest first",
        description: 'Every build in every status; `limit` and `starting_after` page the list.',
        tags: ['websites'],
        params: CustomerIdParams,
        querystring: PageQuery,
        response: responses({ 200: ListOf(WebsiteSchema, 'WebsiteBuildList') }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => services.websites.list(await ownerOf(request, request.params.id), pageOf(request.query)),
  );

  app.get(
    '/v1/customers/:id/websites/:build_id',
    {
      config: { scope: 'sites:read' },
      schema: {
        operationId: 'getWebsite',
        summary: 'One website build: the one to poll after an order',
        description: '`preview_url` once built; `url` once live.',
        tags: ['websites'],
        params: WebsiteParams,
        response: responses({ 200: WebsiteSchema }, ['customer_not_found', 'website_not_found', 'scope_missing']),
      },
    },
    async (request) => services.websites.get(await ownerOf(request, request.params.id), request.params.build_id),
  );

  app.post(
    '/v1/customers/:id/websites/:build_id/publish',
    {
      config: { scope: 'sites:order', idempotent: true, writeStatus: UPDATED },
      schema: {
        operationId: 'publishWebsite',
        summary: 'Take a ready website live',
        description: 'The site goes live at `url` (website.live); hosting (2,000 cents a month) is charged now, then monthly. Publishing a live site answers it as it is.',
        tags: ['websites'],
        params: WebsiteParams,
        body: EmptyBody,
        response: responses({ 200: WebsiteSchema }, [...WRITE_CODES, 'website_not_ready', 'insufficient_balance']),
      },
    },
    async (request, reply) => sendWritten(reply, await services.websites.publish(await ownerOf(request, request.params.id), request.params.build_id, request.idempotency)),
  );

  app.post(
    '/v1/customers/:id/websites/:build_id/revision',
    {
      config: { scope: 'sites:order', idempotent: true, writeStatus: UPDATED },
      schema: {
        operationId: 'reviseWebsite',
        summary: 'Rebuild the website with a change (one revision is included)',
        description: 'A ready site goes back to `building`; a live one keeps serving until the revised page is built, then serves it (website.ready each time).',
        tags: ['websites'],
        params: WebsiteParams,
        body: RevisionBody,
        response: responses({ 200: WebsiteSchema }, [...WRITE_CODES, 'website_not_ready', 'revision_limit_reached', 'parameter_missing', 'invalid_parameter', 'field_too_long']),
      },
    },
    async (request, reply) =>
      sendWritten(reply, await services.websites.revise(await ownerOf(request, request.params.id), request.params.build_id, request.body.brief, request.idempotency)),
  );

  app.post(
    '/v1/customers/:id/websites/:build_id/domain',
    {
      config: { scope: 'sites:order', idempotent: true, writeStatus: UPDATED },
      schema: {
        operationId: 'setWebsiteDomain',
        summary: "Serve the website on the customer's own domain",
        description:
          'Answers the one CNAME record to create at the domain (a name under the registrable domain, such as www.; an apex cannot carry a CNAME). The site is served there once DNS shows it (checked every few minutes; `domain_verified`): a claim holds the name only once verified, and an unverified claim lapses after 7 days. A site with a domain takes another only with `replace: true`. A test-mode site takes only names reserved for testing (.test, .example).',
        tags: ['websites'],
        params: WebsiteParams,
        body: DomainBody,
        response: responses({ 200: DnsRecordSchema }, [
          ...WRITE_CODES, 'website_not_ready', 'invalid_domain', 'test_mode_domain', 'domain_already_set', 'sites_not_configured', 'parameter_missing', 'invalid_parameter', 'field_too_long',
        ]),
      },
    },
    async (request, reply) =>
      sendWritten(
        reply,
        await services.websites.setDomain(await ownerOf(request, request.params.id), request.params.build_id, { domain: request.body.domain, replace: request.body.replace }, request.idempotency),
      ),
  );

  app.post(
    '/v1/customers/:id/websites/:build_id/preview',
    {
      config: { scope: 'sites:order', idempotent: true, writeStatus: UPDATED },
      schema: {
        operationId: 'reissueWebsitePreview',
        summary: "Issue a new preview address (the old one stops)",
        description:
          'A preview is open for 30 days after the page is built and ends when a live site is published (a test site is served only at its preview, so it stays open). This gives a new `preview_url`, open 30 days from now; the previous address answers 404 at once.',
        tags: ['websites'],
        params: WebsiteParams,
        body: EmptyBody,
        response: responses({ 200: WebsiteSchema }, [...WRITE_CODES, 'website_not_ready']),
      },
    },
    async (request, reply) =>
      sendWritten(reply, await services.websites.reissuePreview(await ownerOf(request, request.params.id), request.params.build_id, request.idempotency)),
  );

  app.delete(
    '/v1/customers/:id/websites/:build_id',
    {
      config: { scope: 'sites:order' },
      schema: {
        operationId: 'cancelWebsite',
        summary: 'Cancel a website build, or take a live site down',
        description: 'Before delivery (building, ready): cancelled, the build fee refunded in full as its own ledger line. Once live: taken down, hosting stops, nothing refunded.',
        tags: ['websites'],
        params: WebsiteParams,
        response: responses({ 200: WebsiteSchema }, ['customer_not_found', 'website_not_found', 'scope_missing']),
      },
    },
    async (request) => services.websites.cancel(await ownerOf(request, request.params.id), request.params.build_id),
  );
}
