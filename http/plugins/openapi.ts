import type { AnyApp } from '../routes/app-type.ts';
import swagger from '@fastify/swagger';
import type { RouteOptions } from 'fastify';
import { ErrorSchema, Type, withMoreCodes } from '../schemas/common.ts';
import type { ErrorCode } from '../errors.ts';
import { validationCodes } from './validation.ts';

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
  if (!isOperation(route)) return;
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
  schema.response = response;
  route.schema = schema;
}

type Operation = { requestBody?: { required?: boolean; content: Record<string, { schema?: { required?: string[] } }> } };

/**
 * @fastify/swagger marks every request body required, but a POST or PATCH without a body is
 * taken as `{}` (http/app.ts): a body is required exactly when `{}` would be refused.
 */
function markOptionalBodies(doc: { paths: Record<string, Record<string, Operation>> }) {
  for (const path of Object.values(doc.paths)) {
    for (const operation of Object.values(path)) {
      const body = operation.requestBody;
      if (!body) continue;
      body.required = Object.values(body.content).some((media) => (media.schema?.required ?? []).length > 0);
    }
  }
  return doc;
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
      servers: [{ url: publicUrl }],
      tags: TAGS,
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'svc_test_… or svc_live_…' } } },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transformObject: (document) => markOptionalBodies((document as { openapiObject: never }).openapiObject) as never,
  });
}
