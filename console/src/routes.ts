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
  { path: '', load: () => import('./pages/Overview.tsx'), nav: { label: 'Overview', group: 'Account' }, permission: 'account:read' },
];
