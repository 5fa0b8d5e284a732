/**
 * The console's pages: ONE table. A page is a file in pages/ (its default export) plus one line
 * here; the router (main.tsx) and the navigation (app/Shell.tsx) are made from this list.
 * Pages load on demand, so the first load carries only the shell.
 */
import type { ComponentType } from 'react';
import type { Permission } from './permissions.ts';

export interface PageRoute {
  /** Under /console/ ('' is /console itself). */
  path: string;
  load: () => Promise<{ default: ComponentType }>;
  /** Reached without signing in (sign-in, invitation, password reset). */
  public?: boolean;
  /** Shown in the navigation with this label, in this group. */
  nav?: { label: string; group: 'Account' | 'Data' | 'Developers' | 'Settings' };
  /** The permission the page needs (hidden from the navigation without it; the server checks anyway). */
  permission?: Permission;
  /** Only in test mode (test clocks). */
  testOnly?: boolean;
}

export const ROUTES: PageRoute[] = [
  { path: 'sign-in', public: true, load: () => import('./pages/SignIn.tsx') },
  { path: 'accept', public: true, load: () => import('./pages/Accept.tsx') },
  { path: 'reset', public: true, load: () => import('./pages/Reset.tsx') },
  { path: '', load: () => import('./pages/Overview.tsx'), nav: { label: 'Overview', group: 'Account' }, permission: 'account:read' },
  { path: 'going-live', load: () => import('./pages/GoingLive.tsx'), nav: { label: 'Going live', group: 'Account' }, permission: 'account:read' },
  { path: 'billing', load: () => import('./pages/Billing.tsx'), nav: { label: 'Billing', group: 'Account' }, permission: 'billing:read' },
  { path: 'billing/top-ups/:id', load: () => import('./pages/TopUp.tsx'), permission: 'billing:read' },
  { path: 'checkout/:session_id', load: () => import('./pages/Checkout.tsx'), permission: 'billing:read' },
  { path: 'customers', load: () => import('./pages/Customers.tsx'), nav: { label: 'Customers', group: 'Data' }, permission: 'account:read' },
  { path: 'customers/:id', load: () => import('./pages/Customer.tsx'), permission: 'account:read' },
  { path: 'calls', load: () => import('./pages/Calls.tsx'), nav: { label: 'Calls', group: 'Data' }, permission: 'account:read' },
  { path: 'calls/:id', load: () => import('./pages/Call.tsx'), permission: 'account:read' },
  { path: 'appointments', load: () => import('./pages/Appointments.tsx'), nav: { label: 'Appointments', group: 'Data' }, permission: 'account:read' },
  { path: 'developers/keys', load: () => import('./pages/Keys.tsx'), nav: { label: 'API keys', group: 'Developers' }, permission: 'developers:read' },
  { path: 'developers/webhooks', load: () => import('./pages/Webhooks.tsx'), nav: { label: 'Webhooks', group: 'Developers' }, permission: 'developers:read' },
  { path: 'developers/webhooks/:id', load: () => import('./pages/Webhook.tsx'), permission: 'developers:read' },
  { path: 'developers/events', load: () => import('./pages/Events.tsx'), nav: { label: 'Events', group: 'Developers' }, permission: 'developers:read' },
  { path: 'test-clocks', load: () => import('./pages/TestClocks.tsx'), nav: { label: 'Test clocks', group: 'Developers' }, permission: 'account:read', testOnly: true },
  { path: 'settings/brand', load: () => import('./pages/Brand.tsx'), nav: { label: 'Brand', group: 'Settings' }, permission: 'account:read' },
  { path: 'settings/team', load: () => import('./pages/Team.tsx'), nav: { label: 'Team', group: 'Settings' }, permission: 'team:read' },
  { path: 'settings/security', load: () => import('./pages/Security.tsx'), nav: { label: 'Your security', group: 'Settings' } },
];
