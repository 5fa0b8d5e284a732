import test from 'ava';
import fc from 'fast-check';
import type { FastifyRequest } from 'fastify';
import { assertStorableRequest, findUnstorable, isStorableText } from '../../http/plugins/storable-text.ts';
import { ApiError } from '../../http/errors.ts';

/** Any string of UTF-16 code units: well-formed text, NUL, and lone surrogates of either half. */
const anyUnits = fc.string({
  unit: fc.oneof(fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\ud83d', '\ude00'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
});

test('storable exactly when the text survives UTF-8 unchanged (what the driver sends) and holds no NUL', (t) => {
  fc.assert(
    fc.property(anyUnits, (s) => {
      const survives = Buffer.from(s, 'utf8').toString('utf8') === s;
      return isStorableText(s) === (survives && !s.includes('\u0000'));
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('well-formed pairs (emoji, astral characters) are ordinary text', (t) => {
  t.true(isStorableText('Smile \u{1F600} \u{10FFFF} \u{1D11E}'));
  t.false(isStorableText('half \ud83d'));
  t.false(isStorableText('\ude00 half'));
  t.false(isStorableText('reversed \ude00\ud83d'));
  t.false(isStorableText('nul \u0000'));
  t.true(isStorableText(''));
});

test('findUnstorable names the first bad string at any depth, or the object holding a bad key', (t) => {
  t.is(findUnstorable({ a: 'ok', b: { c: ['ok', 'x\u0000'] } }), 'b.c.1');
  t.is(findUnstorable({ history: [{ role: 'user', content: '\ud800' }] }), 'history.0.content');
  t.is(findUnstorable({ a: { ['k\u0000']: 1 } }), 'a (a field name)');
  t.is(findUnstorable({ ['\udc00']: 1 }), '(a field name)');
  t.is(findUnstorable('\u0000'), '');
  t.is(findUnstorable({ a: 1, b: null, c: true, d: ['fine', { e: 'fine' }] }), null);
  t.is(findUnstorable(undefined), null);
  t.is(findUnstorable(Buffer.from([0])), null, 'raw bytes are not text');
});

const request = (parts: Partial<Pick<FastifyRequest, 'params' | 'query' | 'body' | 'headers' | 'url'>>) =>
  ({ url: '/v1/x', params: {}, query: {}, body: undefined, headers: {}, ...parts }) as FastifyRequest;

const refusal = (r: FastifyRequest) => {
  try {
    assertStorableRequest(r);
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, status: err.status, message: err.message };
  }
};

test('a request is checked in its path, query, body and stored headers; the message names where, never the text', (t) => {
  t.like(refusal(request({ params: { id: '\u0000' } })), { code: 'invalid_string', status: 400, message: 'Invalid path parameter "id": text may not contain NUL (U+0000) or an unpaired UTF-16 surrogate.' });
  t.regex(refusal(request({ query: { starting_after: '\ud800' } }))!.message, /query parameter "starting_after"/);
  t.regex(refusal(request({ body: { brand: { name: 'a\u0000' } } }))!.message, /^Invalid "brand\.name":/);
  t.regex(refusal(request({ headers: { 'idempotency-key': 'k\u0000' } }))!.message, /header "idempotency-key"/);
  t.is(refusal(request({ headers: { 'user-agent': 'x\u0000' } })), null, 'a header that is never stored is not this check\'s business');
  t.is(refusal(request({ params: { id: 'ok' }, query: { limit: 10 }, body: { name: 'Smile \u{1F600}' }, headers: { 'idempotency-key': 'k-1' } })), null);
  for (const r of [request({ body: { x: '\u0000' } }), request({ params: { id: '\udfff' } })]) t.notRegex(refusal(r)!.message, /[\u0000\ud800-\udfff]/);
});

test('a query string whose percent-encoding is not UTF-8 is refused; other odd text is left to the parser', (t) => {
  t.regex(refusal(request({ url: '/v1/customers?starting_after=%ED%A0%80' }))!.message, /query string/);
  t.like(refusal(request({ url: '/v1/customers?starting_after=a%FFb' })), { code: 'invalid_string' });
  t.is(refusal(request({ url: '/v1/customers?starting_after=%F0%9F%98%80&x=%zz&y=100%' })), null);
  t.is(refusal(request({ url: '/v1/customers/%ED%A0%80' })), null, 'the path is the router\'s (FST_ERR_BAD_URL)');
});
