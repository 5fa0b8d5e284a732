import test from 'ava';
import fc from 'fast-check';
import { Value } from 'typebox/value';
import { readinessFactsArb } from '../helpers/readiness-facts.ts';
import { assessReadiness } from '../../actors/customer/readiness.ts';
import { readinessView } from '../../actors/customer/views.ts';
import { ReadinessSchema } from '../../http/schemas/customers.ts';
import type { ReadinessRow } from '../../db/readiness.ts';

/*
 * GET /v1/customers/{id}/readiness is written with JSON.stringify, not by its response schema
 * (http/routes/readiness.ts), so the view must be exactly the schema's document: every field of
 * the right type, and nothing the schema does not declare (which the schema's serialiser would
 * have dropped), for any facts, in either mode, in any country.
 */
const rowArb = fc.record({
  customer_id: fc.uuid(),
  external_ref: fc.option(fc.string({ maxLength: 20 }), { nil: null }),
  country: fc.constantFrom('US', 'CA', 'GB', 'DE'),
  calling_language: fc.option(fc.constantFrom('en', 'fr', 'de'), { nil: null }),
});

test('the readiness view holds exactly what its response schema declares, for every combination of facts', (t) => {
  fc.assert(
    fc.property(readinessFactsArb, rowArb, (facts, row) => {
      const view = readinessView(row as unknown as ReadinessRow, assessReadiness(facts));
      const written = JSON.stringify(view);
      // Of the right types (so the schema's serialiser would coerce nothing)…
      if (!Value.Check(ReadinessSchema, JSON.parse(written))) return false;
      // …and nothing it would leave out.
      return JSON.stringify(Value.Clean(ReadinessSchema, JSON.parse(written))) === written;
    }),
    { numRuns: 500 },
  );
  t.pass();
});

test('the check notices a field the schema does not declare, at the top and inside a blocker', (t) => {
  const view = readinessView({ customer_id: 'c', external_ref: null, country: 'US', calling_language: null } as unknown as ReadinessRow, assessReadiness({ ...fc.sample(readinessFactsArb, 1)[0], agreementSigned: false }));
  const written = JSON.stringify({ ...view, internal: 1 });
  t.not(JSON.stringify(Value.Clean(ReadinessSchema, JSON.parse(written))), written);
  const inBlocker = JSON.stringify({ ...view, blockers: view.blockers.map((b) => ({ ...b, note: 'x' })) });
  t.true(view.blockers.length > 0);
  t.not(JSON.stringify(Value.Clean(ReadinessSchema, JSON.parse(inBlocker))), inBlocker);
});
