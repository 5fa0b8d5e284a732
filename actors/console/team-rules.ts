/**
 * Who may change whom in a console team (docs/api.md, Console › Team). Pure: plain values in, the
 * refusal's code out (or null). Only holders of `team:write` (owner, admin) reach these rules.
 */
import type { ConsoleRole } from '../../runtime/types.ts';

export type TeamRefusal = 'own_role_unchangeable' | 'owner_protected' | 'last_owner';

/** Inviting someone with `role`: an admin cannot make an owner. */
export function inviteProblem(actorRole: ConsoleRole, role: ConsoleRole): TeamRefusal | null {
  return role === 'owner' && actorRole !== 'owner' ? 'owner_protected' : null;
}

/**
 * Changing a member's role (`newRole`) or removing them (`newRole` null). `owners` is how many
 * owners the account has now, the target included when they are one.
 */
export function memberChangeProblem(input: {
  actorId: string;
  actorRole: ConsoleRole;
  targetId: string;
  targetRole: ConsoleRole;
  newRole: ConsoleRole | null;
  owners: number;
}): TeamRefusal | null {
  const { actorId, actorRole, targetId, targetRole, newRole, owners } = input;
  if (actorId === targetId) return 'own_role_unchangeable';
  if (actorRole !== 'owner' && (targetRole === 'owner' || newRole === 'owner')) return 'owner_protected';
  if (targetRole === 'owner' && newRole !== 'owner' && owners <= 1) return 'last_owner';
  return null;
}

/** Withdrawing an invitation: an admin cannot withdraw one that would make an owner. */
export function withdrawProblem(actorRole: ConsoleRole, invitedRole: ConsoleRole): TeamRefusal | null {
  return inviteProblem(actorRole, invitedRole);
}

/** Sliding-window throttle: how long until fewer than `limit` failures remain in the window, or 0. Pure. */
export function retryAfterSeconds(recentNewestFirst: readonly Date[], limit: number, windowMs: number, now: Date): number {
  if (recentNewestFirst.length < limit) return 0;
  // When the limit-th most recent failure leaves the window, limit - 1 remain.
  const leaves = recentNewestFirst[limit - 1]!.getTime() + windowMs;
  return Math.max(1, Math.ceil((leaves - now.getTime()) / 1000));
}
