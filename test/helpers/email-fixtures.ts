import type { ComposeInput, EmailKind } from '../../email/compose.ts';
import { emailBrand } from '../../actors/email/brand.ts';
import type { EmailAccount } from '../../db/email-outbox.ts';

/** A reseller with a whole brand (yellow band that needs black text, a dark button that needs white), for template tests. */
export const HARBOURLINE: EmailAccount = {
  name: 'Harbourline Leads LLC',
  display_name: 'Harbourline',
  logo_url: null,
  primary_color: '#ffcc00',
  accent_color: '#0a3d62',
  email_from_name: 'Harbourline Team',
  support_email: 'help@harbourline.example',
};

/** What the sender would hand `composeEmail` for a row of `kind` of Harbourline's. */
export function composeInput(kind: EmailKind, data: Record<string, unknown>, over: Partial<ComposeInput> & { account?: EmailAccount } = {}): ComposeInput {
  const { account = HARBOURLINE, ...rest } = over;
  return {
    id: '0b0c6a52-7d0c-4a53-9b8f-1a2b3c4d5e6f',
    kind,
    mode: 'live',
    data,
    secret: null,
    to: ['person@harbourline.example'],
    platform: { name: 'Switchboard', from: 'no-reply@switchboard.example', publicUrl: 'https://console.switchboard.example' },
    accountName: account.name,
    brand: emailBrand(account),
    ...rest,
  };
}

/** An onboarding link email to Bright Dental in `language`. */
export const onboardingInput = (language: string, over: Partial<ComposeInput> & { account?: EmailAccount } = {}) =>
  composeInput('onboarding_link', { customer_name: 'Bright Dental', link_id: 'l1', expires_at: '2026-12-27T10:00:00.000Z', language }, {
    secret: 'https://calls.harbourline.example/onboarding/ob_0123456789abcdefghijklmnopqrst012345',
    to: ['owner@bright-dental.example'],
    mode: 'test',
    ...over,
  });
