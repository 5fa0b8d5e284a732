import type { EmailKind } from '../runtime/types.ts';
import type { OutgoingEmail } from './transport.ts';
import { messageIdFor } from './headers.ts';
import type { Look, Rendered } from './templates/layout.tsx';
import { PLATFORM_LOOK, type TemplateInput } from './templates/input.ts';
import { consoleInvitation } from './templates/console-invitation.tsx';
import { passwordReset } from './templates/password-reset.tsx';
import { balanceLow } from './templates/balance-low.tsx';
import { autoTopUpFailed } from './templates/auto-top-up-failed.tsx';
import { numberPaymentDue } from './templates/number-payment-due.tsx';
import { websiteHostingDue } from './templates/website-hosting-due.tsx';
import { onboardingLink } from './templates/onboarding-link.tsx';
import { calendarLink } from './templates/calendar-link.tsx';

/**
 * An outbox row made into a message: its template by kind, and the sender it appears to come
 * from. The platform's own emails (to a reseller's people) are from the platform's name; an email
 * on a reseller's behalf (to its customer) is from its brand's `email_from_name`, with its support
 * address as Reply-To, and names neither the service nor a supplier.
 */

/** The reseller's brand as its emails use it (actors/email/brand.ts resolves it: colours with readable text, a usable Reply-To). */
export interface EmailBrand {
  name: string;
  fromName: string;
  /** A checked address, or null. */
  supportEmail: string | null;
  look: Look;
}

export interface ComposeInput {
  /** The outbox row's id: the Message-ID is made from it. */
  id: string;
  kind: EmailKind;
  mode: 'test' | 'live';
  data: Record<string, unknown>;
  secret: string | null;
  to: string[];
  platform: { name: string; from: string; publicUrl: string };
  accountName: string;
  brand: EmailBrand;
}

/** A row that can never be sent as it is (a link email without its link): dead at once, not retried. */
export class EmailNotSendable extends Error {
  override name = 'EmailNotSendable';
}

const TEMPLATES: Record<EmailKind, { template: (input: TemplateInput) => Promise<Rendered>; onBehalf: boolean; needsLink: boolean }> = {
  console_invitation: { template: consoleInvitation, onBehalf: false, needsLink: true },
  password_reset: { template: passwordReset, onBehalf: false, needsLink: true },
  balance_low: { template: balanceLow, onBehalf: false, needsLink: false },
  auto_top_up_failed: { template: autoTopUpFailed, onBehalf: false, needsLink: false },
  number_payment_due: { template: numberPaymentDue, onBehalf: false, needsLink: false },
  website_hosting_due: { template: websiteHostingDue, onBehalf: false, needsLink: false },
  onboarding_link: { template: onboardingLink, onBehalf: true, needsLink: true },
  calendar_link: { template: calendarLink, onBehalf: true, needsLink: true },
};


export async function composeEmail(input: ComposeInput): Promise<OutgoingEmail> {
  const entry = TEMPLATES[input.kind];
  if (!entry) throw new EmailNotSendable(`no template for the kind ${JSON.stringify(input.kind)}`);
  if (entry.needsLink && !input.secret) throw new EmailNotSendable(`a ${input.kind} email carries no link`);
  const rendered = await entry.template({
    data: input.data,
    secret: input.secret,
    mode: input.mode,
    accountName: input.accountName,
    platform: { name: input.platform.name, publicUrl: input.platform.publicUrl, look: { ...PLATFORM_LOOK, name: input.platform.name } },
    brand: { name: input.brand.name, look: input.brand.look, supportEmail: input.brand.supportEmail },
  });
  return {
    id: input.id,
    kind: input.kind,
    from: { name: entry.onBehalf ? input.brand.fromName : input.platform.name, address: input.platform.from },
    to: input.to,
    replyTo: entry.onBehalf && input.brand.supportEmail ? { name: input.brand.fromName, address: input.brand.supportEmail } : null,
    subject: rendered.subject,
    messageId: messageIdFor(input.id, input.platform.from),
    html: rendered.html,
    text: rendered.text,
  };
}
