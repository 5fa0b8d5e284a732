import type { FastifyRequest } from 'fastify';
import type { App } from './app-type.ts';
import type { AccountRegistry } from './deps.ts';
import { responses, Type, withCode } from '../schemas/common.ts';
import { AcceptInvitationBody, ConsoleInvitationSchema, ConsoleRoleSchema, ConsoleSessionSchema, EmailSchema, InvitationPeekSchema, type ConsoleInvitationView, type ConsoleSessionView } from '../schemas/console.ts';
import { csrfTokenOf, type ConsolePeople, type OpenedSession, type RequestOrigin } from '../../actors/console/people.ts';
import { clearedSessionCookie, consoleCaller, crossSiteWrite, secureCookies, sessionCookie, type ConsoleSession } from '../plugins/console-session.ts';
import { SESSION_MAX_MS, type ConsoleRole } from '../../actors/account/console-roles.ts';
import type { ConsoleInvitationRow } from '../../db/console-people.ts';
import type { Config } from '../../runtime/config.ts';
import { ApiError } from '../errors.ts';

/** What these routes use. */
export interface ConsoleSessionRouteDeps {
  consolePeople: ConsolePeople;
  accounts: AccountRegistry;
  config: Config;
}

const hide = { hide: true, tags: ['console'] };

/** The console session as GET /console/api/session answers it. */
export function sessionView(s: ConsoleSession): ConsoleSessionView {
  return {
    object: 'console_session',
    user: { id: s.userId, email: s.email, name: s.name, role: s.role, two_factor_enabled: s.twoFactorEnabled },
    account: { id: s.account.id, name: s.account.name, mode: s.account.mode, status: s.account.status, kyb_status: s.account.kyb_status, require_two_factor: s.account.console_require_two_factor },
    csrf_token: csrfTokenOf(s.token),
  };
}

/** The session just opened as a ConsoleSession (sign-in and accepting an invitation answer with it). */
export function openedAsSession(opened: OpenedSession): ConsoleSession {
  const { session, user, account } = opened.lookup;
  return {
    sessionId: session.id,
    userId: user.id,
    accountId: account.id,
    role: user.role,
    email: user.email,
    name: user.name,
    twoFactorEnabled: user.totp_enabled_at !== null,
    account,
    token: opened.token,
  };
}

/** Where a request came from, as a session records it. */
export function originOf(request: FastifyRequest): RequestOrigin {
  return { ip: request.ip ?? null, userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null };
}

/** The Set-Cookie of a new session. */
export function newSessionCookie(config: Config, token: string): string {
  return sessionCookie(token, secureCookies(config.publicUrl), Math.floor(SESSION_MAX_MS / 1000));
}

/** A write to a route without a session (sign-in, accepting a link) from another site is refused. */
export function refuseCrossSite(request: FastifyRequest, config: Config): void {
  if (crossSiteWrite(request, new URL(config.publicUrl).origin)) throw new ApiError('csrf_failed');
}

export function invitationView(row: ConsoleInvitationRow, url?: string): ConsoleInvitationView {
  return {
    object: 'console_invitation',
    id: row.id,
    email: row.email,
    role: row.role,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    accepted_at: row.accepted_at?.toISOString() ?? null,
    ...(url ? { url } : {}),
  };
}

/** The console session itself, accepting an invitation, and the operator's invitation of an account's people. */
export function registerConsoleSessionRoutes(app: App, services: ConsoleSessionRouteDeps): void {
  const { consolePeople: people, config } = services;

  app.get(
    '/console/api/session',
    { config: { auth: 'session', permission: 'account:read', beforeTwoFactor: true }, schema: { ...hide, response: responses({ 200: ConsoleSessionSchema }, [], { auth: 'session' }) } },
    async (request) => sessionView(consoleCaller(request)),
  );

  app.post(
    '/console/api/sign_out',
    { config: { auth: 'session', permission: 'account:read', beforeTwoFactor: true, whileSuspended: true }, schema: { ...hide, response: responses({ 200: Type.Object({ object: Type.Literal('signed_out') }) }, [], { auth: 'session' }) } },
    async (request, reply) => {
      const s = consoleCaller(request);
      await people.signOut(s.accountId, s.sessionId);
      reply.header('set-cookie', clearedSessionCookie(secureCookies(config.publicUrl)));
      return { object: 'signed_out' as const };
    },
  );

  app.get(
    '/console/api/invitations/:token',
    {
      config: { auth: 'none' },
      schema: { ...hide, params: Type.Object({ token: Type.String({ maxLength: 200 }) }), response: responses({ 200: InvitationPeekSchema }, ['invitation_invalid'], { auth: 'none' }) },
    },
    async (request) => {
      const invitation = await people.openInvitation(request.params.token);
      return { object: 'console_invitation_peek' as const, email: invitation.email, role: invitation.role, account_name: invitation.account_name, expires_at: invitation.expires_at.toISOString() };
    },
  );

  app.post(
    '/console/api/invitations/accept',
    {
      config: { auth: 'none' },
      schema: {
        ...hide,
        body: AcceptInvitationBody,
        response: responses({ 200: ConsoleSessionSchema }, ['invitation_invalid', 'password_rejected', 'email_taken', 'parameter_missing', 'csrf_failed'], { auth: 'none' }),
      },
    },
    async (request, reply) => {
      refuseCrossSite(request, config);
      const opened = await people.acceptInvitation(request.body, originOf(request));
      reply.header('set-cookie', newSessionCookie(config, opened.token));
      return sessionView(openedAsSession(opened));
    },
  );

  app.post(
    '/admin/v1/accounts/:id/invitations',
    {
      config: { auth: 'admin' },
      schema: {
        hide: true,
        tags: ['admin'],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        body: Type.Object({ email: EmailSchema, role: Type.Optional(withCode(ConsoleRoleSchema, 'invalid_parameter')) }, { additionalProperties: false }),
        response: responses({ 201: ConsoleInvitationSchema }, ['account_not_found', 'invalid_parameter'], { auth: 'admin' }),
      },
    },
    async (request, reply) => {
      await services.accounts.ask(request.params.id, { type: 'get_account' });
      const { invitation, url } = await people.invite({ accountId: request.params.id, email: request.body.email, role: (request.body.role ?? 'owner') as ConsoleRole, invitedBy: null });
      return reply.code(201).send(invitationView(invitation, url));
    },
  );
}
