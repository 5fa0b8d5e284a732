import { verify as argon2Verify } from '@node-rs/argon2';
import { isUuid } from '../../db/customers.ts';
import { generateSecret, generateURI, verify as totpVerify } from 'otplib';
import type { Deps } from '../../runtime/deps.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { withTransaction } from '../../db/pool.ts';
import { enqueueEmail } from '../../db/email-outbox.ts';
import { createConsoleAccessRepository, type ConsoleMemberRow, type ConsoleSessionListRow, type ConsoleSignInRow } from '../../db/console-access.ts';
import type { ConsoleInvitationRow } from '../../db/console-people.ts';
import { hashToken, isWellFormed, mintToken } from '../../runtime/tokens.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { PASSWORD_RESET_TTL_MS, passwordProblem, SESSION_IDLE_MS, type ConsoleRole } from '../account/console-roles.ts';
import { createConsolePeople, hashPassword, RESET_PREFIX, type OpenedSession, type RequestOrigin } from './people.ts';
import { inviteProblem, memberChangeProblem, retryAfterSeconds, withdrawProblem } from './team-rules.ts';

/** Failed sign-ins allowed in a sliding window, per client address and per person (their email). */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const ADDRESS_FAILURES = 10;
export const PERSON_FAILURES = 5;
/** Links a person may ask for themselves per window; more requests still answer 202 and write nothing. */
export const SELF_RESETS_PER_WINDOW = 3;
/** TOTP: 30-second steps; a code of the step before or after the current one is accepted (clock drift). */
const TOTP_PERIOD = 30;
const TOTP_TOLERANCE_SECONDS = 30;

/** Too many failures: the route answers 429 rate_limit_exceeded with Retry-After. */
export class SignInThrottled extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('too many failed sign-in attempts');
  }
}

/** Who is acting on a session route. */
export interface Actor {
  accountId: string;
  userId: string;
  role: ConsoleRole;
  sessionId: string;
}


const personKey = (email: string) => `person:${email}`;
const addressKey = (ip: string | null) => `address:${ip ?? 'unknown'}`;
const normalEmail = (email: string) => email.trim().toLowerCase();

/**
 * Sign-in, two-factor, passwords and their reset, sessions and the team of the reseller console.
 * Real time always (runtime/clock.ts): a test clock never moves a throttle, a code or a link.
 */
export function createConsoleAccess(deps: Pick<Deps, 'pool' | 'realClock' | 'config' | 'log'> & { secrets: Pick<SecretBox, 'seal' | 'open'> }) {
  const repo = createConsoleAccessRepository(deps.pool);
  const people = createConsolePeople(deps);
  const now = () => deps.realClock.now();

  // An unknown address is checked against this hash, so it costs the same time as a wrong password.
  let dummy: Promise<string> | null = null;
  const dummyHash = () => (dummy ??= hashPassword(`no such person ${mintToken('x_')}`));

  async function passwordMatches(user: ConsoleSignInRow | null, password: string): Promise<boolean> {
    const hash = user?.password_hash ?? (await dummyHash());
    const ok = await argon2Verify(hash, password).catch(() => false);
    return ok && user !== null;
  }

  /** Refuses with 429 while either key has had its fill of failures in the window. */
  async function checkThrottle(keys: Array<[key: string, limit: number]>): Promise<void> {
    const at = now();
    const since = new Date(at.getTime() - SIGN_IN_WINDOW_MS);
    let wait = 0;
    for (const [key, limit] of keys) wait = Math.max(wait, retryAfterSeconds(await repo.recentFailures(key, since, limit), limit, SIGN_IN_WINDOW_MS, at));
    if (wait > 0) throw new SignInThrottled(wait);
  }

  async function recordFailure(keys: string[]): Promise<void> {
    const at = now();
    await repo.recordFailure(keys, at, new Date(at.getTime() - SIGN_IN_WINDOW_MS));
  }

  /**
   * True when `code` is the person's current TOTP code (or the one of the step before or after)
   * of a step later than the last one they used; marks that step used.
   */
  async function acceptCode(user: ConsoleSignInRow, code: string): Promise<boolean> {
    if (!/^[0-9]{6}$/.test(code) || !user.totp_secret_sealed) return false;
    const secret = deps.secrets.open(user.totp_secret_sealed);
    const epoch = Math.floor(now().getTime() / 1000);
    const maxStep = Math.floor((epoch + TOTP_TOLERANCE_SECONDS) / TOTP_PERIOD);
    const last = user.totp_last_step === null ? undefined : Math.min(Number(user.totp_last_step), maxStep);
    const result = await totpVerify({ secret, token: code, epoch, period: TOTP_PERIOD, epochTolerance: TOTP_TOLERANCE_SECONDS, afterTimeStep: last });
    if (!result.valid || !('timeStep' in result)) return false;
    return repo.useTotpStep(user.id, result.timeStep);
  }

  async function currentUser(actor: Actor): Promise<ConsoleSignInRow> {
    const user = await repo.userById(actor.accountId, actor.userId);
    if (!user) throw new Refusal('console_member_not_found');
    return user;
  }

  function resetUrl(token: string): string {
    return `${deps.config.publicUrl}/console/reset?token=${encodeURIComponent(token)}`;
  }

  /**
   * A reset link (1 hour, once) for `user`. The person's own request is emailed to them (the link
   * sealed in the outbox row, written with the reset in one transaction); a link minted for the
   * team or the operator is handed to them and kept nowhere.
   */
  async function mintReset(user: Pick<ConsoleSignInRow, 'id' | 'account_id' | 'email'>, requestedBy: 'self' | 'team' | 'operator'): Promise<{ url: string; expiresAt: Date }> {
    const token = mintToken(RESET_PREFIX);
    const at = now();
    const url = resetUrl(token);
    const expiresAt = new Date(at.getTime() + PASSWORD_RESET_TTL_MS);
    await withTransaction(deps.pool, async (client) => {
      const access = createConsoleAccessRepository(client);
      if (requestedBy === 'self') {
        // Counted with the person's row locked, in the reset's transaction: concurrent requests cannot all pass the limit.
        if (!(await access.userById(user.account_id, user.id, true))) return;
        if ((await access.selfResetsSince(user.id, new Date(at.getTime() - SIGN_IN_WINDOW_MS))) >= SELF_RESETS_PER_WINDOW) return;
      }
      const resetId = await access.insertReset({ userId: user.id, tokenHash: hashToken(token), now: at, expiresAt, requestedBy });
      if (requestedBy !== 'self') return;
      await enqueueEmail(client, {
        accountId: user.account_id,
        mode: 'live',
        kind: 'password_reset',
        audience: 'person',
        to: user.email,
        dedupeKey: `password_reset:${resetId}`,
        data: { expires_at: expiresAt.toISOString() },
        secretSealed: deps.secrets.seal(url),
        now: at,
      });
    });
    return { url, expiresAt };
  }

  /** A member of the actor's account, or 404 (another account's id, a removed person, junk). */
  async function memberOf(accountId: string, id: string, forUpdate = false, db = repo): Promise<ConsoleSignInRow> {
    const user = isUuid(id) ? await db.userById(accountId, id, forUpdate) : null;
    if (!user) throw new Refusal('console_member_not_found');
    return user;
  }

  return {
    /**
     * Email, password and (when the person has two-factor) a code: a session, or a refusal.
     * An unknown address and a wrong password answer alike, after the same argon2 work.
     */
    async signIn(input: { email: string; password: string; code?: string }, origin: RequestOrigin): Promise<OpenedSession> {
      const email = normalEmail(input.email);
      const keys: Array<[string, number]> = [
        [addressKey(origin.ip), ADDRESS_FAILURES],
        [personKey(email), PERSON_FAILURES],
      ];
      await checkThrottle(keys);
      const user = await repo.userByEmail(email);
      if (!(await passwordMatches(user, input.password)) || !user) {
        await recordFailure(keys.map(([k]) => k));
        throw new Refusal('invalid_credentials');
      }
      if (user.totp_enabled_at) {
        if (input.code === undefined || input.code.trim() === '') throw new Refusal('two_factor_code_required');
        if (!(await acceptCode(user, input.code.trim()))) {
          await recordFailure(keys.map(([k]) => k));
          throw new Refusal('invalid_two_factor_code');
        }
      }
      await repo.clearFailures(personKey(email));
      return people.openSession(user, origin);
    },

    // ---- two-factor ----

    /** A new secret (sealed at rest) and its otpauth URL naming the reseller's account; two-factor stays off until enabled. */
    async setupTwoFactor(actor: Actor): Promise<{ secret: string; otpauthUrl: string }> {
      const user = await currentUser(actor);
      if (user.totp_enabled_at) throw new Refusal('two_factor_already_enabled');
      const secret = generateSecret();
      if (!(await repo.setPendingTotp(user.id, deps.secrets.seal(secret)))) throw new Refusal('two_factor_already_enabled');
      const issuer = (await repo.issuerOf(actor.accountId)).replace(/:/g, ' ').trim() || 'Console';
      return { secret, otpauthUrl: generateURI({ issuer, label: user.email, secret }) };
    },

    async enableTwoFactor(actor: Actor, code: string): Promise<void> {
      const user = await currentUser(actor);
      if (user.totp_enabled_at) throw new Refusal('two_factor_already_enabled');
      if (!user.totp_secret_sealed) throw new Refusal('two_factor_not_set_up');
      if (!(await acceptCode(user, code.trim()))) throw new Refusal('invalid_two_factor_code');
      await repo.enableTotp(user.id, now());
    },

    /** Turns two-factor off: needs the password and a current code (both throttled as sign-in is). */
    async disableTwoFactor(actor: Actor, input: { code: string; password: string }): Promise<void> {
      const user = await currentUser(actor);
      if (!user.totp_enabled_at) throw new Refusal('two_factor_not_enabled');
      const keys: Array<[string, number]> = [[personKey(user.email), PERSON_FAILURES]];
      await checkThrottle(keys);
      if (!(await passwordMatches(user, input.password))) {
        await recordFailure([personKey(user.email)]);
        throw new Refusal('invalid_credentials');
      }
      if (!(await acceptCode(user, input.code.trim()))) {
        await recordFailure([personKey(user.email)]);
        throw new Refusal('invalid_two_factor_code');
      }
      await repo.disableTotp(user.id);
    },

    async setRequireTwoFactor(accountId: string, required: boolean): Promise<void> {
      await repo.setRequireTwoFactor(accountId, required);
    },

    // ---- passwords ----

    /** A new password for the signed-in person, given the current one; their other sessions end. */
    async changePassword(actor: Actor, input: { currentPassword: string; newPassword: string }): Promise<number> {
      const user = await currentUser(actor);
      await checkThrottle([[personKey(user.email), PERSON_FAILURES]]);
      if (!(await passwordMatches(user, input.currentPassword))) {
        await recordFailure([personKey(user.email)]);
        throw new Refusal('invalid_credentials');
      }
      const problem = passwordProblem(input.newPassword, user.email);
      if (problem) throw new Refusal('password_rejected', problem);
      const hash = await hashPassword(input.newPassword);
      return withTransaction(deps.pool, async (client) => {
        const db = createConsoleAccessRepository(client);
        await db.setPassword(user.id, hash);
        return db.revokeSessionsOf(user.id, now(), actor.sessionId);
      });
    },

    /**
     * A person asks for a reset link by address. Whatever the address, nothing is said: for a
     * person, a link (1 hour, once) is emailed to them (issue 22), at most SELF_RESETS_PER_WINDOW
     * per window; an unknown address writes nothing. Resolves when done; the route does not wait for it.
     */
    async requestReset(email: string): Promise<void> {
      const user = await repo.userByEmail(normalEmail(email));
      if (!user) return;
      // The person's own link is emailed, never answered: mintReset writes nothing past the limit.
      await mintReset(user, 'self');
    },

    /** A reset link for a member, minted by an owner or admin (shown to them); an admin cannot reset an owner's. */
    async teamReset(actor: Actor, memberId: string): Promise<{ url: string; expiresAt: Date }> {
      const member = await memberOf(actor.accountId, memberId);
      if (member.role === 'owner' && actor.role !== 'owner') throw new Refusal('owner_protected');
      return mintReset(member, 'team');
    },

    /** A reset link for a person of an account, minted by the platform operator. */
    async operatorReset(accountId: string, personId: string): Promise<{ url: string; expiresAt: Date }> {
      const member = await memberOf(accountId, personId);
      return mintReset(member, 'operator');
    },

    /** Sets a new password with a reset link (once, within its hour); every session of the person ends. */
    async completeReset(input: { token: string; password: string }): Promise<void> {
      if (!isWellFormed(input.token, RESET_PREFIX)) throw new Refusal('password_reset_invalid');
      const peek = await repo.resetByToken(hashToken(input.token));
      if (!peek || peek.used_at || peek.expires_at <= now()) throw new Refusal('password_reset_invalid');
      const problem = passwordProblem(input.password, peek.email);
      if (problem) throw new Refusal('password_rejected', problem);
      const hash = await hashPassword(input.password);
      await withTransaction(deps.pool, async (client) => {
        const db = createConsoleAccessRepository(client);
        const reset = await db.resetByToken(hashToken(input.token), true);
        if (!reset || reset.used_at || reset.expires_at <= now()) throw new Refusal('password_reset_invalid');
        await db.setPassword(reset.user_id, hash);
        await db.useResets(reset.user_id, now());
        await db.revokeSessionsOf(reset.user_id, now());
        await db.clearFailures(personKey(reset.email));
      });
    },

    // ---- sessions ----

    /** Live sessions: the actor's own, or the whole team's when `team` (the route checks team:write). */
    async listSessions(actor: Actor, q: { team: boolean; limit: number; startingAfter?: string }): Promise<{ rows: ConsoleSessionListRow[]; hasMore: boolean }> {
      const at = now();
      let after: { created_at: Date; id: string } | undefined;
      if (q.startingAfter !== undefined) {
        const cursor = isUuid(q.startingAfter) ? await repo.sessionById(actor.accountId, q.startingAfter) : null;
        if (!cursor || (!q.team && cursor.user_id !== actor.userId)) throw new Refusal('invalid_cursor');
        after = cursor;
      }
      const rows = await repo.liveSessions({ accountId: actor.accountId, userId: q.team ? null : actor.userId, now: at, idleSince: new Date(at.getTime() - SESSION_IDLE_MS), limit: q.limit, after });
      return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
    },

    /**
     * Revokes a session of the account: one's own, or anyone's for an owner or admin
     * (`mayRevokeOthers`). Another person's session is, to anyone else, as unknown as another account's.
     */
    async revokeSession(actor: Actor, id: string, mayRevokeOthers: boolean): Promise<void> {
      const session = isUuid(id) ? await repo.sessionById(actor.accountId, id) : null;
      if (!session || (session.user_id !== actor.userId && !mayRevokeOthers)) throw new Refusal('console_session_not_found');
      await people.signOut(actor.accountId, session.id);
    },

    // ---- team ----

    async team(accountId: string): Promise<{ members: ConsoleMemberRow[]; invitations: ConsoleInvitationRow[] }> {
      return { members: await repo.members(accountId), invitations: await repo.pendingInvitations(accountId, now()) };
    },

    /** An invitation into the actor's account; an admin cannot invite an owner. */
    async invite(actor: Actor, input: { email: string; role: ConsoleRole }) {
      const problem = inviteProblem(actor.role, input.role);
      if (problem) throw new Refusal(problem);
      const email = normalEmail(input.email);
      // Only a member of this account is refused here: whether an address signs in to another
      // account is not this account's to learn (accepting such an invitation is refused then).
      if ((await repo.userByEmail(email))?.account_id === actor.accountId) throw new Refusal('email_taken');
      return people.invite({ accountId: actor.accountId, email, role: input.role, invitedBy: actor.userId });
    },

    async withdrawInvitation(actor: Actor, id: string): Promise<ConsoleInvitationRow> {
      const invitation = isUuid(id) ? await repo.invitationById(actor.accountId, id) : null;
      if (!invitation || invitation.accepted_at || invitation.revoked_at) throw new Refusal('console_invitation_not_found');
      const problem = withdrawProblem(actor.role, invitation.role);
      if (problem) throw new Refusal(problem);
      const revoked = await repo.revokeInvitation(actor.accountId, id, now());
      if (!revoked) throw new Refusal('console_invitation_not_found');
      return revoked;
    },

    /**
     * Changes a member's role (`role`) or removes them (`role` null, their sessions revoked), in
     * one transaction holding the account's member rows, so two changes cannot leave no owner.
     */
    async changeMember(actor: Actor, memberId: string, role: ConsoleRole | null): Promise<ConsoleMemberRow | null> {
      if (!isUuid(memberId)) throw new Refusal('console_member_not_found');
      return withTransaction(deps.pool, async (client) => {
        const db = createConsoleAccessRepository(client);
        const members = await db.lockMembers(actor.accountId);
        const target = members.find((m) => m.id === memberId);
        if (!target) throw new Refusal('console_member_not_found');
        // The actor's role as it is now, under the lock (another change may have just committed).
        const self = members.find((m) => m.id === actor.userId);
        if (!self) throw new Refusal('console_member_not_found');
        const owners = members.filter((m) => m.role === 'owner').length;
        const problem = memberChangeProblem({ actorId: actor.userId, actorRole: self.role, targetId: target.id, targetRole: target.role, newRole: role, owners });
        if (problem) throw new Refusal(problem);
        if (role === null) {
          await db.removeUser(target.id, now());
          await db.revokeSessionsOf(target.id, now());
          return null;
        }
        await db.setRole(target.id, role);
        return (await db.members(actor.accountId)).find((m) => m.id === target.id) ?? null;
      });
    },

    /** Whether an email already signs in somewhere (the operator's account creation checks it first). */
    async emailTaken(email: string): Promise<boolean> {
      return (await repo.userByEmail(normalEmail(email))) !== null;
    },
  };
}
export type ConsoleAccess = ReturnType<typeof createConsoleAccess>;
