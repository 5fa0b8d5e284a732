import type { App } from './app-type.ts';
import type { CustomerRegistry, TestClockControl } from './deps.ts';
import { ReadinessSchema } from '../schemas/customers.ts';
import { responses, Type, withCode } from '../schemas/common.ts';
import type { CoverageService } from '../../actors/coverage/coverage-service.ts';
import { ApiError } from '../errors.ts';
import type { EventHistory } from '../../actors/webhooks/event-history.ts';
import type { EmergencyClosures } from '../../actors/scheduler/emergency-closures.ts';

const ADMIN = { auth: 'admin' as const };
const hide = { hide: true, tags: ['admin'] };
/** The longest step of the test clock in one request: ten years, so the clock stays a date PostgreSQL and JavaScript both hold. */
const MAX_TEST_CLOCK_STEP_SECONDS = 10 * 366 * 86_400;
const CustomerParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** What these routes use. */
export interface AdminPlatformRouteDeps {
  customers: CustomerRegistry;
  coverage: Pick<CoverageService, 'certifyLanguage'>;
  /** Loads a national do-not-call registry file (it replaces the registry's list); resolves to the load's summary (the response body). */
  importDncRegistry: (file: { country: string; registry?: string; source: string; text: string }) => Promise<object>;
  /** Every national do-not-call registry with its last load (the response body). */
  listDncRegistries: () => Promise<object>;
  /** A call's compliance record with its request (the response body); `call_not_found`, `compliance_record_not_found`. */
  complianceRecord: (callId: string) => Promise<object>;
  eventHistory: EventHistory;
  emergencyClosures: EmergencyClosures;
  testClock: TestClockControl | null;
}

const EmergencyClosureSchema = Type.Object({
  object: Type.Literal('emergency_closure'),
  jurisdiction: Type.String(),
  closed: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]),
  closed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const JurisdictionParams = Type.Object({
  jurisdiction: withCode(Type.String({ pattern: '^[A-Za-z]{2}(-[A-Za-z]{2,3})?$', description: "a country (US) or a region (US-LA, CA-BC, ES-MD)" }), 'invalid_parameter'),
});

/** Operator actions on the platform and on customers: certifications, numbers, emergency closures, the test clock. */
export function registerAdminPlatformRoutes(app: App, services: AdminPlatformRouteDeps): void {
  app.post(
    '/admin/v1/languages/:locale/certify',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: Type.Object({ locale: withCode(Type.String({ pattern: '^[a-z]{2,3}-[A-Z]{2}$' }), 'invalid_locale') }),
        response: responses({ 200: Type.Object({ object: Type.Literal('speech_certification'), locale: Type.String(), certified: Type.Boolean() }) }, ['invalid_locale'], {
          auth: 'admin',
        }),
      },
    },
    async (request) => services.coverage.certifyLanguage(request.params.locale),
  );

  app.post(
    '/admin/v1/customers/:id/script/certify',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: CustomerParams,
        body: Type.Object({ script: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000 })) }, { additionalProperties: false }),
        response: responses({ 200: ReadinessSchema }, ['customer_not_found'], { auth: 'admin' }),
      },
    },
    async (request) => services.customers.ask(request.params.id, { type: 'certify_script', script: request.body.script ?? null }),
  );

  app.post(
    '/admin/v1/customers/:id/research',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: CustomerParams,
        body: Type.Object({ notes: Type.String({ minLength: 1, maxLength: 20_000 }) }, { additionalProperties: false }),
      },
    },
    async (request) => services.customers.ask(request.params.id, { type: 'record_research', notes: request.body.notes }),
  );

  app.post(
    '/admin/v1/customers/:id/numbers',
    {
      config: ADMIN,
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
        response: responses({ 200: ReadinessSchema }, ['customer_not_found', 'invalid_parameter'], { auth: 'admin' }),
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
    '/admin/v1/dnc/registry',
    {
      config: ADMIN,
      schema: {
        ...hide,
        body: Type.Object(
          {
            country: withCode(Type.String({ pattern: '^[A-Z]{2}$' }), 'invalid_parameter'),
            registry: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'the registry id (GB-TPS, GB-CTPS); needed where the country has several' })),
            source: Type.String({ minLength: 1, maxLength: 100, description: 'e.g. the registry and file date' }),
            text: Type.String({ minLength: 1, maxLength: 900_000, description: 'the file: one number per line, or CSV with the number first' }),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => services.importDncRegistry(request.body),
  );

  // Which national do-not-call registries exist, when each was last loaded and whether it still stops calls.
  app.get('/admin/v1/dnc/registries', { config: ADMIN, schema: { ...hide } }, async () => services.listDncRegistries());

  // A call's compliance record, as produced on request (UWG § 7a(2)).
  app.get(
    '/admin/v1/calls/:id/compliance_record',
    { config: ADMIN, schema: { ...hide, params: Type.Object({ id: Type.String({ maxLength: 64 }) }) } },
    async (request) => services.complianceRecord(request.params.id),
  );

  // Emergency closures (La. R.S. 45:844.31): a closed jurisdiction gets no calls until reopened.
  app.get(
    '/admin/v1/emergency_closures',
    { config: ADMIN, schema: { ...hide, response: responses({ 200: Type.Object({ object: Type.Literal('list'), data: Type.Array(EmergencyClosureSchema), has_more: Type.Boolean() }) }, [], { auth: 'admin' }) } },
    async () => ({ object: 'list' as const, data: await services.emergencyClosures.list(), has_more: false }),
  );

  app.put(
    '/admin/v1/emergency_closures/:jurisdiction',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: JurisdictionParams,
        body: Type.Object({ reason: withCode(Type.String({ minLength: 1, maxLength: 500, description: 'e.g. the proclamation closing it' }), 'invalid_parameter') }, { additionalProperties: false }),
        response: responses({ 200: EmergencyClosureSchema }, ['invalid_parameter'], { auth: 'admin' }),
      },
    },
    async (request) => services.emergencyClosures.close(request.params.jurisdiction, request.body.reason),
  );

  app.delete(
    '/admin/v1/emergency_closures/:jurisdiction',
    { config: ADMIN, schema: { ...hide, params: JurisdictionParams, response: responses({ 200: EmergencyClosureSchema }, ['invalid_parameter'], { auth: 'admin' }) } },
    async (request) => services.emergencyClosures.reopen(request.params.jurisdiction),
  );

  app.get(
    '/admin/v1/accounts/:id/events',
    {
      config: ADMIN,
      schema: { ...hide, params: Type.Object({ id: Type.String({ format: 'uuid' }) }), querystring: Type.Object({ type: Type.Optional(Type.String()) }) },
    },
    async (request) => {
      return {
        object: 'list',
        data: await services.eventHistory.listForAccount(request.params.id, request.query.type),
        has_more: false,
      };
    },
  );

  app.post(
    '/admin/v1/test_clock/advance',
    {
      config: ADMIN,
      schema: {
        ...hide,
        body: Type.Object({ seconds: withCode(Type.Integer({ minimum: 0, maximum: MAX_TEST_CLOCK_STEP_SECONDS }), 'invalid_parameter') }, { additionalProperties: false }),
      },
    },
    async (request) => {
      if (!services.testClock) throw new ApiError('test_clock_disabled');
      const now = await services.testClock.advance(request.body.seconds * 1000);
      return { object: 'test_clock', now: now.toISOString() };
    },
  );
}
