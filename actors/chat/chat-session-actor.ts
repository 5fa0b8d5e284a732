import type { Behaviour } from '../../runtime/actor-system.ts';
import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { createChatSessionRepository, type ChatGateRow, type ChatSessionRow } from '../../db/chat-sessions.ts';
import { isRefusal, Refusal } from '../../runtime/refusal.ts';
import { hashToken, mintToken } from '../../runtime/tokens.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { customerOriginOf } from '../shared/brand-origin.ts';
import { MESSAGE_LIMIT, PREFIX_SHOWN, refuseSession, SESSION_TOKEN_PREFIX } from './session-rules.ts';
import { chatContextView, chatSessionView } from './views.ts';
import type { ChatSessionMessage, ChatSessionView } from './messages.ts';

/**
 * The chat session actor: one per session, the write queue of its life (opening, revocation) and
 * the reader of its context. Like every actor here it keeps only facts that never change. Its
 * messages are not the actor's: they are a plain module (chat-messages.ts), exact in PostgreSQL.
 */
export interface ChatSessionState {
  id: string;
  /** Null until `open_session` creates the session under this id. */
  session: { accountId: string; mode: Mode; customerId: string; prefix: string } | null;
}

/** Reads, which skip the mailbox once the actor is loaded (runtime/actor-system.ts). */
const READS = new Set<ChatSessionMessage['type']>(['get_context']);

export function chatSessionBehaviour(deps: Deps): Behaviour<ChatSessionMessage, ChatSessionState> {
  const { pool, clock, log, config } = deps;
  const sessions = createChatSessionRepository(pool);

  const factsOf = (row: ChatSessionRow): NonNullable<ChatSessionState['session']> => ({
    accountId: row.account_id,
    mode: row.mode,
    customerId: row.customer_id,
    prefix: row.prefix,
  });

  function mustBeOpen(state: ChatSessionState) {
    if (!state.session) throw new Refusal('invalid_session_token');
    return state.session;
  }

  async function gate(id: string): Promise<ChatGateRow> {
    const row = await sessions.gate(id);
    if (!row) throw new Refusal('invalid_session_token');
    return row;
  }

  async function open(state: ChatSessionState, msg: Extract<ChatSessionMessage, { type: 'open_session' }>) {
    if (state.session) throw new Error(`chat session ${state.id} already exists`);
    const now = clock.now();
    const { owner } = msg;
    const token = mintToken(SESSION_TOKEN_PREFIX[owner.mode]);
    const made: { row?: ChatSessionRow; origin?: string } = {};
    let outcome: Written<ChatSessionView>;
    try {
      outcome = await writeTransaction(pool, msg.idempotency, now, async (client) => {
        const created = await createChatSessionRepository(client).insert({
          id: state.id,
          accountId: owner.accountId,
          mode: owner.mode,
          customerId: owner.customerId,
          tokenHash: hashToken(token),
          prefix: token.slice(0, SESSION_TOKEN_PREFIX[owner.mode].length + PREFIX_SHOWN),
          endUserRef: msg.endUserRef,
          displayName: msg.displayName,
          expiresAt: new Date(now.getTime() + msg.ttlSeconds * 1000),
          messageLimit: MESSAGE_LIMIT,
          now,
        });
        made.row = created;
        // The chat page's address, at the reseller's brand domain once DNS has verified it.
        made.origin = await customerOriginOf(client, owner.accountId, config.publicUrl);
        // The stored body (idempotent replay) leaves the token out: only its hash is kept.
        return { created: true, body: chatSessionView(created, now, { expiresInSeconds: msg.ttlSeconds }) };
      });
    } catch (err) {
      // An unreachable database is not this write's fault: the boundary answers 503 with Retry-After.
      if (isRefusal(err) || isDatabaseUnreachable(err)) throw err;
      log.error({ err }, 'chat session not created; rolled back');
      throw new Refusal('session_not_created');
    }
    // A replay created nothing: the first request's session lives under another id.
    if (outcome.replayed || !made.row) return { state, reply: outcome };
    return { state: { id: state.id, session: factsOf(made.row) }, reply: { ...outcome, body: { ...outcome.body, token, url: `${made.origin}/chat#token=${token}` } } };
  }

  async function revoke(state: ChatSessionState, owner: Extract<ChatSessionMessage, { type: 'revoke_session' }>['owner']) {
    const s = state.session;
    if (!s || s.accountId !== owner.accountId || s.mode !== owner.mode || s.customerId !== owner.customerId) {
      throw new Refusal('session_not_found');
    }
    return { revoked: (await sessions.revoke(state.id, clock.now())) ? 1 : 0 } as const;
  }

  async function receive(state: ChatSessionState, msg: ChatSessionMessage): Promise<{ state: ChatSessionState; reply: unknown }> {
    const done = (reply: unknown) => ({ state, reply });
    switch (msg.type) {
      case 'open_session':
        return open(state, msg);
      case 'get_context': {
        mustBeOpen(state);
        const row = await gate(state.id);
        const refusal = refuseSession(row, clock.now());
        if (refusal) throw new Refusal(refusal);
        return done(chatContextView(row));
      }
      case 'revoke_session':
        return done(await revoke(state, msg.owner));
      default: {
        const unhandled: never = msg;
        throw new Error(`unhandled chat session message ${(unhandled as { type: string }).type}`);
      }
    }
  }

  return {
    kind: 'chat_session',
    async load(id) {
      const row = await sessions.get(id);
      return { id, session: row ? factsOf(row) : null };
    },
    isRead: (msg) => READS.has(msg.type),
    receive,
  };
}
