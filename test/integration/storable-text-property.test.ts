import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs';
import Fastify, { type RouteOptions } from 'fastify';
import fc from 'fast-check';
import pg from 'pg';
import { startTestService, CONSOLE_TOKEN, type TestService } from '../helpers/service.ts';
import { call, encodeAnyText, type Reply } from '../helpers/http.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { tableFingerprint } from '../helpers/db.ts';
import { startFakeOpenAIChat, type FakeOpenAIChat } from '../fakes/openai-chat.ts';
import { installValidators } from '../../http/plugins/validation.ts';
import { isStorableText } from '../../http/plugins/storable-text.ts';
import type { Services } from '../../app/services.ts';

/**
 * Issue 11 §2, as a property: arbitrary unicode text, NUL and lone surrogates included, thrown at
 * every string a route takes (body fields at any depth, path and query parameters) of every
 * route in the OpenAPI document and every console route. Whatever the text: never a 5xx, every
 * refusal in the error shape, and a refusal writes nothing. Text PostgreSQL cannot store is
 * always refused, as `invalid_string`.
 *
 * Routes come from the document (GET /v1/openapi.json) and, for the console (hidden from it),
 * from the routes the console modules register, so a new route is covered without editing this.
 */

type Schema = Record<string, any>;
type Segment = string | number;

interface Operation {
  method: string;
  /** Path with `{name}` parameters. */
  path: string;
  pathParams: string[];
  query: { name: string; schema: Schema; required: boolean }[];
  body: Schema | null;
  auth: 'key' | 'console' | 'session';
}

interface Target {
  op: Operation;
  where: 'path' | 'query' | 'body';
  /** Parameter name, or the body path of a string field. */
  at: Segment[];
}

// Table rows written by the webhook sender after an event, on its own schedule, not by the request;
// and the line-type cache, which keeps the carrier's answer about a number (a fact of the number,
// paid for once) also when the consent gate then refuses the request (issue 20 §1).
const BACKGROUND_TABLES = ['webhook_deliveries', 'webhook_attempts', 'line_type_lookups'];

let svc: TestService;
let fake: FakeOpenAIChat;
let db: pg.Client;
let account: TestAccount;
let ctx: { customerId: string; sessionToken: string; callId: string };
let targets: Target[];

test.before(async () => {
  fake = await startFakeOpenAIChat();
  const never = '3600000';
  // Nothing runs on its own schedule: every change to the database is a request's.
  svc = await startTestService({
    OPENAI_API_KEY: fake.apiKey,
    OPENAI_BASE_URL: fake.url,
    OPENAI_CHAT_MODEL: 'fake-chat-1',
    SWITCHBOARD_DIALLER_POLL_MS: never,
    SWITCHBOARD_SENDER_POLL_MS: never,
    SWITCHBOARD_KEEPER_POLL_MS: never,
    SWITCHBOARD_JOB_INTERVAL_MS: never,
    // The website builder too: it would build (or fail, refunding) orders the property placed, between a refusal's row counts.
    SWITCHBOARD_BUILDER_POLL_MS: never,
  });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  account = await makeAccount(svc.url);
  const customer = await makeReadyCustomer(svc.url, account.api);
  const session = await account.api.post(`/v1/customers/${customer.id}/sessions`, { end_user_ref: 'rep-1' });
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550150', business_name: 'Acme' });
  if (session.status !== 201 || queued.status !== 201) throw new Error(`setup: ${session.text} ${queued.text}`);
  ctx = { customerId: customer.id, sessionToken: session.body.token, callId: queued.body.id };

  const doc = (await account.api.get('/v1/openapi.json')).body;
  const ops = [...documentOperations(doc), ...(await consoleOperations(svc.services))];
  targets = ops.flatMap(targetsOf);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
  await fake?.close();
});

// — routes —

/** Every operation of the OpenAPI document. */
function documentOperations(doc: Schema): Operation[] {
  const resolve = (s: Schema | undefined): Schema | undefined => {
    while (s?.$ref) s = s.$ref.split('/').slice(1).reduce((o: Schema, k: string) => o?.[k], doc);
    return s;
  };
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      const params: Schema[] = (op.parameters ?? []).map(resolve);
      const body = resolve(op.requestBody?.content?.['application/json']?.schema);
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: resolve(p.schema) ?? {}, required: !!p.required })),
        body: body ? deref(body, resolve) : null,
        auth: path.startsWith('/v1/chat') ? 'session' : 'key',
      });
    }
  }
  return ops;
}

/** Inlines every `$ref` of a schema (the document's bodies may point at shared components). */
function deref(s: Schema, resolve: (s: Schema) => Schema | undefined): Schema {
  if (Array.isArray(s)) return s.map((x) => deref(x, resolve)) as never;
  if (!s || typeof s !== 'object') return s;
  const r = s.$ref ? resolve(s)! : s;
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, deref(v as Schema, resolve)]));
}

/**
 * The console's routes, hidden from the document: the console modules' own registrations, seen
 * by an onRoute hook of an app that never listens.
 */
async function consoleOperations(services: Services): Promise<Operation[]> {
  const app = Fastify();
  installValidators(app as never);
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => void routes.push(route));
  const dir = new URL('../../http/routes/', import.meta.url);
  for (const file of fs.readdirSync(dir).filter((f) => f.startsWith('console-') && f.endsWith('.ts'))) {
    const mod = await import(new URL(file, dir).href);
    for (const [name, register] of Object.entries(mod)) if (name.startsWith('register') && typeof register === 'function') await register(app, services);
  }
  if (routes.length < 20) throw new Error(`only ${routes.length} console routes found`);
  return routes.flatMap((r) =>
    [r.method].flat().filter((m) => m !== 'HEAD').map((method) => {
      const schema = (r.schema ?? {}) as Schema;
      const query = schema.querystring?.properties ?? {};
      return {
        method,
        path: r.url.replace(/:(\w+)/g, '{$1}'),
        pathParams: [...r.url.matchAll(/:(\w+)/g)].map((m) => m[1]),
        query: Object.entries<Schema>(query).map(([name, s]) => ({ name, schema: s, required: (schema.querystring.required ?? []).includes(name) })),
        body: schema.body ?? null,
        auth: 'console' as const,
      };
    }),
  );
}

// — schemas: where strings go, and a body that passes validation —

function branches(s: Schema | undefined): Schema[] {
  if (!s || typeof s !== 'object') return [];
  if (s.anyOf || s.oneOf) return (s.anyOf ?? s.oneOf).flatMap(branches);
  if (s.allOf) return [Object.assign({}, ...s.allOf.flatMap(branches))];
  return [s];
}

function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type;
  if (s.type) return [s.type];
  if (s.properties) return ['object'];
  const sample = s.const ?? s.enum?.[0];
  return sample === undefined ? [] : [sample === null ? 'null' : typeof sample];
}

/** Body paths of every string field, at any depth (array items as index 0). */
function stringFields(s: Schema, at: Segment[] = []): Segment[][] {
  const out = new Map<string, Segment[]>();
  for (const b of branches(s)) {
    const types = typesOf(b);
    if (types.includes('string') && at.length) out.set(JSON.stringify(at), at);
    if (types.includes('object')) for (const [k, p] of Object.entries<Schema>(b.properties ?? {})) for (const f of stringFields(p, [...at, k])) out.set(JSON.stringify(f), f);
    if (types.includes('array') && b.items) for (const f of stringFields(b.items, [...at, 0])) out.set(JSON.stringify(f), f);
  }
  return [...out.values()];
}

/** A value the schema accepts for a field called `name`, as near as a generic guess gets. */
function example(s: Schema | undefined, name = ''): unknown {
  const options = branches(s).filter((b) => !typesOf(b).every((t) => t === 'null'));
  const b = options[0] ?? {};
  if (b.const !== undefined) return b.const;
  if (b.enum) return b.enum.find((v: unknown) => v !== null);
  if (b.default !== undefined) return b.default;
  const types = typesOf(b);
  if (types.includes('object')) return Object.fromEntries((b.required ?? []).map((k: string) => [k, example(b.properties?.[k], k)]));
  if (types.includes('array')) return b.minItems ? [example(b.items, name)] : [];
  if (types.includes('integer') || types.includes('number')) return Math.min(b.maximum ?? Infinity, Math.max(b.minimum ?? 1, (b.exclusiveMinimum ?? 0) + 1));
  if (types.includes('boolean')) return false;
  if (types.includes('string')) return exampleString(b, name);
  return null;
}

function exampleString(s: Schema, name: string): string {
  if (name === 'customer_id') return ctx.customerId;
  if (s.format === 'uuid') return crypto.randomUUID();
  if (s.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
  const guesses = [
    name.includes('email') && 'help@example.com',
    name === 'url' && 'http://127.0.0.1:9/hook',
    name.endsWith('url') && 'https://example.com/logo.png',
    name.includes('phone') && '+12025550123',
    name === 'country' && 'US',
    name === 'timezone' && 'America/New_York',
    name.includes('color') && '#123456',
    name === 'locale' && 'en-US',
    'Text',
  ].filter((g): g is string => typeof g === 'string');
  const pattern = s.pattern ? new RegExp(s.pattern, 'u') : null;
  const fit = guesses.find((g) => !pattern || pattern.test(g)) ?? 'Text';
  return fit.padEnd(s.minLength ?? 0, 'x');
}

/** `base` with the value at `at` replaced (containers on the way made from the schema). */
function withValue(s: Schema | undefined, base: unknown, at: Segment[], value: unknown): unknown {
  if (!at.length) return value;
  const [head, ...rest] = at;
  if (typeof head === 'number') {
    const b = branches(s).find((x) => typesOf(x).includes('array')) ?? {};
    const arr = Array.isArray(base) ? [...base] : [];
    arr[head] = withValue(b.items, arr[head] ?? example(b.items), rest, value);
    return arr;
  }
  const b = branches(s).find((x) => typesOf(x).includes('object')) ?? {};
  const obj = base && typeof base === 'object' && !Array.isArray(base) ? { ...(base as object) } : {};
  const prop = b.properties?.[head];
  (obj as Record<string, unknown>)[head] = withValue(prop, (obj as Record<string, unknown>)[head] ?? example(prop, head), rest, value);
  return obj;
}

function targetsOf(op: Operation): Target[] {
  return [
    ...op.pathParams.map((p) => ({ op, where: 'path' as const, at: [p] })),
    ...op.query.map((q) => ({ op, where: 'query' as const, at: [q.name] })),
    ...(op.body ? stringFields(op.body).map((at) => ({ op, where: 'body' as const, at })) : []),
  ];
}

// — requests —

/** The value of a path parameter that is not the one under test: a real object where it matters. */
function pathValue(op: Operation, name: string): string {
  if (name === 'id' && /^\/(console\/)?v1\/customers\//.test(op.path)) return ctx.customerId;
  if (name === 'id' && op.path.startsWith('/console/v1/accounts/')) return account.id;
  if (name === 'id' && op.path.startsWith('/v1/calls/')) return ctx.callId;
  return 'x';
}

async function send(target: Target, text: string): Promise<Reply> {
  const { op } = target;
  const path = op.path.replace(/\{(\w+)\}/g, (_, name) => encodeAnyText(target.where === 'path' && target.at[0] === name ? text : pathValue(op, name)));
  const query = op.query
    .filter((q) => (target.where === 'query' && target.at[0] === q.name) || (q.required && q.schema.default === undefined))
    .map((q) => `${q.name}=${encodeAnyText(target.where === 'query' && target.at[0] === q.name ? text : String(example(q.schema, q.name)))}`);
  const url = query.length ? `${path}?${query.join('&')}` : path;
  let body: unknown;
  if (op.body) body = target.where === 'body' ? withValue(op.body, example(op.body), target.at, text) : example(op.body);
  const key = op.auth === 'console' ? CONSOLE_TOKEN : op.auth === 'session' ? ctx.sessionToken : account.testKey;
  return call(svc.url, op.method, url, { key, body });
}

const describe = (t: Target) => `${t.op.method} ${t.op.path} ${t.where} ${t.at.join('.')}`;

/** Any text: mostly arbitrary code points, often NUL and lone halves of surrogate pairs. */
const anyText = fc.string({
  unit: fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\ud83d', '\ude00') },
    { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  ),
  maxLength: 40,
});

test('arbitrary text at every string of every route: never 5xx, refusals in the error shape and writing nothing', async (t) => {
  t.timeout(600_000);
  t.true(targets.length > 100, `${targets.length} targets`);
  const ops = new Set(targets.map((x) => `${x.op.method} ${x.op.path}`));
  for (const expected of ['POST /v1/customers', 'PATCH /v1/brand', 'POST /v1/calls', 'POST /v1/chat', 'DELETE /v1/dnc/{phone}', 'POST /console/v1/accounts']) {
    t.true(ops.has(expected), expected);
  }
  const started = Date.now();
  let requests = 0;
  // The fingerprint after a refusal is the one before the next request.
  let known: Record<string, string> | null = null;
  const check = async (target: Target, text: string) => {
    const before = known ?? (await tableFingerprint(db, BACKGROUND_TABLES));
    known = null;
    const r = await send(target, text);
    requests++;
    const what = `${describe(target)} ${JSON.stringify(text)} → ${r.status} ${r.text.slice(0, 300)}`;
    if (r.status >= 500) throw new Error(`5xx: ${what}`);
    if (r.status >= 400) {
      const e = r.body?.error;
      const shaped = e && ['type', 'code', 'message', 'request_id'].every((k) => typeof e[k] === 'string') && e.request_id === r.headers.get('request-id');
      if (!shaped) throw new Error(`not the error shape: ${what}`);
      const after = await tableFingerprint(db, BACKGROUND_TABLES);
      const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
      if (changed.length) throw new Error(`refused but wrote ${changed.join(', ')}: ${what}`);
      known = after;
    }
    if (!isStorableText(text) && !(r.status === 400 && r.body?.error?.code === 'invalid_string')) throw new Error(`unstorable text not refused as invalid_string: ${what}`);
    return true;
  };

  // Every target gets NUL and both halves of a surrogate pair, alone and inside text.
  for (const target of targets) for (const text of ['\u0000', `a\ud800b`, '\udfff', 'ok\u0000']) await check(target, text);
  // Then arbitrary text at arbitrary targets.
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...targets), anyText, (target, text) => check(target, text)),
    { numRuns: targets.length * 6, includeErrorInReport: true },
  );
  t.log(`${targets.length} targets on ${ops.size} routes, ${requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});
