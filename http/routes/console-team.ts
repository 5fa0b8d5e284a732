import type { App } from './app-type.ts';
import { responses } from '../schemas/common.ts';
import { ConsoleInvitationSchema } from '../schemas/console.ts';
import {
  ChangeRoleBody,
  IdParams,
  InviteBody,
  MemberRemovedSchema,
  MemberSchema,
  PasswordResetLinkSchema,
  SecurityBody,
  SecuritySchema,
  TeamSchema,
  type MemberView,
} from '../schemas/console-access.ts';
import type { ConsoleAccess } from '../../actors/console/access.ts';
import type { ConsoleMemberRow } from '../../db/console-access.ts';
import type { ConsoleRole } from '../../actors/account/console-roles.ts';
import { consoleCaller } from '../plugins/console-session.ts';
import { invitationView } from './console-session.ts';
import { actorOf } from './console-people.ts';
import { ApiError } from '../errors.ts';

/** What these routes use. */
export interface ConsoleTeamRouteDeps {
  consoleAccess: ConsoleAccess;
}

const hide = { hide: true, tags: ['console'] };
const READ = { auth: 'session' as const, permission: 'team:read' as const };
const WRITE = { auth: 'session' as const, permission: 'team:write' as const };

function memberView(row: ConsoleMemberRow): MemberView {
  return {
    object: 'console_member',
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    two_factor_enabled: row.totp_enabled_at !== null,
    created_at: row.created_at.toISOString(),
    last_sign_in_at: row.last_sign_in_at?.toISOString() ?? null,
  };
}

/** The team page: members, invitations, roles, two-factor status and the account's two-factor rule (docs/api.md, Console › Team). */
export function registerConsoleTeamRoutes(app: App, services: ConsoleTeamRouteDeps): void {
  const { consoleAccess: access } = services;

  app.get('/console/api/team', { config: READ, schema: { ...hide, response: responses({ 200: TeamSchema }, [], { auth: 'session' }) } }, async (request) => {
    const s = consoleCaller(request);
    const team = await access.team(s.accountId);
    return {
      object: 'console_team' as const,
      require_two_factor: s.account.console_require_two_factor,
      members: team.members.map(memberView),
      invitations: team.invitations.map((i) => invitationView(i)),
    };
  });

  app.post(
    '/console/api/team/invitations',
    {
      config: WRITE,
      schema: { ...hide, body: InviteBody, response: responses({ 201: ConsoleInvitationSchema }, ['invalid_parameter', 'owner_protected', 'email_taken'], { auth: 'session' }) },
    },
    async (request, reply) => {
      const { invitation, url } = await access.invite(actorOf(consoleCaller(request)), { email: request.body.email, role: request.body.role as ConsoleRole });
      // The link is emailed to the invited address and shown to the inviter too; only its hash is kept.
      return reply.code(201).send(invitationView(invitation, url));
    },
  );

  app.delete(
    '/console/api/team/invitations/:id',
    {
      config: WRITE,
      schema: { ...hide, params: IdParams, response: responses({ 200: ConsoleInvitationSchema }, ['console_invitation_not_found', 'owner_protected'], { auth: 'session' }) },
    },
    async (request) => invitationView(await access.withdrawInvitation(actorOf(consoleCaller(request)), request.params.id)),
  );

  app.patch(
    '/console/api/team/members/:id',
    {
      config: WRITE,
      schema: {
        ...hide,
        params: IdParams,
        body: ChangeRoleBody,
        response: responses({ 200: MemberSchema }, ['console_member_not_found', 'own_role_unchangeable', 'owner_protected', 'last_owner', 'invalid_parameter'], { auth: 'session' }),
      },
    },
    async (request) => {
      const member = await access.changeMember(actorOf(consoleCaller(request)), request.params.id, request.body.role as ConsoleRole);
      if (!member) throw new Error('a member whose role just changed was not found');
      return memberView(member);
    },
  );

  app.delete(
    '/console/api/team/members/:id',
    {
      config: WRITE,
      schema: {
        ...hide,
        params: IdParams,
        response: responses({ 200: MemberRemovedSchema }, ['console_member_not_found', 'own_role_unchangeable', 'owner_protected', 'last_owner'], { auth: 'session' }),
      },
    },
    async (request) => {
      await access.changeMember(actorOf(consoleCaller(request)), request.params.id, null);
      return { object: 'console_member_removed' as const, id: request.params.id };
    },
  );

  app.post(
    '/console/api/team/members/:id/password_reset',
    {
      config: WRITE,
      schema: { ...hide, params: IdParams, response: responses({ 201: PasswordResetLinkSchema }, ['console_member_not_found', 'owner_protected'], { auth: 'session' }) },
    },
    async (request, reply) => {
      const link = await access.teamReset(actorOf(consoleCaller(request)), request.params.id);
      return reply.code(201).send({ object: 'password_reset_link' as const, url: link.url, expires_at: link.expiresAt.toISOString() });
    },
  );

  app.patch(
    '/console/api/security',
    { config: WRITE, schema: { ...hide, body: SecurityBody, response: responses({ 200: SecuritySchema }, ['invalid_parameter', 'two_factor_not_enabled'], { auth: 'session' }) } },
    async (request) => {
      const s = consoleCaller(request);
      // Whoever requires it has it: else they would be held at setup with everyone else.
      if (request.body.require_two_factor && !s.twoFactorEnabled) throw new ApiError('two_factor_not_enabled', 'Turn on your own two-factor authentication before requiring it of everyone.');
      await access.setRequireTwoFactor(s.accountId, request.body.require_two_factor);
      return { object: 'console_security' as const, require_two_factor: request.body.require_two_factor };
    },
  );
}
