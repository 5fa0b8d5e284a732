import { Type, Nullable, NullableTimestamp, Timestamp, withCode, type Static } from './common.ts';
import { CONSOLE_PAGE, ConsoleInvitationSchema, ConsoleRoleSchema, EmailSchema, PasswordSchema } from './console.ts';

/*
 * Schemas of the console's sign-in, two-factor, password, sessions and team routes. The web app
 * imports their types (`import type`, Static<…>).
 */

const Code = withCode(Type.String({ maxLength: 20 }), 'invalid_two_factor_code');

export const SignInBody = Type.Object(
  {
    email: withCode(Type.String({ minLength: 1, maxLength: 254 }), 'parameter_missing'),
    password: withCode(Type.String({ minLength: 1, maxLength: 1024 }), 'parameter_missing'),
    code: Type.Optional(Code),
  },
  { additionalProperties: false },
);

export const TwoFactorSetupSchema = Type.Object({
  object: Type.Literal('two_factor_setup'),
  secret: Type.String({ description: 'base32; shown once, for typing into an authenticator app' }),
  otpauth_url: Type.String({ description: 'otpauth://totp/… for a QR code; the issuer is the reseller account' }),
});
export type TwoFactorSetupView = Static<typeof TwoFactorSetupSchema>;

export const TwoFactorStatusSchema = Type.Object({ object: Type.Literal('two_factor'), enabled: Type.Boolean() });
export type TwoFactorStatusView = Static<typeof TwoFactorStatusSchema>;

export const EnableTwoFactorBody = Type.Object({ code: Code }, { additionalProperties: false });
export const DisableTwoFactorBody = Type.Object({ code: Code, password: withCode(Type.String({ minLength: 1, maxLength: 1024 }), 'parameter_missing') }, { additionalProperties: false });

export const ChangePasswordBody = Type.Object(
  { current_password: withCode(Type.String({ minLength: 1, maxLength: 1024 }), 'parameter_missing'), new_password: PasswordSchema },
  { additionalProperties: false },
);
export const PasswordChangedSchema = Type.Object({ object: Type.Literal('password_changed'), revoked_sessions: Type.Integer() });

export const PasswordResetRequestBody = Type.Object({ email: withCode(Type.String({ minLength: 1, maxLength: 254 }), 'parameter_missing') }, { additionalProperties: false });
export const PasswordResetRequestedSchema = Type.Object({ object: Type.Literal('password_reset_requested') });
export const PasswordResetCompleteBody = Type.Object(
  { token: withCode(Type.String({ minLength: 1, maxLength: 200 }), 'password_reset_invalid'), password: PasswordSchema },
  { additionalProperties: false },
);
export const PasswordResetCompletedSchema = Type.Object({ object: Type.Literal('password_reset_completed') });

/** A reset link minted for someone else (team or operator): shown once, kept nowhere. */
export const PasswordResetLinkSchema = Type.Object({ object: Type.Literal('password_reset_link'), url: Type.String(), expires_at: Timestamp });
export type PasswordResetLinkView = Static<typeof PasswordResetLinkSchema>;

export const SessionEntrySchema = Type.Object({
  object: Type.Literal('console_session_entry'),
  id: Type.String(),
  user_id: Type.String(),
  email: Type.String(),
  created_at: Timestamp,
  last_seen_at: Timestamp,
  expires_at: Timestamp,
  ip: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  current: Type.Boolean({ description: 'the session of this request' }),
});
export type SessionEntryView = Static<typeof SessionEntrySchema>;

export const SessionsQuery = Type.Object(
  {
    scope: Type.Optional(withCode(Type.Union([Type.Literal('mine'), Type.Literal('team')]), 'invalid_parameter')),
    ...CONSOLE_PAGE,
  },
  { additionalProperties: false },
);

export const SessionRevokedSchema = Type.Object({ object: Type.Literal('console_session_revoked'), id: Type.String() });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const MemberSchema = Type.Object({
  object: Type.Literal('console_member'),
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: ConsoleRoleSchema,
  two_factor_enabled: Type.Boolean(),
  created_at: Timestamp,
  last_sign_in_at: NullableTimestamp,
});
export type MemberView = Static<typeof MemberSchema>;

export const TeamSchema = Type.Object({
  object: Type.Literal('console_team'),
  require_two_factor: Type.Boolean(),
  members: Type.Array(MemberSchema),
  invitations: Type.Array(ConsoleInvitationSchema, { description: 'pending: not accepted, withdrawn or expired' }),
});
export type TeamView = Static<typeof TeamSchema>;

export const InviteBody = Type.Object({ email: EmailSchema, role: withCode(ConsoleRoleSchema, 'invalid_parameter') }, { additionalProperties: false });
export const ChangeRoleBody = Type.Object({ role: withCode(ConsoleRoleSchema, 'invalid_parameter') }, { additionalProperties: false });
export const MemberRemovedSchema = Type.Object({ object: Type.Literal('console_member_removed'), id: Type.String() });

export const SecurityBody = Type.Object({ require_two_factor: withCode(Type.Boolean(), 'invalid_parameter') }, { additionalProperties: false });
export const SecuritySchema = Type.Object({ object: Type.Literal('console_security'), require_two_factor: Type.Boolean() });
