import test from 'ava';
import { CallRequestSchema, CallSchema } from '../../http/schemas/calls.ts';

/**
 * The OpenAPI document names every waiting reason docs/api.md ("Calls") lists, on the request
 * and on the call (both carry `waiting_reason` while queued): issue 23 added `researching` and
 * `retry_scheduled`; a reseller reading only /v1/openapi.json must meet them there.
 */
const DOCUMENTED = ['frequency_cap', 'emergency_closure', 'researching', 'outside_calling_window', 'platform_at_capacity', 'concurrency_limit', 'insufficient_balance', 'retry_scheduled'];

const descriptionOf = (schema: any): string => schema.description ?? schema.anyOf?.map((s: any) => s.description ?? '').join(' ') ?? '';

for (const [name, schema] of [['call_request', CallRequestSchema], ['call', CallSchema]] as const) {
  test(`${name}.waiting_reason names every documented waiting reason`, (t) => {
    const text = descriptionOf((schema as any).properties.waiting_reason);
    t.deepEqual(DOCUMENTED.filter((r) => !new RegExp(`\\b${r}\\b`).test(text)), []);
  });
}
