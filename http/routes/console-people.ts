import type { App } from './app-type.ts';
import { ListOf, responses, Type } from '../schemas/common.ts';
import { ConsoleSessionSchema } from '../schemas/console.ts';
import {
  ChangePasswordBody,
  DisableTwoFactorBody,
  EnableTwoFactorBody,
  IdParams,
  PasswordChangedSchema,
  PasswordResetCompleteBody,
  PasswordResetCompletedSchema,
  PasswordResetLinkSchema,
  PasswordResetRequestBody,
  PasswordResetRequestedSchema,
  SessionEntrySchema,
  SessionRevokedSchema,
  SessionsQuery,
  SignInBody,
  TwoFactorSetupSchema,
  TwoFactorStatusSchema,
  type SessionEntryView,
} from '../schemas/console-access.ts';
import { SignInThrottled, type Actor, type ConsoleAccess } from '../../actors/console/access.ts';
import { consoleCaller, type ConsoleSession } from '../plugins/console-session.ts';
import { newSessionCookie, openedAsSession, originOf, refuseCrossSite, sessionView } from './console-session.ts';
import { roleMay } from '../../actors/account/console-roles.ts';
import type { ConsoleSessionListRow } from '../../db/console-access.ts';
import type { Config } from '../../runtime/config.ts';
import type { Logger } from '../../runtime/logger.ts';
import { ApiError } from '../errors.ts';

/** What these routes use. */
export interface ConsolePeopleRouteDeps {
  consoleAccess: ConsoleAccess;
  config: Config;
  log: Logger;
}

const hide = { hide: true, tags: ['console'] };
/** Open to a person who has not yet set up the two-factor their account requires. */
const BEFORE_TWO_FACTOR = { auth: 'session' as const, permission: 'account:read' as const, beforeTwoFactor: true, whileSuspended: true };
/** A person's own security: still theirs to change while the account is suspended. */
const OWN_SECURITY = { auth: 'session' as const, permission: 'account:read' as const, whileSuspended: true };

/** The acting person of a console route, as the actors take it. */
export function actorOf(s: ConsoleSession): Actor {
  return { accountId: s.accountId, userId: s.userId, role: s.role, sessionId: s.sessionId };
}

function sessionEntry(row: ConsoleSessionListRow, currentId: string): SessionEntryView {
  return {
    object: 'console_session_entry',
    id: row.id,
    user_id: row.user_id,
    email: row.email,
    created_at: row.created_at.toISOString(),
    last_seen_at: row.last_seen_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    ip: row.ip,
    user_agent: row.user_agent,
    current: row.id === currentId,
  };
}

/** 429 with Retry-After for a throttled sign-in; anything else goes on. */
function throttled(err: unknown): never {
  if (err instanceof SignInThrottled) {
    throw new ApiError('rate_limit_exceeded', 'Too many failed sign-in attempts; retry after the number of seconds in Retry-After.', { 'retry-after': String(err.retryAfterSeconds) });
  }
  throw err;
}

/** Sign-in, two-factor, the person's password and its reset by link, and sessions (docs/api.md, Console). */
export function registerConsolePeopleRoutes(app: App, services: ConsolePeopleRouteDeps): void {
  const { consoleAccess: access, config } = services;

  app.post(
    '/console/api/sign_in',
    {
      config: { auth: 'none' },
      schema: {
        ...hide,
        body: SignInBody,
        response: responses(
          { 200: ConsoleSessionSchema },
          ['invalid_credentials', 'two_factor_code_required', 'invalid_two_factor_code', 'rate_limit_exceeded', 'parameter_missing', 'csrf_failed'],
          { auth: 'none' },
        ),
      },
    },
    async (request, reply) => {
      refuseCrossSite(request, config);
      const opened = await access.signIn(request.body, originOf(request)).catch(throttled);
      reply.header('set-cookie', newSessionCookie(config, opened.token));
      return sessionView(openedAsSession(opened));
    },
  );

  app.post(
    '/console/api/two_factor/setup',
    { config: BEFORE_TWO_FACTOR, schema: { ...hide, response: responses({ 200: TwoFactorSetupSchema }, ['two_factor_already_enabled'], { auth: 'session' }) } },
    async (request) => {
      const { secret, otpauthUrl } = await access.setupTwoFactor(actorOf(consoleCaller(request)));
      return { object: 'two_factor_setup' as const, secret, otpauth_url: otpauthUrl };
    },
  );

  app.post(
    '/console/api/two_factor/enable',
    {
      config: BEFORE_TWO_FACTOR,
      schema: {
        ...hide,
        body: EnableTwoFactorBody,
        response: responses({ 200: TwoFactorStatusSchema }, ['two_factor_already_enabled', 'two_factor_not_set_up', 'invalid_two_factor_code'], { auth: 'session' }),
      },
    },
    async (request) => {
      await access.enableTwoFactor(actorOf(consoleCaller(request)), request.body.code);
      return { object: 'two_factor' as const, enabled: true };
    },
  );

  app.post(
    '/console/api/two_factor/disable',
    {
      config: BEFORE_TWO_FACTOR,
      schema: {
        ...hide,
        body: DisableTwoFactorBody,
        response: responses({ 200: TwoFactorStatusSchema }, ['two_factor_not_enabled', 'invalid_credentials', 'invalid_two_factor_code', 'rate_limit_exceeded', 'parameter_missing'], {
          auth: 'session',
        }),
      },
    },
    async (request) => {
      await access.disableTwoFactor(actorOf(consoleCaller(request)), request.body).catch(throttled);
      return { object: 'two_factor' as const, enabled: false };
    },
  );

  app.post(
    '/console/api/password',
    {
      config: OWN_SECURITY,
      schema: {
        ...hide,
        body: ChangePasswordBody,
        response: responses({ 200: PasswordChangedSchema }, ['invalid_credentials', 'password_rejected', 'rate_limit_exceeded', 'parameter_missing'], { auth: 'session' }),
      },
    },
    async (request) => {
      const revoked = await access.changePassword(actorOf(consoleCaller(request)), { currentPassword: request.body.current_password, newPassword: request.body.new_password }).catch(throttled);
      return { object: 'password_changed' as const, revoked_sessions: revoked };
    },
  );

  app.post(
    '/console/api/password_resets',
    {
      config: { auth: 'none' },
      schema: { ...hide, body: PasswordResetRequestBody, response: responses({ 202: PasswordResetRequestedSchema }, ['parameter_missing', 'csrf_failed'], { auth: 'none' }) },
    },
    async (request, reply) => {
      refuseCrossSite(request, config);
      // Not awaited: whether the address is a person's changes neither the answer nor its time.
      access.requestReset(request.body.email).catch((err) => services.log.error({ err }, 'a password reset link could not be recorded'));
      return reply.code(202).send({ object: 'password_reset_requested' as const });
    },
  );

  app.post(
    '/console/api/password_resets/complete',
    {
      config: { auth: 'none' },
      schema: {
        ...hide,
        body: PasswordResetCompleteBody,
        response: responses({ 200: PasswordResetCompletedSchema }, ['password_reset_invalid', 'password_rejected', 'csrf_failed'], { auth: 'none' }),
      },
    },
    async (request) => {
      refuseCrossSite(request, config);
      await access.completeReset(request.body);
      return { object: 'password_reset_completed' as const };
    },
  );

  app.get(
    '/console/api/sessions',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: { ...hide, querystring: SessionsQuery, response: responses({ 200: ListOf(SessionEntrySchema) }, ['invalid_cursor', 'invalid_parameter'], { auth: 'session' }) },
    },
    async (request) => {
      const s = consoleCaller(request);
      const team = request.query.scope === 'team';
      if (team && !roleMay(s.role, 'team:write')) throw new ApiError('role_forbidden', `Your role (${s.role}) does not allow this; it needs one of: owner, admin.`);
      const page = await access.listSessions(actorOf(s), { team, limit: request.query.limit ?? 50, startingAfter: request.query.starting_after });
      return { object: 'list' as const, data: page.rows.map((row) => sessionEntry(row, s.sessionId)), has_more: page.hasMore };
    },
  );

  app.delete(
    '/console/api/sessions/:id',
    { config: OWN_SECURITY, schema: { ...hide, params: IdParams, response: responses({ 200: SessionRevokedSchema }, ['console_session_not_found'], { auth: 'session' }) } },
    async (request) => {
      const s = consoleCaller(request);
      await access.revokeSession(actorOf(s), request.params.id, roleMay(s.role, 'team:write'));
      return { object: 'console_session_revoked' as const, id: request.params.id };
    },
  );

  app.post(
    '/admin/v1/accounts/:id/people/:pid/password_reset',
    {
      config: { auth: 'admin' },
      schema: {
        hide: true,
        tags: ['admin'],
        params: Type.Object({ id: Type.String({ format: 'uuid' }), pid: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: responses({ 201: PasswordResetLinkSchema }, ['console_member_not_found'], { auth: 'admin' }),
      },
    },
    async (request, reply) => {
      const link = await access.operatorReset(request.params.id, request.params.pid);
      return reply.code(201).send({ object: 'password_reset_link' as const, url: link.url, expires_at: link.expiresAt.toISOString() });
    },
  );
}
