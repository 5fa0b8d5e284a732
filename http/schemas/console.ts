import { Type, Nullable, NullableTimestamp, Timestamp, ModeSchema, withCode, type Static, type TSchema } from './common.ts';
import { CONSOLE_ROLES } from '../../actors/account/console-roles.ts';

/*
 * Schemas of the console's JSON routes (/console/api). The web app imports their types
 * (`import type`, Static<…>) so the two cannot drift.
 */

/** Page size of a console list when `limit` is not sent (docs/api.md, Console: 1..200, default 50). */
export const CONSOLE_PAGE_LIMIT = 50;

/** `limit` and the `starting_after` cursor of every console list. */
export const CONSOLE_PAGE = {
  limit: Type.Optional(withCode(Type.Integer({ minimum: 1, maximum: 200, default: CONSOLE_PAGE_LIMIT, description: 'how many objects a page holds' }), 'invalid_parameter')),
  starting_after: Type.Optional(Type.String({ maxLength: 255, description: 'id of the last object of the page before' })),
};

/** A console list's query: paging plus the list's own filters. */
export function consolePageQueryWith<P extends Record<string, TSchema>>(filters: P) {
  return Type.Object({ ...CONSOLE_PAGE, ...filters }, { additionalProperties: false });
}

/** `mode` of a console request: which mode's data (test by default). */
export const ConsoleModeSchema = withCode(ModeSchema, 'invalid_parameter');
export const ConsoleModeQuery = Type.Object({ mode: Type.Optional(ConsoleModeSchema) }, { additionalProperties: false });
export const ConsoleModeBody = Type.Object({ mode: Type.Optional(ConsoleModeSchema) }, { additionalProperties: false });

export const ConsoleRoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('developer'), Type.Literal('billing'), Type.Literal('viewer')], {
  description: CONSOLE_ROLES.join(', '),
});

export const ConsoleSessionSchema = Type.Object({
  object: Type.Literal('console_session'),
  user: Type.Object({ id: Type.String(), email: Type.String(), name: Type.String(), role: ConsoleRoleSchema, two_factor_enabled: Type.Boolean() }),
  account: Type.Object({
    id: Type.String(),
    name: Type.String(),
    mode: Type.String({ description: "test until the account's go-live, then live" }),
    status: Type.String(),
    kyb_status: Type.String(),
    require_two_factor: Type.Boolean(),
  }),
  csrf_token: Type.String({ description: 'send it back in X-CSRF-Token on every request other than GET' }),
});
export type ConsoleSessionView = Static<typeof ConsoleSessionSchema>;

export const ConsoleInvitationSchema = Type.Object({
  object: Type.Literal('console_invitation'),
  id: Type.String(),
  email: Type.String(),
  role: ConsoleRoleSchema,
  created_at: Timestamp,
  expires_at: Timestamp,
  accepted_at: NullableTimestamp,
  /** Only when just minted: the link carries the token, which is not stored. */
  url: Type.Optional(Type.String()),
});
export type ConsoleInvitationView = Static<typeof ConsoleInvitationSchema>;

export const InvitationPeekSchema = Type.Object({
  object: Type.Literal('console_invitation_peek'),
  email: Type.String(),
  role: ConsoleRoleSchema,
  account_name: Type.String(),
  expires_at: Timestamp,
});

/**
 * An address mail is sent to (an invitation, an onboarding link): one mailbox, ASCII, no control
 * character, space, comma or bracket, a name part of at most 64 characters (the `email` format is
 * runtime/email-address.ts's check, which the email sender applies), with a dot in its domain; it becomes a
 * To header, so anything that could smuggle a second recipient or a header line is refused (400),
 * an RFC 2047 encoded word (`=?utf-8?q?…?=`, which a relay may decode into another address) too.
 */
export const EmailSchema = withCode(Type.String({ minLength: 3, maxLength: 254, format: 'email', pattern: '^(?!.*=\\?)[^@\\s]+@[^@\\s]+\\.[^@\\s]+$' }), 'invalid_parameter');
export const PasswordSchema = withCode(Type.String({ minLength: 1, maxLength: 1024 }), 'password_rejected');

export const AcceptInvitationBody = Type.Object(
  {
    token: withCode(Type.String({ minLength: 1, maxLength: 200 }), 'invitation_invalid'),
    name: withCode(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), { default: 'parameter_missing', maxLength: 'field_too_long', type: 'invalid_parameter' }),
    password: PasswordSchema,
  },
  { additionalProperties: false },
);

export const NullableRole = Nullable(ConsoleRoleSchema);
