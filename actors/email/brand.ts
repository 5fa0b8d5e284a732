import type { EmailAccount } from '../../db/email-outbox.ts';
import type { EmailBrand } from '../../email/compose.ts';
import { contrastRatio, parseHexColour, textColourOn, AA_NORMAL_TEXT } from '../shared/contrast.ts';
import { isEmailAddress } from '../../runtime/email-address.ts';

/** The band's colour when a brand has none. */
const DEFAULT_PRIMARY = '#1f2937';
/** Links when neither brand colour reads on white. */
const DEFAULT_LINK = '#1d4ed8';

/**
 * A reseller's brand as its emails show it: its display name (else the account's name), its
 * `email_from_name` (else that name) as the From display name, its support address as Reply-To
 * when it is a plain address, its logo, and its colours with black or white text, whichever
 * reaches WCAG AA on them (the rule of its pages, actors/shared/contrast.ts). Pure.
 */
export function emailBrand(account: EmailAccount): EmailBrand {
  const name = account.display_name?.trim() || account.name;
  const colour = (c: string | null) => (c && parseHexColour(c) ? c.toLowerCase() : null);
  const primary = colour(account.primary_color) ?? DEFAULT_PRIMARY;
  const accent = colour(account.accent_color) ?? primary;
  const link = [primary, accent].find((c) => contrastRatio(c, '#ffffff') >= AA_NORMAL_TEXT) ?? DEFAULT_LINK;
  const support = account.support_email?.trim().toLowerCase() ?? '';
  return {
    name,
    fromName: account.email_from_name?.trim() || name,
    supportEmail: support && isEmailAddress(support) ? support : null,
    look: {
      name,
      logoUrl: account.logo_url?.startsWith('https://') ? account.logo_url : null,
      primary,
      onPrimary: textColourOn(primary),
      accent,
      onAccent: textColourOn(accent),
      link,
    },
  };
}
