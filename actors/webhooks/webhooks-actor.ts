import type { Behaviour } from '../../runtime/actor-system.ts';
import type { Deps } from '../../runtime/deps.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { createEventRepository, recordEvent } from '../../db/events.ts';
import { withTransaction } from '../../db/pool.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { pageStart, toList } from '../shared/list.ts';
import { createWebhookEndpoints } from './endpoints.ts';
import { eventView } from './views.ts';
import type { WebhooksMessage } from './messages.ts';
import type { Mode } from '../../runtime/types.ts';

/**
 * One account's webhooks: the single writer of its endpoints in this process, and the reader of
 * its events. Delivery itself is the sender's (actors/webhooks/sender.ts).
 */
export interface WebhooksState {
  accountId: string;
}

const READS = new Set<WebhooksMessage['type']>([
  'list_events',
  'get_event',
  'list_endpoints',
  'get_endpoint',
  'list_deliveries',
]);

export function webhooksBehaviour(deps: Deps & { secrets: SecretBox; allowPrivate: boolean }): Behaviour<WebhooksMessage, WebhooksState> {
  const endpoints = createWebhookEndpoints(deps);
  const events = () => createEventRepository(deps.pool);

  async function testPing(accountId: string, mode: Mode, onlyEndpointId?: string) {
    const now = deps.realClock.now();
    const row = await withTransaction(deps.pool, (client) =>
      recordEvent(client, { accountId, mode, type: 'test.ping', data: { object: 'ping', sent_at: now.toISOString() }, now, onlyEndpointId }),
    );
    return eventView(row);
  }

  async function receive(state: WebhooksState, msg: WebhooksMessage): Promise<{ state: WebhooksState; reply: unknown }> {
    const id = state.accountId;
    const done = (reply: unknown) => ({ state, reply });
    switch (msg.type) {
      case 'list_events': {
        const afterSeq = await pageStart(deps.pool, msg.page, { table: 'events', accountId: id, mode: msg.mode });
        const rows = await events().list({ accountId: id, mode: msg.mode, type: msg.eventType, order: msg.order, afterSeq, limit: msg.page.limit + 1 });
        return done(toList(rows, msg.page.limit, eventView));
      }
      case 'get_event': {
        const row = await events().get(id, msg.mode, msg.id);
        if (!row) throw new Refusal('event_not_found');
        return done(eventView(row));
      }
      case 'create_endpoint':
        return done(await endpoints.create(id, msg.input));
      case 'list_endpoints':
        return done(await endpoints.list(id));
      case 'get_endpoint':
        return done(await endpoints.get(id, msg.id));
      case 'update_endpoint':
        return done(await endpoints.update(id, msg.id, msg.patch));
      case 'delete_endpoint':
        return done(await endpoints.remove(id, msg.id));
      case 'roll_secret':
        return done(await endpoints.rollSecret(id, msg.id, msg.graceSeconds));
      case 'list_deliveries':
        return done(await endpoints.deliveries(id, msg.id, msg.limit, msg.startingAfter));
      case 'resend_delivery':
        return done(await endpoints.resend(id, msg.id, msg.deliveryId));
      case 'send_test_event':
        // A `test.ping` goes to every endpoint of the mode that takes all types (receivers ignore types they do not know).
        return done(await testPing(id, msg.mode));
      case 'send_endpoint_test_event': {
        const endpoint = await endpoints.get(id, msg.id);
        return done(await testPing(id, endpoint.mode, endpoint.id));
      }
      default: {
        const unhandled: never = msg;
        throw new Error(`unhandled webhooks message ${(unhandled as { type: string }).type}`);
      }
    }
  }

  return { kind: 'webhooks', load: async (accountId) => ({ accountId }), isRead: (msg) => READS.has(msg.type), receive };
}
