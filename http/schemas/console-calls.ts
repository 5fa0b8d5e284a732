import { Type, Nullable, type Static, type TSchema } from './common.ts';
import { AppointmentSchema, CallSchema, QueueCallBody } from './calls.ts';

import { ConsoleModeSchema, consolePageQueryWith as pageQueryWith } from './console.ts';

export { ConsoleModeSchema, ConsoleModeQuery } from './console.ts';

/** A date bound of a console list: an RFC 3339 date-time, or a day YYYY-MM-DD (UTC); read by the route (400 invalid_parameter). */
const DateBound = (description: string) => Type.Optional(Type.String({ maxLength: 40, description }));

/** A console list's query of a mode: `mode`, paging and the list's own filters. */
export function consolePageQueryWith<P extends Record<string, TSchema>>(filters: P) {
  return pageQueryWith({ mode: Type.Optional(ConsoleModeSchema), ...filters });
}

export const ConsoleCallListQuery = consolePageQueryWith({
  customer_id: Type.Optional(Type.String({ maxLength: 255, description: "the customer's id or external_ref" })),
  status: Type.Optional(Type.String({ maxLength: 32 })),
  outcome: Type.Optional(Type.String({ maxLength: 40 })),
  from: DateBound('requested at or after (a day: from its start, UTC)'),
  to: DateBound('requested before (a day: through its end, UTC)'),
});

export const ConsoleAppointmentListQuery = consolePageQueryWith({
  customer_id: Type.Optional(Type.String({ maxLength: 255 })),
  from: DateBound('meetings starting at or after'),
  to: DateBound('meetings starting before (a day: through its end, UTC)'),
});

/** POST /console/api/calls: the body of POST /v1/calls plus `mode`. */
export const ConsoleQueueCallBody = Type.Object({ ...QueueCallBody.properties, mode: Type.Optional(ConsoleModeSchema) }, { additionalProperties: false });

/** `?mode=` of the routes of one call. */

export const TranscriptSchema = Type.Object({
  object: Type.Literal('transcript'),
  call_id: Type.String(),
  lines: Type.Array(Type.Object({ role: Type.String({ description: 'agent, callee' }), text: Type.String(), at: Type.String() })),
});

export const TrailEntrySchema = Type.Object({
  gate: Type.String({
    description: 'request, deadline, do_not_call, consent, no_redial, readiness, frequency_caps, emergency_closure, calling_window, capacity, caller_id, hold, identification',
  }),
  passed: Type.Boolean(),
  at: Type.String(),
  detail: Type.String({ description: 'what the gate read and decided, in words' }),
});

export const ConsoleCallPageSchema = Type.Object({
  object: Type.Literal('console_call'),
  call: CallSchema,
  transcript: Nullable(TranscriptSchema),
  recording_url: Nullable(Type.String({ description: '/console/api/calls/{id}/recording when the call has a recording' })),
  compliance_trail: Type.Array(TrailEntrySchema),
});
export type ConsoleCallPage = Static<typeof ConsoleCallPageSchema>;

export const ConsoleAppointmentSchema = Type.Object({
  ...AppointmentSchema.properties,
  customer_name: Type.String(),
  customer_timezone: Type.String({ description: "the customer's IANA time zone" }),
});
export type ConsoleAppointment = Static<typeof ConsoleAppointmentSchema>;
