import type { AnyApp } from '../routes/app-type.ts';
import { ApiError } from '../errors.ts';

/**
 * How deep a JSON body may nest: the top-level object or array is level 1. No schema goes deeper
 * than a few levels, and every walker of a body (the storable-text check, validation, the
 * Idempotency-Key hash) then works on a bounded value (docs/api.md, Bodies).
 */
export const MAX_JSON_DEPTH = 64;

/** What one linear pass over a JSON text found, before it is parsed. */
export interface JsonTextFacts {
  /** The deepest nesting of objects and arrays (0 for a bare value). */
  depth: number;
  /**
   * A whole number written without fraction or exponent that a JavaScript number cannot hold
   * exactly (beyond ±9007199254740991): JSON.parse would silently round it.
   */
  unsafeInteger: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * Measures a JSON text without parsing it: one loop, no recursion, so a body of 10,000 nested
 * arrays costs what its bytes cost. It stops counting at `maxDepth + 1`. Text that is not JSON
 * is measured as well as it can be; JSON.parse refuses it afterwards.
 */
export function measureJsonText(text: string, maxDepth = MAX_JSON_DEPTH): JsonTextFacts {
  let depth = 0;
  let deepest = 0;
  let unsafeInteger = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string, escapes included.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > maxDepth) break;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const start = i;
      while (i + 1 < text.length && /[0-9.eE+-]/.test(text[i + 1])) i++;
      const token = text.slice(start, i + 1);
      // Fifteen digits or fewer always fit; a fraction or exponent is a number, not a whole one as written.
      if (!unsafeInteger && token.length > 15 && /^-?\d+$/.test(token) && !Number.isSafeInteger(Number(token))) unsafeInteger = true;
    }
  }
  return { depth: deepest, unsafeInteger };
}

/** Refuses a JSON text nested deeper than MAX_JSON_DEPTH, before it is parsed. */
export function assertJsonDepth(text: string, what = 'The request body'): JsonTextFacts {
  const facts = measureJsonText(text);
  if (facts.depth > MAX_JSON_DEPTH) {
    throw new ApiError('invalid_json', `${what} nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  return facts;
}

/**
 * JSON bodies: an empty body is no body (clients often send the header anyway); one nested too
 * deep is `invalid_json` before it is parsed (so no walker of it can run out of stack, and no
 * stack is logged for what a client sent); the parser itself is fastify's own, which refuses
 * __proto__ poisoning. A whole number beyond ±2^53−1 is parsed rounded, so at least 2^53 in size:
 * every integer of every schema has a maximum below that (a contract test checks), so validation
 * refuses it with the field's own code; the hook below refuses it where no schema would.
 */
export function installJsonBody(app: AnyApp): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.decorateRequest('unsafeIntegerInBody', false);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      request.unsafeIntegerInBody = assertJsonDepth(text).unsafeInteger;
    } catch (err) {
      return done(err as Error, undefined);
    }
    json(request, text, done);
  });
  app.addHook('preHandler', async (request) => {
    if (request.unsafeIntegerInBody) {
      throw new ApiError('invalid_parameter', 'A whole number in the body is larger than 9007199254740991 (or smaller than its negative) and cannot be kept exactly.');
    }
  });
}
