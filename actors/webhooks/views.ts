import type { EventRow } from '../../db/events.ts';
import type { AttemptRow, DeliveryRow, EndpointRow } from '../../db/webhooks.ts';
import { iso } from '../../runtime/types.ts';

/** The event envelope: the same object for webhooks and GET /v1/events. */
export function eventView(e: EventRow) {
  return { id: e.id, object: 'event' as const, type: e.type, mode: e.mode, created_at: iso(e.created_at), data: e.data };
}

export function endpointView(e: EndpointRow, secret?: string) {
  return {
    object: 'webhook_endpoint' as const,
    id: e.id,
    account_id: e.account_id,
    mode: e.mode,
    url: e.url,
    description: e.description,
    event_types: e.event_types,
    enabled: e.enabled,
    previous_secret_expires_at: iso(e.previous_secret_expires_at),
    created_at: iso(e.created_at),
    ...(secret === undefined ? {} : { secret }),
  };
}

export function deliveryView(d: DeliveryRow & { event_type?: string; attempt_log?: AttemptRow[] }) {
  return {
    object: 'webhook_delivery' as const,
    id: d.id,
    event_id: d.event_id,
    event_type: d.event_type ?? null,
    endpoint_id: d.endpoint_id,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' || d.status === 'failed' ? iso(d.next_attempt_at) : null,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    attempt_log: (d.attempt_log ?? []).map((a) => ({
      attempt: a.attempt,
      attempted_at: typeof a.attempted_at === 'string' ? a.attempted_at : iso(a.attempted_at),
      status_code: a.status_code,
      duration_ms: a.duration_ms,
      error: a.error,
      response_excerpt: a.response_excerpt ?? null,
    })),
    created_at: iso(d.created_at),
  };
}
