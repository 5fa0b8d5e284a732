import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../runtime/deps.ts';
import type { KeyAuthenticator } from './plugins/authenticate.ts';
import { installValidators } from './plugins/validation.ts';
import { clientErrorAnswer, frameworkError, installErrorBoundary } from './plugins/error-boundary.ts';
import { installStorableText } from './plugins/storable-text.ts';
import { installJsonBody } from './plugins/json-body.ts';
import { installRequestHead } from './plugins/request-head.ts';
import { genRequestId, installRequestLog, lazyRequestLogger } from './plugins/request-log.ts';
import { observeAnswered } from './plugins/request-metrics.ts';
import { installAuth } from './plugins/auth.ts';
import { installRateLimit } from './plugins/rate-limit.ts';
import { installIdempotency } from './plugins/idempotency.ts';
import { installOpenApi } from './plugins/openapi.ts';
import { installBrandHost, type BrandHostDeps } from './plugins/brand-host.ts';
import { installGracefulClose } from './plugins/graceful-close.ts';
import { registerMeRoutes } from './routes/me.ts';
import { registerCustomerRoutes } from './routes/customers.ts';
import { registerReadinessRoutes } from './routes/readiness.ts';
import { registerOnboardingLinkRoutes } from './routes/onboarding-links.ts';
import { registerCalendarRoutes } from './routes/calendar.ts';
import { registerNumberRoutes } from './routes/numbers.ts';
import { registerWebsiteRoutes } from './routes/websites.ts';
import { registerSitePages } from './pages/sites.ts';
import { registerLimitRoutes } from './routes/limits.ts';
import { registerBrandRoutes } from './routes/brand.ts';
import { registerCoverageRoutes } from './routes/coverage.ts';
import { registerAdminAccountRoutes } from './routes/admin-accounts.ts';
import { registerAdminPlatformRoutes } from './routes/admin-platform.ts';
import { registerOnboardingPages } from './pages/onboarding.ts';
import { registerCalendarPages } from './pages/calendar.ts';
import { registerBalanceRoutes } from './routes/balance.ts';
import { registerAdminMoneyRoutes } from './routes/admin-money.ts';
import { registerAdminSimulatedCarrierRoutes } from './routes/admin-simulated-carrier.ts';
import { registerCallRoutes } from './routes/calls.ts';
import { registerAppointmentRoutes } from './routes/appointments.ts';
import { registerDncRoutes } from './routes/dnc.ts';
import { registerTelephonyRoutes } from './routes/telephony.ts';
import { registerTelephonyInboundRoutes } from './routes/telephony-inbound.ts';
import { registerEventRoutes } from './routes/events.ts';
import { registerAdminWebhookRoutes } from './routes/admin-webhooks.ts';
import { registerAdminEmailRoutes } from './routes/admin-emails.ts';
import { registerSessionRoutes } from './routes/sessions.ts';
import { registerChatRoutes } from './routes/chat.ts';
import { registerChatPage } from './pages/chat.ts';
import { registerConsoleApp } from './routes/console-app.ts';
import type { App } from './routes/app-type.ts';
import type { ConsolePeople } from '../actors/console/people.ts';
import { registerConsoleSessionRoutes } from './routes/console-session.ts';
import { registerConsolePeopleRoutes } from './routes/console-people.ts';
import { registerConsoleTeamRoutes } from './routes/console-team.ts';
import { registerConsoleDeveloperRoutes } from './routes/console-developers.ts';
import { registerConsoleGoingLiveRoutes } from './routes/console-going-live.ts';
import { registerConsoleOverviewRoutes } from './routes/console-overview.ts';
import { registerConsoleBillingRoutes } from './routes/console-billing.ts';
import { registerConsoleTestClockRoutes } from './routes/console-test-clocks.ts';
import { registerConsoleCallRoutes } from './routes/console-calls.ts';
import { registerConsoleComplianceRoutes } from './routes/console-compliance.ts';
import { registerConsoleBrandRoutes } from './routes/console-brand.ts';
import { registerConsoleCustomerRoutes } from './routes/console-customers.ts';
import { registerConsoleCalendarRoutes } from './routes/console-calendar.ts';
import { registerPaymentRoutes } from './routes/console-payments.ts';
import { registerConsoleSimulatedCheckoutRoutes } from './routes/console-simulated-checkout.ts';
import { registerHealthRoutes } from './routes/health.ts';
import './types.ts';

/** What the plugins use: the process's deps (the database for rate limits and idempotency), and the credentials. */
export interface PluginDeps extends Deps {
  keys: KeyAuthenticator;
  /** SHA-256 of the operator token of /admin/v1. */
  adminTokenHash: () => Buffer | null;
  /** The console's people and sessions. */
  consolePeople: ConsolePeople;
}

/** The second parameter of a route registration: the deps that route file declares. */
type RouteDeps<R extends (app: App, deps: never) => unknown> = Parameters<R>[1];

/**
 * Everything the HTTP application is handed: what its plugins use and what each route file
 * declares it uses, so the composition root (app/) can build one object that satisfies them all
 * while each route sees only its own part.
 */
export type HttpDeps = PluginDeps &
  BrandHostDeps &
  RouteDeps<typeof registerMeRoutes> &
  RouteDeps<typeof registerCustomerRoutes> &
  RouteDeps<typeof registerReadinessRoutes> &
  RouteDeps<typeof registerOnboardingLinkRoutes> &
  RouteDeps<typeof registerCalendarRoutes> &
  RouteDeps<typeof registerNumberRoutes> &
  RouteDeps<typeof registerWebsiteRoutes> &
  RouteDeps<typeof registerSitePages> &
  RouteDeps<typeof registerLimitRoutes> &
  RouteDeps<typeof registerBrandRoutes> &
  RouteDeps<typeof registerCoverageRoutes> &
  RouteDeps<typeof registerBalanceRoutes> &
  RouteDeps<typeof registerCallRoutes> &
  RouteDeps<typeof registerAppointmentRoutes> &
  RouteDeps<typeof registerDncRoutes> &
  RouteDeps<typeof registerEventRoutes> &
  RouteDeps<typeof registerAdminAccountRoutes> &
  RouteDeps<typeof registerAdminPlatformRoutes> &
  RouteDeps<typeof registerAdminMoneyRoutes> &
  RouteDeps<typeof registerAdminSimulatedCarrierRoutes> &
  RouteDeps<typeof registerAdminWebhookRoutes> &
  RouteDeps<typeof registerAdminEmailRoutes> &
  RouteDeps<typeof registerOnboardingPages> &
  RouteDeps<typeof registerCalendarPages> &
  RouteDeps<typeof registerTelephonyRoutes> &
  RouteDeps<typeof registerTelephonyInboundRoutes> &
  RouteDeps<typeof registerSessionRoutes> &
  RouteDeps<typeof registerChatRoutes> &
  RouteDeps<typeof registerConsoleSessionRoutes> &
  RouteDeps<typeof registerConsolePeopleRoutes> &
  RouteDeps<typeof registerConsoleTeamRoutes> &
  RouteDeps<typeof registerConsoleDeveloperRoutes> &
  RouteDeps<typeof registerConsoleGoingLiveRoutes> &
  RouteDeps<typeof registerConsoleOverviewRoutes> &
  RouteDeps<typeof registerConsoleBillingRoutes> &
  RouteDeps<typeof registerConsoleTestClockRoutes> &
  RouteDeps<typeof registerConsoleCallRoutes> &
  RouteDeps<typeof registerConsoleComplianceRoutes> &
  RouteDeps<typeof registerConsoleBrandRoutes> &
  RouteDeps<typeof registerConsoleCustomerRoutes> &
  RouteDeps<typeof registerConsoleCalendarRoutes> &
  RouteDeps<typeof registerPaymentRoutes> &
  RouteDeps<typeof registerConsoleSimulatedCheckoutRoutes>;

/** The HTTP application: plugins in the order a request meets them, then every route. */
export async function buildApp(services: HttpDeps): Promise<App> {
  const { requestTimeoutMs, connectionTimeoutMs } = services.config;
  const app = Fastify({
    loggerInstance: services.log as unknown as FastifyBaseLogger,
    // One line per request is written by request-log, with the route pattern instead of the URL.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: genRequestId,
    // request.log is made on first use, not for every request (plugins/request-log.ts).
    childLoggerFactory: lazyRequestLogger,
    requestIdHeader: false,
    trustProxy: services.config.trustProxy,
    bodyLimit: services.config.bodyLimitBytes,
    // A client has requestTimeoutMs to send a whole request (a body trickled a byte at a time is
    // cut with 408) and a connection may sit silent for connectionTimeoutMs. Node looks for late
    // requests every connectionsCheckingInterval (30 s by default): a shorter timeout needs it shorter.
    requestTimeout: requestTimeoutMs,
    connectionTimeout: connectionTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, requestTimeoutMs),
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(requestTimeoutMs / 4))),
    },
    frameworkErrors: frameworkError,
    clientErrorHandler: clientErrorAnswer(services.log as unknown as FastifyBaseLogger),
    // While closing, requests are served, then answered in the error shape (plugins/graceful-close.ts), never with fastify's own 503.
    return503OnClosing: false,
    // external_ref (up to 255 characters, percent-encoded) travels as a path parameter.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
  }).withTypeProvider<TypeBoxTypeProvider>() as App;

  installValidators(app);
  installJsonBody(app);
  installErrorBoundary(app);
  // The request line and the request's metrics, in one onResponse hook.
  installRequestLog(app, { alsoOnResponse: observeAnswered });
  installGracefulClose(app);
  // Before authentication: a request whose head is refused is not asked for its key.
  installRequestHead(app);
  // Before authentication: a reseller's brand domain serves its customers' pages only (404 for the rest).
  installBrandHost(app, services);
  // A POST or PATCH without a body is an empty object: the body schema then decides.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && (request.method === 'POST' || request.method === 'PATCH')) request.body = {};
    done();
  });
  // Before validation and every other preHandler: text PostgreSQL cannot store never reaches a handler.
  installStorableText(app);
  installAuth(app, {
    keys: services.keys,
    adminTokenHash: services.adminTokenHash,
    consolePeople: services.consolePeople,
    publicOrigin: () => new URL(services.config.publicUrl).origin,
    failuresPerMinute: services.config.authFailuresPerMinute,
  });
  await installRateLimit(app, { store: services.config.rateLimitStore, pool: services.pool });
  installIdempotency(app, { pool: services.pool, clock: services.clock });
  await installOpenApi(app, services.config.publicUrl);

  registerMeRoutes(app, services);
  registerCustomerRoutes(app, services);
  registerReadinessRoutes(app, services);
  registerOnboardingLinkRoutes(app, services);
  registerCalendarRoutes(app, services);
  registerNumberRoutes(app, services);
  registerWebsiteRoutes(app, services);
  await registerSitePages(app, services);
  registerLimitRoutes(app, services);
  registerBrandRoutes(app, services);
  registerCoverageRoutes(app, services);
  registerBalanceRoutes(app, services);
  registerCallRoutes(app, services);
  registerAppointmentRoutes(app, services);
  registerDncRoutes(app, services);
  registerEventRoutes(app, services);
  registerAdminAccountRoutes(app, services);
  registerAdminPlatformRoutes(app, services);
  registerAdminMoneyRoutes(app, services);
  registerAdminSimulatedCarrierRoutes(app, services);
  registerAdminWebhookRoutes(app, services);
  registerAdminEmailRoutes(app, services);
  await registerOnboardingPages(app, services);
  await registerCalendarPages(app, services);
  await registerTelephonyRoutes(app, services);
  await registerTelephonyInboundRoutes(app, services);
  registerSessionRoutes(app, services);
  await registerChatRoutes(app, services);
  registerChatPage(app);
  registerConsoleSessionRoutes(app, services);
  registerConsolePeopleRoutes(app, services);
  registerConsoleTeamRoutes(app, services);
  registerConsoleDeveloperRoutes(app, services);
  registerConsoleGoingLiveRoutes(app, services);
  registerConsoleOverviewRoutes(app, services);
  registerConsoleBillingRoutes(app, services);
  registerConsoleTestClockRoutes(app, services);
  registerConsoleCallRoutes(app, services);
  registerConsoleComplianceRoutes(app, services);
  registerConsoleBrandRoutes(app, services);
  registerConsoleCustomerRoutes(app, services);
  registerConsoleCalendarRoutes(app, services);
  await registerPaymentRoutes(app, services);
  registerConsoleSimulatedCheckoutRoutes(app, services);
  registerConsoleApp(app);

  app.get('/v1/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger());
  registerHealthRoutes(app, services);
  return app;
}
