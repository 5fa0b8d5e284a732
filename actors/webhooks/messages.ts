import type { Mode } from '../../runtime/types.ts';
import type { List, Page } from '../shared/list.ts';
import type { WebhookEndpoints } from './endpoints.ts';
import type { eventView } from './views.ts';

type R<K extends keyof WebhookEndpoints> = Awaited<ReturnType<WebhookEndpoints[K]>>;

/** The webhooks actor of one account: its endpoints (console) and its events (API). */
export type WebhooksMessage =
  | { type: 'list_events'; mode: Mode; eventType: string | null; order: 'asc' | 'desc'; page: Page }
  | { type: 'get_event'; mode: Mode; id: string }
  | { type: 'create_endpoint'; input: { url: string; mode: Mode; event_types?: string[]; description?: string | null; enabled?: boolean } }
  | { type: 'list_endpoints' }
  | { type: 'get_endpoint'; id: string }
  | { type: 'update_endpoint'; id: string; patch: { url?: string; mode?: Mode; event_types?: string[]; description?: string | null; enabled?: boolean } }
  | { type: 'delete_endpoint'; id: string }
  | { type: 'roll_secret'; id: string; graceSeconds: number }
  | { type: 'list_deliveries'; id: string; limit: number; startingAfter?: string }
  | { type: 'resend_delivery'; id: string; deliveryId: string }
  | { type: 'send_test_event'; mode: Mode }
  /** A `test.ping` for one endpoint only (in its mode, whatever types it chose). */
  | { type: 'send_endpoint_test_event'; id: string };

export interface WebhooksReplies {
  list_events: List<ReturnType<typeof eventView>>;
  get_event: ReturnType<typeof eventView>;
  create_endpoint: R<'create'>;
  list_endpoints: R<'list'>;
  get_endpoint: R<'get'>;
  update_endpoint: R<'update'>;
  delete_endpoint: R<'remove'>;
  roll_secret: R<'rollSecret'>;
  list_deliveries: R<'deliveries'>;
  resend_delivery: R<'resend'>;
  send_test_event: ReturnType<typeof eventView>;
  send_endpoint_test_event: ReturnType<typeof eventView>;
}
