import test from 'ava';
import fs from 'node:fs';
import { ERRORS } from '../../http/errors.ts';

const doc = fs.readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');

test('every catalogue code is listed in docs/api.md with its status and type', (t) => {
  for (const [code, entry] of Object.entries(ERRORS)) {
    const row = new RegExp(`^\\| \`${code}\` \\| ${entry.status} \\| ${entry.type} \\|$`, 'm');
    t.regex(doc, row, code);
  }
});

test('docs/api.md lists no code the catalogue does not have', (t) => {
  const table = doc.slice(doc.indexOf('## Error codes'));
  const listed = [...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
  t.deepEqual(listed.filter((c) => !(c in ERRORS)), []);
  t.is(listed.length, Object.keys(ERRORS).length);
});

test('the spec\'s shared-schema codes and endpoint codes of this issue are all in the catalogue', (t) => {
  for (const code of [
    'invalid_api_key', 'key_revoked', 'key_rotated', 'key_expired', 'scope_missing', 'ip_not_allowed', 'reseller_suspended',
    'live_not_enabled', 'customer_not_found', 'idempotency_key_reused', 'rate_limit_exceeded', 'invalid_limit', 'invalid_json',
    'api_error', 'name_required', 'country_not_supported', 'invalid_brand_field', 'customer_limit_reached',
    'provisioning_not_recorded', 'onboarding_link_not_created',
  ]) {
    t.true(code in ERRORS, code);
  }
});
