/**
 * Value lists the server owns, copied so the browser bundle does not carry server modules;
 * test/unit/console-lists.test.ts fails when they drift from the server's.
 */

/** actors/account/api-key-rules.ts SCOPES. */
export const KEY_SCOPES = [
  'customers:read',
  'customers:write',
  'calls:read',
  'calls:write',
  'chat:write',
  'numbers:read',
  'numbers:order',
  'brand:read',
  'brand:write',
  'events:read',
  'billing:read',
  'sites:read',
  'sites:order',
] as const;

/** actors/webhooks/endpoints.ts EVENT_TYPES. */
export const EVENT_TYPES = [
  'call.completed',
  'appointment.booked',
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

/** actors/webhooks/endpoints.ts MAX_ROLL_GRACE_SECONDS: a rolled secret keeps signing up to a week. */
export const MAX_ROLL_GRACE_SECONDS = 7 * 86_400;

/** actors/account/api-key-rules.ts ROTATION_GRACE_MS: a rotated key's old secret works 24 hours. */
export const KEY_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;
