/**
 * The client's `fetch`: sends a request and retries it where that is safe. Browser-safe (no Node
 * modules), so the chat entry uses it too.
 *
 * Safe to retry: GET, HEAD and DELETE, and any request carrying an `Idempotency-Key` (the API
 * answers a retry with the first result). Retried: a network error (no answer), `503` (the
 * service's database away: it carries Retry-After), and `429` with a Retry-After of at most 60
 * seconds (a longer one is thrown as RateLimitError at once: waiting a minute is the most a call
 * should block). Delays: exponential backoff from 0.5 s, at most 5 s, with jitter (half to all of
 * it), as stripe-node does, and never shorter than the answer's Retry-After.
 */
import { ConnectionError, retryAfterSeconds } from './errors.js';

/** The longest Retry-After the client waits for by itself, as stripe-node (seconds). */
export const MAX_RETRY_AFTER_SECONDS = 60;
const INITIAL_DELAY_SECONDS = 0.5;
const MAX_DELAY_SECONDS = 5;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export interface RetryOptions {
  /** Retries after the first attempt (default 2). */
  maxRetries: number;
  /** The fetch to send with (default globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

/** Whether a request may be sent again without being applied twice. */
export function isSafeToRetry(request: Request): boolean {
  return SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key');
}

/** Backoff before retry number `retry` (1, 2, …), in milliseconds: exponential, capped, with jitter. */
export function backoffMs(retry: number, random = Math.random): number {
  let seconds = Math.min(INITIAL_DELAY_SECONDS * 2 ** (retry - 1), MAX_DELAY_SECONDS);
  seconds *= 0.5 * (1 + random());
  return Math.max(INITIAL_DELAY_SECONDS, seconds) * 1000;
}

/**
 * How long to wait before retrying an answer, in milliseconds, or null when it is not retried:
 * 503 after backoff (at least its Retry-After when that is within the bound), 429 only after a
 * Retry-After within the bound.
 */
export function retryDelayMs(response: Response, retry: number): number | null {
  const after = retryAfterSeconds(response.headers);
  const bounded = after !== undefined && after <= MAX_RETRY_AFTER_SECONDS;
  if (response.status === 429) return bounded ? Math.max(after * 1000, backoffMs(retry)) : null;
  if (response.status === 503) return bounded ? Math.max(after * 1000, backoffMs(retry)) : backoffMs(retry);
  return null;
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A fetch that retries what is safe to retry; a network failure it gives up on is a ConnectionError. */
export function retryingFetch(options: RetryOptions): (request: Request) => Promise<Response> {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  return async (request) => {
    const safe = isSafeToRetry(request);
    for (let retry = 0; ; retry++) {
      const canRetry = safe && retry < options.maxRetries;
      let response: Response;
      try {
        // A clone each time: the request's body can be read once; every attempt sends the same one.
        response = await send(request.clone());
      } catch (err) {
        if (request.signal?.aborted) throw err;
        if (canRetry) {
          await sleep(backoffMs(retry + 1), request.signal);
          continue;
        }
        throw new ConnectionError({ type: 'connection_error', code: 'connection_failed', message: `${request.method} ${new URL(request.url).pathname}: no answer (${(err as Error)?.message ?? err})`, cause: err });
      }
      const delay = canRetry ? retryDelayMs(response, retry + 1) : null;
      if (delay === null) return response;
      // Not awaited: a body shared with a clone is only cancelled once every branch is.
      void response.body?.cancel().catch(() => {});
      await sleep(delay, request.signal);
    }
  };
}
