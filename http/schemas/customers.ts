import { Type, Nullable, NullableString, NullableTimestamp, NullableInteger, Timestamp, ModeSchema, withCode, MAX_CENTS, MAX_INT4, StringEnum, ADDITIVE } from './common.ts';
import { BLOCKER_CODES } from '../../actors/customer/readiness.ts';
import { PROVISIONING_STEPS } from '../../actors/customer/provisioning.ts';
import { EmailSchema } from './console.ts';
import { CALL_SETTING_BOUNDS, DEFAULT_CALL_SETTINGS, VOICES } from '../../actors/customer/call-settings.ts';
import { BOOKING_BOUNDS, DEFAULT_BOOKING_SETTINGS } from '../../actors/customer/booking-settings.ts';

/** Documented maximum lengths (docs/api.md). */
export const MAX = { name: 200, externalRef: 255, url: 2048, timezone: 64, idempotencyKey: 255, voicemailMessage: 500, address: 300 } as const;

/**
 * Call settings (docs/api.md, "Call settings"): every field, enum and bound of
 * actors/customer/call-settings.ts. `CallSettingsSchema` is what a customer shows (the settings in
 * force, defaults filled in); `CallSettingsInput` is what a create or an update takes (any field,
 * null resets it to its default; a group merges field by field).
 */
const D = DEFAULT_CALL_SETTINGS;
const B = CALL_SETTING_BOUNDS;
const VOICE_WORDS = 'the voice of the opening, the agent and the voicemail message';
const VOICEMAIL_ACTIONS = ['hang_up', 'leave_message'] as const;
const INBOUND_ACTIONS = ['forward', 'agent', 'message'] as const;
const OBJECTION_ACTIONS = ['continue_unrecorded', 'end_call'] as const;

/** A bound of CALL_SETTING_BOUNDS (inclusive) as schema keywords. */
const within = (b: { min: number; max: number }) => ({ minimum: b.min, maximum: b.max });

/** A string of `values`. */
const enumOf = <V extends string>(values: readonly V[], description: string) => Type.Unsafe<V>({ type: 'string', enum: [...values], description });
/** A string of `values`, or null (resets the field to its default). */
const enumOrNull = <V extends string>(values: readonly V[], description: string) =>
  Type.Unsafe<V | null>({ type: ['string', 'null'], enum: [...values, null], description });

const WORDS = {
  voice: `${VOICE_WORDS}; default ${D.voice}`,
  voicemailAction: `at an answering machine: hang up at once, or leave \`message\` after the beep (outcome voicemail either way); default ${D.voicemail.action}`,
  objection: `the callee objects to the recording: stop recording and go on, or end the call; default ${D.recording.on_objection}`,
};

const FIELD = {
  voicemailMessage: Nullable(
    Type.String({
      minLength: 1,
      maxLength: MAX.voicemailMessage,
      pattern: '\\S',
      description: "what is left after the beep, in the calling language; null: the default message. The business's registered name and an opt-out number are always added",
    }),
  ),
  silence: Type.Integer({ ...within(B.turn_detection.silence_ms), description: `silence that ends the callee's turn, ms; default ${D.turn_detection.silence_ms}` }),
  threshold: Type.Number({ ...within(B.turn_detection.threshold), description: `how loud speech must be to count (voice activity threshold); default ${D.turn_detection.threshold}` }),
  prefix: Type.Integer({ ...within(B.turn_detection.prefix_padding_ms), description: `audio kept before detected speech, ms; default ${D.turn_detection.prefix_padding_ms}` }),
  backchannel: Type.Integer({
    ...within(B.turn_detection.backchannel_max_ms),
    description: `speech shorter than this while the agent talks ("mm-hm") does not interrupt it, ms; 0: any speech interrupts; default ${D.turn_detection.backchannel_max_ms}`,
  }),
  maxAttempts: Type.Integer({ ...within(B.retries.max_attempts), description: `calls a request may make in all (1: never retried); default ${D.retries.max_attempts}` }),
  minGap: Type.Integer({ ...within(B.retries.min_gap_hours), description: `least time between two attempts of one request, hours; default ${D.retries.min_gap_hours}` }),
  inbound: enumOrNull(INBOUND_ACTIONS, "a call to the customer's number: forward to the customer's phone, the agent answers, or a message; null (default): forward when the customer has a phone, else message"),
};

export const CallSettingsSchema = Type.Object(
  {
    voice: enumOf(VOICES, WORDS.voice),
    voicemail: Type.Object({ action: enumOf(VOICEMAIL_ACTIONS, WORDS.voicemailAction), message: FIELD.voicemailMessage }),
    turn_detection: Type.Object({ silence_ms: FIELD.silence, threshold: FIELD.threshold, prefix_padding_ms: FIELD.prefix, backchannel_max_ms: FIELD.backchannel }),
    retries: Type.Object({ max_attempts: FIELD.maxAttempts, min_gap_hours: FIELD.minGap }),
    inbound: Type.Object({ action: FIELD.inbound }),
    recording: Type.Object({ on_objection: enumOf(OBJECTION_ACTIONS, WORDS.objection) }),
  },
  { $id: 'CallSettings', description: 'the call settings in force: what was set, defaults filled in (docs/api.md, "Call settings")' },
);

/** A group of the input: an object of optional fields (null resets one), or null (resets the group). */
function groupInput<P extends Record<string, ReturnType<typeof Type.Optional>>>(properties: P, description: string) {
  return Type.Optional(Nullable(Type.Object(properties, { additionalProperties: false, description })));
}
const orNull = <T extends Parameters<typeof Nullable>[0]>(schema: T) => Type.Optional(Nullable(schema));

export const CallSettingsInput = Nullable(
  Type.Object(
    {
      voice: Type.Optional(enumOrNull(VOICES, WORDS.voice)),
      voicemail: groupInput({ action: Type.Optional(enumOrNull(VOICEMAIL_ACTIONS, WORDS.voicemailAction)), message: Type.Optional(FIELD.voicemailMessage) }, 'at an answering machine'),
      turn_detection: groupInput(
        { silence_ms: orNull(FIELD.silence), threshold: orNull(FIELD.threshold), prefix_padding_ms: orNull(FIELD.prefix), backchannel_max_ms: orNull(FIELD.backchannel) },
        'how the agent takes turns',
      ),
      retries: groupInput({ max_attempts: orNull(FIELD.maxAttempts), min_gap_hours: orNull(FIELD.minGap) }, 'how a request is retried'),
      inbound: groupInput({ action: Type.Optional(FIELD.inbound) }, 'who answers a call back'),
      recording: groupInput({ on_objection: Type.Optional(enumOrNull(OBJECTION_ACTIONS, WORDS.objection)) }, 'when the callee objects to the recording'),
    },
    { additionalProperties: false, description: 'send only what changes: groups merge field by field; null resets a field, a group, or (here) every setting to its default' },
  ),
);

/**
 * Booking settings (docs/api.md, "Booking settings"; actors/customer/booking-settings.ts): when the
 * business takes meetings, in its time zone. Spans are checked further by the actor (start before
 * end, no overlaps): `invalid_parameter` naming the field.
 */
const BD = DEFAULT_BOOKING_SETTINGS;
// maxLength (for the document's bounds) refuses nothing the pattern takes, with the pattern's code; 16, so a near miss
// ('09:00:00') is still told the form.
const HHMM = withCode(Type.String({ pattern: '^([01][0-9]|2[0-4]):[0-5][0-9]$', maxLength: 16, description: "local wall time 'HH:MM', 24 h ('24:00' ends the day)" }), { maxLength: 'invalid_parameter' });
const SpanSchema = Type.Object({ start: HHMM, end: HHMM }, { additionalProperties: false });
const DaySpans = Type.Array(SpanSchema, { maxItems: BOOKING_BOUNDS.spans.max, description: 'the spans the business takes meetings in that day, in its time zone; [] closed' });
const DayInput = Type.Optional(Nullable(DaySpans));
const BOOKING_WORDS = {
  meeting: `a meeting's length, minutes; default ${BD.meeting_minutes}`,
  buffer: `kept free before and after every meeting and busy time, minutes; default ${BD.buffer_minutes}`,
  notice: `the soonest a meeting may start, minutes from now; default ${BD.min_notice_minutes}`,
  ahead: `the furthest a meeting may start, days from now; default ${BD.max_days_ahead}`,
};
export const BookingSchema = Type.Object(
  {
    business_hours: Type.Object({ mon: DaySpans, tue: DaySpans, wed: DaySpans, thu: DaySpans, fri: DaySpans, sat: DaySpans, sun: DaySpans }, {
      description: 'per weekday, in the customer time zone; default Monday to Friday 09:00–17:00',
    }),
    meeting_minutes: Type.Integer({ description: BOOKING_WORDS.meeting }),
    buffer_minutes: Type.Integer({ description: BOOKING_WORDS.buffer }),
    min_notice_minutes: Type.Integer({ description: BOOKING_WORDS.notice }),
    max_days_ahead: Type.Integer({ description: BOOKING_WORDS.ahead }),
  },
  { description: 'the booking rules in force, defaults filled in (docs/api.md, "Booking settings")' },
);
const bookingNumber = (k: keyof typeof BOOKING_WORDS, b: { min: number; max: number }) => Type.Optional(Nullable(Type.Integer({ ...within(b), description: BOOKING_WORDS[k] })));
export const BookingInput = Nullable(
  Type.Object(
    {
      business_hours: Type.Optional(
        Nullable(
          Type.Object({ mon: DayInput, tue: DayInput, wed: DayInput, thu: DayInput, fri: DayInput, sat: DayInput, sun: DayInput }, {
            additionalProperties: false,
            description: 'only the weekdays that change; a weekday null: its default; business_hours null: every default',
          }),
        ),
      ),
      meeting_minutes: bookingNumber('meeting', BOOKING_BOUNDS.meeting_minutes),
      buffer_minutes: bookingNumber('buffer', BOOKING_BOUNDS.buffer_minutes),
      min_notice_minutes: bookingNumber('notice', BOOKING_BOUNDS.min_notice_minutes),
      max_days_ahead: bookingNumber('ahead', BOOKING_BOUNDS.max_days_ahead),
    },
    { additionalProperties: false, description: 'send only what changes; null resets a field, or (here) every booking rule, to its default' },
  ),
);

/** The business's registered (legal) name, said in each call's identification; null: `name` is said. */
const RegisteredNameInput = Nullable(
  Type.String({
    minLength: 1,
    maxLength: MAX.name,
    pattern: '\\S',
    description: "the business's registered (legal) name, said in each call's identification; one line; stored trimmed; null: name is said",
  }),
);

/** The business's postal address, said in a UK call's opening (PECR reg. 24(1)(b)); null: none. */
const RegisteredAddressInput = Nullable(
  Type.String({
    minLength: 1,
    maxLength: MAX.address,
    pattern: '\\S',
    description: "the business's postal address, said in the opening of a call to a UK number (PECR reg. 24) unless the caller ID is a UK freephone number; one line; stored trimmed; null clears it",
  }),
);

export const CustomerSchema = Type.Object({
  object: Type.Literal('customer'),
  id: Type.String(),
  external_ref: NullableString,
  name: Type.String(),
  brand_name: NullableString,
  website_url: NullableString,
  phone: Nullable(Type.String({ description: "the business's own number in E.164 (its website shows it); null when not given" })),
  registered_name: Nullable(Type.String({ description: "the business's registered (legal) name said in each call's identification; null: name is said" })),
  registered_address: Nullable(Type.String({ description: "the business's postal address said in the opening of a call to a UK number (PECR reg. 24); null: none (calls to UK numbers are refused, registered_address_required)" })),
  call_settings: CallSettingsSchema,
  booking: BookingSchema,
  country: Type.String(),
  timezone: Type.String(),
  status: StringEnum(['prospect', 'active', 'paused'], 'prospect, active (has been ready for calls), paused'),
  mode: ModeSchema,
  created_at: Timestamp,
}, { $id: 'Customer' });

/** A jurisdiction where only a requested call is lawful (docs/compliance.md, "State auto-dialler laws"); not a blocker. */
export const ConsentNoticeSchema = Type.Object({
  code: Type.String({ description: 'requested_call_only: requests to these numbers need consent type requested_call' }),
  jurisdiction: Type.String({ description: 'e.g. US-WA' }),
  message: Type.String({ description: 'for a person; show it' }),
  citation: Type.String(),
}, { $id: 'ConsentNotice' });

export const CoverageSchema = Type.Object({
  object: Type.Literal('coverage'),
  country: Type.String(),
  status: StringEnum(['available', 'pending', 'not_opened'], 'available, pending, not_opened'),
  sellable: Type.Boolean(),
  calling_language: NullableString,
  number_route: StringEnum(['local_rental', 'none'], 'local_rental, none'),
  numbers_available: Type.Integer({ minimum: 0 }),
  waiting_on: StringEnum(['nobody', 'service'], 'nobody, service'),
  summary: Type.String(),
  blockers: Type.Array(Type.Object({ code: Type.String(), message: Type.String() })),
  notices: Type.Array(ConsentNoticeSchema, { description: 'where in this country only a call the person asked for may be made; not blockers' }),
}, { $id: 'Coverage' });

export const CreateCustomerBody = Type.Object(
  {
    name: withCode(Type.String({ minLength: 1, maxLength: MAX.name, pattern: '\\S' }), 'name_required'),
    external_ref: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: MAX.externalRef }))),
    brand_name: Type.Optional(Nullable(Type.String({ maxLength: MAX.name }))),
    website_url: Type.Optional(withCode(Nullable(Type.String({ maxLength: MAX.url })), 'invalid_url')),
    phone: Type.Optional(withCode(Nullable(Type.String({ maxLength: 64, description: "the business's own number, valid in the customer's country; its website shows it" })), 'invalid_phone_number')),
    country: Type.Optional(withCode(Nullable(Type.String({ pattern: '^[A-Za-z]{2}$', maxLength: 2 })), { default: 'country_not_supported', maxLength: 'country_not_supported' })),
    timezone: Type.Optional(withCode(Nullable(Type.String({ maxLength: MAX.timezone })), 'invalid_timezone')),
    registered_name: Type.Optional(RegisteredNameInput),
    registered_address: Type.Optional(RegisteredAddressInput),
    call_settings: Type.Optional(CallSettingsInput),
    booking: Type.Optional(BookingInput),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Bright Dental', external_ref: 'bright-1', website_url: 'https://brightdental.example', country: 'US', timezone: 'America/New_York' }],
  },
);

/** PATCH /v1/customers/{id}: send only what changes (docs/api.md, "Customers" and "Call settings"). */
export const UpdateCustomerBody = Type.Object(
  {
    registered_name: Type.Optional(RegisteredNameInput),
    registered_address: Type.Optional(RegisteredAddressInput),
    call_settings: Type.Optional(CallSettingsInput),
    booking: Type.Optional(BookingInput),
  },
  {
    additionalProperties: false,
    examples: [{ registered_name: 'Bright Dental Care LLC', call_settings: { voicemail: { action: 'hang_up' }, retries: { max_attempts: 2 } } }],
  },
);

export const CustomerIdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: MAX.externalRef, description: 'the service id of the customer, or its external_ref' }),
});

/** What clears a blocker: a request to this API, or a step in the console (docs/api.md). */
const ApiActionSchema = Type.Object(
  {
    type: Type.Literal('api', { description: 'send the request below' }),
    method: Type.Literal('POST', { description: 'the HTTP method' }),
    path: Type.String({ description: "the path, with this customer's id filled in" }),
    body: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'when the request takes one: the JSON body to send' })),
    description: Type.String({ description: 'what to do, for a person' }),
  },
  { $id: 'ReadinessApiAction' },
);
const ConsoleActionSchema = Type.Object(
  {
    type: Type.Literal('console', { description: 'a person acts in the console (no API for it)' }),
    description: Type.String({ description: 'what to do, for a person' }),
  },
  { $id: 'ReadinessConsoleAction' },
);
/** What clears a blocker, discriminated by `type` (actors/customer/readiness.ts, BlockerAction). */
const BlockerActionSchema = Type.Union([ApiActionSchema, ConsoleActionSchema], {
  $id: 'ReadinessAction',
  discriminator: { propertyName: 'type', mapping: { api: '#/components/schemas/ReadinessApiAction', console: '#/components/schemas/ReadinessConsoleAction' } },
  description: `what clears the blocker, by type: api (send the request) or console (a person acts there). ${ADDITIVE}`,
});

const ReadinessBlockerSchema = Type.Object({
  code: StringEnum(BLOCKER_CODES, 'stable; branch on it'),
  message: Type.String({ description: 'for a person; show it' }),
  waiting_on: StringEnum(['service', 'customer', 'reseller'], 'who owes the next move'),
  action: Type.Union([BlockerActionSchema, Type.Null()], { description: 'what clears the blocker; null when only the service can move' }),
}, { $id: 'ReadinessBlocker' });

export const ReadinessSchema = Type.Object({
  object: Type.Literal('readiness'),
  customer_id: Type.String(),
  external_ref: NullableString,
  country: Type.String(),
  calling_language: NullableString,
  ready_for_live_calls: Type.Boolean({ description: 'false whenever a live call would be turned away; then blockers says why' }),
  blockers: Type.Array(ReadinessBlockerSchema, { description: 'why a live call would be turned away: one per false check' }),
  checks: Type.Object({
    account_live: Type.Boolean(),
    business_verified: Type.Boolean(),
    agreement_signed: Type.Boolean(),
    balance_loaded: Type.Boolean(),
    carrier_configured: Type.Boolean({ description: 'live mode has a carrier; false: carrier_not_configured (live calls and numbers refused)' }),
    speech_certified_for_language: Type.Boolean(),
    number_in_country: Type.Boolean(),
    script_certified: Type.Boolean(),
    customer_accepted_terms: Type.Boolean(),
    dnc_registries_current: Type.Boolean({ description: "every national do-not-call registry of the customer's country is loaded and recent enough" }),
  }),
  ready_for_test_calls: Type.Boolean({ description: 'false whenever a test call would be turned away; then test_blockers says why' }),
  test_blockers: Type.Array(ReadinessBlockerSchema, { description: 'why a test call would be turned away: the service and customer gates only' }),
  notices: Type.Array(ConsentNoticeSchema, { description: "where in the customer's country only a call the person asked for may be made (Washington, Maine); not blockers" }),
}, { $id: 'Readiness' });

export const ProvisioningSchema = Type.Object({
  object: Type.Literal('provisioning'),
  customer_id: Type.String(),
  state: StringEnum(
    ['awaiting_number', 'awaiting_script', 'awaiting_agent', 'awaiting_calendar', 'awaiting_customer', 'awaiting_reseller', 'ready'],
    'awaiting_number, awaiting_script, awaiting_agent, awaiting_calendar, awaiting_customer, awaiting_reseller, ready',
  ),
  ready: Type.Boolean(),
  waiting_on: StringEnum(['service', 'customer', 'reseller', 'nobody'], 'service, customer, reseller, nobody'),
  blockers: Type.Array(Type.String()),
  steps: Type.Array(
    Type.Object({
      step: StringEnum(PROVISIONING_STEPS, 'the step'),
      done: Type.Boolean(),
      waiting_on: StringEnum(['service', 'customer', 'reseller', 'nobody'], 'who owes the next move'),
      blocker: NullableString,
      message: { ...NullableString, description: 'why the step is not done, for a person (the calendar step: not connected, or why the connection stopped working); null otherwise' },
    }),
  ),
  mode: ModeSchema,
  requested_steps: Type.Optional(Type.Array(StringEnum(PROVISIONING_STEPS, 'a step asked for'))),
}, { $id: 'Provisioning' });

export const ProvisioningBody = Type.Object(
  {
    steps: Type.Optional(
      withCode(
        Type.Array(withCode(Type.String({ enum: ['number', 'script', 'agent', 'calendar'] }), 'invalid_provisioning_step'), { maxItems: 4 }),
        'invalid_provisioning_step',
      ),
    ),
  },
  { additionalProperties: false, examples: [{ steps: ['number'] }] },
);

/** The mint request: optionally, an address to email the link to on the reseller's behalf. */
export const OnboardingLinkBody = Type.Object(
  { email: Type.Optional({ ...EmailSchema, description: "the customer's address: the link is emailed there on your behalf" }) },
  { additionalProperties: false, examples: [{ email: 'owner@brightdental.example' }] },
);

export const OnboardingLinkSchema = Type.Object({
  object: Type.Literal('onboarding_link'),
  id: Type.String(),
  customer_id: Type.String(),
  prefix: Type.String(),
  status: StringEnum(['active', 'completed', 'replaced', 'expired'], 'active, completed, replaced, expired'),
  expires_at: Timestamp,
  completed_at: NullableTimestamp,
  accepted_by: NullableString,
  emailed_to: { ...NullableString, description: 'the address the link was emailed to on your behalf (the mint request\'s `email`), or null' },
  created_at: Timestamp,
  url: Type.Optional(Type.String({ description: 'only on the mint response; shown once' })),
  expires_in_days: Type.Optional(Type.Integer()),
}, { $id: 'OnboardingLink' });

const Limit = withCode(NullableInteger, 'invalid_limit');
const LimitSchema = { ...Limit, minimum: 0, maximum: MAX_INT4 } as typeof Limit;
const CentsLimitSchema = { ...Limit, minimum: 0, maximum: MAX_CENTS } as typeof Limit;

export const CustomerLimitsSchema = Type.Object({
  object: Type.Literal('customer_limits'),
  customer_id: Type.String(),
  external_ref: NullableString,
  daily_spend_cap_cents: NullableInteger,
  monthly_spend_cap_cents: NullableInteger,
  max_concurrent_calls: NullableInteger,
  spend: Type.Optional(Type.Object({ today_cents: Type.Integer(), month_cents: Type.Integer() })),
}, { $id: 'CustomerLimits' });

export const CustomerLimitsBody = Type.Object(
  {
    daily_spend_cap_cents: Type.Optional(CentsLimitSchema),
    monthly_spend_cap_cents: Type.Optional(CentsLimitSchema),
    max_concurrent_calls: Type.Optional(LimitSchema),
  },
  { additionalProperties: false, examples: [{ daily_spend_cap_cents: 5000, monthly_spend_cap_cents: null }] },
);
