import type { AnyApp } from '../routes/app-type.ts';
import swagger from '@fastify/swagger';
import type { RouteOptions } from 'fastify';
import { ErrorSchema, Type, withMoreCodes } from '../schemas/common.ts';
import type { ErrorCode } from '../errors.ts';
import { validationCodes } from './validation.ts';
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER } from './idempotency.ts';
import { REQUEST_ID_HEADER } from './request-log.ts';
import { MAX } from '../schemas/customers.ts';

/** The tags operations are grouped by, declared once at the top of the document. */
const TAGS = [
  { name: 'account', description: 'The reseller account and the key making the request' },
  { name: 'customers', description: "The reseller's customers: readiness, provisioning, onboarding links, caps" },
  { name: 'numbers', description: "A customer's rented numbers and verified caller IDs, and their monthly rent" },
  { name: 'websites', description: "A customer's one-page website: order, review, go live, its own domain, hosting" },
  { name: 'brand', description: 'The branding customers and callees see' },
  { name: 'coverage', description: 'Countries the service calls in' },
  { name: 'billing', description: 'The prepaid balance and its itemised ledger' },
  { name: 'calls', description: 'Call requests, calls, appointments and the do-not-call list' },
  { name: 'events', description: 'Events by read: the envelopes the webhooks carry' },
  { name: 'chat', description: "The sales-coach assistant: sessions minted by the reseller, messages sent by a customer's staff" },
];

/** A route that declares no query parameters takes none: `?mode=live` must not silently do nothing. */
const NO_QUERY = Type.Object({}, { additionalProperties: false });

/** Codes the body parser answers before validation, on any method that may carry a body. */
const BODY_PARSER_CODES: ErrorCode[] = ['invalid_json', 'payload_too_large', 'unsupported_content_type'];
const BODY_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];
/**
 * Codes any operation can answer: text PostgreSQL cannot store anywhere in the request
 * (http/plugins/storable-text.ts), the database being away (503 with Retry-After), and the
 * request line and headers refused before authentication (http/plugins/request-head.ts: a URL
 * too long, more than one Host) or before routing (node's parser: a request line and headers over
 * 16 KB).
 */
const EVERY_OPERATION_CODES: ErrorCode[] = ['invalid_string', 'service_unavailable', 'uri_too_long', 'malformed_request', 'headers_too_large'];
/** Codes of the Idempotency-Key check, on every route that takes the header (http/plugins/idempotency.ts). */
const IDEMPOTENCY_CODES: ErrorCode[] = ['idempotency_key_reused', 'idempotency_key_too_long'];

type RouteSchema = {
  hide?: boolean;
  security?: Record<string, string[]>[];
  [extension: `x-${string}`]: unknown;
  params?: unknown;
  querystring?: object & { additionalProperties?: unknown };
  body?: unknown;
  response?: unknown;
};

/** A route of the public contract: under /v1 and shown in the document (HEAD mirrors its GET). */
function isOperation(route: RouteOptions): boolean {
  const schema = route.schema as RouteSchema | undefined;
  return route.url.startsWith('/v1/') && !schema?.hide && [route.method].flat().every((m) => m !== 'OPTIONS');
}

/**
 * Completes an operation's schema as it is added, so that what validation does and what the
 * document says come from one place: a query schema that refuses unknown parameters (a declared
 * one that does not is a start-up error), and every error code validation, the body parser and
 * the Idempotency-Key check can answer added to its responses.
 */
function completeOperation(route: RouteOptions): void {
  if (!isOperation(route)) {
    // Hidden routes too answer with named schemas: each met once per response (see copy).
    const response = (route.schema as RouteSchema | undefined)?.response as Record<string, unknown> | undefined;
    if (response) for (const [status, s] of Object.entries(response)) response[status] = copy(s);
    return;
  }
  const schema = (route.schema ?? {}) as RouteSchema;
  const where = `${[route.method].flat().join(',')} ${route.url}`;
  if (!schema.querystring) schema.querystring = NO_QUERY;
  else if (schema.querystring.additionalProperties !== false) throw new Error(`${where}: its query schema must refuse unknown parameters (additionalProperties: false)`);
  const codes = new Set<ErrorCode>([
    ...EVERY_OPERATION_CODES,
    ...validationCodes(schema.params, 'params'),
    ...validationCodes(schema.querystring, 'querystring'),
    ...validationCodes(schema.body, 'body'),
    ...([route.method].flat().some((m) => BODY_METHODS.includes(m)) ? BODY_PARSER_CODES : []),
    ...((route.config as { idempotent?: boolean } | undefined)?.idempotent ? IDEMPOTENCY_CODES : []),
  ]);
  const response = withMoreCodes(schema.response, codes);
  if (!response) throw new Error(`${where}: declare its responses with responses() so the document lists every answer`);
  // Bounds (docs/api.md, "Bounds"): a copy of each schema, so a schema shared with a hidden route is untouched.
  // (In place: the map keeps what responses() was given, for the HEAD route that shares this schema.)
  for (const [status, s] of Object.entries(response)) response[Number(status)] = bounded(copy(s), 'response');
  schema.response = response;
  for (const part of ['params', 'querystring', 'body'] as const) if (schema[part]) schema[part] = bounded(copy(schema[part]), 'request');
  const config = route.config as { idempotent?: boolean; scope?: string } | undefined;
  // The scope the key needs (docs/api.md, "Scopes"): Spectral's oas rules allow a role list only on an
  // OAuth2 or OpenID scheme, and the key is a bearer token, so it is the x-required-scopes extension.
  if (schema.security?.some((s) => 'sessionToken' in s)) schema['x-required-scopes'] = [];
  else schema['x-required-scopes'] = config?.scope ? [config.scope] : [];
  if (config?.idempotent) schema['x-idempotent'] = true;
  route.schema = schema;
}

/**
 * A copy of a schema in which a named schema (`$id`) met again is a `$ref` to the first: the
 * serializer refuses one `$id` twice in a schema (Readiness holds ReadinessBlocker twice).
 */
function copy<T>(schema: T): T {
  const seen = new Set<string>();
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const id = (node as { $id?: unknown }).$id;
    if (typeof id === 'string') {
      if (seen.has(id)) return { $ref: id };
      seen.add(id);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
  };
  return walk(JSON.parse(JSON.stringify(schema))) as T;
}

/** Largest integer a JSON number carries exactly (2^53 - 1). */
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** A response string of no known length: 64 KiB (a summary, a message, a transcript line are far shorter). */
export const RESPONSE_STRING_MAX = 65_536;
/** A response array of no known length (a page holds at most 200). */
export const RESPONSE_ARRAY_MAX = 10_000;
const FORMAT_LENGTH: Record<string, number> = { 'date-time': 40, date: 10, uuid: 36, email: 254, uri: MAX.url };

type Node = Record<string, unknown>;
const typesOf = (node: Node) => [node.type ?? []].flat() as string[];

/**
 * Bounds every string, integer and array of a schema lacks, in place (docs/api.md, "Bounds"):
 * every integer gets a format (int32 when its bounds fit, else int64) and, in a response, the safe
 * integer range unless it says less; a response string its format's length or 64 KiB; a response
 * array 10,000 items. A request must already bound its strings and arrays (the OWASP check in
 * test/integration/openapi-contract.test.ts says where one does not): a default there would
 * refuse what a client sends.
 */
export function bounded<T>(schema: T, side: 'request' | 'response'): T {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as Node;
    const types = typesOf(n);
    if (types.includes('integer')) {
      if (side === 'response') {
        if (n.minimum === undefined && n.exclusiveMinimum === undefined) n.minimum = -MAX_SAFE;
        if (n.maximum === undefined && n.exclusiveMaximum === undefined) n.maximum = MAX_SAFE;
      }
      if (n.format === undefined) {
        const min = (n.minimum ?? n.exclusiveMinimum) as number | undefined;
        const max = (n.maximum ?? n.exclusiveMaximum) as number | undefined;
        n.format = min !== undefined && max !== undefined && min >= -(2 ** 31) && max <= 2 ** 31 - 1 ? 'int32' : 'int64';
      }
    }
    if (side === 'response' && types.includes('string') && n.maxLength === undefined && n.enum === undefined && n.const === undefined) {
      n.maxLength = FORMAT_LENGTH[n.format as string] ?? RESPONSE_STRING_MAX;
    }
    if (side === 'response' && types.includes('array') && n.maxItems === undefined) n.maxItems = RESPONSE_ARRAY_MAX;
    for (const [key, value] of Object.entries(n)) if (key !== 'examples' && key !== 'default' && key !== 'const' && key !== 'enum') walk(value);
  };
  walk(schema);
  return schema;
}

type Response = { description: string; headers?: Record<string, unknown>; content?: unknown };
type Operation = {
  requestBody?: { required?: boolean; content: Record<string, { schema?: { required?: string[] } }> };
  parameters?: unknown[];
  responses: Record<string, Response>;
  'x-idempotent'?: boolean;
};

/** Response headers (docs/api.md, "Response headers"), named in `components.headers` and referenced by every response. */
const HEADERS = {
  RequestId: { description: 'the id of this request (also error.request_id): quote it to support', schema: { type: 'string', maxLength: 64 } },
  RateLimitLimit: {
    description: "requests the key's account may make in the current minute (on every authenticated answer; on a 429, of the window that refused)",
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 },
  },
  RateLimitRemaining: { description: 'requests left in that window', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 } },
  RateLimitReset: { description: 'when that window ends, in Unix seconds', schema: { type: 'integer', format: 'int64', minimum: 0, maximum: 253_402_300_799 } },
  RetryAfter: { description: 'seconds to wait before trying again', schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400 } },
  // Named as the header: Spectral's OWASP rule reads every `headers` object, this one too, for it.
  'Access-Control-Allow-Origin': {
    description: 'only on /v1/chat and /v1/chat/session, which a browser calls: *. No other answer carries it, so a browser page cannot read them (an API key belongs on a server)',
    schema: { type: 'string', enum: ['*'] },
  },
  IdempotentReplayed: {
    description: 'true when this answer is the stored answer to an earlier request with the same Idempotency-Key (nothing was done again)',
    schema: { type: 'string', enum: ['true'] },
  },
};
const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** The Idempotency-Key request header of the writes that take it (http/plugins/idempotency.ts). */
const IDEMPOTENCY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: `any string of 1 to ${MAX.idempotencyKey} characters, unique per write: the same key with the same request answers the first answer again (with ${REPLAYED_HEADER}: true) for 24 hours; with another request, 409 idempotency_key_reused`,
  schema: { type: 'string', minLength: 1, maxLength: MAX.idempotencyKey },
};

/**
 * Declares in the document what plugins do around every operation: the Idempotency-Key header
 * of the writes that take it, and on every response request-id, the rate-limit headers,
 * Retry-After (429, 503) and the replay marker (2xx of a write that takes Idempotency-Key).
 */
function declareHeaders(doc: { paths: Record<string, Record<string, Operation>>; components: Record<string, unknown> }) {
  doc.components.headers = HEADERS;
  for (const path of Object.values(doc.paths)) {
    for (const operation of Object.values(path)) {
      const idempotent = operation['x-idempotent'] === true;
      delete operation['x-idempotent'];
      if (idempotent) operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_PARAMETER];
      for (const [status, response] of Object.entries(operation.responses)) {
        response.headers = {
          [REQUEST_ID_HEADER]: header('RequestId'),
          'X-RateLimit-Limit': header('RateLimitLimit'),
          'X-RateLimit-Remaining': header('RateLimitRemaining'),
          'X-RateLimit-Reset': header('RateLimitReset'),
          'Access-Control-Allow-Origin': header('Access-Control-Allow-Origin'),
          ...(status === '429' || status === '503' ? { 'Retry-After': header('RetryAfter') } : {}),
          ...(idempotent && status.startsWith('2') ? { [REPLAYED_HEADER]: header('IdempotentReplayed') } : {}),
        };
      }
    }
  }
  return doc;
}

/**
 * @fastify/swagger names a schema with an `$id` in components only where it is nested; a route's
 * whole response it writes inline. Each named response is given to it wrapped in a one-branch
 * allOf (the route's own schema, which the serializer uses, is untouched) and unwrapped to its
 * `$ref` by `unwrapNamedResponses`.
 */
function wrapNamedResponses({ schema, url }: { schema: unknown; url: string }) {
  const response = (schema as { response?: Record<string, { $id?: unknown }> } | undefined)?.response;
  if (!response) return { schema: schema as never, url };
  const wrapped = Object.fromEntries(Object.entries(response).map(([status, s]) => [status, typeof s?.$id === 'string' ? { allOf: [s] } : s]));
  return { schema: { ...(schema as object), response: wrapped } as never, url };
}

function unwrapNamedResponses<D extends { paths: Record<string, Record<string, Operation>> }>(doc: D): D {
  for (const path of Object.values(doc.paths)) {
    for (const operation of Object.values(path)) {
      for (const response of Object.values(operation.responses)) {
        for (const media of Object.values((response.content ?? {}) as Record<string, { schema?: { allOf?: { $ref?: string }[] } }>)) {
          const only = media.schema?.allOf;
          if (only?.length === 1 && typeof only[0].$ref === 'string' && Object.keys(media.schema!).length === 1) media.schema = { $ref: only[0].$ref } as never;
        }
      }
    }
  }
  return doc;
}

/**
 * @fastify/swagger marks every request body required, but a POST or PATCH without a body is
 * taken as `{}` (http/app.ts): a body is required exactly when `{}` would be refused.
 */
function markOptionalBodies<D extends { paths: Record<string, Record<string, Operation>> }>(doc: D): D {
  for (const path of Object.values(doc.paths)) {
    for (const operation of Object.values(path)) {
      const body = operation.requestBody;
      if (!body) continue;
      body.required = Object.values(body.content).some((media) => (media.schema?.required ?? []).length > 0);
    }
  }
  return doc;
}

const webhookHeader = (name: string, description: string, maxLength: number) => ({ name, in: 'header', required: true, description, schema: { type: 'string', maxLength } });

/**
 * What a webhook endpoint receives (docs/api.md, "Webhooks"): a POST of one Event, signed. Its
 * schema is the one `GET /v1/events` answers with.
 */
const WEBHOOKS = {
  event: {
    post: {
      operationId: 'receiveEvent',
      summary: 'An event POSTed to a webhook endpoint',
      description: 'Verify webhook-signature over `webhook-id.webhook-timestamp.body` with the endpoint secret, answer 2xx, then handle the event by its type.',
      tags: ['events'],
      security: [],
      parameters: [
        webhookHeader('webhook-id', 'the event id (evt_…): the same event may arrive more than once; handle it once', 64),
        webhookHeader('webhook-timestamp', 'Unix seconds when this attempt was signed', 20),
        webhookHeader('webhook-signature', 'space-separated v1,<base64 HMAC-SHA256> signatures (two while a rolled secret is in its grace)', 1024),
        webhookHeader('x-svc-event-type', 'the event type', 64),
        webhookHeader('x-svc-mode', 'test or live', 8),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' } } } },
      responses: { '200': { description: 'any 2xx: delivered; anything else (or no answer in 10 seconds) is retried, 410 stops the retries' } },
    },
  },
};

/**
 * The server the document names (docs/api.md, "The OpenAPI document"): the public URL, which is
 * https in production; a plain-http one is a local install's and says so (`x-internal: true`).
 */
export function serversFor(publicUrl: string) {
  const local = publicUrl.startsWith('http:');
  return [
    local
      ? { url: publicUrl, description: 'local development (plain HTTP); production is served over HTTPS only', 'x-internal': true }
      : { url: publicUrl, description: 'production', 'x-internal': false },
  ];
}

/**
 * The OpenAPI 3.1 document, generated by @fastify/swagger from the routes' own schemas (never
 * written by hand). Console and page routes are hidden: the document is the /v1 contract.
 */
export async function installOpenApi(app: AnyApp, publicUrl: string): Promise<void> {
  app.addSchema(ErrorSchema);
  // Before swagger's own hook and before any route: every operation is complete when it is collected.
  app.addHook('onRoute', completeOperation);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Voice-calling API',
        version: '2026-08-04',
        description: 'Reseller API. Errors: {error:{type,code,message,request_id}}.',
        contact: { name: 'API support', url: publicUrl },
      },
      servers: serversFor(publicUrl),
      webhooks: WEBHOOKS as never,
      tags: TAGS,
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              'svc_test_… or svc_live_…. Each operation names the scopes its key needs in x-required-scopes (403 scope_missing without one)',
          },
          sessionToken: { type: 'http', scheme: 'bearer', description: 'a chat session token (svc_sess_…) minted by POST /v1/customers/{id}/sessions; never an API key' },
        },
      },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: wrapNamedResponses,
    transformObject: (document) => declareHeaders(unwrapNamedResponses(markOptionalBodies((document as { openapiObject: Parameters<typeof declareHeaders>[0] }).openapiObject))) as never,
  });
}
