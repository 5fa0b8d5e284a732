import { Nullable, NullableString, ModeSchema, Timestamp, Type, withCode, StringEnum, NullableEnum } from './common.ts';
import { CustomerIdParams } from './customers.ts';

export const NUMBER_STATUSES = ['verifying', 'active', 'payment_due', 'released', 'failed'] as const;
const Day = Type.String({ format: 'date', description: 'a UTC calendar day, YYYY-MM-DD' });

export const NumberSchema = Type.Object(
  {
    object: Type.Literal('number'),
    id: Type.String({ format: 'uuid' }),
    customer_id: Type.String({ format: 'uuid' }),
    kind: StringEnum(['rented', 'caller_id'], "rented: a number rented in the customer's country; caller_id: the customer's own number, verified"),
    phone_number: Type.String({ description: 'E.164' }),
    country: Type.String({ description: 'ISO-3166 alpha-2' }),
    status: StringEnum(
      NUMBER_STATUSES,
      'verifying (caller ID being verified), active, payment_due (rent not taken; released on release_due_on), released (permanent), failed (caller ID not verified)',
    ),
    monthly_cents: Type.Integer({ description: 'the monthly rent: 1,500 for a rented number, 1,200 for a caller ID' }),
    renews_on: Nullable(Day),
    release_due_on: Nullable(Day),
    released_at: Nullable(Timestamp),
    failure_reason: NullableEnum(['verification_failed', 'verification_expired'], 'verification_failed or verification_expired'),
    verification: Nullable(
      Type.Object({
        code: NullableString,
        expires_at: Timestamp,
      }, { description: 'while verifying: the digits the person types when the carrier calls (null in events)' }),
    ),
    mode: ModeSchema,
    created_at: Timestamp,
  },
  { $id: 'Number' },
);

export const NumberParams = Type.Object({
  id: CustomerIdParams.properties.id,
  number_id: Type.String({ minLength: 1, maxLength: 255, description: 'the id of the number' }),
});

export const NumberOrderBody = Type.Object(
  {
    kind: Type.Optional(Type.Union([Type.Literal('rented'), Type.Literal('caller_id')], { default: 'rented' })),
    phone_number: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "caller_id only: the customer's own number, in any common format" })),
    area_code: Type.Optional(
      withCode(
        Type.String({
          minLength: 1,
          maxLength: 8,
          description:
            "rented, US and CA customers only: a preferred area code in service in the customer's country (three digits); another is rented when it has none. " +
            'Any other country, or a code not in service there, is 400 invalid_parameter.',
        }),
        'invalid_parameter',
      ),
    ),
  },
  { additionalProperties: false, examples: [{ kind: 'rented', area_code: '202' }] },
);
