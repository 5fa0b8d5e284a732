import type { ChatGateRow, ChatSessionRow } from '../../db/chat-sessions.ts';
import { iso, isoNow } from '../../runtime/types.ts';
import { pageBrand } from '../account/views.ts';
import { businessName } from '../customer/views.ts';
import { sessionStatus } from './session-rules.ts';
import { parseHexColour, textColourOn } from '../shared/contrast.ts';

/** A session as the reseller sees it; `token` and `expires_in_seconds` only on the mint response. */
export function chatSessionView(s: ChatSessionRow, now: Date, mint?: { expiresInSeconds: number }) {
  return {
    object: 'chat_session' as const,
    id: s.id,
    customer_id: s.customer_id,
    prefix: s.prefix,
    end_user_ref: s.end_user_ref,
    display_name: s.display_name,
    status: sessionStatus(s, now),
    expires_at: isoNow(s.expires_at),
    revoked_at: iso(s.revoked_at),
    last_used_at: iso(s.last_used_at),
    messages_sent: s.messages_sent,
    message_limit: s.message_limit,
    mode: s.mode,
    created_at: isoNow(s.created_at),
    ...(mint ? { expires_in_seconds: mint.expiresInSeconds } : {}),
  };
}

/**
 * The brand of a session's reseller: what the assistant speaks as and the chat page shows, and
 * the words of its own the output filter keeps as written.
 */
export function sessionBrand(g: ChatGateRow) {
  const page = pageBrand({
    name: g.account_name,
    display_name: g.brand_display_name,
    logo_url: g.logo_url,
    primary_color: g.primary_color,
    accent_color: g.accent_color,
    support_email: g.support_email,
  });
  return { ...page, emailFromName: g.email_from_name, domain: g.domain };
}

/** What the chat page needs to dress itself and greet the person (GET /v1/chat/session). */
export function chatContextView(g: ChatGateRow) {
  const brand = sessionBrand(g);
  // Text on a brand colour: black or white by WCAG contrast (white if the colour is not a hex one).
  const textOn = (colour: string) => (parseHexColour(colour) ? textColourOn(colour) : '#ffffff');
  return {
    object: 'chat_context' as const,
    brand: {
      display_name: brand.name,
      logo_url: brand.logoUrl,
      primary_color: brand.primaryColor,
      accent_color: brand.accentColor,
      support_email: brand.supportEmail,
      text_on_primary_color: textOn(brand.primaryColor),
      text_on_accent_color: textOn(brand.accentColor),
    },
    calling_language: g.calling_language,
    business: businessName({ name: g.customer_name, brand_name: g.customer_brand_name }),
    display_name: g.display_name,
    session_expires_at: isoNow(g.expires_at),
    messages_sent: g.messages_sent,
    message_limit: g.message_limit,
  };
}

/** The answer to one message (`chat_message`). */
export function chatMessageView(reply: string, slot: { messages_sent: number; message_limit: number; expires_at: Date }, chargedCents: number) {
  return {
    object: 'chat_message' as const,
    reply,
    messages_sent: slot.messages_sent,
    message_limit: slot.message_limit,
    session_expires_at: isoNow(slot.expires_at),
    charged_cents: chargedCents,
  };
}
