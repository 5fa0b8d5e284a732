import test from 'ava';
import { WAITING_REASONS } from '../../http/schemas/calls.ts';
import { CallSchema } from '../../http/schemas/calls.ts';

// Issue 26: a queued request's waiting_reason is an enum a generated client can type, listing every
// reason the dialler writes (docs/api.md, Calls), named here literally.
test('waiting_reason lists the blockers, the gates, the money refusals, the planned retry and the research', (t) => {
  for (const reason of [
    'no_number_in_country', 'dnc_registry_stale', 'kyb_incomplete', 'not_ready', 'frequency_cap', 'emergency_closure', 'outside_calling_window',
    'platform_at_capacity', 'no_caller_id', 'researching', 'retry_scheduled', 'insufficient_balance', 'spend_cap_daily', 'spend_cap_monthly',
    'customer_spend_cap_daily', 'customer_spend_cap_monthly', 'concurrency_limit',
  ]) t.true(WAITING_REASONS.includes(reason), reason);
  t.is(new Set(WAITING_REASONS).size, WAITING_REASONS.length, 'each once');
  const schema = (CallSchema as any).properties.waiting_reason;
  t.deepEqual(schema.enum, [...WAITING_REASONS, null]);
});
