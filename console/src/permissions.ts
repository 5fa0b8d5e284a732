/**
 * Which role may do what (CONSOLE-CONTRACT.md, Roles), so each page shows only what its reader
 * may do. The server checks every action anyway: this only hides buttons that would be refused.
 */
export type Role = 'owner' | 'admin' | 'developer' | 'billing' | 'viewer';
export type Permission =
  | 'account:read'
  | 'customers:write'
  | 'developers:read'
  | 'developers:write'
  | 'billing:read'
  | 'billing:write'
  | 'account:write'
  | 'team:read'
  | 'team:write'
  | 'agreement:sign'
  | 'test_clocks:write';

const ALL: Role[] = ['owner', 'admin', 'developer', 'billing', 'viewer'];

export const PERMISSIONS: Record<Permission, readonly Role[]> = {
  'account:read': ALL,
  'customers:write': ['owner', 'admin', 'developer'],
  'developers:read': ['owner', 'admin', 'developer', 'viewer'],
  'developers:write': ['owner', 'admin', 'developer'],
  'billing:read': ['owner', 'admin', 'billing', 'viewer'],
  'billing:write': ['owner', 'admin', 'billing'],
  'account:write': ['owner', 'admin'],
  'team:read': ALL,
  'team:write': ['owner', 'admin'],
  'agreement:sign': ['owner'],
  'test_clocks:write': ['owner', 'admin', 'developer'],
};

export const ROLES: { role: Role; label: string; does: string }[] = [
  { role: 'owner', label: 'Owner', does: 'Everything, including signing the agreement.' },
  { role: 'admin', label: 'Admin', does: 'Everything except signing the agreement and managing owners.' },
  { role: 'developer', label: 'Developer', does: 'Customers, calls, API keys, webhooks, events and test clocks.' },
  { role: 'billing', label: 'Billing', does: 'Balance, ledger and activity log.' },
  { role: 'viewer', label: 'Viewer', does: 'Reads everything except money writes; changes nothing.' },
];

export function can(role: Role | undefined, permission: Permission): boolean {
  return role !== undefined && PERMISSIONS[permission].includes(role);
}
