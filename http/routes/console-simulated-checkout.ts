import type { App } from './app-type.ts';
import { responses, Type } from '../schemas/common.ts';
import { consoleCaller } from '../plugins/console-session.ts';
import type { SimulatedProvider } from '../../actors/payments/simulated-provider.ts';

/** What these routes use: the simulated card processor of test mode (actors/payments/simulated-provider.ts). */
export interface ConsoleSimulatedCheckoutRouteDeps {
  simulatedCheckout: SimulatedProvider;
}

const hide = { hide: true, tags: ['console'] };
const read = { auth: 'session', permission: 'billing:read' } as const;
const write = { auth: 'session', permission: 'billing:write' } as const;
const session = { auth: 'session' } as const;

const SessionParams = Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false });

export const SimulatedCheckoutSchema = Type.Object({
  object: Type.Literal('simulated_checkout'),
  id: Type.String({ description: 'cs_test_…' }),
  status: Type.Union([Type.Literal('open'), Type.Literal('complete'), Type.Literal('expired')]),
  amount_cents: Type.Integer(),
  save_card: Type.Boolean({ description: 'the card is saved for automatic top-up when paid' }),
  card_payment_id: Type.String({ format: 'uuid' }),
  success_url: Type.String({ description: 'where the page goes once paid (the session id filled in)' }),
  cancel_url: Type.String(),
});

/** A month or year as a number or as the digits a form field holds. */
const CardInteger = Type.Union([Type.Integer({ minimum: 0, maximum: 9999 }), Type.String({ pattern: '^[0-9]{1,4}$' })]);

export const SimulatedPayBody = Type.Object(
  {
    card_number: Type.String({ maxLength: 32, description: 'digits; spaces and dashes between them are allowed' }),
    exp_month: CardInteger,
    exp_year: CardInteger,
    cvc: Type.String({ maxLength: 8 }),
  },
  { additionalProperties: false },
);

export const SimulatedPaidSchema = Type.Object({ status: Type.Literal('complete'), redirect_url: Type.String() });

/** The console's test-mode card form (/console/checkout/:session_id) reads its session and pays it here. */
export function registerConsoleSimulatedCheckoutRoutes(app: App, services: ConsoleSimulatedCheckoutRouteDeps): void {
  const processor = services.simulatedCheckout;

  app.get(
    '/console/api/billing/simulated_checkout/:session_id',
    { config: read, schema: { ...hide, params: SessionParams, response: responses({ 200: SimulatedCheckoutSchema }, ['checkout_session_not_found'], session) } },
    async (request) => processor.checkout(consoleCaller(request).accountId, request.params.session_id),
  );

  app.post(
    '/console/api/billing/simulated_checkout/:session_id/pay',
    {
      config: write,
      schema: {
        ...hide,
        params: SessionParams,
        body: SimulatedPayBody,
        response: responses({ 200: SimulatedPaidSchema }, ['checkout_session_not_found', 'checkout_session_expired', 'card_declined', 'invalid_parameter', 'parameter_missing'], session),
      },
    },
    async (request) => {
      const b = request.body;
      const paid = await processor.pay(consoleCaller(request).accountId, request.params.session_id, {
        cardNumber: b.card_number,
        expMonth: Number(b.exp_month),
        expYear: Number(b.exp_year),
        cvc: b.cvc,
      });
      return { status: paid.status, redirect_url: paid.redirectUrl };
    },
  );
}
