import { Type, Nullable, NullableString, NullableTimestamp, Timestamp, ModeSchema, withCode, StringEnum, type Static } from './common.ts';
import { DISPLAY_NAME_MAX, END_USER_REF_MAX, HISTORY_MAX_ENTRIES, MESSAGE_MAX, TTL_SECONDS } from '../../actors/chat/session-rules.ts';

export const ChatSessionSchema = Type.Object({
  object: Type.Literal('chat_session'),
  id: Type.String(),
  customer_id: Type.String(),
  prefix: Type.String({ description: 'first characters of the token (mode prefix + 4), for telling sessions apart' }),
  end_user_ref: Type.String(),
  display_name: NullableString,
  status: StringEnum(['active', 'revoked', 'expired', 'exhausted'], 'active, revoked, expired, exhausted'),
  expires_at: Timestamp,
  revoked_at: NullableTimestamp,
  last_used_at: NullableTimestamp,
  messages_sent: Type.Integer(),
  message_limit: Type.Integer(),
  mode: ModeSchema,
  created_at: Timestamp,
  token: Type.Optional(Type.String({ description: 'svc_sess_test_… or svc_sess_live_…; only on the mint response, shown once' })),
  url: Type.Optional(Type.String({ description: "the chat page with the token in its fragment (`…/chat#token=…`), at the reseller's verified brand domain or else the service's public URL; only on the mint response" })),
  expires_in_seconds: Type.Optional(Type.Integer({ description: 'only on the mint response' })),
}, { $id: 'ChatSession' });

export const MintSessionBody = Type.Object(
  {
    end_user_ref: withCode(Type.String({ minLength: 1, maxLength: END_USER_REF_MAX, pattern: '\\S', description: "the reseller's identifier of the person" }), 'end_user_ref_required'),
    display_name: Type.Optional(Nullable(Type.String({ maxLength: DISPLAY_NAME_MAX }))),
    ttl_seconds: Type.Optional(
      withCode(Type.Integer({ minimum: TTL_SECONDS.min, maximum: TTL_SECONDS.max, default: TTL_SECONDS.default, description: 'out of range is refused, never clamped' }), 'ttl_out_of_range'),
    ),
  },
  { additionalProperties: false, examples: [{ end_user_ref: 'rep-42', display_name: 'Sam', ttl_seconds: 900 }] },
);

export const RevokeSessionsQuery = Type.Object(
  {
    session_id: Type.Optional(Type.String({ maxLength: 64, description: 'end this session' })),
    end_user_ref: Type.Optional(
      withCode(Type.String({ minLength: 1, maxLength: END_USER_REF_MAX, description: 'end every open session of this person' }), 'session_selector_required'),
    ),
  },
  { additionalProperties: false },
);

export const RevocationSchema = Type.Object({ object: Type.Literal('chat_session_revocation'), revoked: Type.Integer({ minimum: 0 }) }, { $id: 'ChatSessionRevocation' });

const Turn = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.String({ maxLength: MESSAGE_MAX }),
  },
  { additionalProperties: false },
);

const Turns = Type.Array(Turn, { maxItems: HISTORY_MAX_ENTRIES });

/**
 * The spec declares `history` a string, and browsers send the array: both are accepted. The
 * route's preValidation hook parses the string form, so validation, and the handler, only ever
 * see the array; the string branch describes the wire (a string holding the array as JSON).
 */
const History = Type.Unsafe<Static<typeof Turns>>({
  description: 'the thread so far, oldest first (the browser keeps it; nothing is stored). Only the last 12 entries are used.',
  oneOf: [
    Turns,
    Type.String({ contentMediaType: 'application/json', contentSchema: Turns, maxLength: 1_048_576, description: 'the same array, as a JSON string (at most the 1 MB a body may be)' }),
  ],
});

export const ChatBody = Type.Object(
  {
    message: withCode(Type.String({ minLength: 1, maxLength: MESSAGE_MAX, pattern: '\\S' }), {
      required: 'message_required',
      minLength: 'message_required',
      pattern: 'message_required',
      maxLength: 'message_too_long',
    }),
    history: Type.Optional(History),
  },
  {
    additionalProperties: false,
    examples: [{ message: 'How did my calls go this week?', history: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello! How can I help?' }] }],
  },
);

export const ChatMessageSchema = Type.Object({
  object: Type.Literal('chat_message'),
  reply: Type.String(),
  messages_sent: Type.Integer(),
  message_limit: Type.Integer(),
  session_expires_at: Timestamp,
  charged_cents: Type.Integer({ description: '2 per answered message (priced with applied: false in test mode)' }),
}, { $id: 'ChatMessage' });

export const ChatContextSchema = Type.Object({
  object: Type.Literal('chat_context'),
  brand: Type.Object({
    display_name: Type.String(),
    logo_url: NullableString,
    primary_color: Type.String(),
    accent_color: Type.String(),
    support_email: NullableString,
    text_on_primary_color: Type.String({ description: '#000000 or #ffffff: the text colour that reads on primary_color (WCAG AA 4.5:1)' }),
    text_on_accent_color: Type.String({ description: '#000000 or #ffffff: the text colour that reads on accent_color (WCAG AA 4.5:1)' }),
  }),
  calling_language: { ...NullableString, description: "the customer's calling language (a locale such as fr-FR): the chat page is written in it" },
  business: Type.String(),
  display_name: NullableString,
  session_expires_at: Timestamp,
  messages_sent: Type.Integer(),
  message_limit: Type.Integer(),
}, { $id: 'ChatContext' });
