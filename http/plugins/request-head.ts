import type { AnyApp } from '../routes/app-type.ts';
import { ApiError } from '../errors.ts';

/**
 * The longest request target (path and query string) answered, in characters. RFC 9112 §3
 * recommends supporting at least 8,000; longer targets up to node's 16 KB header limit are
 * `414 uri_too_long` here (beyond it, `431 headers_too_large` from the HTTP parser).
 */
export const MAX_TARGET_LENGTH = 8_192;

/** How many `Host` header lines a request carries, as sent (node keeps only the first in `headers`). */
export function hostLines(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === 'host') count++;
  return count;
}

/**
 * Checks of the request line and headers, before authentication and any route: a target over
 * MAX_TARGET_LENGTH is `414 uri_too_long`; more than one `Host` is `400 malformed_request`
 * (RFC 9112 §3.2: a server must answer 400 to a request with more than one Host line), since the
 * first one winning would let a proxy and this service disagree about which site is asked for.
 */
export function installRequestHead(app: AnyApp): void {
  // The callback form: no promise and no microtask per request.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.url !== undefined && request.raw.url.length > MAX_TARGET_LENGTH) {
      return done(new ApiError('uri_too_long'));
    }
    if (hostLines(request.raw.rawHeaders) > 1) {
      return done(new ApiError('malformed_request', 'The request has more than one Host header.'));
    }
    done();
  });
}
