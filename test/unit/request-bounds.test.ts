import test from 'ava';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { assertJsonDepth, jsonDepth } from '../../http/plugins/json-body.ts';
import { findUnstorable } from '../../http/plugins/storable-text.ts';
import { describeProblem, SINGLE_LINE, validationError } from '../../http/plugins/validation.ts';
import { checkBrandField } from '../../actors/account/account-rules.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

test('the depth of a JSON text is measured in one pass, strings and escapes skipped', (t) => {
  t.is(jsonDepth('1'), 0);
  t.is(jsonDepth('{}'), 1);
  t.is(jsonDepth('[[{"a":[1]}]]'), 4);
  t.is(jsonDepth('{"a":"[[[[[[","b":"\\"[[["}'), 1, 'brackets inside strings, escaped quotes included, do not count');
  t.is(jsonDepth('[[],[],[[]]]'), 3);
  t.is(jsonDepth('['.repeat(64) + ']'.repeat(64)), 64);
  t.true(jsonDepth('['.repeat(1_000_000)) > 64, 'a megabyte of brackets is measured without running out of stack');
  t.notThrows(() => assertJsonDepth('['.repeat(64) + ']'.repeat(64)));
  t.like(t.throws(() => assertJsonDepth('['.repeat(65) + ']'.repeat(65))), { code: 'invalid_json', status: 400, message: 'The request body nests objects and arrays deeper than 64 levels.' });
});

test('the storable-text walk keeps its own stack: 100,000 levels are walked, and the first bad text in document order is named', (t) => {
  let deep: unknown = 'a\u0000';
  for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { k: deep };
  t.is(findUnstorable(deep)?.split('.').length, 100_000);
  t.is(findUnstorable({ a: ['ok', { b: 'x\u0000' }], c: '\u0000' }), 'a.1.b');
  t.is(findUnstorable({ a: 'ok', '\u0000': 1, c: '\u0000' }), '(a field name)');
  t.is(findUnstorable({ a: { b: 'x\u0000' }, '\u0000': 1 }), 'a.b');
  t.is(findUnstorable({ a: ['ok', 'fine'] }), null);
});

/** The first error ajv gives for `data` against `schema`, as the service's validator compiles it. */
function firstError(schema: object, data: unknown): ErrorObject[] {
  const ajv = new Ajv({ allErrors: false, verbose: true, strict: false });
  addFormats(ajv);
  ajv.addFormat('single-line', SINGLE_LINE);
  ajv.addKeyword({ keyword: 'x-error-code' });
  const validate = ajv.compile(schema);
  if (validate(data)) throw new Error('valid');
  return validate.errors!;
}

const messageOf = (schema: object, data: unknown, part = 'body') => validationError(firstError({ type: 'object', properties: { f: schema } }, { f: data }), part).message;

test('every keyword a schema here can fail on is said in words, naming the field, never the keyword', (t) => {
  const cases: [object, unknown, string][] = [
    [{ type: 'integer' }, 'x', '"f" must be a whole number.'],
    [{ type: ['integer', 'null'] }, 'x', '"f" must be a whole number or null.'],
    [{ type: ['string', 'null'] }, 1, '"f" must be text or null.'],
    [{ type: 'boolean' }, 1, '"f" must be true or false.'],
    [{ type: 'array' }, 1, '"f" must be a list.'],
    [{ type: 'object' }, 1, '"f" must be an object.'],
    [{ type: 'number' }, 'x', '"f" must be a number.'],
    [{ type: 'string', pattern: '\\S' }, '  ', '"f" must not be blank.'],
    [{ type: 'string', pattern: '^[A-Z]{2}$' }, 'usa', '"f" is not in the form this field takes.'],
    // The form in words where the schema has them: a booking time ('9:00'), an email address.
    [{ type: 'string', pattern: '^([01][0-9]|2[0-4]):[0-5][0-9]$', description: "local wall time 'HH:MM', 24 h ('24:00' ends the day)" }, '9:00', `"f" is not in the form this field takes: local wall time 'HH:MM', 24 h ('24:00' ends the day).`],
    [{ type: 'string', format: 'email', pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$' }, 'not-an-email@x', '"f" must be an email address.'],
    [{ type: 'string', format: 'date-time' }, 'soon', '"f" must be a date and time with a zone, such as 2026-08-04T09:30:00Z.'],
    [{ type: 'string', format: 'uuid' }, 'x', '"f" must be an id in UUID form.'],
    [{ type: 'string', format: 'single-line' }, 'a\r\nb', '"f" must be one line of text, without line breaks, tabs or other control characters.'],
    [{ type: 'integer', minimum: 0 }, -1, '"f" must be 0 or more.'],
    [{ type: 'integer', maximum: 2147483647 }, 2147483648, '"f" must be 2147483647 or less.'],
    [{ type: 'integer', exclusiveMinimum: 0 }, 0, '"f" must be more than 0.'],
    [{ type: 'integer', exclusiveMaximum: 10 }, 10, '"f" must be less than 10.'],
    [{ type: 'string', minLength: 1 }, '', '"f" must not be empty.'],
    [{ type: 'string', minLength: 3 }, 'ab', '"f" must be at least 3 characters long.'],
    [{ type: 'string', maxLength: 1000 }, 'x'.repeat(1001), '"f" must be at most 1,000 characters long.'],
    [{ type: 'string', enum: ['test', 'live'] }, 'staging', '"f" must be one of test, live.'],
    [{ const: 'list' }, 'x', '"f" must be "list".'],
    [{ anyOf: [{ const: 'test' }, { const: 'live' }] }, 'x', '"f" must be one of test, live.'],
    [{ oneOf: [{ type: 'array' }, { type: 'string' }] }, 1, '"f" must be a list or text.'],
    [{ type: 'array', minItems: 1 }, [], '"f" must hold at least 1 item.'],
    [{ type: 'array', maxItems: 4 }, [1, 2, 3, 4, 5], '"f" must hold at most 4 items.'],
    [{ type: 'array', uniqueItems: true }, [1, 1], '"f" must not hold the same item twice.'],
    [{ type: 'integer', multipleOf: 5 }, 3, '"f" must be a multiple of 5.'],
    [{ type: 'object', additionalProperties: false }, { g: 1 }, '"f.g" is not a field this endpoint takes.'],
    [{ type: 'object', required: ['g'] }, {}, '"f.g" is required.'],
  ];
  for (const [schema, data, expected] of cases) {
    const message = messageOf(schema, data);
    t.is(message, expected, JSON.stringify(schema));
    t.notRegex(message, /must match|must NOT|must have|pattern|minLength|maxLength|anyOf|oneOf|integer|additional|\\S/, JSON.stringify(schema));
  }
  t.is(describeProblem(firstError({ type: 'integer' }, 'x')[0], 'The body'), 'The body must be a whole number.');
  t.is(validationError(firstError({ type: 'object', properties: { limit: { type: 'integer', minimum: 1 } } }, { limit: 0 }), 'querystring').message, 'Query parameter "limit" must be 1 or more.');
});

test('a field with its own code keeps its catalogue message and adds what is wrong with it', (t) => {
  const limit = { type: ['integer', 'null'], minimum: 0, maximum: 1_000_000_000_000, 'x-error-code': 'invalid_limit' };
  const e = validationError(firstError({ type: 'object', properties: { monthly_spend_cap_cents: limit } }, { monthly_spend_cap_cents: 'ten' }), 'body');
  t.is(e.code, 'invalid_limit');
  t.is(e.message, 'A limit must be a non-negative whole number or null. "monthly_spend_cap_cents" must be a whole number or null.');
  const over = validationError(firstError({ type: 'object', properties: { monthly_spend_cap_cents: limit } }, { monthly_spend_cap_cents: 1e20 }), 'body');
  t.is(over.message, 'A limit must be a non-negative whole number or null. "monthly_spend_cap_cents" must be 1000000000000 or less.');
});

test('brand fields, which become mail headers, refuse every control character and the line separators', (t) => {
  for (const field of ['display_name', 'email_from_name', 'support_email', 'logo_url', 'domain', 'primary_color'] as const) {
    for (const bad of ['\r', '\n', '\t', '\u0000', '\u001b', '\u007f', '\u0085', '\u009f', '\u2028', '\u2029']) {
      t.like(t.throws(() => checkBrandField(field, `x${bad}y`)), { code: 'invalid_brand_field' }, `${field} ${JSON.stringify(bad)}`);
    }
  }
  t.notThrows(() => checkBrandField('email_from_name', 'Northwind Calls — Ünïcode 📞 ‏עברית'));
  t.notThrows(() => checkBrandField('display_name', null));
});
