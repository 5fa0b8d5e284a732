/**
 * Who may do what in the reseller console (docs/api.md, Console › Roles). Every console route
 * names one permission; the server checks it on each request, whatever the page showed.
 */
import type { ConsoleRole } from '../../runtime/types.ts';

export type { ConsoleRole };
export const CONSOLE_ROLES: readonly ConsoleRole[] = ['owner', 'admin', 'developer', 'billing', 'viewer'];

export const CONSOLE_PERMISSIONS = {
  'account:read': ['owner', 'admin', 'developer', 'billing', 'viewer'],
  'customers:write': ['owner', 'admin', 'developer'],
  'developers:read': ['owner', 'admin', 'developer', 'viewer'],
  'developers:write': ['owner', 'admin', 'developer'],
  'billing:read': ['owner', 'admin', 'billing', 'viewer'],
  'billing:write': ['owner', 'admin', 'billing'],
  'account:write': ['owner', 'admin'],
  'team:read': ['owner', 'admin', 'developer', 'billing', 'viewer'],
  'team:write': ['owner', 'admin'],
  'agreement:sign': ['owner'],
  'test_clocks:write': ['owner', 'admin', 'developer'],
} as const satisfies Record<string, readonly ConsoleRole[]>;
export type ConsolePermission = keyof typeof CONSOLE_PERMISSIONS;

export function isConsoleRole(value: unknown): value is ConsoleRole {
  return typeof value === 'string' && (CONSOLE_ROLES as readonly string[]).includes(value);
}

/** True when `role` holds `permission`. */
export function roleMay(role: ConsoleRole, permission: ConsolePermission): boolean {
  return (CONSOLE_PERMISSIONS[permission] as readonly ConsoleRole[]).includes(role);
}

/** The roles holding `permission`, for a refusal's message. */
export function rolesWith(permission: ConsolePermission): readonly ConsoleRole[] {
  return CONSOLE_PERMISSIONS[permission];
}

/** Idle and absolute lifetimes of a console session. */
export const SESSION_IDLE_MS = 12 * 3600_000;
export const SESSION_MAX_MS = 7 * 24 * 3600_000;
/** An invitation link works for 7 days; a password reset link for 1 hour. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;
export const PASSWORD_RESET_TTL_MS = 3600_000;
/** Passwords: 12 to 256 characters (longer ones cost hashing time for nothing). */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/** Why a password is refused, or null. Pure. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN) return `The password must be at least ${PASSWORD_MIN} characters long.`;
  if (length > PASSWORD_MAX) return `The password must be at most ${PASSWORD_MAX} characters long.`;
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) return 'The password must not be your email address.';
  return null;
}
