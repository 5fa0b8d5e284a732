import crypto from 'node:crypto';
import type { EntityRegistry } from '../../runtime/actor-system.ts';
import type { Deps } from '../../runtime/deps.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { createChatSessionRepository } from '../../db/chat-sessions.ts';
import { isUuid } from '../../db/customers.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { hashToken, isWellFormed } from '../../runtime/tokens.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import type { ChatTurn } from './assistant-types.ts';
import type { ChatMessages } from './chat-messages.ts';
import type { ChatSessionState } from './chat-session-actor.ts';
import type { ChatSessionMessage, ChatSessionReplies, SessionOwner } from './messages.ts';
import { SESSION_TOKEN_PREFIX } from './session-rules.ts';
import { chatSessionView } from './views.ts';

export type ChatSessionRegistry = EntityRegistry<ChatSessionMessage, ChatSessionReplies, ChatSessionState>;

/**
 * What the routes ask of chat sessions: lifecycle writes go to the session's actor, messages to
 * the messages module. Reads of a customer's list go straight to PostgreSQL, like every read here.
 */
export function createChatSessions(deps: Pick<Deps, 'pool' | 'clock'>, registry: ChatSessionRegistry, messages: ChatMessages) {
  const { pool, clock } = deps;
  const repo = createChatSessionRepository(pool);

  return {
    /** A new session under a fresh id: its actor creates it. Minting never ends earlier sessions. */
    mint(owner: SessionOwner, input: { end_user_ref: string; display_name?: string | null; ttl_seconds: number }, idempotency?: IdempotencyClaim) {
      return registry.ask(crypto.randomUUID(), {
        type: 'open_session',
        owner,
        endUserRef: input.end_user_ref,
        displayName: input.display_name ?? null,
        ttlSeconds: input.ttl_seconds,
        idempotency,
      });
    },

    async list(customerId: string, page: Page) {
      const before = await pageStart(pool, page, { table: 'chat_sessions', customerId });
      const now = clock.now();
      const rows = await repo.listForCustomer(customerId, page.limit + 1, before);
      return toList(rows, page.limit, (s) => chatSessionView(s, now));
    },

    /**
     * Ends one session, or every open session of one person, each through its own actor. A
     * session that had already ended counts 0 and is still a success (spec).
     */
    async revoke(owner: SessionOwner, selector: { session_id?: string; end_user_ref?: string }) {
      const { session_id: sessionId, end_user_ref: endUserRef } = selector;
      if (sessionId !== undefined && endUserRef !== undefined) {
        throw new Refusal('invalid_parameter', 'Give session_id or end_user_ref, not both.');
      }
      let ids: string[];
      if (sessionId !== undefined) {
        if (!isUuid(sessionId)) throw new Refusal('session_not_found');
        ids = [sessionId];
      } else if (endUserRef !== undefined) {
        ids = await repo.openIdsOfPerson(owner.customerId, endUserRef, clock.now());
      } else {
        throw new Refusal('session_selector_required');
      }
      const results = await Promise.all(ids.map((id) => registry.ask(id, { type: 'revoke_session', owner })));
      return { object: 'chat_session_revocation' as const, revoked: results.reduce((n, r) => n + r.revoked, 0) };
    },

    /**
     * The session an `Authorization: Bearer <session token>` names. An API key, a malformed
     * token (refused by its checksum without a lookup) and an unknown one are all the same
     * `invalid_session_token`.
     */
    async sessionOf(authorization: string | undefined): Promise<string> {
      const token = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : '';
      const prefix = Object.values(SESSION_TOKEN_PREFIX).find((p) => token.startsWith(p));
      if (!prefix || !isWellFormed(token, prefix)) throw new Refusal('invalid_session_token');
      const id = await repo.idByTokenHash(hashToken(token));
      if (!id) throw new Refusal('invalid_session_token');
      return id;
    },

    /** A message of the session: the messages module, not the actor (see chat-messages.ts). */
    send(sessionId: string, message: string, history: ChatTurn[]) {
      return messages.send(sessionId, message, history);
    },

    context(sessionId: string) {
      return registry.ask(sessionId, { type: 'get_context' });
    },
  };
}

export type ChatSessions = ReturnType<typeof createChatSessions>;
