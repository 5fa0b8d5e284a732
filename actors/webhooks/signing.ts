/**
 * Standard Webhooks signing (spec: Events, "Delivery headers and signature"). Pure: no clock,
 * no I/O; the caller passes the timestamp so a retry can be signed afresh and tests are exact.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Mode } from '../../runtime/types.ts';

export const SECRET_PREFIX = 'whsec_';

/**
 * Random key bytes in a new secret. 24 bytes (192 bits) is what the reference implementations
 * issue and encodes to 32 base64 characters without padding, which copy-pastes cleanly.
 */
const SECRET_BYTES = 24;

/** Sent on every delivery; deliberately brand-free because resellers white-label the service. */
export const WEBHOOK_USER_AGENT = 'webhooks/1';

/** A new signing secret: `whsec_` + base64 of random bytes. Shown once, stored by the caller. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a secret: the base64 text after `whsec_`, decoded. */
function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  // Buffer.from skips characters it cannot decode instead of failing; an empty key would still
  // "sign", so refuse it rather than send signatures nobody can verify.
  if (key.length === 0) throw new Error('signing secret has no key bytes');
  return key;
}

/**
 * `v1,<base64 HMAC-SHA256 of "<msgId>.<timestampSeconds>.<body>">` keyed by the decoded secret.
 * `body` must be the exact string sent on the wire (signed as UTF-8).
 */
export function signatureFor(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  if (!Number.isSafeInteger(timestampSeconds)) throw new RangeError('timestampSeconds must be an integer');
  const mac = createHmac('sha256', secretKey(secret)).update(`${msgId}.${timestampSeconds}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

/**
 * The `webhook-signature` value: one `v1,…` entry per secret, space-separated, current secret
 * first. During a roll's grace window the caller passes both, and a verifier holding either
 * secret accepts.
 */
export function signatureHeader(secrets: readonly string[], msgId: string, timestampSeconds: number, body: string): string {
  if (secrets.length === 0) throw new Error('at least one signing secret is required');
  return secrets.map((secret) => signatureFor(secret, msgId, timestampSeconds, body)).join(' ');
}

/** What one delivery attempt is signed over and labelled with. */
export interface WebhookHeaderInput {
  /** The event id (`evt_…`), sent as `webhook-id`. */
  id: string;
  /** Unix time in seconds of this attempt. */
  timestampSeconds: number;
  /** The exact JSON text that will be POSTed. */
  body: string;
  /** Signing secrets, current first; two during a roll's grace window. */
  secrets: readonly string[];
  eventType: string;
  mode: Mode;
}

/** Every header of a delivery attempt (header names lower-case, as Node sends them). */
export function webhookHeaders(input: WebhookHeaderInput): Record<string, string> {
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': signatureHeader(input.secrets, input.id, input.timestampSeconds, input.body),
    'x-svc-event-type': input.eventType,
    'x-svc-mode': input.mode,
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
  };
}
