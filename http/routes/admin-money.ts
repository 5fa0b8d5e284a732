import type { App } from './app-type.ts';
import type { AccountRegistry, TestClockControl } from './deps.ts';
import type { CarrierInbox } from '../../actors/call/carrier-inbox.ts';
import type { TestClocks } from '../../actors/test-clocks/test-clocks.ts';
import { BalanceSchema, UsageEntrySchema } from '../schemas/money.ts';
import { ListOf, MAX_CENTS, ModeSchema, Nullable, responses, Type, withCode } from '../schemas/common.ts';
import { ApiError } from '../errors.ts';
import { carrierReportView } from '../../actors/call/views.ts';
import { MINIMUM_TOP_UP_CENTS } from '../../money/rules/pricing.ts';

const ADMIN = { auth: 'admin' as const };
const hide = { hide: true, tags: ['admin'] };
const AccountParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
/** An amount of money in cents from `min`; over MAX_CENTS is invalid_parameter, whatever else refuses it says `code`. */
const Cents = (min: number, code: 'invalid_parameter' | 'top_up_too_small' = 'invalid_parameter') =>
  withCode(Type.Integer({ minimum: min, maximum: MAX_CENTS }), { default: code, maximum: 'invalid_parameter' });

/** What these routes use. */
export interface AdminMoneyRouteDeps {
  accounts: AccountRegistry;
  /** The periodic jobs by name, each run once on request (app/jobs.ts). */
  jobs: { names: readonly string[]; run(name: string): Promise<number> };
  /** Runs one dialler round now; resolves to the calls dialled. */
  dialNow: () => Promise<number>;
  /** Runs one call keeper round now (inbox retries, leases, recovery, overdue events). */
  keepNow: () => Promise<unknown>;
  /** Builds every website waiting, now (the builder's loop does the same on its own). */
  buildNow: () => Promise<number>;
  carrierInbox: Pick<CarrierInbox, 'listPending'>;
  /** Present only under SWITCHBOARD_TEST_CLOCK=1, which the test facilities below require. */
  testClock: TestClockControl | null;
  /** A test customer's test clock time, when it is on one (its hold expires on it). */
  testClocks: Pick<TestClocks, 'timeOf'>;
}

/** Operator money actions: card top-ups, automatic top-up, refunds, the activity log, jobs. */
export function registerAdminMoneyRoutes(app: App, services: AdminMoneyRouteDeps): void {
  const ask = services.accounts.ask.bind(services.accounts);

  app.get(
    '/admin/v1/accounts/:id/balance',
    {
      config: ADMIN,
      schema: { ...hide, params: AccountParams, querystring: Type.Object({ mode: Type.Optional(ModeSchema) }), response: responses({ 200: BalanceSchema }, ['account_not_found'], { auth: 'admin' }) },
    },
    async (request) => ask(request.params.id, { type: 'get_balance', mode: request.query.mode ?? 'live' }),
  );

  app.post(
    '/admin/v1/accounts/:id/top_ups',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        body: Type.Object(
          { amount_cents: Cents(MINIMUM_TOP_UP_CENTS, 'top_up_too_small'), payment_reference: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) },
          { additionalProperties: false },
        ),
        response: responses(
          { 201: Type.Object({ object: Type.Literal('top_up'), lines: Type.Array(UsageEntrySchema), balance: BalanceSchema }) },
          ['account_not_found', 'top_up_too_small'],
          { auth: 'admin' },
        ),
      },
    },
    async (request, reply) =>
      reply.code(201).send(await ask(request.params.id, { type: 'top_up', amountCents: request.body.amount_cents, paymentReference: request.body.payment_reference ?? null })),
  );

  app.put(
    '/admin/v1/accounts/:id/auto_top_up',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        body: Type.Object({ threshold_cents: Cents(0), amount_cents: Cents(MINIMUM_TOP_UP_CENTS, 'top_up_too_small') }, { additionalProperties: false }),
        response: responses({ 200: BalanceSchema }, ['account_not_found', 'top_up_too_small'], { auth: 'admin' }),
      },
    },
    async (request) => ask(request.params.id, { type: 'set_auto_top_up', thresholdCents: request.body.threshold_cents, amountCents: request.body.amount_cents }),
  );

  app.delete(
    '/admin/v1/accounts/:id/auto_top_up',
    { config: ADMIN, schema: { ...hide, params: AccountParams, response: responses({ 200: BalanceSchema }, ['account_not_found'], { auth: 'admin' }) } },
    async (request) => ask(request.params.id, { type: 'set_auto_top_up', thresholdCents: null, amountCents: null }),
  );

  app.post(
    '/admin/v1/accounts/:id/refunds',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        body: Type.Object(
          {
            amount_cents: Cents(1),
            customer_id: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
            reference: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
            description: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 500 }))),
          },
          { additionalProperties: false },
        ),
        response: responses(
          { 201: Type.Object({ object: Type.Literal('refund'), line: UsageEntrySchema, balance: BalanceSchema }) },
          ['account_not_found', 'customer_not_found', 'invalid_parameter'],
          { auth: 'admin' },
        ),
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await ask(request.params.id, {
          type: 'refund',
          amountCents: request.body.amount_cents,
          customerId: request.body.customer_id ?? null,
          reference: request.body.reference ?? null,
          description: request.body.description ?? null,
        }),
      ),
  );

  app.get(
    '/admin/v1/accounts/:id/activity',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 200, default: 100 }) }, { additionalProperties: false }),
      },
    },
    async (request) => ask(request.params.id, { type: 'get_activity', limit: request.query.limit }),
  );

  app.post(
    '/admin/v1/jobs/:name/run',
    { config: ADMIN, schema: { ...hide, params: Type.Object({ name: Type.String() }) } },
    async (request) => {
      if (!services.jobs.names.includes(request.params.name)) throw new ApiError('unknown_job');
      const done = await services.jobs.run(request.params.name);
      return { object: 'job_run', job: request.params.name, processed: done };
    },
  );

  app.post(
    '/admin/v1/dialler/run',
    { config: ADMIN, schema: { ...hide } },
    async () => ({ object: 'dialler_run', dialled: await services.dialNow() }),
  );

  app.post('/admin/v1/website_builder/run', { config: ADMIN, schema: { ...hide } }, async () => ({ object: 'website_builder_run', built: await services.buildNow() }));

  app.post('/admin/v1/call_keeper/run', { config: ADMIN, schema: { ...hide } }, async () => {
    await services.keepNow();
    return { object: 'call_keeper_run' };
  });

  // The carrier reports not processed yet, oldest first: one that keeps failing shows here with
  // its attempts and last error until a retry succeeds.
  app.get(
    '/admin/v1/carrier_reports',
    {
      config: ADMIN,
      schema: { ...hide, querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 200, default: 100 }) }, { additionalProperties: false }) },
    },
    async (request) => ({
      object: 'list',
      data: (await services.carrierInbox.listPending(request.query.limit)).map(carrierReportView),
      has_more: false,
    }),
  );

  // Test facilities (SWITCHBOARD_TEST_CLOCK=1 only): start and end a call's money without a call.
  app.post(
    '/admin/v1/accounts/:id/holds',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        body: Type.Object({ mode: ModeSchema, customer_id: Type.String({ format: 'uuid' }), reference: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
      },
    },
    async (request) => {
      if (!services.testClock) throw new ApiError('test_clock_disabled');
      const { mode, customer_id: customerId, reference } = request.body;
      const onClock = mode === 'test' ? await services.testClocks.timeOf(customerId) : null;
      return ask(request.params.id, { type: 'start_call', mode, customerId, reference, ...(onClock ? { scheduleNow: onClock } : {}) });
    },
  );

  app.post(
    '/admin/v1/accounts/:id/holds/:reference/end',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: Type.Object({ id: Type.String({ format: 'uuid' }), reference: Type.String({ minLength: 1, maxLength: 255 }) }),
        body: Type.Object({ duration_seconds: Type.Integer({ minimum: 0, maximum: 86_400 }) }, { additionalProperties: false }),
      },
    },
    async (request) => {
      if (!services.testClock) throw new ApiError('test_clock_disabled');
      return ask(request.params.id, { type: 'end_call', reference: request.params.reference, durationSeconds: request.body.duration_seconds });
    },
  );
}
