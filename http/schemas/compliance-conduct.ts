import { Type, Nullable, NullableString, NullableTimestamp } from './common.ts';
import { ComplianceRecordSchema } from './calls.ts';

/** How the call went, on the operator's and the console's compliance record only (never the API's). */
export const ConductSchema = Type.Object({
  gates: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'what each gate read at the dial (admission-checks.ts), with the do-not-call registries' })),
  answered_by: { ...NullableString, description: "the carrier's answering-machine verdict (human, machine_start, machine_end_beep, …, fax, unknown)" },
  opening: Type.Object({
    identification: { ...NullableString, description: 'the opening as played' },
    opt_out_offered: Nullable(Type.Boolean()),
    played_at: NullableTimestamp,
  }),
  opt_out: Type.Object({ during_call: Type.Boolean(), at: NullableTimestamp, reason: NullableString }),
  recording_objection: Type.Object({
    objected: Type.Boolean(),
    at: NullableTimestamp,
    action: { ...NullableString, description: 'continue_unrecorded or end_call' },
    carrier_stopped: Nullable(Type.Boolean()),
  }),
  end_reason: NullableString,
  analysis: Nullable(
    Type.Object(
      {
        callback_at: { ...NullableTimestamp, description: 'the callback time the callee asked for' },
        objection: { ...NullableString, description: 'price, timing, has_provider, not_interested, other' },
        source: { ...Type.String(), description: 'model or rules' },
      },
      { description: "what the transcript says (actors/call/call-summary.ts); null when it was not read" },
    ),
  ),
  more: Type.Record(Type.String(), Type.Unknown(), { description: "the record's other columns (the opening's audio, the disclosure, the machine verdict's time, …)" }),
});

/** The record's issue-23 columns as stored (actors/call/compliance-record.ts): the operator's and the console's, never the API's. */
const StoredOpeningSchema = Nullable(
  Type.Object(
    {
      segments: Type.Array(Type.Object({ kind: Type.String(), text: Type.String(), played: Type.Boolean({ description: 'its end mark came back: played to its end' }) })),
      rules: Type.Array(Type.String()),
      audio_sha256: NullableString,
      language: NullableString,
      started_at: NullableTimestamp,
    },
    { description: 'the opening segment by segment, each with whether it was played; null when none was played' },
  ),
);

/** The operator's and the console's record: the API's, the stored opening, opt-out and recording start, and `conduct`. */
export const FullComplianceRecordSchema = Type.Object({
  ...ComplianceRecordSchema.properties,
  opening: StoredOpeningSchema,
  opt_out: Nullable(Type.Object({ via: { ...NullableString, description: 'dtmf or tool' }, at: NullableTimestamp }, { description: "the callee's opt-out on this call; null when none" })),
  recording_started_at: { ...NullableTimestamp, description: 'when the carrier started recording (after the recording notice)' },
  conduct: ConductSchema,
});
