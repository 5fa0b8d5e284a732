import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../routes/app-type.ts';
import type { Config } from '../../runtime/config.ts';
import type { Websites } from '../../actors/websites/websites.ts';
import type { BrandDomains } from '../../actors/account/brand-domain.ts';
import { Type } from '../schemas/common.ts';

/**
 * Websites as their visitors see them: a live-mode site at `/sites/<slug>/` (or `<slug>.<sites
 * domain>` and a verified custom domain, by the Host header), an unlisted preview (a test-mode
 * site's only address), and the
 * question Caddy's on-demand TLS asks before it gets a certificate for a customer's domain.
 * Nothing here names the service: a site names its business only, and what is not a site is a
 * neutral page.
 */

/** A site's page: no scripts, no requests elsewhere (the page inlines everything it needs). */
const SITE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'public, max-age=60',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'content-security-policy': "default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'none'",
} as const;

const plain = (title: string, text: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${title}</title><style>body{font:1rem/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;color:#1f2937;background:#f9fafb}main{max-width:32rem;padding:2rem;text-align:center}h1{font-size:1.5rem}</style>
</head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`;

const NOT_FOUND = plain('Page not found', 'There is no site at this address.');
const OFFLINE = plain('This site is offline', 'This site is temporarily unavailable. Please try again later.');

/** A page as a preview serves it: never indexed, by its own `<meta name="robots">` as well as the header. */
function noindexed(html: string): string {
  if (/<meta\s+name=["']?robots["']?\s+content=["']?noindex/i.test(html)) return html;
  return html.replace(/<head(\s[^>]*)?>/i, (head) => `${head}\n<meta name="robots" content="noindex, nofollow">`);
}

/** What these pages use. */
export interface SitePageDeps {
  config: Pick<Config, 'sitesDomain' | 'publicUrl'>;
  websites: Pick<Websites, 'bySlug' | 'byDomain' | 'preview' | 'allowsCertificate'>;
  /** A reseller's verified brand domain gets a certificate too (issue 21). */
  brandDomains: Pick<BrandDomains, 'allowsCertificate'>;
}

type Served = Awaited<ReturnType<Websites['bySlug']>>;

/** Whether a site's page is served (live, also in its countdown). */
const isServed = (site: Served): boolean => Boolean(site && (site.status === 'live' || site.status === 'hosting_due') && site.html);

/** Sends what a site's address shows: the live page (also in its countdown), offline when suspended, else not found. */
function serveSite(reply: FastifyReply, site: Served, head: boolean) {
  if (site && isServed(site)) {
    const headers = site.mode === 'test' ? { ...SITE_HEADERS, 'x-robots-tag': 'noindex' } : SITE_HEADERS;
    return reply.code(200).headers(headers).send(head ? undefined : site.html);
  }
  if (site?.status === 'suspended') return reply.code(503).headers({ ...SITE_HEADERS, 'cache-control': 'no-store', 'retry-after': '86400', 'x-robots-tag': 'noindex' }).send(head ? undefined : OFFLINE);
  return reply.code(404).headers({ ...SITE_HEADERS, 'cache-control': 'no-store', 'x-robots-tag': 'noindex' }).send(head ? undefined : NOT_FOUND);
}

/** The host of a request, lower-cased, without its port or a trailing dot (`www.example.com.` is the same name). */
function hostOf(request: FastifyRequest): string {
  const host = (request.headers.host ?? '').toLowerCase();
  return host.startsWith('[') ? host : host.replace(/:\d+$/, '').replace(/\.$/, '');
}

const API_PREFIXES = ['/v1/', '/admin/', '/telephony/', '/onboarding/', '/healthz', '/readyz', '/openapi', '/chat', '/docs'];

export async function registerSitePages(app: App, services: SitePageDeps): Promise<void> {
  const { config, websites } = services;
  const publicHost = new URL(config.publicUrl).hostname.toLowerCase();
  const sitesSuffix = config.sitesDomain ? `.${config.sitesDomain}` : null;

  // A site's own host (`<slug>.<sites domain>`, or a customer's verified domain) serves the site
  // for every path, before any route: the API's own host never reaches a lookup.
  // The callback form, so a request to the service's own host costs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return done();
    const host = hostOf(request);
    if (!host || host === publicHost || host === 'localhost' || /^[\d.]+$/.test(host) || host.startsWith('[')) return done();
    siteOfHost(request, reply, host).then(() => done(), done);
  });
  async function siteOfHost(request: FastifyRequest, reply: FastifyReply, host: string): Promise<unknown> {
    const head = request.method === 'HEAD';
    if (sitesSuffix && host.endsWith(sitesSuffix)) {
      const slug = host.slice(0, -sitesSuffix.length);
      return serveSite(reply, /^[a-z0-9-]{1,80}$/.test(slug) ? await websites.bySlug(slug) : null, head);
    }
    if (API_PREFIXES.some((p) => request.url.startsWith(p))) return;
    const site = await websites.byDomain(host);
    if (site) return serveSite(reply, site, head);
  }

  const slugParams = Type.Object({ slug: Type.String({ maxLength: 255 }) });
  const serveBySlug = async (request: FastifyRequest<{ Params: { slug: string } }>, reply: FastifyReply) => {
    const { slug } = request.params;
    return serveSite(reply, /^[a-z0-9-]{1,80}$/.test(slug) ? await websites.bySlug(slug) : null, request.method === 'HEAD');
  };
  // With or without the trailing slash (the router ignores it); a page links only within itself (#…).
  app.get('/sites/:slug/', { config: { auth: 'none' }, schema: { hide: true, params: slugParams } }, serveBySlug);

  const previewParams = Type.Object({ id: Type.String({ maxLength: 64 }), token: Type.String({ maxLength: 128 }) });
  app.get('/sites/preview/:id/:token', { config: { auth: 'none' }, schema: { hide: true, params: previewParams } }, async (request, reply) => {
    const preview = await websites.preview(request.params.id, request.params.token);
    if (!preview) return reply.code(404).headers({ ...SITE_HEADERS, 'cache-control': 'no-store', 'x-robots-tag': 'noindex' }).send(NOT_FOUND);
    return reply.code(200).headers({ ...SITE_HEADERS, 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow' }).send(noindexed(preview.html));
  });

  // Caddy's on_demand_tls `ask`: 200 lets it get a certificate for `domain` (a served site's, or a
  // reseller's verified brand domain), anything else refuses.
  const askQuery = Type.Object({ domain: Type.String({ minLength: 1, maxLength: 253 }) });
  app.get('/sites/tls-ask', { config: { auth: 'none' }, schema: { hide: true, querystring: askQuery } }, async (request, reply) => {
    const domain = request.query.domain.toLowerCase().replace(/\.$/, '');
    const ours = sitesSuffix !== null && domain.endsWith(sitesSuffix) && /^[a-z0-9-]{1,80}$/.test(domain.slice(0, -sitesSuffix.length));
    // A site's own host, like a customer's domain, only while the site is served (not building, cancelled or purged).
    const allowed = ours
      ? isServed(await websites.bySlug(domain.slice(0, -sitesSuffix!.length)))
      : (await websites.allowsCertificate(domain)) || (await services.brandDomains.allowsCertificate(domain));
    return reply.code(allowed ? 200 : 404).header('cache-control', 'no-store').send(allowed ? 'ok' : 'no');
  });
}
