import type { Mode } from '../../runtime/types.ts';

/**
 * The rules of a chat session (spec: Chat session, Limits → Assistant). Pure: plain records and
 * `now` in, a decision out.
 */

/** Messages per session. */
export const MESSAGE_LIMIT = 200;
/** Session lifetime, seconds: out of range is refused, never clamped. */
export const TTL_SECONDS = { min: 60, max: 3600, default: 900 } as const;
export const END_USER_REF_MAX = 128;
export const DISPLAY_NAME_MAX = 120;
export const MESSAGE_MAX = 4000;
/** Most history entries a request may carry; only the last HISTORY_TURNS of them are used. */
export const HISTORY_MAX_ENTRIES = 50;
export const HISTORY_TURNS = 12;

/** Session tokens name their mode, like API keys, and can never be mistaken for one. */
export const SESSION_TOKEN_PREFIX: Record<Mode, string> = { test: 'svc_sess_test_', live: 'svc_sess_live_' };
/** Characters of the token kept to tell sessions apart: the mode prefix and 4 random characters. */
export const PREFIX_SHOWN = 4;

export type SessionStatus = 'active' | 'revoked' | 'expired' | 'exhausted';

export interface SessionClock {
  revoked_at: Date | null;
  expires_at: Date;
  messages_sent: number;
  message_limit: number;
}

/** Where a session stands at `now`. A revocation outranks expiry: it is what the reseller did. */
export function sessionStatus(s: SessionClock, now: Date): SessionStatus {
  if (s.revoked_at) return 'revoked';
  if (s.expires_at <= now) return 'expired';
  if (s.messages_sent >= s.message_limit) return 'exhausted';
  return 'active';
}

/** What the next message of a session is decided on (read fresh for every message). */
export interface MessageGate extends SessionClock {
  mode: Mode;
  customer_status: string;
  account_status: string;
  available_cents: number;
}

export type MessageRefusal = 'session_revoked' | 'session_expired' | 'session_exhausted' | 'insufficient_balance';

/**
 * Why the next message must be refused, or null. A paused customer or a suspended account stops
 * the session like a revocation (spec: "also stops a session on its next message"). Only a live
 * session needs the balance: test sessions are priced, never charged.
 */
export function refuseMessage(g: MessageGate, now: Date, priceCents: number): MessageRefusal | null {
  const stopped = refuseSession(g, now);
  if (stopped) return stopped;
  if (g.messages_sent >= g.message_limit) return 'session_exhausted';
  if (g.mode === 'live' && g.available_cents < priceCents) return 'insufficient_balance';
  return null;
}

/** Why a session can no longer be used at all (the chat page's session read), or null. */
export function refuseSession(g: Omit<MessageGate, 'available_cents' | 'mode'>, now: Date): 'session_revoked' | 'session_expired' | null {
  if (g.revoked_at) return 'session_revoked';
  if (g.expires_at <= now) return 'session_expired';
  if (g.customer_status === 'paused' || g.account_status === 'suspended') return 'session_revoked';
  return null;
}
