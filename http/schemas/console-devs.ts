import { Type, Nullable, NullableString, NullableTimestamp, Timestamp, ModeSchema, withCode, type Static } from './common.ts';
import { ApiKeySchema } from './account.ts';
import { ConsoleModeSchema } from './console.ts';
import { SCOPES } from '../../actors/account/api-key-rules.ts';
import { MAX_ROLL_GRACE_SECONDS } from '../../actors/webhooks/endpoints.ts';

/*
 * Schemas of the console's developer and going-live routes (/console/api): keys, webhook
 * endpoints, deliveries, events, business details and the agreement. The web app imports their
 * types (`import type`, Static<…>).
 */

export { CONSOLE_PAGE_LIMIT, consolePageQueryWith as consolePageQuery } from './console.ts';

/** `mode` of a read: which mode's data (default test). */
export const ModeQuery = Type.Optional(ConsoleModeSchema);

/** A key as the console shows it: the API key object plus until when a rotated-out secret works. */
export const ConsoleApiKeySchema = Type.Object({
  ...ApiKeySchema.properties,
  previous_secret_expires_at: Nullable(Type.String({ format: 'date-time', description: 'after a rotation: the old secret works until then (24 hours)' })),
});
export type ConsoleApiKey = Static<typeof ConsoleApiKeySchema>;

export const CreateKeyBody = Type.Object(
  {
    mode: withCode(ModeSchema, 'invalid_parameter'),
    label: withCode(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), { default: 'parameter_missing', maxLength: 'field_too_long', type: 'invalid_parameter' }),
    scopes: Type.Optional(withCode(Type.Array(Type.String({ maxLength: 64 }), { maxItems: SCOPES.length }), 'invalid_scope')),
    ip_allowlist: Type.Optional(withCode(Nullable(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })), 'invalid_ip_allowlist')),
    expires_at: Type.Optional(withCode(Nullable(Type.String({ maxLength: 40 })), 'invalid_expires_at')),
  },
  { additionalProperties: false },
);

export const WebhookEndpointSchema = Type.Object({
  object: Type.Literal('webhook_endpoint'),
  id: Type.String(),
  account_id: Type.String(),
  mode: ModeSchema,
  url: Type.String(),
  description: NullableString,
  event_types: Type.Array(Type.String(), { description: 'empty: every type' }),
  enabled: Type.Boolean(),
  previous_secret_expires_at: NullableTimestamp,
  created_at: Timestamp,
  secret: Type.Optional(Type.String({ description: 'the signing secret: shown once, on create and roll' })),
});
export type WebhookEndpointView = Static<typeof WebhookEndpointSchema>;

const EventTypes = Type.Optional(withCode(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50 }), 'invalid_event_type'));
const EndpointUrl = withCode(Type.String({ minLength: 1, maxLength: 2048 }), 'invalid_webhook_url');
const Description = Type.Optional(Nullable(Type.String({ maxLength: 500 })));

export const CreateEndpointBody = Type.Object(
  { url: EndpointUrl, mode: withCode(ModeSchema, 'invalid_parameter'), event_types: EventTypes, description: Description, enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    mode: Type.Optional(withCode(ModeSchema, 'invalid_parameter')),
    event_types: EventTypes,
    description: Description,
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const RollSecretBody = Type.Object(
  {
    grace_seconds: Type.Optional(
      withCode(Type.Integer({ minimum: 0, maximum: MAX_ROLL_GRACE_SECONDS, default: 86_400, description: 'how long the old secret keeps signing: 0 to 604800 (a week)' }), 'invalid_parameter'),
    ),
  },
  { additionalProperties: false },
);

export const DeletedEndpointSchema = Type.Object({ object: Type.Literal('webhook_endpoint'), id: Type.String(), deleted: Type.Literal(true) });

export const WebhookAttemptSchema = Type.Object({
  attempt: Type.Integer(),
  attempted_at: Timestamp,
  status_code: Nullable(Type.Integer({ description: 'null: no answer (see error)' })),
  duration_ms: Type.Integer(),
  error: NullableString,
  response_excerpt: Nullable(Type.String({ description: "the start of the receiver's answer (up to 500 characters)" })),
});

export const WebhookDeliverySchema = Type.Object({
  object: Type.Literal('webhook_delivery'),
  id: Type.String(),
  event_id: Type.String(),
  event_type: NullableString,
  endpoint_id: Type.String(),
  status: Type.String({ description: 'pending, sending, succeeded, failed (retrying), dead' }),
  attempts: Type.Integer(),
  next_attempt_at: NullableTimestamp,
  last_status_code: Nullable(Type.Integer()),
  last_error: NullableString,
  attempt_log: Type.Array(WebhookAttemptSchema),
  created_at: Timestamp,
});
export type WebhookDeliveryView = Static<typeof WebhookDeliverySchema>;

export const ConsoleEventSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('event'),
  type: Type.String(),
  mode: ModeSchema,
  created_at: Timestamp,
  data: Type.Unknown(),
});
export type ConsoleEventView = Static<typeof ConsoleEventSchema>;

// --- going live ---

export const GoingLiveStepSchema = Type.Object({
  key: Type.Union([Type.Literal('business_verification'), Type.Literal('agreement'), Type.Literal('funds'), Type.Literal('approval')]),
  done: Type.Boolean(),
  detail: Type.String({ description: 'what stands, in plain words' }),
  who: Type.Union([Type.Literal('you'), Type.Literal('operator')], { description: 'who must act next (or acted, once done)' }),
});
export const GoingLiveSchema = Type.Object({
  object: Type.Literal('going_live'),
  steps: Type.Array(GoingLiveStepSchema),
  live: Type.Boolean(),
});
export type GoingLiveView = Static<typeof GoingLiveSchema>;

const Text = (maxLength: number, code: 'parameter_missing' | 'invalid_parameter' = 'parameter_missing') =>
  withCode(Type.String({ minLength: 1, maxLength, pattern: '\\S', format: 'single-line' }), { default: code, format: 'invalid_parameter', pattern: code, maxLength: 'field_too_long' });
const OptionalText = (maxLength: number) => Type.Optional(withCode(Nullable(Type.String({ maxLength, format: 'single-line' })), 'invalid_parameter'));

export const BusinessDetailsFieldsSchema = Type.Object(
  {
    legal_name: Text(200),
    registration_number: Text(100),
    country: withCode(Type.String({ pattern: '^[A-Za-z]{2}$' }), { default: 'parameter_missing', pattern: 'invalid_parameter', type: 'invalid_parameter' }),
    address: withCode(Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' }), { default: 'parameter_missing', maxLength: 'field_too_long', type: 'invalid_parameter' }),
    website: OptionalText(2048),
    contact_email: withCode(Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$' }), { default: 'invalid_parameter', maxLength: 'field_too_long' }),
    contact_phone: OptionalText(40),
    business_description: withCode(Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S' }), { default: 'parameter_missing', maxLength: 'field_too_long', type: 'invalid_parameter' }),
  },
  { additionalProperties: false },
);
export type BusinessDetailsBody = Static<typeof BusinessDetailsFieldsSchema>;

export const BusinessDetailsSchema = Type.Object({
  object: Type.Literal('business_details'),
  kyb_status: Type.String({ description: 'pending, verified, rejected' }),
  review_note: Nullable(Type.String({ description: "the operator's word on the last review (why it was rejected)" })),
  submitted: Type.Boolean(),
  submitted_at: NullableTimestamp,
  submitted_by: Nullable(Type.String({ description: 'the address of the person who submitted' })),
  details: Nullable(
    Type.Object({
      legal_name: Type.String(),
      registration_number: Type.String(),
      country: Type.String(),
      address: Type.String(),
      website: NullableString,
      contact_email: Type.String(),
      contact_phone: NullableString,
      business_description: Type.String(),
    }),
  ),
});
export type BusinessDetailsView = Static<typeof BusinessDetailsSchema>;

export const AgreementSchema = Type.Object({
  object: Type.Literal('agreement'),
  version: Type.String({ description: 'the version in force' }),
  text: Type.String({ description: 'Markdown' }),
  signed: Nullable(
    Type.Object({
      version: Type.String(),
      signed_at: Timestamp,
      signed_by: Nullable(Type.String({ description: '"Name <email>" of the owner who signed; null when the operator recorded the signature' })),
    }),
  ),
});
export type AgreementView = Static<typeof AgreementSchema>;

export const SignAgreementBody = Type.Object(
  { version: withCode(Type.String({ minLength: 1, maxLength: 64, pattern: '\\S' }), 'parameter_missing') },
  { additionalProperties: false },
);
