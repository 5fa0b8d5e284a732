import type { FastifyRequest } from 'fastify';
import type { App } from './app-type.ts';
import type { AccountRegistry, ChatSessions, CustomerRegistry } from './deps.ts';
import type { Numbers } from '../../actors/numbers/numbers.ts';
import type { Websites } from '../../actors/websites/websites.ts';
import type { CustomerList } from '../../actors/customer/customer-list.ts';
import { consoleWordsOf } from '../../actors/customer/readiness-words.ts';
import type { Mode } from '../../runtime/types.ts';
import { sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { consoleCaller, consoleMode } from '../plugins/console-session.ts';
import type { ErrorCode } from '../errors.ts';
import { CustomerIdParams, CustomerLimitsSchema, CustomerSchema, OnboardingLinkSchema } from '../schemas/customers.ts';
import { ListOf, responses } from '../schemas/common.ts';
import { testClockOnCreate, type ConsoleTestClockRouteDeps } from './console-test-clocks.ts';
import {
  CONSOLE_PAGE_LIMIT,
  ConsoleCreateCustomerBody,
  ConsoleCreatedCustomerSchema,
  ConsoleCustomerListQuery,
  ConsoleCustomerPageSchema,
  ConsoleCustomerSchema,
  ConsoleLimitsBody,
  ConsoleUpdateCustomerBody,
  ConsoleOnboardingLinkBody,
  ConsoleModeQuery,
} from '../schemas/console-customers.ts';
import { CREATED_OR_EXISTING, UPDATED } from '../write-status.ts';

/** What these routes use. */
export interface ConsoleCustomerRouteDeps extends CustomerLookupDeps, ConsoleTestClockRouteDeps {
  accounts: AccountRegistry;
  customers: CustomerRegistry;
  customerList: CustomerList;
  numbers: Pick<Numbers, 'list'>;
  websites: Pick<Websites, 'list'>;
  chat: ChatSessions;
}

const hide = { hide: true, tags: ['console'] };
/** How many of a customer's numbers, websites and chat sessions its page shows (newest first). */
const PAGE_ITEMS = { numbers: 100, websites: 100, chat_sessions: 20 };
/** Onboarding links are read in pages of this many until every one is read. */
const LINK_PAGE = 200;

/** The request's body without the console's own `mode`: what the /v1 service takes. */
function withoutMode<T extends { mode?: unknown }>(body: T): Omit<T, 'mode'> {
  const { mode: _mode, ...rest } = body;
  return rest;
}

/** The customer an `:id` names (service id or external_ref) in the session's account and `mode`; 404 customer_not_found otherwise. */
export async function ownerOf(services: CustomerLookupDeps, request: FastifyRequest, idOrRef: string, mode: Mode) {
  const accountId = consoleCaller(request).accountId;
  return { accountId, mode, customerId: (await services.customerDirectory.find(accountId, mode, idOrRef)).id };
}

const CREATE_CODES: ErrorCode[] = [
  'name_required', 'country_not_supported', 'invalid_timezone', 'invalid_url', 'invalid_phone_number', 'unknown_parameter', 'field_too_long',
  'invalid_json', 'payload_too_large', 'customer_limit_reached', 'external_ref_taken', 'invalid_parameter', 'live_not_enabled', 'reseller_suspended',
  'test_clock_not_found', 'test_clock_live_customer', 'forward_needs_phone',
];

/** The console's customer routes: the list with readiness, creation, a customer's page, onboarding links and limits (docs/api.md, "Console › Customers"). */
export function registerConsoleCustomerRoutes(app: App, services: ConsoleCustomerRouteDeps): void {
  const { accounts, customers } = services;

  app.get(
    '/console/api/customers',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: {
        ...hide,
        querystring: ConsoleCustomerListQuery,
        response: responses({ 200: ListOf(ConsoleCustomerSchema) }, ['invalid_parameter', 'invalid_cursor', 'unknown_parameter'], { auth: 'session' }),
      },
    },
    async (request) => {
      const { limit, starting_after, status } = request.query;
      const page = { limit: limit ?? CONSOLE_PAGE_LIMIT, startingAfter: starting_after };
      return services.customerList.list(consoleCaller(request).accountId, consoleMode(request, { write: false }), page, status ?? null);
    },
  );

  app.post(
    '/console/api/customers',
    {
      config: { auth: 'session', permission: 'customers:write', writeStatus: CREATED_OR_EXISTING },
      schema: {
        ...hide,
        querystring: ConsoleModeQuery,
        body: ConsoleCreateCustomerBody,
        response: responses({ 201: ConsoleCreatedCustomerSchema }, CREATE_CODES, { auth: 'session' }),
      },
    },
    async (request, reply) => {
      const mode = consoleMode(request, { write: true });
      const accountId = consoleCaller(request).accountId;
      const { test_clock: clockId, ...input } = withoutMode(request.body);
      // A test clock (test mode only) is checked before the customer is made and attached after
      // (the clocks' own helper). customers:write and test_clocks:write are held by the same roles.
      const onClock = testClockOnCreate(services, accountId, mode, clockId);
      await onClock.check();
      const outcome = await accounts.ask(accountId, { type: 'create_customer', mode, input });
      await onClock.attach(outcome.body.id);
      return sendWritten(reply, { ...outcome, body: clockId ? { ...outcome.body, test_clock: clockId } : outcome.body });
    },
  );

  app.get(
    '/console/api/customers/:id',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: {
        ...hide,
        params: CustomerIdParams,
        querystring: ConsoleModeQuery,
        response: responses({ 200: ConsoleCustomerPageSchema }, ['customer_not_found', 'invalid_parameter', 'unknown_parameter'], { auth: 'session' }),
      },
    },
    async (request) => {
      const owner = await ownerOf(services, request, request.params.id, consoleMode(request, { write: false }));
      const id = owner.customerId;
      const [customer, readiness, provisioning, limits, onboardingLinks, numbers, websites, chatSessions, testClock] = await Promise.all([
        customers.ask(id, { type: 'get_customer' }),
        customers.ask(id, { type: 'get_readiness' }),
        customers.ask(id, { type: 'get_provisioning' }),
        customers.ask(id, { type: 'get_limits' }),
        everyOnboardingLink(customers, id),
        services.numbers.list(owner, { limit: PAGE_ITEMS.numbers }),
        services.websites.list(owner, { limit: PAGE_ITEMS.websites }),
        services.chat.list(id, { limit: PAGE_ITEMS.chat_sessions }),
        services.testClocks.clockOf(owner.accountId, id),
      ]);
      const inWords = <B extends Parameters<typeof consoleWordsOf>[0]>(b: B) => ({ ...b, ...consoleWordsOf(b, id, customer.mode) });
      return {
        object: 'console_customer' as const,
        customer,
        readiness: { ...readiness, blockers: readiness.blockers.map(inWords), test_blockers: readiness.test_blockers.map(inWords) },
        provisioning,
        limits,
        onboarding_links: onboardingLinks,
        numbers: numbers.data,
        websites: websites.data,
        chat_sessions: chatSessions.data,
        test_clock: testClock,
      };
    },
  );

  app.post(
    '/console/api/customers/:id/onboarding_links',
    {
      config: { auth: 'session', permission: 'customers:write', writeStatus: CREATED_OR_EXISTING },
      schema: {
        ...hide,
        params: CustomerIdParams,
        querystring: ConsoleModeQuery,
        body: ConsoleOnboardingLinkBody,
        response: responses({ 201: OnboardingLinkSchema }, ['customer_not_found', 'invalid_parameter', 'unknown_parameter', 'invalid_json', 'onboarding_link_not_created', 'onboarding_email_limit', 'live_not_enabled', 'reseller_suspended'], { auth: 'session' }),
      },
    },
    async (request, reply) => {
      const owner = await ownerOf(services, request, request.params.id, consoleMode(request, { write: true }));
      return sendWritten(reply, await customers.ask(owner.customerId, { type: 'mint_onboarding_link', email: request.body?.email }));
    },
  );

  // The registered name and call settings (issue 23), as PATCH /v1/customers/{id} changes them.
  app.patch(
    '/console/api/customers/:id',
    {
      config: { auth: 'session', permission: 'customers:write', writeStatus: UPDATED },
      schema: {
        ...hide,
        params: CustomerIdParams,
        querystring: ConsoleModeQuery,
        body: ConsoleUpdateCustomerBody,
        response: responses({ 200: CustomerSchema }, ['invalid_parameter', 'field_too_long', 'forward_needs_phone', 'customer_not_found', 'unknown_parameter', 'invalid_json', 'live_not_enabled', 'reseller_suspended'], { auth: 'session' }),
      },
    },
    async (request, reply) => {
      const owner = await ownerOf(services, request, request.params.id, consoleMode(request, { write: true }));
      return sendWritten(reply, await customers.ask(owner.customerId, { type: 'update_customer', patch: withoutMode(request.body ?? {}) }));
    },
  );

  app.patch(
    '/console/api/customers/:id/limits',
    {
      config: { auth: 'session', permission: 'customers:write', writeStatus: UPDATED },
      schema: {
        ...hide,
        params: CustomerIdParams,
        querystring: ConsoleModeQuery,
        body: ConsoleLimitsBody,
        response: responses({ 200: CustomerLimitsSchema }, ['invalid_limit', 'customer_not_found', 'invalid_parameter', 'unknown_parameter', 'invalid_json', 'live_not_enabled', 'reseller_suspended'], { auth: 'session' }),
      },
    },
    async (request, reply) => {
      const owner = await ownerOf(services, request, request.params.id, consoleMode(request, { write: true }));
      return sendWritten(reply, await customers.ask(owner.customerId, { type: 'update_limits', patch: withoutMode(request.body) }));
    },
  );
}

/** Every onboarding link of a customer, newest first (the list route's pages, read to the end). */
async function everyOnboardingLink(customers: CustomerRegistry, customerId: string) {
  const links = [];
  let startingAfter: string | undefined;
  for (;;) {
    const page = await customers.ask(customerId, { type: 'list_onboarding_links', page: { limit: LINK_PAGE, startingAfter } });
    links.push(...page.data);
    if (!page.has_more || page.data.length === 0) return links;
    startingAfter = page.data.at(-1)!.id;
  }
}
