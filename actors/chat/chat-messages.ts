import type { Deps } from '../../runtime/deps.ts';
import { withTransaction } from '../../db/pool.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { createChatSessionRepository, type ChatGateRow } from '../../db/chat-sessions.ts';
import { isRefusal, Refusal } from '../../runtime/refusal.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import { ITEM_PRICES } from '../../money/rules/pricing.ts';
import type { Assistant, ChatTurn } from './assistant-types.ts';
import { loadFacts } from './facts.ts';
import { scrubSuppliers } from '../shared/output-filter.ts';
import { businessName } from '../customer/views.ts';
import { refuseMessage } from './session-rules.ts';
import { chatMessageView, sessionBrand } from './views.ts';

/** Price of an answered message (spec: 2 cents; nothing for a failed one). */
export const MESSAGE_PRICE_CENTS = ITEM_PRICES.chat_message_cents;

/**
 * The messages of chat sessions: a plain module, not a message of the session actor. A message
 * waits seconds for the model, and what makes it exact is in PostgreSQL, not in a mailbox: the
 * slot claim (one conditional UPDATE of the session's count) serialises every process's messages,
 * and the charge goes through the money writer under the account's money lock. Putting it in the
 * actor would either queue a session's messages behind each other's model calls or (as it once
 * did) mark a write as a read to skip the mailbox.
 */
export function createChatMessages(deps: Pick<Deps, 'pool' | 'clock' | 'log'>, parts: { assistant: Assistant; money: MoneyWriter }) {
  const { pool, clock, log } = deps;
  const { assistant, money } = parts;
  const sessions = createChatSessionRepository(pool);

  async function gate(id: string): Promise<ChatGateRow> {
    const row = await sessions.gate(id);
    if (!row) throw new Refusal('invalid_session_token');
    return row;
  }

  /** The answered message's price, through the money writer, with the balance checked under the money lock. */
  async function charge(session: ChatGateRow, now: Date) {
    await withTransaction(pool, async (client) => {
      await money.chargeMessage(client, {
        accountId: session.account_id,
        mode: session.mode,
        customerId: session.customer_id,
        priceCents: MESSAGE_PRICE_CENTS,
        reference: session.id,
        description: `Assistant message (chat session ${session.prefix})`,
        now,
      });
      await createChatSessionRepository(client).touch(session.id, now);
    });
  }

  return {
    /** One message: refuse, claim a slot, ask the assistant, filter, charge; a failure gives the slot back. */
    async send(sessionId: string, message: string, history: ChatTurn[]) {
      const now = clock.now();
      const before = await gate(sessionId);
      const refusal = refuseMessage(before, now, MESSAGE_PRICE_CENTS);
      if (refusal) throw new Refusal(refusal);
      const slot = await sessions.claimSlot(sessionId, now);
      if (!slot) {
        // Another message took the last slot, or the session ended, since the read above.
        const after = await gate(sessionId);
        throw new Refusal(refuseMessage(after, now, MESSAGE_PRICE_CENTS) ?? 'session_exhausted');
      }
      const brand = sessionBrand(before);
      try {
        const business = businessName({ name: before.customer_name, brand_name: before.customer_brand_name });
        const facts = await loadFacts(pool, { id: before.customer_id, business }, now);
        const raw = await assistant.answer({ brand: { name: brand.name, supportEmail: brand.supportEmail }, facts, history, message });
        const reply = scrubSuppliers(raw, brand).trim();
        if (!reply) throw new Error('the assistant produced an empty reply');
        await charge(before, now);
        return chatMessageView(reply, slot, MESSAGE_PRICE_CENTS);
      } catch (err) {
        // Not answered (or not charged): the message does not count.
        await sessions.releaseSlot(sessionId).catch((releaseErr) => log.error({ err: releaseErr, session_id: sessionId }, 'chat slot not given back'));
        if (isRefusal(err) || isDatabaseUnreachable(err)) throw err;
        // The message and the thread are never logged: no transcript is kept anywhere.
        log.warn({ err, session_id: sessionId, assistant: assistant.name }, 'chat message not answered');
        throw new Refusal('chat_unavailable');
      }
    },
  };
}

export type ChatMessages = ReturnType<typeof createChatMessages>;
