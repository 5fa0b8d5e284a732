/**
 * Value lists the server owns, from its own pure modules (bundled into the pages that use them).
 */
export { SCOPES as KEY_SCOPES, ROTATION_GRACE_MS as KEY_ROTATION_GRACE_MS } from '../../actors/account/api-key-rules.ts';
export { EVENT_TYPES, MAX_ROLL_GRACE_SECONDS } from '../../actors/webhooks/event-types.ts';
