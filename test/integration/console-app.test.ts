/**
 * The console's web app as the service serves it (http/routes/console-app.ts), on a build written
 * here: the page for every client-side path with its security headers, the built files cached for
 * good, nothing else reachable by any spelling of a path, the JSON space answering 404 in the error
 * shape, and a page that says how to build when there is no build.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { installErrorBoundary, frameworkError } from '../../http/plugins/error-boundary.ts';
import { installRequestLog } from '../../http/plugins/request-log.ts';
import { registerConsoleApp } from '../../http/routes/console-app.ts';
import type { App } from '../../http/routes/app-type.ts';
import '../../http/types.ts';

const INDEX = '<!doctype html><html lang="en"><head><title>Console</title><script type="module" src="/console/assets/index-AbC123.js"></script>\n</head><body><div id="root"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;

async function appOn(dist: string) {
  const app = Fastify({ frameworkErrors: frameworkError, routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 } }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  installErrorBoundary(app);
  installRequestLog(app);
  registerConsoleApp(app, { dist });
  await app.ready();
  return app;
}

let root = '';
let dist = '';
test.before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'console-app-'));
  dist = path.join(root, 'dist');
  await fs.mkdir(path.join(dist, 'assets'), { recursive: true });
  await fs.writeFile(path.join(dist, 'index.html'), INDEX);
  await fs.writeFile(path.join(dist, 'assets', 'index-AbC123.js'), SCRIPT);
  await fs.writeFile(path.join(dist, 'assets', 'index-AbC123.css'), 'body{color:red}');
  // Files next to the build that no request may reach.
  await fs.writeFile(path.join(root, 'secret.txt'), 'not for the web');
  await fs.writeFile(path.join(dist, 'stats.json'), '{}');
});
test.after.always(async () => {
  if (root) await fs.rm(root, { recursive: true, force: true });
});

/** The page without the per-answer nonce element. */
const pageOf = (body: string) => body.replace(/<meta property="csp-nonce" nonce="[^"]*">\n/, '');

test('/console and every client-side path answer index.html, not cached, with a CSP without inline scripts and no framing', async (t) => {
  const nonces = new Set<string>();
  const app = await appOn(dist);
  t.teardown(() => app.close());
  for (const url of ['/console', '/console/', '/console/customers', '/console/calls/call_123?mode=test', '/console/accept?token=abc', '/console/a/b/c']) {
    const res = await app.inject({ method: 'GET', url });
    t.is(res.statusCode, 200, url);
    t.is(pageOf(res.body), INDEX, url);
    t.is(res.headers['content-type'], 'text/html; charset=utf-8', url);
    t.is(res.headers['cache-control'], 'no-cache', url);
    const csp = String(res.headers['content-security-policy']);
    t.regex(csp, /script-src 'self'(;|$)/, url);
    t.notRegex(csp, /unsafe-inline|unsafe-eval/, url);
    // The style nonce of the policy is the one the page hands react-aria, fresh for each answer.
    const nonce = /style-src 'self' 'nonce-([A-Za-z0-9+/=]{24})'/.exec(csp)?.[1];
    t.truthy(nonce, csp);
    t.true(res.body.includes(`<meta property="csp-nonce" nonce="${nonce}">`), url);
    t.false(nonces.has(nonce!), 'a nonce is used once');
    nonces.add(nonce!);
    t.regex(csp, /frame-ancestors 'none'/);
    t.regex(csp, /default-src 'self'/);
    t.is(res.headers['x-frame-options'], 'DENY');
    t.is(res.headers['referrer-policy'], 'same-origin');
    t.is(res.headers['x-content-type-options'], 'nosniff');
  }
  const head = await app.inject({ method: 'HEAD', url: '/console/overview' });
  t.is(head.statusCode, 200);
});

test('built files: immutable for a year, the right type, gzip when asked for', async (t) => {
  const app = await appOn(dist);
  t.teardown(() => app.close());
  const plain = await app.inject({ method: 'GET', url: '/console/assets/index-AbC123.js' });
  t.is(plain.statusCode, 200);
  t.is(plain.body, SCRIPT);
  t.is(plain.headers['content-type'], 'text/javascript; charset=utf-8');
  t.is(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.is(plain.headers['content-encoding'], undefined);
  const zipped = await app.inject({ method: 'GET', url: '/console/assets/index-AbC123.js', headers: { 'accept-encoding': 'gzip, br' } });
  t.is(zipped.headers['content-encoding'], 'gzip');
  t.is(zlib.gunzipSync(zipped.rawPayload).toString(), SCRIPT);
  t.true(zipped.rawPayload.length < SCRIPT.length / 4, 'compressed');
  const css = await app.inject({ method: 'GET', url: '/console/assets/index-AbC123.css' });
  t.is(css.headers['content-type'], 'text/css; charset=utf-8');
});

test("no spelling of a path reaches a file outside the build's assets: 404 in the error shape, never index.html", async (t) => {
  const app = await appOn(dist);
  t.teardown(() => app.close());
  const attempts = [
    '/console/assets/../index.html',
    '/console/assets/..%2Findex.html',
    '/console/assets/..%2F..%2Fsecret.txt',
    '/console/assets/%2e%2e/%2e%2e/secret.txt',
    '/console/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/console/assets/..%5C..%5Csecret.txt',
    '/console/assets/%252e%252e%252fsecret.txt',
    '/console/assets/./index-AbC123.js/../../stats.json',
    '/console/assets/index-AbC123.js%00.html',
    '/console/assets/',
    '/console/assets/nothing-here.js',
    '/console/assets/.hidden',
    `/console/assets/${root}/secret.txt`,
    `/console/assets/${encodeURIComponent(path.join(root, 'secret.txt'))}`,
  ];
  for (const url of attempts) {
    const res = await app.inject({ method: 'GET', url });
    t.not(res.body, 'not for the web', url);
    t.not(res.body, '{}', url);
    if (res.statusCode === 200) {
      // A router that resolved the dot-segments itself may land on the page: then it is the page.
      t.is(pageOf(res.body), INDEX, url);
      continue;
    }
    t.true([400, 404].includes(res.statusCode), `${url}: ${res.statusCode}`);
    const body = res.json();
    t.truthy(body.error?.code, url);
    t.truthy(body.error?.request_id, url);
  }
  const missing = await app.inject({ method: 'GET', url: '/console/assets/nothing-here.js' });
  t.is(missing.statusCode, 404);
  t.is(missing.json().error.code, 'route_not_found');
});

test('an unknown /console/api path answers 404 route_not_found in the error shape for every method, never the page', async (t) => {
  const app = await appOn(dist);
  t.teardown(() => app.close());
  for (const [method, url] of [
    ['GET', '/console/api'],
    ['GET', '/console/api/'],
    ['GET', '/console/api/nothing'],
    ['GET', '/console/api/customers/x/nothing/deeper'],
    ['POST', '/console/api/nothing'],
    ['DELETE', '/console/api/nothing'],
    ['PATCH', '/console/api/nothing'],
    ['GET', '/console//api/nothing'],
    ['GET', '/console/./api/session'],
    ['GET', '/console/.//api'],
    ['GET', '/console//assets/x.js'],
  ] as const) {
    const res = await app.inject({ method, url, payload: method === 'GET' || method === 'DELETE' ? undefined : {} });
    t.is(res.statusCode, 404, `${method} ${url}`);
    t.regex(String(res.headers['content-type']), /^application\/json/, `${method} ${url}`);
    const body = res.json();
    t.is(body.error.code, 'route_not_found');
    t.is(body.error.type, 'not_found_error');
    t.truthy(body.error.request_id);
  }
});

test('without a build the page says the console is not built and how to build it (503, not 500)', async (t) => {
  const app = await appOn(path.join(root, 'no-build-here'));
  t.teardown(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/console/customers' });
  t.is(res.statusCode, 503);
  t.regex(res.headers['content-type'] as string, /^text\/html/);
  t.regex(res.body, /The console is not built/);
  t.regex(res.body, /npm start/);
  t.regex(res.body, /app\/console-build\.ts/);
  const asset = await app.inject({ method: 'GET', url: '/console/assets/index-AbC123.js' });
  t.is(asset.statusCode, 404);
});

test('a new build is served as soon as it is written (index.html is re-read when it changes)', async (t) => {
  const other = path.join(root, 'rebuilt');
  await fs.mkdir(path.join(other, 'assets'), { recursive: true });
  await fs.writeFile(path.join(other, 'index.html'), 'first');
  const app = await appOn(other);
  t.teardown(() => app.close());
  t.is((await app.inject({ method: 'GET', url: '/console' })).body, 'first', 'a page without a head gets no nonce element');
  await fs.writeFile(path.join(other, 'assets', 'new-1.js'), 'new');
  const later = new Date(Date.now() + 5000);
  await fs.writeFile(path.join(other, 'index.html'), 'second');
  await fs.utimes(path.join(other, 'index.html'), later, later);
  t.is((await app.inject({ method: 'GET', url: '/console' })).body, 'second', 're-read');
  t.is((await app.inject({ method: 'GET', url: '/console/assets/new-1.js' })).body, 'new');
});
