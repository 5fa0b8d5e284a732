import crypto from 'node:crypto';
import fs from 'node:fs';
import Fastify, { type RouteOptions } from 'fastify';
import { installValidators } from '../../http/plugins/validation.ts';
import type { Services } from '../../app/services.ts';

/**
 * Every operation a client can call, read as a fuzzer reads them: the OpenAPI document's
 * (GET /v1/openapi.json) and the console's (hidden from it, so taken from the routes the console
 * modules register). A new route is covered by the property tests that use this without editing them.
 */

export type Schema = Record<string, any>;
export type Segment = string | number;

export interface Operation {
  method: string;
  /** Path with `{name}` parameters. */
  path: string;
  pathParams: string[];
  query: { name: string; schema: Schema; required: boolean }[];
  body: Schema | null;
  /** `session`: a chat session token; `console`: a console session cookie; `none`: public. */
  auth: 'key' | 'admin' | 'session' | 'console' | 'none';
  /** The permission a console route needs (console routes only). */
  permission?: string;
  /** The document's responses (status → description listing `error.code: a, b`); absent for console routes. */
  responses?: Record<string, { description: string }>;
}

/** Every operation of the OpenAPI document. */
export function documentOperations(doc: Schema): Operation[] {
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
        responses: op.responses,
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
 * Routes hidden from the document, as the modules `http/routes/admin-*.ts` and `console-*.ts` register them, seen
 * by an onRoute hook of an app that never listens.
 */
async function registeredOperations(services: Services): Promise<(RouteOptions & { method: string })[]> {
  const app = Fastify();
  installValidators(app as never);
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => void routes.push(route));
  const dir = new URL('../../http/routes/', import.meta.url);
  for (const file of fs.readdirSync(dir).filter((f) => /^(admin|console)-.*\.ts$/.test(f))) {
    const mod = await import(new URL(file, dir).href);
    for (const [name, register] of Object.entries(mod)) if (name.startsWith('register') && typeof register === 'function') await register(app, services);
  }
  return routes.flatMap((r) => [r.method].flat().filter((m) => m !== 'HEAD').map((method) => ({ ...r, method })));
}

function operationOf(r: RouteOptions & { method: string }, auth: Operation['auth']): Operation {
  const schema = (r.schema ?? {}) as Schema;
  const query = schema.querystring?.properties ?? {};
  return {
    method: r.method,
    path: r.url.replace(/:(\w+)/g, '{$1}'),
    pathParams: [...r.url.matchAll(/:(\w+)/g)].map((m) => m[1]),
    query: Object.entries<Schema>(query).map(([name, s]) => ({ name, schema: s, required: (schema.querystring.required ?? []).includes(name) })),
    body: schema.body ?? null,
    auth,
    ...(r.config?.permission ? { permission: r.config.permission as string } : {}),
  };
}

/** The operator's routes (/admin/v1), hidden from the document. */
export async function adminOperations(services: Services): Promise<Operation[]> {
  const routes = (await registeredOperations(services)).filter((r) => r.url.startsWith('/admin/'));
  if (routes.length < 20) throw new Error(`only ${routes.length} admin routes found`);
  return routes.map((r) => operationOf(r, 'admin'));
}

/**
 * The reseller console's JSON routes (/console/api), hidden from the document: `console` for those
 * a session cookie opens, `none` for those before a session (sign-in, invitations, resets).
 */
export async function consoleOperations(services: Services): Promise<Operation[]> {
  const routes = (await registeredOperations(services)).filter((r) => r.url.startsWith('/console/api/'));
  if (routes.length < 4) throw new Error(`only ${routes.length} console routes found`);
  return routes.map((r) => operationOf(r, r.config?.auth === 'session' ? 'console' : 'none'));
}

// — schemas: where values go, and a body that passes validation —

export function branches(s: Schema | undefined): Schema[] {
  if (!s || typeof s !== 'object') return [];
  if (s.anyOf || s.oneOf) return (s.anyOf ?? s.oneOf).flatMap(branches);
  if (s.allOf) return [Object.assign({}, ...s.allOf.flatMap(branches))];
  return [s];
}

export function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type;
  if (s.type) return [s.type];
  if (s.properties) return ['object'];
  const sample = s.const ?? s.enum?.[0];
  return sample === undefined ? [] : [sample === null ? 'null' : typeof sample];
}

/** Body paths of every field, at any depth (array items as index 0), whose type is one of `kinds` (any when empty). */
export function fieldsOf(s: Schema, kinds: string[] = [], at: Segment[] = []): Segment[][] {
  const out = new Map<string, Segment[]>();
  for (const b of branches(s)) {
    const types = typesOf(b);
    if (at.length && (!kinds.length || types.some((x) => kinds.includes(x)))) out.set(JSON.stringify(at), at);
    if (types.includes('object')) for (const [k, p] of Object.entries<Schema>(b.properties ?? {})) for (const f of fieldsOf(p, kinds, [...at, k])) out.set(JSON.stringify(f), f);
    if (types.includes('array') && b.items) for (const f of fieldsOf(b.items, kinds, [...at, 0])) out.set(JSON.stringify(f), f);
  }
  return [...out.values()];
}

/** What a generic example uses for fields that name a real object. */
export interface Fixtures {
  customerId: string;
}

/** A value the schema accepts for a field called `name`, as near as a generic guess gets. */
export function example(s: Schema | undefined, name: string, fixtures: Fixtures): unknown {
  const options = branches(s).filter((b) => !typesOf(b).every((t) => t === 'null'));
  const b = options[0] ?? {};
  if (b.const !== undefined) return b.const;
  if (b.enum) return b.enum.find((v: unknown) => v !== null);
  if (b.default !== undefined) return b.default;
  const types = typesOf(b);
  if (types.includes('object')) return Object.fromEntries((b.required ?? []).map((k: string) => [k, example(b.properties?.[k], k, fixtures)]));
  if (types.includes('array')) return b.minItems ? [example(b.items, name, fixtures)] : [];
  if (types.includes('integer') || types.includes('number')) return Math.min(b.maximum ?? Infinity, Math.max(b.minimum ?? 1, (b.exclusiveMinimum ?? 0) + 1));
  if (types.includes('boolean')) return false;
  if (types.includes('string')) return exampleString(b, name, fixtures);
  return null;
}

function exampleString(s: Schema, name: string, fixtures: Fixtures): string {
  if (name === 'customer_id') return fixtures.customerId;
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
export function withValue(s: Schema | undefined, base: unknown, at: Segment[], value: unknown, fixtures: Fixtures): unknown {
  if (!at.length) return value;
  const [head, ...rest] = at;
  if (typeof head === 'number') {
    const b = branches(s).find((x) => typesOf(x).includes('array')) ?? {};
    const arr = Array.isArray(base) ? [...base] : [];
    arr[head] = withValue(b.items, arr[head] ?? example(b.items, '', fixtures), rest, value, fixtures);
    return arr;
  }
  const b = branches(s).find((x) => typesOf(x).includes('object')) ?? {};
  const obj = base && typeof base === 'object' && !Array.isArray(base) ? { ...(base as object) } : {};
  const prop = b.properties?.[head];
  (obj as Record<string, unknown>)[head] = withValue(prop, (obj as Record<string, unknown>)[head] ?? example(prop, head, fixtures), rest, value, fixtures);
  return obj;
}

/** The error codes a documented response's description lists (`error.code: a, b`). */
export const codesOf = (description: string | undefined) => /^error\.code: (.+)$/.exec(description ?? '')?.[1].split(', ') ?? [];

/** True when `reply` is the spec's error shape with the request id of its header. */
export function isErrorShape(body: any, requestId: string | null): boolean {
  const e = body?.error;
  return Boolean(e) && ['type', 'code', 'message', 'request_id'].every((k) => typeof e[k] === 'string') && e.request_id === requestId;
}
