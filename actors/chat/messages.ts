import type { IdempotencyClaim } from '../../db/idempotency.ts';
import type { Mode } from '../../runtime/types.ts';
import type { Written } from '../shared/transaction.ts';
import type { chatContextView, chatSessionView } from './views.ts';

export type ChatSessionView = ReturnType<typeof chatSessionView>;
/** The mint response: the session with its token and the chat page's URL, shown this once. */
export type MintedSession = ChatSessionView & { token?: string; url?: string };

/** Which customer's session a reseller's request is about (its key's account and mode). */
export interface SessionOwner {
  accountId: string;
  mode: Mode;
  customerId: string;
}

/** Every message the chat session actor takes (STYLE 4). */
export type ChatSessionMessage =
  | {
      type: 'open_session';
      owner: SessionOwner;
      endUserRef: string;
      displayName: string | null;
      ttlSeconds: number;
      idempotency?: IdempotencyClaim;
    }
  | { type: 'get_context' }
  | { type: 'revoke_session'; owner: SessionOwner };

export interface ChatSessionReplies {
  open_session: Written<MintedSession>;
  get_context: ReturnType<typeof chatContextView>;
  revoke_session: { revoked: 0 | 1 };
}
