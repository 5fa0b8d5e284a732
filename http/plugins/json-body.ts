import type { AnyApp } from '../routes/app-type.ts';
import { ApiError } from '../errors.ts';

/**
 * How deep a JSON body may nest: the top-level object or array is level 1. No schema goes deeper
 * than a few levels, and every walker of a body (the storable-text check, validation, the
 * Idempotency-Key hash) then works on a bounded value (docs/api.md, Bodies).
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENING = new Set([0x5b, 0x7b]); // [ {
const CLOSING = new Set([0x5d, 0x7d]); // ] }

/**
 * How deep a JSON text nests objects and arrays (0 for a bare value), measured without parsing
 * it: one loop, no recursion, so a body of 10,000 nested arrays costs what its bytes cost. It
 * stops counting past `maxDepth`. Text that is not JSON is measured as well as it can be;
 * JSON.parse refuses it afterwards.
 */
export function jsonDepth(text: string, maxDepth = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string, escapes included.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (OPENING.has(c)) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > maxDepth) break;
    } else if (CLOSING.has(c)) {
      depth--;
    }
  }
  return deepest;
}

/** Refuses a JSON text nested deeper than MAX_JSON_DEPTH (`invalid_json`), before it is parsed. */
export function assertJsonDepth(text: string, what = 'The request body'): void {
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw new ApiError('invalid_json', `${what} nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`);
}

/**
 * JSON bodies: an empty body is no body (clients often send the header anyway); one nested too
 * deep is `invalid_json` before it is parsed, so no walker of it (the storable-text check,
 * validation, the Idempotency-Key hash) can run out of stack and no stack is logged for what a
 * client sent; the parser itself is fastify's own, which refuses __proto__ poisoning.
 *
 * A whole number beyond ±(2^53−1), such as 9007199254740993, parses rounded, and rounding never
 * makes it smaller: it is at least 2^53 in size. Every integer of every schema has a maximum
 * below that (docs/api.md; the OpenAPI contract test checks the document's), so validation
 * refuses it with the field's own code (`invalid_limit` for a cap) instead of storing it rounded.
 */
export function installJsonBody(app: AnyApp): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      assertJsonDepth(text);
    } catch (err) {
      return done(err as Error, undefined);
    }
    json(request, text, done);
  });
}
