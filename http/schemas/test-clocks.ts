import { Type, Nullable, Timestamp, withCode, MAX_INT4, type Static } from './common.ts';

/* Schemas of the console's test clocks (/console/api/test_clocks); the web app imports their types. */

export const TestClockSchema = Type.Object({
  object: Type.Literal('test_clock'),
  id: Type.String(),
  name: Nullable(Type.String()),
  frozen_time: Type.String({ format: 'date-time', description: "the clock's time: its customers' test schedules run on it" }),
  status: Type.Union([Type.Literal('ready'), Type.Literal('advancing')], { description: 'advancing while the work an advance made due runs' }),
  customer_count: Type.Integer({ description: 'test customers on the clock' }),
  created_at: Timestamp,
});
export type TestClockView = Static<typeof TestClockSchema>;

export const DeletedTestClockSchema = Type.Object({ object: Type.Literal('test_clock'), id: Type.String(), deleted: Type.Literal(true) });

/** RFC 3339 text; the rules read it strictly (actors/test-clocks/clock-rules.ts). */
const DateTimeText = withCode(Type.String({ minLength: 1, maxLength: 64, description: 'RFC 3339 date-time with an offset' }), 'invalid_parameter');

export const CreateTestClockBody = Type.Object(
  {
    name: Type.Optional(withCode(Type.String({ maxLength: 200 }), 'invalid_parameter')),
    frozen_time: Type.Optional(DateTimeText),
  },
  { additionalProperties: false },
);
export type CreateTestClockRequest = Static<typeof CreateTestClockBody>;

export const AdvanceTestClockBody = Type.Object(
  {
    to: Type.Optional(DateTimeText),
    seconds: Type.Optional(withCode(Type.Integer({ minimum: -MAX_INT4, maximum: MAX_INT4, description: 'how far to move: forward, at most two years' }), 'invalid_parameter')),
  },
  { additionalProperties: false },
);
export type AdvanceTestClockRequest = Static<typeof AdvanceTestClockBody>;

export const AttachTestClockBody = Type.Object(
  { test_clock: Nullable(withCode(Type.String({ maxLength: 64 }), 'invalid_parameter')) },
  { additionalProperties: false },
);

export const CustomerTestClockSchema = Type.Object({
  object: Type.Literal('customer_test_clock'),
  customer_id: Type.String(),
  test_clock: Nullable(Type.String()),
});
