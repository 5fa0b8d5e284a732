/**
 * A `fetch` for addresses a customer typed (a CalDAV calendar's), built on node:http so that
 * every connection goes through the address guard (runtime/address-guard.ts): IP literals are
 * checked before connecting and names through `guardedLookup` on the socket itself, so neither a
 * name resolving to 127.0.0.1 / 169.254.169.254 / 10.x nor a redirect to one is reached. Every
 * redirect is followed by hand and checked again; the Authorization header is not carried to
 * another origin. Bounded: one deadline for the whole exchange (redirects and body included) and
 * at most `maxBytes` of body read (more fails the request with `ERESPONSETOOLARGE`).
 *
 * Refusals fail like a network error (a rejected promise) whose `code` is `EFORBIDDENADDRESS`.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { bareHost, forbiddenAddressError, guardedLookup, isForbiddenAddress } from './address-guard.ts';

export interface GuardedFetchOptions {
  /**
   * Loopback and private addresses allowed (SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: development and
   * tests only); a function decides per origin (tests of a redirect to a refused address).
   */
  allowPrivate: boolean | ((origin: string) => boolean);
  /** The whole exchange, redirects and body included, ms. */
  timeoutMs: number;
  /** The longest body read; a longer one fails the request. */
  maxBytes: number;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([204, 205, 304]);

function fail(message: string, code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

export function guardedFetch(opts: GuardedFetchOptions): typeof fetch {
  const maxRedirects = opts.maxRedirects ?? 5;
  return async (input, init = {}) => {
    const deadline = AbortSignal.timeout(opts.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    let url = new URL(input instanceof Request ? input.url : String(input));
    let method = (init.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const headers = new Headers(init.headers);
    if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'identity');
    let body = bodyOf(init.body);
    for (let hop = 0; ; hop++) {
      const { response, location } = await exchange(url, method, headers, body, signal, opts);
      if (!REDIRECTS.has(response.status) || !location || init.redirect === 'manual') return response;
      if (init.redirect === 'error') throw new TypeError('redirect refused');
      if (hop >= maxRedirects) throw new TypeError(`more than ${maxRedirects} redirects`);
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        headers.delete('authorization');
        headers.delete('cookie');
      }
      if (response.status === 303 ? method !== 'HEAD' : (response.status === 301 || response.status === 302) && method === 'POST') {
        method = 'GET';
        body = undefined;
        headers.delete('content-type');
      }
      url = next;
    }
  };
}

function bodyOf(body: RequestInit['body']): Buffer | undefined {
  if (body == null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('only string and byte bodies are sent');
}

/** One request; its whole body read (bounded). */
function exchange(
  url: URL,
  method: string,
  headers: Headers,
  body: Buffer | undefined,
  signal: AbortSignal,
  opts: GuardedFetchOptions,
): Promise<{ response: Response; location: string | null }> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new TypeError(`unsupported scheme ${url.protocol}`));
  // Node connects to IP literals without calling `lookup`: they are checked here.
  const allowPrivate = typeof opts.allowPrivate === 'function' ? opts.allowPrivate(url.origin) : opts.allowPrivate;
  const host = bareHost(url.hostname);
  if (!allowPrivate && net.isIP(host) !== 0 && isForbiddenAddress(host)) return Promise.reject(forbiddenAddressError(host, host));
  if (signal.aborted) return Promise.reject(fail('the request timed out', 'ETIMEDOUT'));

  return new Promise((resolve, reject) => {
    let req: http.ClientRequest;
    const out: Record<string, string> = {};
    headers.forEach((value, name) => (out[name] = value));
    if (body) out['content-length'] = String(body.length);
    const onAbort = () => {
      reject(fail('the request timed out', 'ETIMEDOUT'));
      req?.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const done = () => signal.removeEventListener('abort', onAbort);
    try {
      req = (url.protocol === 'https:' ? https.request : http.request)(url, { method, headers: out, lookup: guardedLookup(allowPrivate), agent: false });
    } catch (err) {
      done();
      return reject(err);
    }
    req.on('error', (err) => (done(), reject(err)));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > opts.maxBytes) {
          done();
          reject(fail(`the answer was longer than ${opts.maxBytes} bytes`, 'ERESPONSETOOLARGE'));
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (err) => (done(), reject(err)));
      res.on('close', () => (done(), reject(fail('the connection closed before the answer ended', 'ECONNRESET'))));
      res.on('end', () => {
        done();
        if (status < 200 || status > 599) return reject(new TypeError(`unusable status ${status}`));
        const resHeaders = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
          try {
            resHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          } catch {
            // a header fetch would not accept either: left out
          }
        }
        const payload = NULL_BODY.has(status) || method === 'HEAD' ? null : Buffer.concat(chunks);
        resolve({ response: new Response(payload, { status, statusText: res.statusMessage ?? '', headers: resHeaders }), location: res.headers.location ?? null });
      });
    });
    req.end(body);
  });
}
