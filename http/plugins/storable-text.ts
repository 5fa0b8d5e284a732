import type { FastifyRequest } from 'fastify';
import type { AnyApp } from '../routes/app-type.ts';
import { ApiError } from '../errors.ts';
import { IDEMPOTENCY_HEADER } from './idempotency.ts';

/**
 * What PostgreSQL cannot hold as text: NUL (refused in `text` and in `jsonb`, where it fails the
 * statement and used to surface as a 500), and a UTF-16 surrogate without its pair (it has no
 * UTF-8 form, so the driver silently stores U+FFFD instead of what was sent). With the `u` flag a
 * well-formed pair is one code point outside D800–DFFF, so only a lone half matches.
 */
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

/** True when `text` can be stored as sent. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** Marks, on the walk's stack, a field name found unstorable: reported when its turn comes. */
const UNSTORABLE_NAME = Symbol('unstorable field name');

/**
 * The dotted path of the first string (a value or an object key, at any depth) that cannot be
 * stored, or null when every string can. `path` names `value` itself. The walk keeps its own
 * stack instead of recursing, so no nesting of a value can run it out of call stack.
 */
export function findUnstorable(value: unknown, path = ''): string | null {
  // Most requests carry no text at all (a GET without query or parameters): no walk to set up.
  if (value === undefined || value === null || (typeof value === 'object' && isEmptyPlainObject(value))) return null;
  if (typeof value === 'string') return isStorableText(value) ? null : path;
  const pending: [unknown, string][] = [[value, path]];
  while (pending.length) {
    const [item, where] = pending.pop()!;
    if (typeof item === 'string') {
      if (!isStorableText(item)) return where;
    } else if (Array.isArray(item)) {
      // Children in reverse, so the first in document order is looked at first.
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], at(where, i)]);
    } else if (item !== null && typeof item === 'object' && !Buffer.isBuffer(item)) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        pending.push([child, at(where, key)]);
        // A name that cannot be stored is reported by where it sits, never by itself.
        if (!isStorableText(key)) pending.push([UNSTORABLE_NAME, where ? `${where} (a field name)` : '(a field name)']);
      }
    } else if (item === UNSTORABLE_NAME) {
      return where;
    }
  }
  return null;
}

/** The dotted path of `key` under `base` (a top-level function: no closure made per walk). */
function at(base: string, key: string | number): string {
  return base ? `${base}.${key}` : String(key);
}

/** An object without any enumerable key (fastify's params and query of most requests): the walk would find nothing in it. */
function isEmptyPlainObject(value: object): boolean {
  for (const _ in value) return false;
  return true;
}

/** Throws `invalid_string` naming where the text is when `value` holds text that cannot be stored. */
function assertStorable(value: unknown, where: 'body' | 'query parameter' | 'path parameter' | 'header', name = ''): void {
  const found = findUnstorable(value, name);
  if (found === null) return;
  // The offending text is never echoed: it may not even be printable.
  const field = where === 'body' ? `"${found || 'body'}"` : `${where} "${found}"`;
  throw new ApiError('invalid_string', `Invalid ${field}: text may not contain NUL (U+0000) or an unpaired UTF-16 surrogate.`);
}

/** A run of percent-escapes: it must decode as UTF-8 (a lone surrogate cannot be encoded as one). */
const ENCODED_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * True when every percent-encoded run of a raw query string decodes as UTF-8. The query parser
 * keeps such a run as literal text, so without this `%ED%A0%80` would quietly become the string
 * "%ED%A0%80" where the path answers it with invalid_string.
 */
export function decodesAsUtf8(raw: string): boolean {
  for (const [run] of raw.matchAll(ENCODED_RUN)) {
    try {
      decodeURIComponent(run);
    } catch {
      return false;
    }
  }
  return true;
}

/** Request headers whose value is stored (the rest are only compared or hashed). */
const STORED_HEADERS = [IDEMPOTENCY_HEADER] as const;

/** Checks every text a request carries into the service: path, query, body and stored headers. */
export function assertStorableRequest(request: FastifyRequest): void {
  const q = request.url.indexOf('?');
  if (q >= 0 && !decodesAsUtf8(request.url.slice(q + 1))) {
    throw new ApiError('invalid_string', 'Invalid query string: its percent-encoding is not valid UTF-8.');
  }
  assertStorable(request.params, 'path parameter');
  assertStorable(request.query, 'query parameter');
  assertStorable(request.body, 'body');
  for (const name of STORED_HEADERS) {
    const value = request.headers[name];
    if (value !== undefined) assertStorable(value, 'header', name);
  }
}

/**
 * One check for every route, so no field of any schema (present or future) can carry such text
 * to PostgreSQL. It runs before validation, so such text is reported as itself whatever else the
 * field's schema says, and again first among the preHandler hooks: a route's own preValidation
 * may turn text into values (the chat route parses a `history` string into its array), and the
 * idempotency lookup and every handler come after.
 */
export function installStorableText(app: AnyApp): void {
  // The callback form: no promise and no microtask per request.
  const check = (request: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
    try {
      assertStorableRequest(request);
    } catch (err) {
      return done(err as Error);
    }
    done();
  };
  app.addHook('preValidation', check);
  app.addHook('preHandler', check);
}
