/**
 * One webhook delivery attempt, and the retry rule that decides what happens after it
 * (spec: Events, "Responding and retries").
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../runtime/logger.ts';
import { bareHost, forbiddenAddressError, guardedLookup, isForbiddenAddress } from './address-guard.ts';

/** Default bound on one attempt: the receiver must answer 2xx within 10 seconds. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Response bytes read before the connection is dropped; the body is never used. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Wait before attempt n+2 after attempt n+1 failed: 30 s, 2 min, 10 min, 1 h, 6 h. */
export const RETRY_SCHEDULE_MS = [30_000, 120_000, 600_000, 3_600_000, 21_600_000] as const;

/** Attempts in all, the first included; after the last failure the delivery is dead. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;

/** What happens to a delivery after an attempt. */
export type NextAttempt =
  | { state: 'succeeded' }
  | { state: 'dead'; reason: 'gone' | 'exhausted' }
  | { state: 'retry'; at: Date };

/**
 * The rule after attempt number `attemptsMade` (1-based, the attempt just made) answered
 * `statusCode` (null: no answer). 2xx succeeds; 410 is the receiver saying "stop" and kills the
 * delivery at once; everything else, 404 and 3xx included, is retried on the schedule until
 * MAX_ATTEMPTS have failed.
 */
export function nextAttempt(attemptsMade: number, statusCode: number | null, now: Date): NextAttempt {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 1) throw new RangeError('attemptsMade must be a positive integer');
  if (statusCode !== null && statusCode >= 200 && statusCode <= 299) return { state: 'succeeded' };
  if (statusCode === 410) return { state: 'dead', reason: 'gone' };
  const waitMs = RETRY_SCHEDULE_MS[attemptsMade - 1];
  if (attemptsMade >= MAX_ATTEMPTS || waitMs === undefined) return { state: 'dead', reason: 'exhausted' };
  return { state: 'retry', at: new Date(now.getTime() + waitMs) };
}

/** One attempt's request. */
export interface DeliverOnceInput {
  url: string;
  /** The exact signed JSON text. */
  body: string;
  /** From `webhookHeaders`; content-length is added here. */
  headers: Record<string, string>;
  /** Bound on connect + response headers + body read; default DELIVERY_TIMEOUT_MS. */
  timeoutMs?: number;
  /** SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: local development and tests only. */
  allowPrivate: boolean;
  log?: Logger;
}

/**
 * What an attempt produced, as recorded for the console. Exactly one of `statusCode` and
 * `error` is set: a response cut short (timeout, reset) counts as no answer.
 */
export interface DeliveryResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The start of the receiver's answer (`responseExcerpt`), for the console's delivery log; null without one. */
  responseExcerpt: string | null;
}

/** Characters of a receiver's answer kept for the delivery log. */
export const RESPONSE_EXCERPT_CHARS = 500;

/**
 * The start of a response body as text a person can read and PostgreSQL can store: decoded as
 * UTF-8, control characters other than line breaks and tabs made spaces, cut to
 * RESPONSE_EXCERPT_CHARS. Null for an empty body. Pure.
 */
export function responseExcerpt(bytes: Buffer): string | null {
  const text = bytes.toString('utf8').replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, ' ');
  const cut = [...text].slice(0, RESPONSE_EXCERPT_CHARS).join('');
  return cut.length === 0 ? null : cut;
}

/**
 * POSTs `body` to `url` once. Never throws: DNS failures, refused connections, TLS errors,
 * forbidden addresses and timeouts come back as `error`. Redirects are not followed (a 3xx is
 * returned as its status). Every socket is fresh (`agent: false`): a pooled socket opened under
 * a different allowPrivate policy, or to a since-rebound name, can never be reused.
 */
export function deliverOnce(input: DeliverOnceInput): Promise<DeliveryResult> {
  const started = performance.now();
  const timeoutMs = input.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    let timer: NodeJS.Timeout | undefined;
    // The first bytes of the answer, for the delivery log (a few more than the excerpt keeps, so a multi-byte character is whole).
    const head: Buffer[] = [];
    let headBytes = 0;
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req?.destroy();
      const excerpt = statusCode === null ? null : responseExcerpt(Buffer.concat(head).subarray(0, RESPONSE_EXCERPT_CHARS * 4));
      const result: DeliveryResult = { statusCode, durationMs: Math.round(performance.now() - started), error, responseExcerpt: excerpt };
      input.log?.debug(result, 'webhook attempt');
      resolve(result);
    };

    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      return finish(null, 'invalid URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return finish(null, `unsupported scheme ${url.protocol}`);
    // Node connects to IP literals without calling `lookup`, so they are checked here.
    const host = bareHost(url.hostname);
    if (!input.allowPrivate && net.isIP(host) !== 0 && isForbiddenAddress(host)) {
      return finish(null, forbiddenAddressError(host, host).message);
    }

    timer = setTimeout(() => finish(null, `timeout after ${timeoutMs} ms`), timeoutMs);
    const payload = Buffer.from(input.body, 'utf8');
    const send = url.protocol === 'https:' ? https.request : http.request;
    try {
      req = send(url, {
        method: 'POST',
        headers: { ...input.headers, 'content-length': String(payload.length) },
        lookup: guardedLookup(input.allowPrivate),
        agent: false,
      });
    } catch (err) {
      // request() throws synchronously on invalid header values.
      return finish(null, describeError(err));
    }
    req.on('error', (err) => finish(null, describeError(err)));
    req.on('response', (res) => {
      const statusCode = res.statusCode ?? null;
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (headBytes < RESPONSE_EXCERPT_CHARS * 4) {
          head.push(chunk);
          headBytes += chunk.length;
        }
        bytes += chunk.length;
        // Enough read to know the receiver answered; stop paying for the rest.
        if (bytes >= MAX_RESPONSE_BYTES) finish(statusCode, null);
      });
      res.on('end', () => finish(statusCode, null));
      res.on('error', (err) => finish(null, describeError(err)));
      res.on('close', () => finish(null, 'connection closed before the response ended'));
    });
    req.end(payload);
  });
}

/** One line for the delivery record; Node's multi-address connect failures are aggregates. */
function describeError(err: unknown): string {
  if (err instanceof AggregateError) {
    const parts = err.errors.map((e) => describeError(e));
    const code = (err as NodeJS.ErrnoException).code;
    return parts.length > 0 ? parts.join('; ') : (code ?? 'connection failed');
  }
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = err.message || 'request failed';
    return code && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(err);
}
