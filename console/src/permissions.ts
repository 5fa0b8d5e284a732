/**
 * Which role may do what: the server's own table (actors/account/console-roles.ts, pure), so each
 * page shows only what its reader may do. The server checks every action anyway: this only hides
 * buttons that would be refused.
 */
import { CONSOLE_PERMISSIONS, type ConsolePermission, type ConsoleRole } from '../../actors/account/console-roles.ts';

export type Role = ConsoleRole;
export type Permission = ConsolePermission;

export const ROLES: { role: Role; label: string; does: string }[] = [
  { role: 'owner', label: 'Owner', does: 'Everything, including signing the agreement and managing owners.' },
  { role: 'admin', label: 'Admin', does: 'Everything except signing the agreement and making or removing owners.' },
  { role: 'developer', label: 'Developer', does: 'Customers, calls, API keys, webhooks, events and test clocks; no money pages.' },
  { role: 'billing', label: 'Billing', does: 'Balance, ledger and activity log; reads the rest.' },
  { role: 'viewer', label: 'Viewer', does: 'Reads everything except team changes; changes nothing.' },
];

export function can(role: Role | undefined, permission: Permission): boolean {
  return role !== undefined && (CONSOLE_PERMISSIONS[permission] as readonly Role[]).includes(role);
}
