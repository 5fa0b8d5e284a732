import { CONSENT_TYPES, type ConsentType as ConsentTypeName } from '../../actors/scheduler/consent.ts';
import { Type, Nullable, NullableString, NullableTimestamp, Timestamp, ModeSchema, withCode, StringEnum, NullableEnum } from './common.ts';
import type { CallStatus } from '../../db/calls.ts';
import { BLOCKER_CODES } from '../../actors/customer/readiness.ts';
import type { RefusalReason } from '../../money/rules/hold-rules.ts';

const STATUS_DOC = 'queued, dialing, ringing, in_progress, completed, cancelled, expired, blocked (read `finished`, not this)';
const STATUSES = ['queued', 'dialing', 'ringing', 'in_progress', 'completed', 'cancelled', 'expired', 'blocked'] as const satisfies readonly CallStatus[];
/** The outcomes OUTCOME_DOC names. */
const OUTCOMES = [
  'appointment_booked', 'not_interested', 'call_back_later', 'do_not_call', 'voicemail', 'fax', 'time_limit', 'completed', 'no_answer', 'busy', 'failed',
  'cancelled', 'expired', 'do_not_call_listed', 'consent_expired', 'consent_required', 'requested_call_only', 'no_redial_after_hang_up',
  'registered_address_required', 'forwarded', 'message_played',
] as const;
const Status = () => StringEnum(STATUSES, STATUS_DOC);
const Outcome = (doc = OUTCOME_DOC) => NullableEnum(OUTCOMES, doc);
const OUTCOME_DOC =
  'appointment_booked, not_interested, call_back_later, do_not_call, voicemail, fax, time_limit, completed, no_answer, busy, failed, cancelled, expired, do_not_call_listed, consent_expired, consent_required, requested_call_only, no_redial_after_hang_up, registered_address_required; inbound calls also: forwarded, message_played';

const CONSENT_TYPE_DOC =
  'requested_call (the called party asked for this call in a signed written request naming the number; also prior express written consent; ' +
  'the only consent Washington and Maine numbers accept), prior_express_written (a signed written agreement naming the number), prior_express, existing_business_relationship, none';

/** The consent carried with a request, as the reseller sent it: on the call_request object only, so never in an event. */
export const ConsentSchema = Type.Object(
  {
    type: StringEnum(CONSENT_TYPES, CONSENT_TYPE_DOC),
    obtained_at: NullableTimestamp,
    source: NullableString,
    evidence_ref: NullableString,
    expires_at: { ...NullableTimestamp, description: 'after this the consent no longer counts; null: until revoked' },
  },
  { $id: 'CallRequestConsent', description: 'The consent the reseller holds for the called party (docs/compliance.md ("Consent for AI-voice calls"))' },
);

/** One attempt of a request, as the request lists it; `GET /v1/calls/{id}` gives the whole call. */
export const RequestCallSchema = Type.Object({
  id: Type.String(),
  attempt: Type.Integer({ minimum: 1 }),
  status: Status(),
  finished: Type.Boolean(),
  outcome: Outcome(),
  dialed_at: NullableTimestamp,
  ended_at: NullableTimestamp,
}, { $id: 'CallAttempt' });

/** Why a queued request (and its queued call) waits: the codes docs/api.md "Calls" lists. */
/** The money's refusals of a call start (money/rules/hold-rules.ts): a Record so a new one fails the type check until listed here. */
const MONEY_WAITS: Record<RefusalReason, true> = {
  insufficient_balance: true,
  spend_cap_daily: true,
  spend_cap_monthly: true,
  customer_spend_cap_daily: true,
  customer_spend_cap_monthly: true,
  concurrency_limit: true,
};

/**
 * Every reason a queued request waits for (actors/scheduler/admission.ts `WaitReason`): a
 * readiness blocker, a gate of the dialler, a refusal of the money, its planned retry, or the
 * research of its website.
 */
export const WAITING_REASONS: readonly string[] = [
  ...new Set([
    ...BLOCKER_CODES,
    'not_ready',
    'frequency_cap',
    'emergency_closure',
    'outside_calling_window',
    'platform_at_capacity',
    'no_caller_id',
    'researching',
    'retry_scheduled',
    ...Object.keys(MONEY_WAITS),
  ]),
];

const WAITING_REASON_DOC =
  'why a queued request has not been dialled yet: a readiness blocker code (no_number_in_country, dnc_registry_stale and the others), retry_scheduled (its next attempt waits for its planned time), ' +
  'researching (the website_url is being read, at most 60 seconds), frequency_cap, emergency_closure, outside_calling_window, platform_at_capacity, concurrency_limit, insufficient_balance ' +
  'or a spend-cap reason (docs/api.md, Calls)';

export const CallRequestSchema = Type.Object({
  object: Type.Literal('call_request'),
  id: Type.String(),
  customer_id: Type.String(),
  phone: Type.String({ description: 'E.164' }),
  business_name: NullableString,
  external_ref: NullableString,
  status: Status(),
  finished: Type.Boolean(),
  outcome: Outcome(`how the request's call ended, null until finished: ${OUTCOME_DOC}`),
  waiting_reason: NullableEnum(WAITING_REASONS, WAITING_REASON_DOC),
  waiting_detail: Nullable(
    Type.String({ description: 'why a queued request waits, in words, when the code is not all (e.g. which do-not-call registry is stale and since when)' }),
  ),
  next_attempt_at: { ...NullableTimestamp, description: 'when a queued request is looked at next (earlier if what it waits on changes)' },
  dial_before: Timestamp,
  consent: ConsentSchema,
  attempts: Type.Integer({ minimum: 1, description: "how many calls (attempts) the request has, a planned one included; the customer's call_settings.retries bounds it" }),
  calls: Type.Array(RequestCallSchema, { description: 'every attempt of the request, first to last; the first has the request\'s id' }),
  mode: ModeSchema,
  created_at: Timestamp,
}, { $id: 'CallRequest' });

export const CallSchema = Type.Object({
  object: Type.Literal('call'),
  id: Type.String(),
  request_id: Type.String({ description: "the request this call is an attempt of (its first attempt's id)" }),
  attempt: Type.Integer({ minimum: 1, description: 'which attempt of its request: 1, 2, …' }),
  customer_id: Type.String(),
  external_ref: NullableString,
  phone: Type.String(),
  direction: StringEnum(['outbound', 'inbound'], 'outbound: a call the service placed; inbound: a person called the customer’s number (phone is the caller’s number)'),
  business_name: NullableString,
  status: Status(),
  finished: Type.Boolean(),
  outcome: Outcome(),
  duration_seconds: Type.Integer({ minimum: 0 }),
  appointment_id: NullableString,
  summary: NullableString,
  recording_url: NullableString,
  transcript_url: NullableString,
  waiting_reason: NullableEnum(WAITING_REASONS, WAITING_REASON_DOC),
  waiting_detail: NullableString,
  next_attempt_at: NullableTimestamp,
  dial_before: Timestamp,
  dialed_at: NullableTimestamp,
  answered_at: NullableTimestamp,
  ended_at: NullableTimestamp,
  will_retry: Type.Boolean({
    description: 'whether the request tries again after this call (no answer, busy, a machine or a carrier failure, with attempts left): true once the next attempt is planned, false if it was cancelled, expired or blocked before its dial',
  }),
  retry_at: { ...NullableTimestamp, description: 'the earliest the next attempt was planned for (a gate may hold it longer: that call says); null when will_retry is false' },
  mode: ModeSchema,
  created_at: Timestamp,
}, { $id: 'Call' });

/** A string enum (not a union of literals), so a wrong value is answered with the values it takes. */
const ConsentType = Type.Unsafe<ConsentTypeName>({ type: 'string', enum: [...CONSENT_TYPES], description: CONSENT_TYPE_DOC });

/** What the reseller holds for the called party; absent = `none`. */
export const ConsentBody = Type.Object(
  {
    type: ConsentType,
    obtained_at: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'RFC 3339 date-time with an offset (Z or ±hh:mm); required unless type is none; from 2000-01-01T00:00:00Z, not in the future (5 minutes of clock difference allowed)',
      }),
    ),
    source: Type.Optional(Type.String({ maxLength: 500, description: 'where and how it was obtained (form, URL, call); required unless type is none' })),
    evidence_ref: Type.Optional(Type.String({ maxLength: 255, description: "the reseller's reference to its record of it; required unless type is none" })),
    expires_at: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 40,
          description: 'RFC 3339 date-time with an offset, after obtained_at and no later than 2100-01-01T00:00:00Z; the request ends `blocked` / `consent_expired` if not dialled by then',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

export const QueueCallBody = Type.Object(
  {
    customer_id: Type.String({ minLength: 1, maxLength: 255, description: 'service id or external_ref of the customer' }),
    phone: withCode(Type.String({ minLength: 1, maxLength: 64 }), { default: 'invalid_phone_number', required: 'parameter_missing' }),
    business_name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    website_url: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 2048,
          description: 'the called business\'s website (http or https): read once before the first dial so the agent knows the business (4 cents); what is found is never returned',
        }),
      ),
    ),
    external_ref: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    dial_before: Type.Optional(withCode(Nullable(Type.String({ maxLength: 40 })), 'invalid_dial_before')),
    consent: Type.Optional(ConsentBody),
    called_party: Type.Optional(
      Type.Unsafe<'business' | 'consumer' | null>({
        type: ['string', 'null'],
        enum: ['business', 'consumer', null],
        description:
          'who answers the number, as the reseller knows it: `business` lets a landline the carrier also reports as a business line go without consent ' +
          '(47 U.S.C. 227(b)(1)(B)); absent, null or `consumer`: a landline is read as residential',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        customer_id: 'bright-1',
        phone: '+12025550101',
        business_name: 'Acme Plumbing',
        external_ref: 'lead-1',
        consent: { type: 'prior_express_written', obtained_at: '2026-11-20T14:02:00.000Z', source: 'web form acme.example/quote, checkbox 2', evidence_ref: 'consent-8812' },
      },
    ],
  },
);

export const AppointmentSchema = Type.Object({
  object: Type.Literal('appointment'),
  id: Type.String(),
  call_id: Type.String(),
  customer_id: Type.String(),
  start_at: Timestamp,
  end_at: Timestamp,
  timezone: Type.String({ description: 'IANA zone the meeting was agreed in' }),
  status: StringEnum(['booked', 'cancelled'], 'booked, cancelled'),
  attendee_name: NullableString,
  notes: NullableString,
  on_calendar: Type.Boolean({ description: "the meeting is an event on the customer's calendar (false: no calendar connected, or not yet written)" }),
  mode: ModeSchema,
  created_at: Timestamp,
  updated_at: Type.Unsafe<string>({ ...Timestamp, description: 'last change: the booking, or the event moved or deleted in the calendar' }),
  cancelled_at: NullableTimestamp,
}, { $id: 'Appointment' });

export const DncEntrySchema = Type.Object({
  object: Type.Literal('dnc_entry'),
  phone: Type.String(),
  source: StringEnum(['api', 'callee_request', 'console'], 'api, callee_request, console'),
  reason: NullableString,
  call_id: NullableString,
  created_at: Timestamp,
}, { $id: 'DncEntry' });

const RecordConsentSchema = Type.Object({
  type: NullableString,
  obtained_at: NullableTimestamp,
  source: NullableString,
  evidence_ref: NullableString,
  expires_at: NullableTimestamp,
});

/** A dialled call's compliance record with the request it came from (docs/api.md, "Calls"; docs/compliance.md, "Records of consent"). */
export const ComplianceRecordSchema = Type.Object({
  object: Type.Literal('compliance_record'),
  call_id: Type.String(),
  request: Type.Object({
    id: Type.String(),
    account_id: Type.String(),
    customer_id: Type.String(),
    mode: Type.String(),
    phone: Type.String(),
    country: Type.String(),
    external_ref: NullableString,
    requested_at: Timestamp,
    consent: { ...RecordConsentSchema, description: 'the consent as the request carried it' },
  }),
  recorded_at: { ...Timestamp, description: 'when the record was written: right before the dial' },
  consent: { ...RecordConsentSchema, description: 'the consent as recorded at the dial' },
  line_type: NullableString,
  required_consent: NullableString,
  rules: Type.Array(Type.String()),
  citations: Type.Array(Type.String()),
  identification: NullableString,
  opt_out_offered: Nullable(Type.Boolean()),
  identified_at: NullableTimestamp,
  keep_until: { ...NullableTimestamp, description: 'kept at least until then (UWG § 7a: five years for calls to German numbers); null: no term, kept' },
}, { $id: 'ComplianceRecord' });
