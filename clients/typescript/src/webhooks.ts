/**
 * Webhook verification by the Standard Webhooks rules, as the service signs
 * (docs/api.md "Webhooks"): `webhook-signature` holds one or more space-separated `v1,<base64
 * HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">` keyed by the base64 bytes after
 * `whsec_`; during a secret roll it holds two, and either matching is enough. A timestamp more
 * than five minutes from now, either way, is refused (a replayed delivery). Node only (node:crypto).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { operations } from './schema.js';

/** How far `webhook-timestamp` may be from now, in seconds (Standard Webhooks: five minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/**
 * What `verify` answers: the event union by `type`, each with its `data` (as `GET /v1/events/{id}`
 * answers). An event of a type added after this client was generated is answered as sent, never
 * refused (as stripe-node does): keep a `default` branch in a `switch (event.type)`.
 */
export type WebhookEvent = operations['getEvent']['responses'][200]['content']['application/json'];

/** A delivery that is not authentic (signature), too old or too new (timestamp), or not JSON. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** Headers as a receiver has them: fetch's Headers, or Node's `req.headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const entry = Object.entries(headers as Record<string, string | string[] | undefined>).find(([k]) => k.toLowerCase() === name);
  const value = entry?.[1];
  return Array.isArray(value) ? value[0] : value;
}

function keyOf(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('the signing secret has no key bytes (expected whsec_ followed by base64)');
  return key;
}

export interface VerifyOptions {
  /** The time to check the timestamp against (default: now). */
  now?: Date;
  /** Allowed distance of the timestamp from `now`, seconds (default 300). */
  toleranceSeconds?: number;
}

export class Webhooks {
  /**
   * Checks a delivery and answers its event. `rawBody` must be the exact bytes received (not
   * re-serialised JSON). `secret` is the endpoint's `whsec_…`; during a roll pass either secret,
   * or both as an array. Throws WebhookVerificationError unless one signature matches and the
   * timestamp is within five minutes. An event of an unknown type is answered as sent.
   */
  verify(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string | readonly string[], options: VerifyOptions = {}): WebhookEvent {
    const id = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    const signatures = header(headers, 'webhook-signature');
    if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
    if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a whole number of seconds');
    const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
    const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
    if (Math.abs(now - Number(timestamp)) > tolerance) throw new WebhookVerificationError('webhook-timestamp is too far from now (a replay, or a clock that is off)');
    const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
    const given = signatures
      .split(' ')
      .filter((s) => s.startsWith('v1,'))
      .map((s) => Buffer.from(s.slice(3), 'base64'));
    const matches = [secret]
      .flat()
      .map((s) => createHmac('sha256', keyOf(s)).update(`${id}.${timestamp}.`).update(body).digest())
      .some((expected) => given.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected)));
    if (!matches) throw new WebhookVerificationError('no signature matches the secret');
    try {
      return JSON.parse(body.toString('utf8')) as WebhookEvent;
    } catch {
      throw new WebhookVerificationError('the body is not JSON');
    }
  }
}
