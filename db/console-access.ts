import type { Queryable } from './pool.ts';
import type { ConsoleRole } from '../runtime/types.ts';
import type { ConsoleInvitationRow, ConsoleSessionRow, ConsoleUserRow } from './console-people.ts';

/** A person with what sign-in and two-factor decide on (migration 025 adds the last TOTP step). */
export interface ConsoleSignInRow extends ConsoleUserRow {
  /** bigint: pg answers it as text. */
  totp_last_step: string | null;
}

/** A member as the team page shows them. */
export interface ConsoleMemberRow {
  id: string;
  email: string;
  name: string;
  role: ConsoleRole;
  totp_enabled_at: Date | null;
  created_at: Date;
  last_sign_in_at: Date | null;
}

/** A session with its person's address (the team's sessions list names whose each one is). */
export interface ConsoleSessionListRow extends ConsoleSessionRow {
  email: string;
}

export interface ConsolePasswordResetRow {
  id: string;
  user_id: string;
  account_id: string;
  email: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

const INVITATION_COLUMNS = 'id, account_id, email, role, invited_by, created_at, expires_at, accepted_at, accepted_user_id, revoked_at';
const SESSION_COLUMNS = 's.id, s.user_id, s.account_id, s.created_at, s.last_seen_at, s.expires_at, s.revoked_at, s.ip, s.user_agent';

/**
 * Sign-in, two-factor, password resets, sessions and the team of the console (migrations 024
 * and 025). Every query of an account's objects names the account, so an id of another account
 * finds nothing.
 */
export function createConsoleAccessRepository(db: Queryable) {
  return {
    // ---- sign-in throttle ----

    /** The times of the most recent `limit` failures under `key` after `since`, newest first. */
    async recentFailures(key: string, since: Date, limit: number): Promise<Date[]> {
      const { rows } = await db.query(`SELECT at FROM console_sign_in_failures WHERE key = $1 AND at > $2 ORDER BY at DESC LIMIT $3`, [key, since, limit]);
      return rows.map((r) => r.at as Date);
    },

    /** Records one failure under each key, and forgets failures older than `forgetBefore` (of any key). */
    async recordFailure(keys: string[], at: Date, forgetBefore: Date): Promise<void> {
      await db.query(`INSERT INTO console_sign_in_failures (key, at) SELECT k, $2 FROM unnest($1::text[]) AS k`, [keys, at]);
      await db.query(`DELETE FROM console_sign_in_failures WHERE at < $1`, [forgetBefore]);
    },

    async clearFailures(key: string): Promise<void> {
      await db.query(`DELETE FROM console_sign_in_failures WHERE key = $1`, [key]);
    },

    // ---- people ----

    async userByEmail(email: string): Promise<ConsoleSignInRow | null> {
      const { rows } = await db.query(`SELECT * FROM console_users WHERE email = $1 AND removed_at IS NULL`, [email]);
      return rows[0] ?? null;
    },

    async userById(accountId: string, id: string, forUpdate = false): Promise<ConsoleSignInRow | null> {
      const { rows } = await db.query(`SELECT * FROM console_users WHERE account_id = $1 AND id = $2 AND removed_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`, [accountId, id]);
      return rows[0] ?? null;
    },

    /** The name a person's authenticator shows for the account: its brand's display name, else its name. */
    async issuerOf(accountId: string): Promise<string> {
      const { rows } = await db.query(`SELECT coalesce(nullif(btrim(display_name), ''), name) AS issuer FROM accounts WHERE id = $1`, [accountId]);
      return rows[0]?.issuer ?? '';
    },

    async setPassword(userId: string, passwordHash: string): Promise<void> {
      await db.query(`UPDATE console_users SET password_hash = $2 WHERE id = $1`, [userId, passwordHash]);
    },

    /** A new secret waiting for its first code (two-factor stays off until then). */
    async setPendingTotp(userId: string, sealed: Buffer): Promise<boolean> {
      const { rowCount } = await db.query(`UPDATE console_users SET totp_secret_sealed = $2, totp_last_step = NULL WHERE id = $1 AND totp_enabled_at IS NULL`, [userId, sealed]);
      return (rowCount ?? 0) > 0;
    },

    async enableTotp(userId: string, at: Date): Promise<void> {
      await db.query(`UPDATE console_users SET totp_enabled_at = $2 WHERE id = $1`, [userId, at]);
    },

    async disableTotp(userId: string): Promise<void> {
      await db.query(`UPDATE console_users SET totp_enabled_at = NULL, totp_secret_sealed = NULL, totp_last_step = NULL WHERE id = $1`, [userId]);
    },

    /**
     * Marks TOTP time step `step` used, only if it is later than the last one used: false when it
     * is not (the code was used already, here or by another process at the same moment).
     */
    async useTotpStep(userId: string, step: number): Promise<boolean> {
      const { rowCount } = await db.query(`UPDATE console_users SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2)`, [userId, step]);
      return (rowCount ?? 0) > 0;
    },

    async setRequireTwoFactor(accountId: string, required: boolean): Promise<void> {
      await db.query(`UPDATE accounts SET console_require_two_factor = $2 WHERE id = $1`, [accountId, required]);
    },

    // ---- sessions ----

    /**
     * Live sessions of the account (of one person when `userId`), newest first, `limit` + 1 rows
     * after the session `after` (a cursor inside the same list, else `undefined` from the caller).
     */
    async liveSessions(q: { accountId: string; userId: string | null; now: Date; idleSince: Date; limit: number; after?: { created_at: Date; id: string } }): Promise<ConsoleSessionListRow[]> {
      const values: unknown[] = [q.accountId, q.now, q.idleSince, q.limit + 1];
      let where = `s.account_id = $1 AND s.revoked_at IS NULL AND s.expires_at > $2 AND s.last_seen_at > $3 AND u.removed_at IS NULL`;
      if (q.userId) {
        values.push(q.userId);
        where += ` AND s.user_id = $${values.length}`;
      }
      if (q.after) {
        values.push(q.after.created_at, q.after.id);
        where += ` AND (s.created_at, s.id) < ($${values.length - 1}, $${values.length})`;
      }
      const { rows } = await db.query(
        `SELECT ${SESSION_COLUMNS}, u.email FROM console_sessions s JOIN console_users u ON u.id = s.user_id
          WHERE ${where} ORDER BY s.created_at DESC, s.id DESC LIMIT $4`,
        values,
      );
      return rows;
    },

    async sessionById(accountId: string, id: string): Promise<ConsoleSessionRow | null> {
      const { rows } = await db.query(`SELECT ${SESSION_COLUMNS} FROM console_sessions s WHERE s.account_id = $1 AND s.id = $2`, [accountId, id]);
      return rows[0] ?? null;
    },

    /** Revokes every live session of a person, but `exceptId` when given; returns how many. */
    async revokeSessionsOf(userId: string, at: Date, exceptId: string | null = null): Promise<number> {
      const { rowCount } = await db.query(
        `UPDATE console_sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL AND ($3::uuid IS NULL OR id <> $3::uuid)`,
        [userId, at, exceptId],
      );
      return rowCount ?? 0;
    },

    // ---- password resets ----

    async insertReset(r: { userId: string; tokenHash: Buffer; now: Date; expiresAt: Date; requestedBy: 'self' | 'team' | 'operator' }): Promise<string> {
      const { rows } = await db.query(
        `INSERT INTO console_password_resets (user_id, token_hash, created_at, expires_at, requested_by) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
        [r.userId, r.tokenHash, r.now, r.expiresAt, r.requestedBy],
      );
      return rows[0].id;
    },

    /** How many links a person asked for themselves since `since` (a flood of requests writes no more). */
    async selfResetsSince(userId: string, since: Date): Promise<number> {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM console_password_resets WHERE user_id = $1 AND requested_by = 'self' AND created_at > $2`, [userId, since]);
      return rows[0].n;
    },

    /** The reset of this token with its (not removed) person, locked when `forUpdate`. */
    async resetByToken(tokenHash: Buffer, forUpdate = false): Promise<ConsolePasswordResetRow | null> {
      const { rows } = await db.query(
        `SELECT r.id, r.user_id, u.account_id, u.email, r.created_at, r.expires_at, r.used_at
           FROM console_password_resets r JOIN console_users u ON u.id = r.user_id
          WHERE r.token_hash = $1 AND u.removed_at IS NULL${forUpdate ? ' FOR UPDATE OF r' : ''}`,
        [tokenHash],
      );
      return rows[0] ?? null;
    },

    /** Uses a reset up, with every other unused link of the same person. */
    async useResets(userId: string, at: Date): Promise<void> {
      await db.query(`UPDATE console_password_resets SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL`, [userId, at]);
    },

    // ---- team ----

    /** The account's people (not removed), oldest first, each with their last sign-in. */
    async members(accountId: string): Promise<ConsoleMemberRow[]> {
      const { rows } = await db.query(
        `SELECT u.id, u.email, u.name, u.role, u.totp_enabled_at, u.created_at,
                (SELECT max(s.created_at) FROM console_sessions s WHERE s.user_id = u.id) AS last_sign_in_at
           FROM console_users u WHERE u.account_id = $1 AND u.removed_at IS NULL ORDER BY u.created_at, u.id`,
        [accountId],
      );
      return rows;
    },

    /** Locks every member row of the account (role changes and removals serialise on it) and answers them. */
    async lockMembers(accountId: string): Promise<Array<{ id: string; role: ConsoleRole }>> {
      const { rows } = await db.query(`SELECT id, role FROM console_users WHERE account_id = $1 AND removed_at IS NULL ORDER BY id FOR UPDATE`, [accountId]);
      return rows;
    },

    async setRole(userId: string, role: ConsoleRole): Promise<void> {
      await db.query(`UPDATE console_users SET role = $2 WHERE id = $1`, [userId, role]);
    },

    async removeUser(userId: string, at: Date): Promise<void> {
      await db.query(`UPDATE console_users SET removed_at = $2 WHERE id = $1`, [userId, at]);
    },

    /** Invitations not accepted, withdrawn or expired, newest first. */
    async pendingInvitations(accountId: string, now: Date): Promise<ConsoleInvitationRow[]> {
      const { rows } = await db.query(
        `SELECT ${INVITATION_COLUMNS} FROM console_invitations
          WHERE account_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id DESC`,
        [accountId, now],
      );
      return rows;
    },

    async invitationById(accountId: string, id: string): Promise<ConsoleInvitationRow | null> {
      const { rows } = await db.query(`SELECT ${INVITATION_COLUMNS} FROM console_invitations WHERE account_id = $1 AND id = $2`, [accountId, id]);
      return rows[0] ?? null;
    },

    async revokeInvitation(accountId: string, id: string, at: Date): Promise<ConsoleInvitationRow | null> {
      const { rows } = await db.query(
        `UPDATE console_invitations SET revoked_at = $3 WHERE account_id = $1 AND id = $2 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING ${INVITATION_COLUMNS}`,
        [accountId, id, at],
      );
      return rows[0] ?? null;
    },
  };
}
export type ConsoleAccessRepository = ReturnType<typeof createConsoleAccessRepository>;
