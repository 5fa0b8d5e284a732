/** The console's copies of server value lists (console/src/lists.ts) are the server's. */
import test from 'ava';
import { EVENT_TYPES as CONSOLE_EVENT_TYPES, KEY_ROTATION_GRACE_MS, KEY_SCOPES, MAX_ROLL_GRACE_SECONDS as CONSOLE_MAX_GRACE } from '../../console/src/lists.ts';
import { ROTATION_GRACE_MS, SCOPES } from '../../actors/account/api-key-rules.ts';
import { EVENT_TYPES, MAX_ROLL_GRACE_SECONDS } from '../../actors/webhooks/endpoints.ts';

test('key scopes, event types and the two grace periods match the server', (t) => {
  t.deepEqual([...KEY_SCOPES], [...SCOPES]);
  t.deepEqual([...CONSOLE_EVENT_TYPES], [...EVENT_TYPES]);
  t.is(CONSOLE_MAX_GRACE, MAX_ROLL_GRACE_SECONDS);
  t.is(KEY_ROTATION_GRACE_MS, ROTATION_GRACE_MS);
});
