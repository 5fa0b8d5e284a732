import type { App } from './app-type.ts';
import type { Payments } from '../../actors/payments/payments.ts';
import { consoleCaller, consoleMode, requireLiveFor } from '../plugins/console-session.ts';
import { ApiError } from '../errors.ts';
import { ListOf, responses, Type, withCode } from '../schemas/common.ts';
import { CONSOLE_PAGE_LIMIT } from '../schemas/console.ts';
import {
  AutoTopUpBody,
  CardPaymentSchema,
  CardRefundSchema,
  CreatedTopUpSchema,
  CreateTopUpBody,
  PaymentsModeQuery,
  PaymentsSetupSchema,
  RefundBody,
  TopUpListQuery,
  TopUpParams,
} from '../schemas/console-payments.ts';
import { WebhookSignatureError } from '../../payments/provider.ts';

/** What the payment routes use: the payments room (actors/payments/). */
export interface PaymentRouteDeps {
  payments: Pick<Payments, 'setup' | 'createTopUp' | 'listTopUps' | 'getTopUp' | 'setAutoTopUp' | 'disableAutoTopUp' | 'deleteSavedCard' | 'receiveStripeWebhook' | 'refunds'>;
}

const READ = { auth: 'session' as const, permission: 'billing:read' as const };
const WRITE = { auth: 'session' as const, permission: 'billing:write' as const };
const hide = { hide: true, tags: ['console'] };
const ADMIN = { auth: 'admin' as const };
const adminHide = { hide: true, tags: ['admin'] };
/** Largest Stripe webhook body accepted (Stripe's events are a few KB). */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/**
 * Card payments: the console's billing payment routes (CONTRACT-22), Stripe's webhook and the
 * operator's card payments and refunds. Registered from this one function.
 */
export async function registerPaymentRoutes(app: App, services: PaymentRouteDeps): Promise<void> {
  const payments = services.payments;

  app.get(
    '/console/api/billing/payments',
    { config: READ, schema: { ...hide, querystring: PaymentsModeQuery, response: responses({ 200: PaymentsSetupSchema }, ['invalid_parameter'], { auth: 'session' }) } },
    async (request) => payments.setup(consoleCaller(request).accountId, consoleMode(request, { write: false })),
  );

  app.post(
    '/console/api/billing/top_ups',
    {
      config: WRITE,
      schema: {
        ...hide,
        body: CreateTopUpBody,
        response: responses({ 201: CreatedTopUpSchema }, ['invalid_parameter', 'top_up_too_small', 'payments_not_configured', 'processor_unavailable', 'live_not_enabled'], { auth: 'session' }),
      },
    },
    async (request, reply) => {
      const mode = consoleMode(request, { write: true });
      const created = await payments.createTopUp(consoleCaller(request).accountId, mode, request.body.amount_cents, request.body.save_card ?? false);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/console/api/billing/top_ups',
    { config: READ, schema: { ...hide, querystring: TopUpListQuery, response: responses({ 200: ListOf(CardPaymentSchema) }, ['invalid_parameter', 'invalid_cursor'], { auth: 'session' }) } },
    async (request) =>
      payments.listTopUps(consoleCaller(request).accountId, consoleMode(request, { write: false }), { limit: request.query.limit ?? CONSOLE_PAGE_LIMIT, startingAfter: request.query.starting_after }),
  );

  app.get(
    '/console/api/billing/top_ups/:id',
    {
      config: READ,
      schema: { ...hide, params: TopUpParams, querystring: PaymentsModeQuery, response: responses({ 200: CardPaymentSchema }, ['invalid_parameter', 'card_payment_not_found'], { auth: 'session' }) },
    },
    async (request) => payments.getTopUp(consoleCaller(request).accountId, consoleMode(request, { write: false }), request.params.id),
  );

  app.put(
    '/console/api/billing/auto_top_up',
    {
      config: WRITE,
      schema: {
        ...hide,
        body: AutoTopUpBody,
        response: responses({ 200: PaymentsSetupSchema }, ['invalid_parameter', 'top_up_too_small', 'saved_card_required', 'payments_not_configured', 'live_not_enabled'], { auth: 'session' }),
      },
    },
    async (request) => {
      // Automatic top-up is live money only.
      requireLiveFor(request, 'live');
      return payments.setAutoTopUp(consoleCaller(request).accountId, request.body.threshold_cents, request.body.amount_cents);
    },
  );

  app.delete(
    '/console/api/billing/auto_top_up',
    { config: WRITE, schema: { ...hide, response: responses({ 200: PaymentsSetupSchema }, ['live_not_enabled'], { auth: 'session' }) } },
    async (request) => {
      requireLiveFor(request, 'live');
      return payments.disableAutoTopUp(consoleCaller(request).accountId);
    },
  );

  app.delete(
    '/console/api/billing/saved_card',
    {
      config: WRITE,
      schema: { ...hide, querystring: PaymentsModeQuery, response: responses({ 200: PaymentsSetupSchema }, ['invalid_parameter', 'processor_unavailable', 'live_not_enabled'], { auth: 'session' }) },
    },
    async (request) => payments.deleteSavedCard(consoleCaller(request).accountId, consoleMode(request, { write: true })),
  );

  // Stripe's webhook: the raw body is what its signature covers, so this scope reads bodies as
  // bytes (its own parser; the JSON parser and body limits of every other route are untouched).
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));
    const typed = scope as unknown as App;
    typed.post(
      '/webhooks/stripe',
      { config: { auth: 'none' }, schema: { hide: true, response: responses({ 200: Type.Object({ received: Type.Boolean() }) }, ['invalid_webhook_signature', 'service_unavailable', 'api_error'], { auth: 'none' }) } },
      async (request) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const signature = request.headers['stripe-signature'];
        try {
          await payments.receiveStripeWebhook(body, typeof signature === 'string' ? signature : undefined);
        } catch (err) {
          if (err instanceof WebhookSignatureError) throw new ApiError('invalid_webhook_signature');
          throw err;
        }
        return { received: true };
      },
    );
  });

  const AccountParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
  app.get(
    '/admin/v1/accounts/:id/card_payments',
    {
      config: ADMIN,
      schema: {
        ...adminHide,
        params: AccountParams,
        querystring: Type.Object({ limit: Type.Optional(withCode(Type.Integer({ minimum: 1, maximum: 200 }), 'invalid_parameter')) }, { additionalProperties: false }),
        response: responses({ 200: ListOf(CardPaymentSchema) }, ['invalid_parameter'], { auth: 'admin' }),
      },
    },
    async (request) => payments.refunds.list(request.params.id, request.query.limit ?? 100),
  );

  app.post(
    '/admin/v1/accounts/:id/card_payments/:payment_id/refunds',
    {
      config: ADMIN,
      schema: {
        ...adminHide,
        params: Type.Object({ id: Type.String({ format: 'uuid' }), payment_id: Type.String({ maxLength: 255 }) }),
        body: RefundBody,
        response: responses({ 201: CardRefundSchema }, ['invalid_parameter', 'card_payment_not_found', 'refund_too_large', 'payments_not_configured', 'processor_unavailable'], { auth: 'admin' }),
      },
    },
    async (request, reply) => reply.code(201).send(await payments.refunds.refund(request.params.id, request.params.payment_id, request.body.amount_cents ?? null)),
  );
}
