/**
 * How the openapi plugin completes each /v1 operation as it is registered (http/plugins/openapi.ts):
 * a query schema that refuses unknown parameters, the error codes of validation, the body parser
 * and Idempotency-Key in its responses, and a start-up error for a route that escapes either.
 */
import test from 'ava';
import Fastify from 'fastify';
import { installOpenApi } from '../../http/plugins/openapi.ts';
import { installValidators } from '../../http/plugins/validation.ts';
import { installErrorBoundary } from '../../http/plugins/error-boundary.ts';
import { responses, Type } from '../../http/schemas/common.ts';

async function appWith(register: (app: ReturnType<typeof Fastify>) => void) {
  const app = Fastify();
  installValidators(app);
  installErrorBoundary(app);
  await installOpenApi(app, 'http://127.0.0.1');
  register(app);
  await app.ready();
  return app;
}

const ok = { 200: Type.Object({ ok: Type.Boolean() }) };

test('an operation that declares no query takes none; its responses list what validation answers', async (t) => {
  const app = await appWith((a) => {
    a.get('/v1/thing/:id', { schema: { params: Type.Object({ id: Type.String({ maxLength: 8 }) }), response: responses(ok, []) } }, async () => ({ ok: true }));
    a.post('/v1/thing', { config: { idempotent: true }, schema: { body: Type.Object({ n: Type.Integer() }, { additionalProperties: false }), response: responses(ok, []) } }, async () => ({ ok: true }));
    a.get('/hidden', { schema: { hide: true } }, async () => ({ ok: true }));
  });
  const refused = await app.inject({ url: '/v1/thing/a?mode=live' });
  t.is(refused.statusCode, 400);
  t.is(refused.json().error.code, 'unknown_parameter');
  t.is((await app.inject({ url: '/v1/thing/a' })).statusCode, 200);
  t.is((await app.inject({ url: '/hidden?anything=1' })).statusCode, 200, 'pages and hidden routes are left alone');
  const doc = app.swagger() as any;
  t.is(doc.paths['/v1/thing/{id}'].get.responses['400'].description, 'error.code: invalid_string, malformed_request, field_too_long, unknown_parameter');
  t.regex(doc.paths['/v1/thing/{id}'].get.responses['503'].description, /service_unavailable/, 'every operation may find the database away');
  // The request head is checked before any route (http/plugins/request-head.ts): every operation may answer it.
  t.is(doc.paths['/v1/thing/{id}'].get.responses['414'].description, 'error.code: uri_too_long');
  t.is(doc.paths['/v1/thing'].post.responses['414'].description, 'error.code: uri_too_long');
  t.is(doc.paths['/v1/thing'].post.responses['431'].description, 'error.code: headers_too_large');
  t.regex(doc.paths['/v1/thing'].post.responses['400'].description, /^error\.code: (?=.*invalid_parameter)(?=.*parameter_missing)(?=.*unknown_parameter)(?=.*invalid_json)(?=.*payload_too_large)(?=.*unsupported_content_type)(?=.*idempotency_key_too_long)/);
  t.regex(doc.paths['/v1/thing'].post.responses['409'].description, /idempotency_key_reused/);
  t.true(doc.paths['/v1/thing'].post.requestBody.required, '{} lacks n: the body is required');
  await app.close();
});

test('a body every field of which is optional is not required', async (t) => {
  const app = await appWith((a) => {
    a.patch('/v1/thing', { schema: { body: Type.Object({ n: Type.Optional(Type.Integer()) }, { additionalProperties: false }), response: responses(ok, []) } }, async () => ({ ok: true }));
  });
  t.false((app.swagger() as any).paths['/v1/thing'].patch.requestBody.required);
  await app.close();
});

test('an operation whose query takes unknown parameters, or whose responses are not declared, stops the start', async (t) => {
  await t.throwsAsync(
    appWith((a) => a.get('/v1/loose', { schema: { querystring: Type.Object({ q: Type.Optional(Type.String()) }), response: responses(ok, []) } }, async () => ({ ok: true }))),
    { message: /GET \/v1\/loose: its query schema must refuse unknown parameters/ },
  );
  await t.throwsAsync(
    appWith((a) => a.get('/v1/bare', async () => ({ ok: true }))),
    { message: /GET \/v1\/bare: declare its responses with responses\(\)/ },
  );
});
