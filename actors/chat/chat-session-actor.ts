import type { Behaviour } from '../../runtime/actor-system.ts';
import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import { withTransaction } from '../../db/pool.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { createChatSessionRepository, type ChatGateRow, type ChatSessionRow } from '../../db/chat-sessions.ts';
import { isRefusal, Refusal } from '../../runtime/refusal.ts';
import { hashToken, mintToken } from '../../runtime/tokens.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { createMoneyWriter } from '../../money/writer.ts';
import { ITEM_PRICES } from '../../money/rules/pricing.ts';
import { readinessFollowsMoney } from '../customer/readiness-check.ts';
import { assistantFor } from './assistant.ts';
import type { Assistant, ChatTurn } from './assistant-types.ts';
import { loadFacts } from './facts.ts';
import { scrubSuppliers } from './output-filter.ts';
import { businessName } from '../customer/views.ts';
import { MESSAGE_LIMIT, PREFIX_SHOWN, refuseMessage, refuseSession, SESSION_TOKEN_PREFIX } from './session-rules.ts';
import { chatContextView, chatMessageView, chatSessionView, sessionBrand } from './views.ts';
import type { ChatSessionMessage, ChatSessionView } from './messages.ts';

/**
 * The chat session actor: one per session. It owns the session's message count, expiry and
 * revocation, and the balance check of each message. Like every actor here it keeps only facts
 * that never change; everything a message is decided on is read fresh from PostgreSQL, and the
 * count itself moves only through one conditional UPDATE, so the limit holds across processes.
 */
export interface ChatSessionState {
  id: string;
  /** Null until `open_session` creates the session under this id. */
  session: { accountId: string; mode: Mode; customerId: string; prefix: string } | null;
}

/**
 * Handled concurrently rather than one at a time: a message waits for the model for seconds, and
 * its exactness rests on the slot claim in PostgreSQL, which serialises every process's messages.
 */
const CONCURRENT = new Set<ChatSessionMessage['type']>(['send_message', 'get_context']);

/** Price of an answered message (spec: 2 cents; nothing for a failed one). */
const PRICE_CENTS = ITEM_PRICES.chat_message_cents;

export function chatSessionBehaviour(deps: Deps, assistant: Assistant = assistantFor(deps.config)): Behaviour<ChatSessionMessage, ChatSessionState> {
  const { pool, clock, log } = deps;
  const sessions = createChatSessionRepository(pool);
  const money = createMoneyWriter(readinessFollowsMoney);

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
    const made: { row?: ChatSessionRow } = {};
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
    return { state: { id: state.id, session: factsOf(made.row) }, reply: { ...outcome, body: { ...outcome.body, token } } };
  }

  /** One message: refuse, claim a slot, ask the assistant, filter, charge; a failure gives the slot back. */
  async function send(state: ChatSessionState, message: string, history: ChatTurn[]) {
    const session = mustBeOpen(state);
    const now = clock.now();
    const before = await gate(state.id);
    const refusal = refuseMessage(before, now, PRICE_CENTS);
    if (refusal) throw new Refusal(refusal);
    const slot = await sessions.claimSlot(state.id, now);
    if (!slot) {
      // Another message took the last slot, or the session ended, since the read above.
      const after = await gate(state.id);
      throw new Refusal(refuseMessage(after, now, PRICE_CENTS) ?? 'session_exhausted');
    }
    const brand = sessionBrand(before);
    try {
      const facts = await loadFacts(pool, { id: session.customerId, business: businessName({ name: before.customer_name, brand_name: before.customer_brand_name }) }, now);
      const raw = await assistant.answer({ brand: { name: brand.name, supportEmail: brand.supportEmail }, facts, history, message });
      const reply = scrubSuppliers(raw, brand).trim();
      if (!reply) throw new Error('the assistant produced an empty reply');
      await charge(state.id, session, now);
      return chatMessageView(reply, slot, PRICE_CENTS);
    } catch (err) {
      // Not answered (or not charged): the message does not count.
      await sessions.releaseSlot(state.id).catch((releaseErr) => log.error({ err: releaseErr, session_id: state.id }, 'chat slot not given back'));
      if (isRefusal(err) || isDatabaseUnreachable(err)) throw err;
      // The message and the thread are never logged: no transcript is kept anywhere.
      log.warn({ err, session_id: state.id, assistant: assistant.name }, 'chat message not answered');
      throw new Refusal('chat_unavailable');
    }
  }

  /** The answered message's 2 cents, through the ledger, with the balance checked under the money lock. */
  async function charge(id: string, session: NonNullable<ChatSessionState['session']>, now: Date) {
    await withTransaction(pool, async (client) => {
      await money.chargeMessage(client, {
        accountId: session.accountId,
        mode: session.mode,
        customerId: session.customerId,
        priceCents: PRICE_CENTS,
        reference: id,
        description: `Assistant message (chat session ${session.prefix})`,
        now,
      });
      await createChatSessionRepository(client).touch(id, now);
    });
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
      case 'send_message':
        return done(await send(state, msg.message, msg.history));
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
    isRead: (msg) => CONCURRENT.has(msg.type),
    receive,
  };
}
