import type { Queryable } from './pool.ts';
import type { ConsoleRole } from '../runtime/types.ts';

export interface ConsoleUserRow {
  id: string;
  account_id: string;
  email: string;
  name: string;
  role: ConsoleRole;
  password_hash: string;
  totp_secret_sealed: Buffer | null;
  totp_enabled_at: Date | null;
  created_at: Date;
  removed_at: Date | null;
}

export interface ConsoleInvitationRow {
  id: string;
  account_id: string;
  email: string;
  role: ConsoleRole;
  invited_by: string | null;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  accepted_user_id: string | null;
  revoked_at: Date | null;
}

export interface ConsoleSessionRow {
  id: string;
  user_id: string;
  account_id: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  ip: string | null;
  user_agent: string | null;
}

/** A session found by its token, with what every console request decides on. */
export interface SessionLookup {
  session: ConsoleSessionRow;
  user: Pick<ConsoleUserRow, 'id' | 'email' | 'name' | 'role' | 'totp_enabled_at' | 'removed_at'>;
  account: { id: string; name: string; status: string; mode: string; kyb_status: string; console_require_two_factor: boolean };
}

const INVITATION_COLUMNS = 'id, account_id, email, role, invited_by, created_at, expires_at, accepted_at, accepted_user_id, revoked_at';
const SESSION_COLUMNS = 'id, user_id, account_id, created_at, last_seen_at, expires_at, revoked_at, ip, user_agent';

/** The console's people, invitations and sessions (migration 024). */
export function createConsolePeopleRepository(db: Queryable) {
  return {
    async insertInvitation(i: { accountId: string; email: string; role: ConsoleRole; tokenHash: Buffer; invitedBy: string | null; now: Date; expiresAt: Date }): Promise<ConsoleInvitationRow> {
      const { rows } = await db.query(
        `INSERT INTO console_invitations (account_id, email, role, token_hash, invited_by, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${INVITATION_COLUMNS}`,
        [i.accountId, i.email, i.role, i.tokenHash, i.invitedBy, i.now, i.expiresAt],
      );
      return rows[0];
    },

    /** What an invitation's email names: the account, and who invited (their name, else their address; null for the operator). */
    async invitationNames(id: string): Promise<{ account_name: string; invited_by: string | null }> {
      const { rows } = await db.query(
        `SELECT a.name AS account_name, NULLIF(btrim(COALESCE(NULLIF(btrim(u.name), ''), u.email)), '') AS invited_by
           FROM console_invitations i JOIN accounts a ON a.id = i.account_id LEFT JOIN console_users u ON u.id = i.invited_by
          WHERE i.id = $1`,
        [id],
      );
      return rows[0];
    },

    /** The invitation with this token, locked when `forUpdate` (inside the accepting transaction). */
    async invitationByToken(tokenHash: Buffer, forUpdate = false): Promise<(ConsoleInvitationRow & { account_name: string }) | null> {
      const { rows } = await db.query(
        `SELECT ${INVITATION_COLUMNS.split(', ').map((c) => `i.${c}`).join(', ')}, a.name AS account_name
           FROM console_invitations i JOIN accounts a ON a.id = i.account_id
          WHERE i.token_hash = $1${forUpdate ? ' FOR UPDATE OF i' : ''}`,
        [tokenHash],
      );
      return rows[0] ?? null;
    },

    async markInvitationAccepted(id: string, userId: string, now: Date): Promise<void> {
      await db.query(`UPDATE console_invitations SET accepted_at = $3, accepted_user_id = $2 WHERE id = $1`, [id, userId, now]);
    },

    /** The person signed in with this address (any account), or null. */
    async userByEmail(email: string): Promise<ConsoleUserRow | null> {
      const { rows } = await db.query(`SELECT * FROM console_users WHERE email = $1 AND removed_at IS NULL`, [email]);
      return rows[0] ?? null;
    },

    async userById(accountId: string, id: string): Promise<ConsoleUserRow | null> {
      const { rows } = await db.query(`SELECT * FROM console_users WHERE account_id = $1 AND id = $2 AND removed_at IS NULL`, [accountId, id]);
      return rows[0] ?? null;
    },

    async insertUser(u: { accountId: string; email: string; name: string; role: ConsoleRole; passwordHash: string; now: Date }): Promise<ConsoleUserRow> {
      const { rows } = await db.query(
        `INSERT INTO console_users (account_id, email, name, role, password_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [u.accountId, u.email, u.name, u.role, u.passwordHash, u.now],
      );
      return rows[0];
    },

    async insertSession(s: { userId: string; accountId: string; tokenHash: Buffer; now: Date; expiresAt: Date; ip: string | null; userAgent: string | null }): Promise<ConsoleSessionRow> {
      const { rows } = await db.query(
        `INSERT INTO console_sessions (user_id, account_id, token_hash, created_at, last_seen_at, expires_at, ip, user_agent)
         VALUES ($1, $2, $3, $4, $4, $5, $6, $7) RETURNING ${SESSION_COLUMNS}`,
        [s.userId, s.accountId, s.tokenHash, s.now, s.expiresAt, s.ip, s.userAgent],
      );
      return rows[0];
    },

    /** The session with this token and its person and account, whatever their state (the caller decides). */
    async sessionByToken(tokenHash: Buffer): Promise<SessionLookup | null> {
      const { rows } = await db.query(
        `SELECT to_jsonb(s) - 'token_hash' AS session,
                jsonb_build_object('id', u.id, 'email', u.email, 'name', u.name, 'role', u.role, 'totp_enabled_at', u.totp_enabled_at, 'removed_at', u.removed_at) AS user,
                jsonb_build_object('id', a.id, 'name', a.name, 'status', a.status, 'mode', a.mode, 'kyb_status', a.kyb_status,
                                   'console_require_two_factor', a.console_require_two_factor) AS account
           FROM console_sessions s JOIN console_users u ON u.id = s.user_id JOIN accounts a ON a.id = s.account_id
          WHERE s.token_hash = $1`,
        [tokenHash],
      );
      const row = rows[0];
      if (!row) return null;
      const date = (v: string | null) => (v === null ? null : new Date(v));
      return {
        session: { ...row.session, created_at: new Date(row.session.created_at), last_seen_at: new Date(row.session.last_seen_at), expires_at: new Date(row.session.expires_at), revoked_at: date(row.session.revoked_at) },
        user: { ...row.user, totp_enabled_at: date(row.user.totp_enabled_at), removed_at: date(row.user.removed_at) },
        account: row.account,
      };
    },

    /** Moves last_seen_at forward, at most once a minute per session (the idle timeout's clock). */
    async touchSession(id: string, now: Date): Promise<void> {
      await db.query(`UPDATE console_sessions SET last_seen_at = $2 WHERE id = $1 AND last_seen_at < $2::timestamptz - interval '1 minute'`, [id, now]);
    },

    async revokeSession(accountId: string, id: string, now: Date): Promise<boolean> {
      const { rowCount } = await db.query(`UPDATE console_sessions SET revoked_at = $3 WHERE account_id = $1 AND id = $2 AND revoked_at IS NULL`, [accountId, id, now]);
      return (rowCount ?? 0) > 0;
    },
  };
}
export type ConsolePeopleRepository = ReturnType<typeof createConsolePeopleRepository>;
