/**
 * The reseller console's web app (console/, built by Vite to console/dist): `/console` and every
 * client-side path under it answer index.html (`no-cache`, so a new build is picked up at once);
 * `/console/assets/*` the built files (hashed names: cached for a year, immutable). `/console/api/*`
 * paths no route claims answer 404 in the error shape, never the page. The files are looked up by
 * exact name in the list of what the build wrote, so no path (encoded or not) reaches anything else.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './app-type.ts';
import { ApiError } from '../errors.ts';

export const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist/', import.meta.url));

/**
 * The page's policy: scripts only from the service (no inline script at all), styles from the
 * service plus the one <style> react-aria adds (touch handling), which carries this response's
 * nonce (it reads it from the `csp-nonce` meta element); data only from the service; images also
 * from https (the brand's logo in the brand preview); never framed.
 */
export function consoleCsp(nonce: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data: https:",
    "media-src 'self'",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const PAGE_HEADERS = {
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};
/** Built file names: Vite's `name-hash.ext`. */
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;
const COMPRESSIBLE = new Set(['.js', '.css', '.svg', '.json']);

interface Asset {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
}

interface Build {
  /** index.html's mtime: a new build replaces what is cached. */
  stamp: number;
  index: string;
  /** What the build wrote into assets/, by exact file name (read when first asked for). */
  names: Set<string>;
  assets: Map<string, Asset>;
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Console not built</title></head>
<body><main><h1>The console is not built</h1>
<p>This copy of the service has no built console (console/dist is missing). <code>npm start</code> builds it before starting;
to build it by hand run <code>node --import tsx app/console-build.ts</code> in the service's folder, then reload this page.</p></main></body></html>
`;

export interface ConsoleAppOptions {
  /** The built console (tests point it elsewhere). */
  dist?: string;
}

export function registerConsoleApp(app: App, opts: ConsoleAppOptions = {}): void {
  const dist = opts.dist ?? CONSOLE_DIST;
  let build: Build | null = null;

  /** The current build, re-read when index.html changed; null when there is none. */
  function current(): Build | null {
    let stamp: number;
    try {
      stamp = fs.statSync(path.join(dist, 'index.html')).mtimeMs;
    } catch {
      build = null;
      return null;
    }
    if (build?.stamp === stamp) return build;
    try {
      const index = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
      let names: string[] = [];
      try {
        names = fs.readdirSync(path.join(dist, 'assets'), { withFileTypes: true }).filter((e) => e.isFile() && ASSET_NAME.test(e.name)).map((e) => e.name);
      } catch {
        /* a build without assets */
      }
      build = { stamp, index, names: new Set(names), assets: new Map() };
      return build;
    } catch {
      build = null;
      return null;
    }
  }

  function asset(b: Build, name: string): Asset | null {
    if (!ASSET_NAME.test(name) || !b.names.has(name)) return null;
    const cached = b.assets.get(name);
    if (cached) return cached;
    const ext = path.extname(name);
    let body: Buffer;
    try {
      body = fs.readFileSync(path.join(dist, 'assets', name));
    } catch {
      return null;
    }
    const a: Asset = { body, gzip: COMPRESSIBLE.has(ext) ? zlib.gzipSync(body, { level: 9 }) : null, type: TYPES[ext] ?? 'application/octet-stream' };
    b.assets.set(name, a);
    return a;
  }

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    // `/console//api/x` or `/console/./api/x` is the JSON space spelled otherwise: never the page.
    const rest = ((request.params as { '*'?: string })['*'] ?? '').split('/').filter((s) => s !== '' && s !== '.');
    if (rest[0] === 'api' || rest[0] === 'assets') throw new ApiError('route_not_found', `No such endpoint: ${request.method} ${request.url.split('?')[0]}.`);
    const b = current();
    const nonce = crypto.randomBytes(18).toString('base64');
    reply.headers({ ...PAGE_HEADERS, 'content-security-policy': consoleCsp(nonce), 'cache-control': 'no-cache', 'content-type': 'text/html; charset=utf-8' });
    if (!b) return reply.code(503).send(NOT_BUILT);
    return reply.send(b.index.replace('</head>', `<meta property="csp-nonce" nonce="${nonce}">\n</head>`));
  };
  const hidden = { schema: { hide: true, tags: ['console'] }, config: { auth: 'none' as const } };
  app.get('/console', hidden, page);
  app.get('/console/*', hidden, page);

  app.get('/console/assets/*', hidden, async (request, reply) => {
    const name = (request.params as { '*': string })['*'];
    const b = current();
    const a = b ? asset(b, name) : null;
    if (!a) throw new ApiError('route_not_found', 'No such file of the console.');
    const gzip = a.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
    reply.headers({
      'content-type': a.type,
      'cache-control': 'public, max-age=31536000, immutable',
      vary: 'accept-encoding',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    return reply.send(gzip ? a.gzip : a.body);
  });

  // The JSON routes' space: a path no console route claims is an unknown endpoint, not the page.
  const unknown = async (request: FastifyRequest) => {
    throw new ApiError('route_not_found', `No such endpoint: ${request.method} ${request.url.split('?')[0]}.`);
  };
  for (const url of ['/console/api', '/console/api/*']) {
    app.route({ method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], url, ...hidden, handler: unknown });
  }
}
