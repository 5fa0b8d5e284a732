import type { AnyApp } from '../routes/app-type.ts';
import { Ajv, type ErrorObject, type AnySchema } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { ApiError, ERRORS, type ErrorCode } from '../errors.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    // Bodies are checked as sent: "5" is not a number and unknown fields are refused, never stripped.
    coerceTypes,
    removeAdditional: false,
    useDefaults: true,
    allErrors: false,
    // verbose puts the failing schema node on each error, so its x-error-code can be read.
    verbose: true,
    strict: false,
  });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'x-error-code' });
  return ajv;
}

/**
 * Body validation without coercion; querystring and path parameters (always text on the wire)
 * with it. Fastify's single default Ajv cannot do both.
 */
export function installValidators(app: AnyApp): void {
  const strict = makeAjv(false);
  const coercing = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as AnySchema));
}

type SchemaNode = { 'x-error-code'?: ErrorCode | Partial<Record<string, ErrorCode>>; properties?: Record<string, SchemaNode> };

function codeFor(node: SchemaNode | undefined, keyword: string): ErrorCode | undefined {
  const code = node?.['x-error-code'];
  if (!code) return undefined;
  if (typeof code === 'string') return keyword === 'maxLength' || keyword === 'maxItems' ? undefined : code;
  return code[keyword] ?? code.default;
}

/** Turns the first Ajv error of a request into the catalogue error a client can branch on. */
export function validationError(errors: ErrorObject[], part: string): ApiError {
  const e = errors[0];
  const where = part === 'body' ? '' : `${part === 'querystring' ? 'query parameter' : 'path parameter'} `;
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = [path, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
      return new ApiError('unknown_parameter', `Unknown ${where || 'parameter '}"${name}".`);
    }
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      const name = [path, missing].filter(Boolean).join('.');
      const code = codeFor((e.parentSchema as SchemaNode)?.properties?.[missing], 'required') ?? 'parameter_missing';
      return new ApiError(code, code === 'parameter_missing' ? `Missing required ${where || 'parameter '}"${name}".` : ERRORS[code].message);
    }
  }
  const node = e.parentSchema as SchemaNode;
  const field = path || (part === 'body' ? 'body' : part);
  const code = codeFor(node, e.keyword) ?? (e.keyword === 'maxLength' || e.keyword === 'maxItems' ? 'field_too_long' : 'invalid_parameter');
  // An enum names what it takes: the client learns the values without reading the schema.
  const allowed = e.keyword === 'enum' ? (e.params as { allowedValues?: unknown[] }).allowedValues : undefined;
  const message = allowed ? `must be one of ${allowed.map(String).join(', ')}` : (e.message ?? 'is invalid');
  const detail = `${where}"${field}" ${message}.`;
  return new ApiError(code, code === 'invalid_parameter' || code === 'field_too_long' ? `Invalid ${detail}` : `${ERRORS[code].message} (${detail})`);
}

type WalkNode = SchemaNode & {
  type?: string | string[];
  required?: string[];
  additionalProperties?: unknown;
  items?: WalkNode;
  anyOf?: WalkNode[];
  oneOf?: WalkNode[];
  allOf?: WalkNode[];
  minLength?: number;
} & Record<string, unknown>;

/** Keywords that refuse a value: each answers its node's x-error-code, or invalid_parameter. */
const REFUSING_KEYWORDS = ['type', 'minLength', 'pattern', 'enum', 'const', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'format', 'minItems'];

/**
 * Every code `validationError` can answer for a request part declared by `schema`: the inverse
 * of the mapping above, so the OpenAPI document lists exactly what validation says. A path
 * parameter is always one string, present and never empty (the router matched it), and the query
 * is always an object; a query value can still be an array (`?a=1&a=2`), so its type can fail.
 */
export function validationCodes(schema: unknown, part: 'params' | 'querystring' | 'body'): Set<ErrorCode> {
  const codes = new Set<ErrorCode>();
  const walk = (node: WalkNode | undefined, root = false) => {
    if (!node || typeof node !== 'object') return;
    for (const keyword of REFUSING_KEYWORDS) {
      if (node[keyword] === undefined) continue;
      if (keyword === 'type' && (root ? part !== 'body' : part === 'params' && [node.type].flat().includes('string'))) continue;
      if (keyword === 'minLength' && part === 'params' && (node.minLength ?? 0) <= 1) continue;
      codes.add(codeFor(node, keyword) ?? 'invalid_parameter');
    }
    for (const keyword of ['maxLength', 'maxItems']) if (node[keyword] !== undefined) codes.add(codeFor(node, keyword) ?? 'field_too_long');
    // The router matched every path parameter, and only those.
    if (root && part === 'params') return walkChildren(node);
    if (node.additionalProperties === false) codes.add('unknown_parameter');
    for (const name of node.required ?? []) codes.add(codeFor(node.properties?.[name], 'required') ?? 'parameter_missing');
    walkChildren(node);
  };
  const walkChildren = (node: WalkNode) => {
    for (const child of [...Object.values(node.properties ?? {}), node.items, ...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) walk(child as WalkNode);
  };
  walk(schema as WalkNode, true);
  return codes;
}
