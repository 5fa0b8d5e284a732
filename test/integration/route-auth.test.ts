import test from 'ava';
import Fastify from 'fastify';
import { startTestService, ADMIN_TOKEN, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { makeAccount } from '../helpers/factories.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { buildApp } from '../../http/app.ts';
import { installAuth } from '../../http/plugins/auth.ts';
import '../../http/types.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});

/** Routes that answer without any credential; every other route must refuse a request without one. */
const PUBLIC = new Set(['/healthz', '/readyz', '/v1/openapi.json', '/chat', 'OPTIONS /v1/chat', 'OPTIONS /v1/chat/session']);
/** The console's web app (its page and built files) is public like any web page; its JSON routes are not. */
for (const path of ['/console', '/console/*', '/console/assets/*']) PUBLIC.add(path);
// The console's catch-all 404 of its JSON space: `/console/api*` is not under /console/api/, so it is a page address.
PUBLIC.add('/console/api*');
const isPublic = (method: string, path: string) => PUBLIC.has(path) || PUBLIC.has(`${method} ${path}`);

/** Every route of the app with its methods, read from fastify's own route tree. */
async function everyRoute(): Promise<{ method: string; path: string }[]> {
  const app = await buildApp(svc.services);
  await app.ready();
  const tree = app.printRoutes({ commonPrefix: false });
  await app.close();
  const routes: { method: string; path: string }[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack[depth] = (depth ? stack[depth - 1] : '') + m[2];
    if (m[3] && stack[depth] !== '*') for (const method of m[3].split(', ')) routes.push({ method, path: stack[depth] });
  }
  return routes;
}

/** The spellings of one path that a router may still match: none of them may skip authentication. */
function variants(port: number, path: string): Record<string, string> {
  const [, first, ...rest] = path.split('/');
  const encode = (segment: string) => [...segment].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const tail = rest.length ? `/${rest.join('/')}` : '';
  return {
    'as declared': path,
    'first segment percent-encoded': `/${encode(first)}${tail}`,
    'every segment percent-encoded': `/${[first, ...rest].map(encode).join('/')}`,
    'absolute-form': `http://127.0.0.1:${port}${path}`,
    'absolute-form, another host': `http://api.example.com${path}`,
    'absolute-form, percent-encoded': `http://127.0.0.1:${port}/${encode(first)}${tail}`,
    'leading double slash': `/${path}`,
    'inner double slash': `/${first}/${tail}`,
    'trailing slash': `${path}/`,
    'dot-segment before': `/x/..${path}`,
    'dot-segment inside': `/${first}/.${tail}`,
    'percent-encoded dot-segment': `/x/%2e%2e${path}`,
  };
}

test('every route, spelled every way the router may still match, is never 2xx without a credential and never 5xx', async (t) => {
  const routes = await everyRoute();
  // The tree was read: the OpenAPI document's operations, the console and the telephony hooks are all there.
  const doc = (await call(svc.url, 'GET', '/v1/openapi.json')).body;
  const listed = new Set(routes.map((r) => `${r.method} ${r.path}`));
  for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
    for (const method of Object.keys(ops)) t.true(listed.has(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`), `${method} ${path}`);
  }
  for (const r of ['POST /admin/v1/accounts', 'DELETE /admin/v1/accounts/:id/keys/:key_id', 'POST /telephony/twilio/status', 'POST /onboarding/:token']) {
    t.true(listed.has(r), r);
  }
  t.true(routes.length > 100, `${routes.length} routes`);

  const failures: string[] = [];
  const queue = routes.flatMap(({ method, path }) => {
    const concrete = path.replace(/:\w+/g, 'x1');
    return Object.entries(variants(svc.port, concrete)).map(([name, target]) => ({ method, path, name, target }));
  });
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const withBody = ['POST', 'PATCH', 'PUT'].includes(job.method);
      const reply = await rawRequest(svc.port, {
        method: job.method,
        target: job.target,
        ...(withBody ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}),
      });
      const what = `${job.method} ${job.target} (${job.path}, ${job.name}) → ${reply.status}`;
      if (reply.status === 0 || reply.status >= 500) failures.push(`5xx or no answer: ${what} ${reply.body.slice(0, 120)}`);
      else if (reply.status < 300 && !isPublic(job.method, job.path)) failures.push(`answered without a credential: ${what}`);
      else if (job.method !== 'HEAD' && reply.status >= 400 && !reply.body.startsWith('<!doctype html>')) {
        // Errors keep the error shape, with the request id of the response.
        const body = JSON.parse(reply.body);
        if (body.error?.request_id !== reply.headers['request-id']) failures.push(`error without its request id: ${what}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  t.deepEqual(failures, []);
});

test('a key route reached through another spelling is authenticated and counted like the canonical one', async (t) => {
  const a = await makeAccount(svc.url);
  await a.admin.patch(`/admin/v1/accounts/${a.id}/limits`, { requests_per_minute: 50, burst: 50 });
  for (const target of ['/%76%31/me', `http://127.0.0.1:${svc.port}/v1/me`, '/v1/m%65', `http://api.example.com/%76%31/coverage`]) {
    const anonymous = await rawRequest(svc.port, { method: 'GET', target });
    t.is(anonymous.status, 401, target);
    t.is(JSON.parse(anonymous.body).error.code, 'invalid_api_key', target);
    const keyed = await rawRequest(svc.port, { method: 'GET', target, headers: { authorization: `Bearer ${a.testKey}` } });
    t.is(keyed.status, 200, target);
    t.is(keyed.headers['x-ratelimit-limit'], '50', `rate limited: ${target}`);
  }
  const remaining = Number((await a.api.get('/v1/me')).headers.get('x-ratelimit-remaining'));
  t.is(remaining, 50 - 5, 'the four spellings counted against the account');

  const admin = await rawRequest(svc.port, { method: 'GET', target: '/%61dmin/v1/accounts' });
  t.is(admin.status, 401);
  t.is(JSON.parse(admin.body).error.code, 'admin_unauthorized');
  const withToken = await rawRequest(svc.port, { method: 'GET', target: '/%61dmin/v1/accounts', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.is(withToken.status, 200);
});

test('a route that declares no authentication mode stops the app from starting; a /v1 route defaults to a key', async (t) => {
  const build = (declare: (app: ReturnType<typeof Fastify>) => void) => {
    const app = Fastify();
    installAuth(app, { keys: svc.services.keys, adminTokenHash: () => null, consolePeople: svc.services.consolePeople, publicOrigin: () => svc.url, failuresPerMinute: 10 });
    declare(app);
    return app;
  };
  const undeclared = build((app) => app.get('/reports', async () => ({ secret: true })));
  await t.throwsAsync(() => undeclared.ready(), { message: /GET \/reports/ });

  const v1 = build((app) => app.get('/v1/reports', async () => ({ secret: true })));
  const r = await v1.inject({ method: 'GET', url: '/%76%31/reports' });
  t.is(r.statusCode, 401);
  t.is(r.json().code, 'invalid_api_key', 'refused by the key check (no error boundary installed here)');

  const declared = build((app) => app.get('/public', { config: { auth: 'none' } }, async () => ({ ok: true })));
  t.is((await declared.inject({ method: 'GET', url: '/public' })).statusCode, 200);

  // A console route must name the permission a role needs: none stops the start too.
  const unguarded = build((app) => app.get('/console/api/reports', { config: { auth: 'session' } }, async () => ({ secret: true })));
  await t.throwsAsync(() => unguarded.ready(), { message: /console routes declare no permission.*GET \/console\/api\/reports/ });
});
