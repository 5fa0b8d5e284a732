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
  const detail = `${where}"${field}" ${e.message ?? 'is invalid'}.`;
  return new ApiError(code, code === 'invalid_parameter' || code === 'field_too_long' ? `Invalid ${detail}` : `${ERRORS[code].message} (${detail})`);
}
