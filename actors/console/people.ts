import crypto from 'node:crypto';
import { hash as argon2Hash } from '@node-rs/argon2';
import type { Deps } from '../../runtime/deps.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import type { Config } from '../../runtime/config.ts';
import { withTransaction } from '../../db/pool.ts';
import { enqueueEmail } from '../../db/email-outbox.ts';
import { createConsolePeopleRepository, type ConsoleInvitationRow, type ConsoleUserRow, type SessionLookup } from '../../db/console-people.ts';
import { hashToken, isWellFormed, mintToken } from '../../runtime/tokens.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { INVITATION_TTL_MS, passwordProblem, SESSION_IDLE_MS, SESSION_MAX_MS, type ConsoleRole } from '../account/console-roles.ts';

/** Token prefixes: a console session cookie, an invitation link, a password reset link. */
export const SESSION_PREFIX = 'sbs_';
export const INVITATION_PREFIX = 'sbi_';
export const RESET_PREFIX = 'sbr_';

/** argon2id with the OWASP minimum (19 MiB, 2 passes, 1 lane): @node-rs/argon2's defaults, named. */
export const ARGON2_OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, ARGON2_OPTIONS);
}

/**
 * The CSRF token of a session: an HMAC of its cookie token, so nothing more is stored and it
 * changes with the session. Sent back by the web app in X-CSRF-Token on every write.
 */
export function csrfTokenOf(sessionToken: string): string {
  return crypto.createHmac('sha256', sessionToken).update('switchboard console csrf').digest('base64url');
}

/** The link a person opens to accept an invitation. */
export function invitationUrl(config: Pick<Config, 'publicUrl'>, token: string): string {
  return `${config.publicUrl}/console/accept?token=${encodeURIComponent(token)}`;
}

/** A session just opened: its cookie token (never stored) and row. */
export interface OpenedSession {
  token: string;
  lookup: SessionLookup;
}

/** Where a request came from, kept on its session for the sessions list. */
export interface RequestOrigin {
  ip: string | null;
  userAgent: string | null;
}

/**
 * The console's people: invitations, accepting one, and the sessions that follow. Times are real
 * time always (a test clock never shortens or lengthens a session or a link).
 */
export function createConsolePeople(deps: Pick<Deps, 'pool' | 'realClock' | 'config'> & { secrets: Pick<SecretBox, 'seal'> }) {
  const repo = createConsolePeopleRepository(deps.pool);
  const now = () => deps.realClock.now();

  async function openSession(db: ReturnType<typeof createConsolePeopleRepository>, user: ConsoleUserRow, origin: RequestOrigin): Promise<OpenedSession> {
    const token = mintToken(SESSION_PREFIX);
    const at = now();
    await db.insertSession({
      userId: user.id,
      accountId: user.account_id,
      tokenHash: hashToken(token),
      now: at,
      expiresAt: new Date(at.getTime() + SESSION_MAX_MS),
      ip: origin.ip,
      userAgent: origin.userAgent?.slice(0, 300) ?? null,
    });
    const lookup = await db.sessionByToken(hashToken(token));
    if (!lookup) throw new Error('a session just written was not found');
    return { token, lookup };
  }

  return {
    /**
     * A link for `email` to join the account with `role`; the token is only in the returned URL.
     * The invitation's email (the accept URL sealed) is written in the same transaction: every
     * invitation, a repeated one included, is its own email (issue 22).
     */
    async invite(input: { accountId: string; email: string; role: ConsoleRole; invitedBy: string | null }): Promise<{ invitation: ConsoleInvitationRow; url: string }> {
      const token = mintToken(INVITATION_PREFIX);
      const url = invitationUrl(deps.config, token);
      const at = now();
      return withTransaction(deps.pool, async (client) => {
        const db = createConsolePeopleRepository(client);
        const invitation = await db.insertInvitation({
          accountId: input.accountId,
          email: input.email.trim().toLowerCase(),
          role: input.role,
          tokenHash: hashToken(token),
          invitedBy: input.invitedBy,
          now: at,
          expiresAt: new Date(at.getTime() + INVITATION_TTL_MS),
        });
        const names = await db.invitationNames(invitation.id);
        await enqueueEmail(client, {
          accountId: input.accountId,
          // A console person's email is real whatever the account's mode (docs/api.md "Email").
          mode: 'live',
          kind: 'console_invitation',
          audience: 'person',
          to: invitation.email,
          dedupeKey: `invitation:${invitation.id}`,
          data: { account_name: names.account_name, role: invitation.role, invited_by: names.invited_by, expires_at: invitation.expires_at.toISOString() },
          secretSealed: deps.secrets.seal(url),
          now: at,
        });
        return { invitation, url };
      });
    },

    /** An invitation that can still be accepted, or a refusal `invitation_invalid`. */
    async openInvitation(token: string) {
      const invitation = isWellFormed(token, INVITATION_PREFIX) ? await repo.invitationByToken(hashToken(token)) : null;
      if (!invitation || invitation.accepted_at || invitation.revoked_at || invitation.expires_at <= now()) throw new Refusal('invitation_invalid');
      return invitation;
    },

    /**
     * Accepts an invitation: the person is created with the password (argon2id) and signed in.
     * One transaction; a second accept of the same link finds it used.
     */
    async acceptInvitation(input: { token: string; name: string; password: string }, origin: RequestOrigin): Promise<OpenedSession> {
      if (!isWellFormed(input.token, INVITATION_PREFIX)) throw new Refusal('invitation_invalid');
      const peek = await repo.invitationByToken(hashToken(input.token));
      if (!peek) throw new Refusal('invitation_invalid');
      const problem = passwordProblem(input.password, peek.email);
      if (problem) throw new Refusal('password_rejected', problem);
      const passwordHash = await hashPassword(input.password);
      return withTransaction(deps.pool, async (client) => {
        const db = createConsolePeopleRepository(client);
        const invitation = await db.invitationByToken(hashToken(input.token), true);
        if (!invitation || invitation.accepted_at || invitation.revoked_at || invitation.expires_at <= now()) throw new Refusal('invitation_invalid');
        if (await db.userByEmail(invitation.email)) throw new Refusal('email_taken');
        const user = await db.insertUser({ accountId: invitation.account_id, email: invitation.email, name: input.name.trim(), role: invitation.role, passwordHash, now: now() });
        await db.markInvitationAccepted(invitation.id, user.id, now());
        return openSession(db, user, origin);
      });
    },

    /** Opens a session for a person already authenticated (sign-in, after the password and any second factor). */
    openSession: (user: ConsoleUserRow, origin: RequestOrigin) => openSession(repo, user, origin),

    /**
     * The live session of a cookie token, or null: unknown, revoked, past its absolute or idle
     * limit, its person removed, or its account gone. Touches it (at most once a minute).
     */
    async sessionOf(token: string): Promise<SessionLookup | null> {
      if (!isWellFormed(token, SESSION_PREFIX)) return null;
      const found = await repo.sessionByToken(hashToken(token));
      if (!found) return null;
      const at = now();
      const { session, user } = found;
      if (session.revoked_at || user.removed_at) return null;
      if (session.expires_at <= at || session.last_seen_at.getTime() + SESSION_IDLE_MS <= at.getTime()) return null;
      // The idle clock moves at most once a minute: most requests write nothing.
      if (at.getTime() - session.last_seen_at.getTime() >= 60_000) await repo.touchSession(session.id, at);
      return found;
    },

    async signOut(accountId: string, sessionId: string): Promise<void> {
      await repo.revokeSession(accountId, sessionId, now());
    },
  };
}
export type ConsolePeople = ReturnType<typeof createConsolePeople>;
