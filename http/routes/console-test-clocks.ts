import type { App } from './app-type.ts';
import { ListOf, responses, Type } from '../schemas/common.ts';
import {
  AdvanceTestClockBody,
  AttachTestClockBody,
  CreateTestClockBody,
  CustomerTestClockSchema,
  DeletedTestClockSchema,
  TestClockSchema,
} from '../schemas/test-clocks.ts';
import { consoleCaller } from '../plugins/console-session.ts';
import type { TestClocks } from '../../actors/test-clocks/test-clocks.ts';
import type { Mode } from '../../runtime/types.ts';

/** What these routes use: the test clocks service (actors/test-clocks/test-clocks.ts). */
export interface ConsoleTestClockRouteDeps {
  testClocks: TestClocks;
}

const hide = { hide: true, tags: ['console'] };
const read = { auth: 'session', permission: 'account:read' } as const;
const write = { auth: 'session', permission: 'test_clocks:write' } as const;
const session = { auth: 'session' } as const;
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });

/** The console's page query: `limit` 1..200, default 50, and the cursor. */
const ConsolePageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    starting_after: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);

/**
 * `POST /console/api/customers` with `test_clock` (the route's owner calls these): `check` before
 * the customer is created (404 test_clock_not_found for an unknown or another account's clock,
 * 400 test_clock_live_customer in live mode), `attach` after it is.
 */
export function testClockOnCreate(deps: ConsoleTestClockRouteDeps, accountId: string, mode: Mode, clockId: string | null | undefined) {
  return {
    check: async () => {
      if (clockId) await deps.testClocks.checkAttachable(accountId, mode, clockId);
    },
    attach: async (customerId: string) => {
      if (clockId) await deps.testClocks.attach(accountId, customerId, clockId);
    },
  };
}

/** Test clocks of the signed-in account (test mode only; the account comes from the session alone). */
export function registerConsoleTestClockRoutes(app: App, services: ConsoleTestClockRouteDeps): void {
  const { testClocks } = services;

  app.get(
    '/console/api/test_clocks',
    { config: read, schema: { ...hide, querystring: ConsolePageQuery, response: responses({ 200: ListOf(TestClockSchema) }, ['invalid_cursor'], session) } },
    async (request) => testClocks.list(consoleCaller(request).accountId, { limit: request.query.limit ?? 50, startingAfter: request.query.starting_after }),
  );

  app.post(
    '/console/api/test_clocks',
    { config: write, schema: { ...hide, body: CreateTestClockBody, response: responses({ 201: TestClockSchema }, ['invalid_parameter'], session) } },
    async (request, reply) => reply.code(201).send(await testClocks.create(consoleCaller(request).accountId, request.body)),
  );

  app.get(
    '/console/api/test_clocks/:id',
    { config: read, schema: { ...hide, params: IdParams, response: responses({ 200: TestClockSchema }, ['test_clock_not_found'], session) } },
    async (request) => testClocks.get(consoleCaller(request).accountId, request.params.id),
  );

  app.delete(
    '/console/api/test_clocks/:id',
    { config: write, schema: { ...hide, params: IdParams, response: responses({ 200: DeletedTestClockSchema }, ['test_clock_not_found'], session) } },
    async (request) => testClocks.remove(consoleCaller(request).accountId, request.params.id),
  );

  app.post(
    '/console/api/test_clocks/:id/advance',
    {
      config: write,
      schema: {
        ...hide,
        params: IdParams,
        body: AdvanceTestClockBody,
        response: responses(
          { 200: TestClockSchema },
          ['test_clock_not_found', 'test_clock_not_forward', 'test_clock_advance_too_far', 'parameter_missing', 'invalid_parameter'],
          session,
        ),
      },
    },
    async (request) => testClocks.advance(consoleCaller(request).accountId, request.params.id, request.body),
  );

  app.patch(
    '/console/api/customers/:id/test_clock',
    {
      config: write,
      schema: {
        ...hide,
        params: IdParams,
        body: AttachTestClockBody,
        response: responses({ 200: CustomerTestClockSchema }, ['customer_not_found', 'test_clock_not_found', 'test_clock_live_customer'], session),
      },
    },
    async (request) => testClocks.attach(consoleCaller(request).accountId, request.params.id, request.body.test_clock),
  );
}
