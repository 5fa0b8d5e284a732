import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AnyApp } from '../routes/app-type.ts';
import type { Config } from '../../runtime/config.ts';
import type { BrandDomains } from '../../actors/account/brand-domain.ts';
import { ApiError } from '../errors.ts';
import { brandedPage, PAGE_HEADERS, type PageBrand } from '../pages/layout.ts';

/**
 * A reseller's verified brand domain (issue 21) serves its customers' pages and nothing else:
 * the onboarding page of that account's links, the chat page and the two chat routes its script
 * calls with that account's session tokens, and the previews of that account's website builds.
 * Every other route on that host, and another account's token, answers 404, so the host cannot
 * reach the API, the operator's or the console's surfaces, or another reseller's pages. What is allowed is decided by the matched
 * route (as authentication is), never by spelling the URL; it runs before authentication, so
 * `/v1/...` there is 404, not 401.
 */

/** Customer-facing routes, by method and route pattern, and what names their account (`page`: nothing, the page is nobody's). */
const CUSTOMER_ROUTES: Record<string, 'onboarding' | 'calendar' | 'chat' | 'preview' | 'page'> = {
  'GET /sites/preview/:id/:token': 'preview',
  'HEAD /sites/preview/:id/:token': 'preview',
  'GET /onboarding/:token': 'onboarding',
  'HEAD /onboarding/:token': 'onboarding',
  'POST /onboarding/:token': 'onboarding',
  // The calendar link (issue 24) is minted at the brand domain as the onboarding link is.
  'GET /calendar/:token': 'calendar',
  'HEAD /calendar/:token': 'calendar',
  'POST /calendar/:token': 'calendar',
  'GET /calendar/:token/oauth/:kind': 'calendar',
  'GET /chat': 'page',
  'HEAD /chat': 'page',
  'GET /v1/chat/session': 'chat',
  'POST /v1/chat': 'chat',
  'OPTIONS /v1/chat/session': 'page',
  'OPTIONS /v1/chat': 'page',
};

const NEUTRAL: PageBrand = { name: 'Not found', logoUrl: null, primaryColor: '#1f2937', accentColor: '#2563eb', supportEmail: null };
const NOT_FOUND_PAGE = brandedPage(NEUTRAL, 'Page not found', '<h2>This page is not here</h2><p class="notice">Check that you copied the whole link, or ask for a new one.</p>');

/** The host of a request (its Host header), lower-cased, without its port or a trailing dot. */
export function hostOf(request: Pick<FastifyRequest, 'headers'>): string {
  const host = (request.headers.host ?? '').toLowerCase();
  return host.startsWith('[') ? host : host.replace(/:\d+$/, '').replace(/\.$/, '');
}

/**
 * Whether `host` (from `hostOf`) is one of the service's own: none given, the public URL's host
 * (`publicHost`), localhost, or an address. Never a brand's or a site's.
 */
export function isServiceHost(host: string, publicHost: string): boolean {
  return !host || host === publicHost || host === 'localhost' || /^[\d.]+$/.test(host) || host.startsWith('[');
}

/** What the brand host uses. */
export interface BrandHostDeps {
  config: Pick<Config, 'publicUrl' | 'sitesDomain'>;
  brandDomains: Pick<BrandDomains, 'accountAt' | 'onboardingAccount' | 'calendarAccount' | 'chatAccount' | 'previewAccount'>;
}

export function installBrandHost(app: AnyApp, deps: BrandHostDeps): void {
  const publicHost = new URL(deps.config.publicUrl).hostname.toLowerCase();
  const sitesSuffix = deps.config.sitesDomain ? `.${deps.config.sitesDomain}` : null;

  // The callback form, so a request to the service's own host costs no promise; another host waits
  // for `brandHostOnly`.
  app.addHook('onRequest', (request, reply, done) => {
    const host = hostOf(request);
    // The service's own hosts and addresses are never a brand's (a brand domain is refused them).
    if (isServiceHost(host, publicHost) || (sitesSuffix && host.endsWith(sitesSuffix))) return done();
    brandHostOnly(request, reply, host).then(() => done(), done);
  });

  async function brandHostOnly(request: FastifyRequest, reply: FastifyReply, host: string): Promise<unknown> {
    const accountId = await deps.brandDomains.accountAt(host);
    if (!accountId) return;
    const kind = request.is404 ? undefined : CUSTOMER_ROUTES[`${request.method} ${request.routeOptions.url}`];
    let owner: string | null = accountId;
    if (kind === 'onboarding') owner = await deps.brandDomains.onboardingAccount((request.params as { token?: string }).token ?? '');
    if (kind === 'calendar') owner = await deps.brandDomains.calendarAccount((request.params as { token?: string }).token ?? '');
    if (kind === 'preview') owner = await deps.brandDomains.previewAccount((request.params as { id?: string }).id ?? '');
    // An unknown chat token is the chat route's to answer (401 invalid_session_token); another account's is not here.
    if (kind === 'chat') owner = (await deps.brandDomains.chatAccount(request.headers.authorization)) ?? accountId;
    if (kind && owner === accountId) return;
    request.log.debug({ request_id: request.id, host, route: request.routeOptions.url ?? null }, 'a brand domain was asked for something that is not its customers\' page');
    if (kind === 'onboarding' || kind === 'calendar' || kind === 'preview' || (request.method === 'GET' && !/^\/(v1|admin|console\/api)(\/|$|\?)/.test(request.url))) {
      return reply.code(404).headers(PAGE_HEADERS).send(request.method === 'HEAD' ? undefined : NOT_FOUND_PAGE);
    }
    throw new ApiError('route_not_found', 'No such endpoint.');
  }
}
