import type { App } from './app-type.ts';
import type { Services } from '../../app/services.ts';
import { ReadinessSchema } from '../schemas/customers.ts';
import { responses, Type, withCode } from '../schemas/common.ts';
import { certifyLanguage } from '../../actors/coverage/coverage-service.ts';
import { ApiError } from '../errors.ts';
import { createEventRepository } from '../../db/events.ts';
import { createSettingsRepository, TEST_CLOCK_SETTING } from '../../db/settings.ts';
import { importRegistry } from '../../actors/call/requests.ts';
import { eventView } from '../../actors/webhooks/views.ts';

const CONSOLE = { auth: 'console' as const };
const hide = { hide: true, tags: ['console'] };
const CustomerParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** Operator actions on the platform and on customers: certifications, numbers, the test clock. */
export function registerConsolePlatformRoutes(app: App, services: Services): void {
  app.post(
    '/console/v1/languages/:locale/certify',
    {
      config: CONSOLE,
      schema: {
        ...hide,
        params: Type.Object({ locale: withCode(Type.String({ pattern: '^[a-z]{2,3}-[A-Z]{2}$' }), 'invalid_locale') }),
        response: responses({ 200: Type.Object({ object: Type.Literal('speech_certification'), locale: Type.String(), certified: Type.Boolean() }) }, ['invalid_locale'], {
          auth: 'console',
        }),
      },
    },
    async (request) => certifyLanguage(services.pool, request.params.locale, services.clock.now()),
  );

  app.post(
    '/console/v1/customers/:id/script/certify',
    {
      config: CONSOLE,
      schema: {
        ...hide,
        params: CustomerParams,
        body: Type.Object({ script: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000 })) }, { additionalProperties: false }),
        response: responses({ 200: ReadinessSchema }, ['customer_not_found'], { auth: 'console' }),
      },
    },
    async (request) => services.customers.ask(request.params.id, { type: 'certify_script', script: request.body.script ?? null }),
  );

  app.post(
    '/console/v1/customers/:id/research',
    {
      config: CONSOLE,
      schema: {
        ...hide,
        params: CustomerParams,
        body: Type.Object({ notes: Type.String({ minLength: 1, maxLength: 20_000 }) }, { additionalProperties: false }),
      },
    },
    async (request) => services.customers.ask(request.params.id, { type: 'record_research', notes: request.body.notes }),
  );

  app.post(
    '/console/v1/customers/:id/calendar/connect',
    { config: CONSOLE, schema: { ...hide, params: CustomerParams, response: responses({ 200: ReadinessSchema }, ['customer_not_found'], { auth: 'console' }) } },
    async (request) => services.customers.ask(request.params.id, { type: 'connect_calendar' }),
  );

  app.post(
    '/console/v1/customers/:id/numbers',
    {
      config: CONSOLE,
      schema: {
        ...hide,
        params: CustomerParams,
        body: Type.Object(
          {
            phone_number: withCode(Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$' }), 'invalid_parameter'),
            kind: Type.Optional(Type.String({ enum: ['rented', 'caller_id'] })),
          },
          { additionalProperties: false },
        ),
        response: responses({ 200: ReadinessSchema }, ['customer_not_found', 'invalid_parameter'], { auth: 'console' }),
      },
    },
    async (request) =>
      services.customers.ask(request.params.id, {
        type: 'assign_number',
        e164: request.body.phone_number,
        kind: (request.body.kind ?? 'rented') as 'rented' | 'caller_id',
      }),
  );

  app.post(
    '/console/v1/dnc/registry',
    {
      config: CONSOLE,
      schema: {
        ...hide,
        body: Type.Object(
          {
            country: withCode(Type.String({ pattern: '^[A-Z]{2}$' }), 'invalid_parameter'),
            source: Type.String({ minLength: 1, maxLength: 100, description: 'e.g. the registry and file date' }),
            text: Type.String({ minLength: 1, maxLength: 900_000, description: 'the file: one number per line, or CSV with the number first' }),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => importRegistry(services, request.body),
  );

  app.get(
    '/console/v1/accounts/:id/events',
    {
      config: CONSOLE,
      schema: { ...hide, params: Type.Object({ id: Type.String({ format: 'uuid' }) }), querystring: Type.Object({ type: Type.Optional(Type.String()) }) },
    },
    async (request) => {
      const rows = await createEventRepository(services.pool).listForAccount(request.params.id, request.query.type);
      return {
        object: 'list',
        data: rows.map(eventView),
        has_more: false,
      };
    },
  );

  app.post(
    '/console/v1/test_clock/advance',
    {
      config: CONSOLE,
      schema: {
        ...hide,
        body: Type.Object({ seconds: withCode(Type.Integer({ minimum: 0 }), 'invalid_parameter') }, { additionalProperties: false }),
      },
    },
    async (request) => {
      if (!services.testClock) throw new ApiError('test_clock_disabled');
      const now = services.testClock.advance(request.body.seconds * 1000);
      await createSettingsRepository(services.pool).publishTestClock(TEST_CLOCK_SETTING, services.testClock.offset);
      return { object: 'test_clock', now: now.toISOString() };
    },
  );
}
