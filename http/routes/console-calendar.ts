import type { App } from './app-type.ts';
import type { CustomerRegistry } from './deps.ts';
import { sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { consoleMode } from '../plugins/console-session.ts';
import { CustomerIdParams } from '../schemas/customers.ts';
import { CalendarConnectionSchema, CalendarLinkSchema } from '../schemas/calendar.ts';
import { ConsoleModeQuery, ConsoleOnboardingLinkBody } from '../schemas/console-customers.ts';
import { responses } from '../schemas/common.ts';
import { CREATED_OR_EXISTING, UPDATED } from '../write-status.ts';
import { ownerOf } from './console-customers.ts';

/** What these routes use. */
export interface ConsoleCalendarRouteDeps extends CustomerLookupDeps {
  customers: CustomerRegistry;
}

const hide = { hide: true, tags: ['console'] };

/** The console's calendar panel of a customer's page (issue 24): the connection, a calendar link, disconnecting. */
export function registerConsoleCalendarRoutes(app: App, services: ConsoleCalendarRouteDeps): void {
  app.get(
    '/console/api/customers/:id/calendar',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: {
        ...hide,
        params: CustomerIdParams,
        querystring: ConsoleModeQuery,
        response: responses({ 200: CalendarConnectionSchema }, ['customer_not_found', 'invalid_parameter', 'unknown_parameter'], { auth: 'session' }),
      },
    },
    async (request) => {
      const owner = await ownerOf(services, request, request.params.id, consoleMode(request, { write: false }));
      return services.customers.ask(owner.customerId, { type: 'get_calendar' });
    },
  );

  app.post(
    '/console/api/customers/:id/calendar_link',
    {
      config: { auth: 'session', permission: 'customers:write', writeStatus: CREATED_OR_EXISTING },
      schema: {
        ...hide,
        params: CustomerIdParams,
        querystring: ConsoleModeQuery,
        body: ConsoleOnboardingLinkBody,
        response: responses({ 201: CalendarLinkSchema }, ['customer_not_found', 'invalid_parameter', 'unknown_parameter', 'invalid_json', 'calendar_link_not_created', 'onboarding_email_limit', 'live_not_enabled', 'reseller_suspended'], { auth: 'session' }),
      },
    },
    async (request, reply) => {
      const owner = await ownerOf(services, request, request.params.id, consoleMode(request, { write: true }));
      return sendWritten(reply, await services.customers.ask(owner.customerId, { type: 'mint_calendar_link', email: request.body?.email }));
    },
  );

  app.delete(
    '/console/api/customers/:id/calendar',
    {
      config: { auth: 'session', permission: 'customers:write', writeStatus: UPDATED },
      schema: {
        ...hide,
        params: CustomerIdParams,
        querystring: ConsoleModeQuery,
        response: responses({ 200: CalendarConnectionSchema }, ['customer_not_found', 'calendar_not_connected', 'invalid_parameter', 'unknown_parameter', 'live_not_enabled', 'reseller_suspended'], { auth: 'session' }),
      },
    },
    async (request, reply) => {
      const owner = await ownerOf(services, request, request.params.id, consoleMode(request, { write: true }));
      return sendWritten(reply, { created: false, body: await services.customers.ask(owner.customerId, { type: 'calendar_disconnect' }) });
    },
  );
}
