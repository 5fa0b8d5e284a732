/**
 * Research of a customer's existing website: the fetch (through the webhooks' SSRF guard,
 * bounded in bytes, time and redirects), whose page `readSite` (read-site.ts) reads. Research is
 * a help, never a requirement: every failure is an answer (`ok: false` with a reason for the
 * logs), never a throw, and the build goes on from the brief alone.
 */
import http from 'node:http';
import https from 'node:https';
import type { Logger } from '../../runtime/logger.ts';
import { checkEndpointUrl, guardedLookup } from '../webhooks/address-guard.ts';
import type { SiteResearch } from './site-facts.ts';
import { readSite } from './read-site.ts';

/** Whole research, every redirect and DNS lookup included, ends after this long. */
export const RESEARCH_TIMEOUT_MS = 5_000;
/** Bytes of a page read; the rest is never downloaded (the head and the top carry what we read). */
export const RESEARCH_MAX_BYTES = 1024 * 1024;
/** Redirects followed, each checked by the guard like the first address. */
export const RESEARCH_MAX_REDIRECTS = 3;

/** Options of `researchSite`. */
export interface ResearchOptions {
  /**
   * Whether private, loopback and link-local addresses may be fetched: the webhooks' setting
   * (SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS, local development and tests only). A function decides
   * per origin ("http://127.0.0.1:8080"), so a test can allow its own server and still see a
   * redirect elsewhere refused.
   */
  allowPrivate: boolean | ((origin: string) => boolean);
  /** The customer's country, for numbers written nationally. */
  country?: string;
  /** The customer's language, sent as Accept-Language so a multilingual site answers in it. */
  locale?: string;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  log?: Logger;
}

/** What research produced: the findings, or why there are none (for the build's log). */
export type ResearchOutcome =
  | { ok: true; research: SiteResearch; finalUrl: string; bytes: number; truncated: boolean }
  | { ok: false; reason: string };

/** One fetched response, before reading. */
type Hop = { kind: 'redirect'; location: string } | { kind: 'page'; body: Buffer; truncated: boolean; contentType: string };

/**
 * Fetches `url` (http or https; a redirect at most `maxRedirects` times, each new address
 * checked again) and reads it with `readSite`. Every address passes the webhooks' guard twice,
 * as a webhook's does: `checkEndpointUrl` before the request (scheme, credentials, IP literals,
 * names resolving to forbidden addresses) and `guardedLookup` on the connection itself (a name
 * rebound since). Bounded: one deadline for everything (`timeoutMs`), and at most `maxBytes` of
 * the page read before the connection is dropped (what was read is used). Never throws.
 */
export async function researchSite(url: string, opts: ResearchOptions): Promise<ResearchOutcome> {
  const timeoutMs = opts.timeoutMs ?? RESEARCH_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? RESEARCH_MAX_BYTES;
  const maxRedirects = opts.maxRedirects ?? RESEARCH_MAX_REDIRECTS;
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<ResearchOutcome>((resolve) => {
    timer = setTimeout(() => {
      abort.abort();
      resolve({ ok: false, reason: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);
  });
  const work = (async (): Promise<ResearchOutcome> => {
    let current = url;
    for (let redirects = 0; ; redirects++) {
      let parsed: URL;
      try {
        parsed = new URL(current);
      } catch {
        return { ok: false, reason: 'not a valid URL' };
      }
      const allowPrivate = typeof opts.allowPrivate === 'function' ? opts.allowPrivate(parsed.origin) : opts.allowPrivate;
      // Research reads http sites too (many small businesses have no TLS): the test-mode scheme rule.
      const check = await checkEndpointUrl(current, { mode: 'test', allowPrivate });
      if (abort.signal.aborted) return { ok: false, reason: 'aborted' };
      if (!check.ok) return { ok: false, reason: `${redirects ? 'redirect refused' : 'refused'}: ${check.reason}` };
      const hop = await fetchOnce(parsed, { allowPrivate, maxBytes, signal: abort.signal, locale: opts.locale });
      if ('error' in hop) return { ok: false, reason: hop.error };
      if (hop.kind === 'redirect') {
        if (redirects >= maxRedirects) return { ok: false, reason: `more than ${maxRedirects} redirects` };
        try {
          current = new URL(hop.location, parsed).href;
        } catch {
          return { ok: false, reason: 'redirect to an invalid URL' };
        }
        continue;
      }
      if (!/^(?:text\/html|application\/xhtml\+xml)\b/i.test(hop.contentType) && hop.contentType !== '') {
        return { ok: false, reason: `not an HTML page (${hop.contentType.split(';')[0]})` };
      }
      const html = decode(hop.body, hop.contentType);
      return { ok: true, research: readSite(html, current, { country: opts.country }), finalUrl: current, bytes: hop.body.length, truncated: hop.truncated };
    }
  })().catch((err: unknown): ResearchOutcome => ({ ok: false, reason: err instanceof Error ? err.message : String(err) }));

  const outcome = await Promise.race([work, deadline]);
  clearTimeout(timer);
  abort.abort();
  // Only the outcome is logged, never the address itself (a customer's URL is theirs).
  if (outcome.ok) opts.log?.debug({ bytes: outcome.bytes, truncated: outcome.truncated, services: outcome.research.services.length }, 'site research read');
  else opts.log?.info({ reason: outcome.reason }, 'site research found nothing');
  return outcome;
}

/** One GET: a redirect's location, or the body up to `maxBytes`. Fresh socket every time (`agent: false`). */
function fetchOnce(url: URL, o: { allowPrivate: boolean; maxBytes: number; signal: AbortSignal; locale?: string }): Promise<Hop | { error: string }> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (v: Hop | { error: string }) => {
      if (settled) return;
      settled = true;
      req.destroy();
      resolve(v);
    };
    const get = url.protocol === 'https:' ? https.get : http.get;
    const req = get(url, {
      headers: {
        accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
        'accept-encoding': 'identity',
        ...(o.locale ? { 'accept-language': `${o.locale},${o.locale.split('-')[0]};q=0.8` } : {}),
        'user-agent': 'Mozilla/5.0 (compatible; SiteResearch/1.0)',
      },
      lookup: guardedLookup(o.allowPrivate),
      agent: false,
      signal: o.signal,
    });
    req.on('error', (err) => finish({ error: err.name === 'AbortError' ? 'aborted' : err.message }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && status !== 304 && res.headers.location) return finish({ kind: 'redirect', location: res.headers.location });
      if (status < 200 || status > 299) return finish({ error: `the site answered ${status}` });
      const contentType = String(res.headers['content-type'] ?? '');
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        const room = o.maxBytes - bytes;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        bytes += Math.min(chunk.length, room);
        // Enough read: stop paying for the rest.
        if (bytes >= o.maxBytes) finish({ kind: 'page', body: Buffer.concat(chunks), truncated: true, contentType });
      });
      res.on('end', () => finish({ kind: 'page', body: Buffer.concat(chunks), truncated: false, contentType }));
      res.on('error', (err) => finish({ error: err.message }));
    });
  });
}

/** The page's text in the charset its header or its `<meta charset>` names; UTF-8 otherwise. */
function decode(body: Buffer, contentType: string): string {
  const declared =
    /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1] ??
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 2048).toString('latin1'))?.[1] ??
    'utf-8';
  try {
    return new TextDecoder(declared).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
