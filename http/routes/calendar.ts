import type { App } from './app-type.ts';
import type { CustomerRegistry } from './deps.ts';
import { CustomerIdParams } from '../schemas/customers.ts';
import { CalendarConnectionSchema, CalendarLinkBody, CalendarLinkSchema } from '../schemas/calendar.ts';
import { responses } from '../schemas/common.ts';
import { customerIdOf, sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { CREATED_OR_EXISTING } from '../write-status.ts';

/** What these routes use. */
export interface CalendarRouteDeps extends CustomerLookupDeps {
  customers: CustomerRegistry;
}

/** A customer's calendar connection (issue 24): read it, disconnect it, mint the link the customer connects it on. */
export function registerCalendarRoutes(app: App, services: CalendarRouteDeps): void {
  app.get(
    '/v1/customers/:id/calendar',
    {
      config: { scope: 'customers:read' },
      schema: {
        operationId: 'getCustomerCalendar',
        summary: "The customer's calendar connection: working, failing (and why) or not connected",
        description: 'Never the credentials. The customer connects its calendar on the page a calendar link opens (POST /v1/customers/{id}/calendar_link).',
        tags: ['customers'],
        params: CustomerIdParams,
        response: responses({ 200: CalendarConnectionSchema }, ['customer_not_found', 'scope_missing']),
      },
    },
    async (request) => {
      const id = await customerIdOf(services, request, request.params.id);
      return services.customers.ask(id, { type: 'get_calendar' });
    },
  );

  app.delete(
    '/v1/customers/:id/calendar',
    {
      config: { scope: 'customers:write' },
      schema: {
        operationId: 'disconnectCustomerCalendar',
        summary: "Disconnect the customer's calendar",
        description:
          'Forgets the connection and its credentials; a requested calendar step is no longer done. Appointments already booked stay. ' +
          '`409 calendar_not_connected` when there is none.',
        tags: ['customers'],
        params: CustomerIdParams,
        response: responses({ 200: CalendarConnectionSchema }, ['customer_not_found', 'calendar_not_connected', 'scope_missing']),
      },
    },
    async (request) => {
      const id = await customerIdOf(services, request, request.params.id);
      return services.customers.ask(id, { type: 'calendar_disconnect' });
    },
  );

  app.post(
    '/v1/customers/:id/calendar_link',
    {
      config: { scope: 'customers:write', idempotent: true, writeStatus: CREATED_OR_EXISTING },
      schema: {
        operationId: 'createCalendarLink',
        summary: 'Mint the link a customer opens to connect its calendar (revokes the previous one)',
        description:
          'The body is optional. The URL is shown once, in this response; it lasts 7 days. The page is in your brand and the customer\'s calling language: ' +
          'a test customer connects the simulated test calendar, a live one its own calendar. With `email`, the link is also emailed to that address on your behalf ' +
          '(your brand, the customer\'s calling language, Reply-To your support email): `emailed_to` says it was queued.',
        tags: ['customers'],
        params: CustomerIdParams,
        body: CalendarLinkBody,
        response: responses({ 201: CalendarLinkSchema }, [
          'customer_not_found', 'invalid_parameter', 'unknown_parameter', 'invalid_json', 'calendar_link_not_created', 'onboarding_email_limit', 'idempotency_key_reused',
          'idempotency_key_too_long', 'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const id = await customerIdOf(services, request, request.params.id);
      return sendWritten(reply, await services.customers.ask(id, { type: 'mint_calendar_link', email: request.body?.email, idempotency: request.idempotency }));
    },
  );
}
