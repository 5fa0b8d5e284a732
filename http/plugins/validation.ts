import type { AnyApp } from '../routes/app-type.ts';
import { Ajv, type ErrorObject, type AnySchema } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { ApiError, ERRORS, type ErrorCode } from '../errors.ts';
import { isEmailAddress } from '../../runtime/email-address.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** The `single-line` string format: no C0 or C1 control character (CR, LF, tab…), DEL, or line or paragraph separator. */
export const SINGLE_LINE = /^[^\p{Cc}\u2028\u2029]*$/u;

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
  // `email` is an address the email sender sends to (runtime/email-address.ts), not ajv-formats' wider
  // one: an address accepted here and refused there would be a 201 whose email dies.
  ajv.addFormat('email', isEmailAddress);
  // Text that may end up in a mail header or on one line of a page: no line break, tab or other control.
  ajv.addFormat('single-line', SINGLE_LINE);
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

/** How a field's JSON type is said to a person. */
const TYPE_WORDS: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'text',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

/** What a string format asks for, in words. */
const FORMAT_WORDS: Record<string, string> = {
  'date-time': 'a date and time with a zone, such as 2026-08-04T09:30:00Z',
  date: 'a date such as 2026-08-04',
  uuid: 'an id in UUID form',
  email: 'an email address',
  uri: 'a URL',
  'single-line': 'one line of text, without line breaks, tabs or other control characters',
};

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
const listOf = (words: string[]) => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`);

/**
 * What is wrong with the value named `field`, as a sentence for a person: the field by name and
 * the rule in words, never the validator's keyword or pattern. `e.params` holds the rule's limit.
 */
export function describeProblem(e: ErrorObject, field: string): string {
  const p = e.params as Record<string, unknown>;
  const schema = e.parentSchema as { minLength?: number; description?: string; format?: string } | undefined;
  switch (e.keyword) {
    case 'type': {
      const types = [p.type as string | string[]].flat().join(',').split(',');
      return `${field} must be ${listOf(types.map((type) => TYPE_WORDS[type] ?? type))}.`;
    }
    case 'enum':
      return `${field} must be one of ${(p.allowedValues as unknown[]).map((v) => (v === null ? 'null' : String(v))).join(', ')}.`;
    case 'const':
      return `${field} must be ${JSON.stringify(p.allowedValue)}.`;
    case 'format':
      return `${field} must be ${FORMAT_WORDS[p.format as string] ?? `a valid ${p.format}`}.`;
    case 'pattern':
      // A pattern of "some character that is not a space" is a rule against blank text.
      if (p.pattern === '\\S') return `${field} must not be blank.`;
      // The form in words where the schema has them (its format, else its description: 'HH:MM'…).
      if (schema?.format && FORMAT_WORDS[schema.format]) return `${field} must be ${FORMAT_WORDS[schema.format]}.`;
      return schema?.description ? `${field} is not in the form this field takes: ${schema.description}.` : `${field} is not in the form this field takes.`;
    case 'minLength':
      return (schema?.minLength ?? 0) <= 1 ? `${field} must not be empty.` : `${field} must be at least ${plural(p.limit as number, 'character')} long.`;
    case 'maxLength':
      return `${field} must be at most ${plural(p.limit as number, 'character')} long.`;
    case 'minimum':
      return `${field} must be ${p.limit} or more.`;
    case 'maximum':
      return `${field} must be ${p.limit} or less.`;
    case 'exclusiveMinimum':
      return `${field} must be more than ${p.limit}.`;
    case 'exclusiveMaximum':
      return `${field} must be less than ${p.limit}.`;
    case 'multipleOf':
      return `${field} must be a multiple of ${p.multipleOf}.`;
    case 'minItems':
      return `${field} must hold at least ${plural(p.limit as number, 'item')}.`;
    case 'maxItems':
      return `${field} must hold at most ${plural(p.limit as number, 'item')}.`;
    case 'uniqueItems':
      return `${field} must not hold the same item twice.`;
    case 'minProperties':
      return `${field} must have at least ${plural(p.limit as number, 'field')}.`;
    case 'maxProperties':
      return `${field} must have at most ${plural(p.limit as number, 'field')}.`;
    case 'anyOf':
    case 'oneOf': {
      // With `verbose`, the error carries the branches: a choice of values, or of types.
      const branches = (Array.isArray(e.schema) ? e.schema : []) as { const?: unknown; type?: string | string[] }[];
      if (branches.length && branches.every((b) => 'const' in b)) return `${field} must be one of ${branches.map((b) => String(b.const)).join(', ')}.`;
      const types = branches.flatMap((b) => [b.type ?? []].flat());
      if (branches.length && types.length >= branches.length) return `${field} must be ${listOf([...new Set(types)].map((type) => TYPE_WORDS[type] ?? type))}.`;
      return `${field} is none of the forms this field takes (see the API reference).`;
    }
    case 'not':
      return `${field} has a value this field does not take.`;
    default:
      return `${field} is not a value this field takes.`;
  }
}

/** Turns the first Ajv error of a request into the catalogue error a client can branch on, with a message for a person. */
export function validationError(errors: ErrorObject[], part: string): ApiError {
  // ajv reports a failed anyOf after the errors of its branches. When no branch even had the
  // value's kind ("must be test" of test | live, a number for a list or text), the union says it
  // best; a branch that took the kind and failed on a rule (51 turns of `history`, a turn without
  // its content) says more, with the code of that rule.
  const union = errors.findIndex((x) => x.keyword === 'anyOf' || x.keyword === 'oneOf');
  const kindOnly = union > 0 && errors.slice(0, union).every((x) => x.instancePath === errors[union].instancePath && ['type', 'const', 'enum'].includes(x.keyword));
  const e = kindOnly ? errors[union] : errors[0];
  const where = part === 'body' ? '' : `${part === 'querystring' ? 'query parameter' : 'path parameter'} `;
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const named = (name: string) => `${where}"${name}"`;
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = [path, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
      return new ApiError('unknown_parameter', `${capitalised(named(name))} is not a ${where ? 'parameter' : 'field'} this endpoint takes.`);
    }
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      const name = [path, missing].filter(Boolean).join('.');
      const code = codeFor((e.parentSchema as SchemaNode)?.properties?.[missing], 'required') ?? 'parameter_missing';
      const sentence = `${capitalised(named(name))} is required.`;
      return new ApiError(code, code === 'parameter_missing' ? sentence : `${ERRORS[code].message} ${sentence}`);
    }
  }
  const node = e.parentSchema as SchemaNode;
  const code = codeFor(node, e.keyword) ?? (e.keyword === 'maxLength' || e.keyword === 'maxItems' ? 'field_too_long' : 'invalid_parameter');
  const field = path ? named(path) : part === 'body' ? 'The body' : `The ${where.trim()}`;
  const sentence = capitalised(describeProblem(e, field));
  return new ApiError(code, code === 'invalid_parameter' || code === 'field_too_long' ? sentence : `${ERRORS[code].message} ${sentence}`);
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

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
const REFUSING_KEYWORDS = ['type', 'minLength', 'pattern', 'enum', 'const', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'format', 'minItems', 'anyOf', 'oneOf'];

/**
 * Every code `validationError` can answer for a request part declared by `schema`: the inverse
 * of the mapping above, so the OpenAPI document lists exactly what validation says. A path
 * parameter is always one string and present (the router matched it), but it can be empty in the
 * middle of a path (`/v1/customers//limits`); the query is always an object, and a query value
 * can still be an array (`?a=1&a=2`), so its type can fail.
 */
export function validationCodes(schema: unknown, part: 'params' | 'querystring' | 'body'): Set<ErrorCode> {
  const codes = new Set<ErrorCode>();
  const walk = (node: WalkNode | undefined, root = false) => {
    if (!node || typeof node !== 'object') return;
    for (const keyword of REFUSING_KEYWORDS) {
      if (node[keyword] === undefined) continue;
      if (keyword === 'type' && (root ? part !== 'body' : part === 'params' && [node.type].flat().includes('string'))) continue;
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
