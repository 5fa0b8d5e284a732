import { Type, Nullable, NullableString, NullableTimestamp, Timestamp, ModeSchema, withCode, MAX_CENTS, type Static } from './common.ts';
import { CONSOLE_PAGE, ConsoleModeSchema } from './console.ts';
import { MAXIMUM_TOP_UP_CENTS, MINIMUM_TOP_UP_CENTS } from '../../money/rules/pricing.ts';

/** Schemas of card payments (CONTRACT-22): the console's billing payment routes and the operator's refunds. */


const Card = Type.Object({ brand: NullableString, last4: NullableString });

export const CardPaymentSchema = Type.Object({
  object: Type.Literal('card_payment'),
  id: Type.String({ format: 'uuid' }),
  mode: ModeSchema,
  kind: Type.Union([Type.Literal('checkout'), Type.Literal('automatic')]),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('canceled')]),
  amount_cents: Type.Integer(),
  bonus_cents: Type.Integer({ description: '0 until the payment succeeds' }),
  refunded_cents: Type.Integer(),
  card: Nullable(Card),
  receipt_url: Nullable(Type.String({ description: "the processor's receipt page; null for the simulated processor" })),
  failure: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  ledger_line_id: NullableString,
  created_at: Timestamp,
  paid_at: NullableTimestamp,
});
export type CardPayment = Static<typeof CardPaymentSchema>;

export const CreatedTopUpSchema = Type.Intersect([CardPaymentSchema, Type.Object({ checkout_url: Nullable(Type.String({ description: 'the page where the card is entered' })) })]);

export const PaymentsSetupSchema = Type.Object({
  object: Type.Literal('payments_setup'),
  mode: ModeSchema,
  processor: Type.Union([Type.Literal('stripe'), Type.Literal('simulated'), Type.Null()], { description: 'null: card payments are not configured' }),
  publishable_key: NullableString,
  minimum_top_up_cents: Type.Integer(),
  bonus_tiers: Type.Array(Type.Object({ from_cents: Type.Integer(), percent: Type.Integer() })),
  saved_card: Nullable(Type.Object({ brand: NullableString, last4: NullableString, exp_month: Nullable(Type.Integer()), exp_year: Nullable(Type.Integer()) })),
  auto_top_up: Nullable(
    Type.Object({
      threshold_cents: Type.Integer(),
      amount_cents: Type.Integer(),
      status: Type.Union([Type.Literal('on'), Type.Literal('failing')]),
      retry_after: NullableTimestamp,
      last_failure: Nullable(Type.Object({ code: Type.String(), message: Type.String(), at: Timestamp })),
    }),
  ),
});
export type PaymentsSetup = Static<typeof PaymentsSetupSchema>;

export const PaymentsModeQuery = Type.Object({ mode: Type.Optional(ConsoleModeSchema) }, { additionalProperties: false });

export const CreateTopUpBody = Type.Object(
  {
    mode: Type.Optional(ConsoleModeSchema),
    amount_cents: withCode(Type.Integer({ minimum: MINIMUM_TOP_UP_CENTS, maximum: MAXIMUM_TOP_UP_CENTS }), { default: 'top_up_too_small', maximum: 'invalid_parameter', type: 'invalid_parameter' }),
    save_card: Type.Optional(Type.Boolean({ description: 'keep the card for automatic top-up' })),
  },
  { additionalProperties: false },
);

export const TopUpListQuery = Type.Object({ ...CONSOLE_PAGE, mode: Type.Optional(ConsoleModeSchema) }, { additionalProperties: false });
export const TopUpParams = Type.Object({ id: Type.String({ maxLength: 255 }) });

export const AutoTopUpBody = Type.Object(
  {
    threshold_cents: withCode(Type.Integer({ minimum: 0, maximum: MAX_CENTS }), 'invalid_parameter'),
    amount_cents: withCode(Type.Integer({ minimum: MINIMUM_TOP_UP_CENTS, maximum: MAXIMUM_TOP_UP_CENTS }), { default: 'top_up_too_small', maximum: 'invalid_parameter', type: 'invalid_parameter' }),
  },
  { additionalProperties: false },
);

export const CardRefundSchema = Type.Object({
  object: Type.Literal('card_refund'),
  id: Type.String({ format: 'uuid' }),
  card_payment_id: Type.String({ format: 'uuid' }),
  amount_cents: Type.Integer(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  ledger_line_id: NullableString,
  created_at: Timestamp,
});

export const RefundBody = Type.Object(
  { amount_cents: Type.Optional(withCode(Type.Integer({ minimum: 1, maximum: MAX_CENTS }), 'invalid_parameter')) },
  { additionalProperties: false },
);
