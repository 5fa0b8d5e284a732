import type { Look } from './layout.tsx';

/** What every template is given (email/compose.ts builds it from the outbox row). */
export interface TemplateInput {
  /** The row's `data` (JSON, no secrets). */
  data: Record<string, unknown>;
  /** The row's opened secret: the link with its token; null when it carries none. */
  secret: string | null;
  mode: 'test' | 'live';
  /** The reseller account's own name (the platform's emails to its team name it). */
  accountName: string;
  /** The platform: its name (SWITCHBOARD_PLATFORM_NAME), where its console is, its look. */
  platform: { name: string; publicUrl: string; look: Look };
  /** The reseller's brand, for emails on its behalf. */
  brand: { name: string; look: Look; supportEmail: string | null };
}

/** The platform's own look: neutral, every pair well above WCAG AA. */
export const PLATFORM_LOOK: Omit<Look, 'name'> = {
  logoUrl: null,
  primary: '#111827',
  onPrimary: '#ffffff',
  accent: '#1d4ed8',
  onAccent: '#ffffff',
  link: '#1d4ed8',
};

/** The console's page for this mode (`/console/billing?mode=live`). */
export const consoleUrl = (input: TemplateInput, page: string) => `${input.platform.publicUrl}/console/${page}${page.includes('?') ? '&' : '?'}mode=${input.mode}`;

/** The footer of the platform's emails to a reseller's team. */
export const teamFooter = (input: TemplateInput) =>
  `You receive this email because you look after billing for ${input.accountName} on ${input.platform.name}. People with the owner, admin or billing role receive it.`;
