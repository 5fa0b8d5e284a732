/*
 * The event types and the roll grace of webhook endpoints: plain values with no imports, so the
 * service (actors/webhooks/endpoints.ts) and the console's pages (console/src) share one list.
 */

/** Every event type the service emits (spec: Events → Types). */
export const EVENT_TYPES = [
  'call.completed',
  'appointment.booked',
  'appointment.updated',
  'appointment.cancelled',
  'customer.ready',
  'balance.low',
  'key.rotated',
  'number.assigned',
  'number.payment_due',
  'number.released',
  'website.ready',
  'website.live',
  'website.failed',
  'website.hosting_due',
  'website.suspended',
] as const;

/** Longest grace a rolled secret keeps signing (spec: up to one week). */
export const MAX_ROLL_GRACE_SECONDS = 7 * 86_400;
