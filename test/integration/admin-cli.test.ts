import test from 'ava';
import { startTestService, ADMIN_TOKEN, type TestService } from '../helpers/service.ts';
import { client } from '../helpers/http.ts';
import { adminCli } from '../helpers/admin-cli.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});

const cli = (args: string[], token = ADMIN_TOKEN) => adminCli(svc.url, args, token);

test('the command line drives the console: account, keys, onboarding, limits, certification', async (t) => {
  const account = await cli(['create-account', '--name', 'CLI Agency', '--country', 'gb']);
  t.is(account.code, 0);
  t.like(account.out, { object: 'account', name: 'CLI Agency', country: 'GB', mode: 'test', status: 'active' });
  t.is(account.out.onboarding.kyb_status, 'pending');
  const id = account.out.id;

  const key = await cli(['create-key', '--account', id, '--mode', 'test', '--label', 'laptop', '--scopes', 'customers:read,brand:read']);
  t.is(key.code, 0);
  t.deepEqual(key.out.scopes, ['customers:read', 'brand:read']);
  const api = client(svc.url, key.out.secret);
  t.is((await api.get('/v1/me')).status, 200);

  const keys = await cli(['list-keys', '--account', id]);
  t.is(keys.out.data.length, 1);
  t.is(keys.out.data[0].secret, undefined, 'listing never shows a secret');

  t.is((await cli(['set-limits', '--account', id, '--requests-per-minute', '300', '--max-customers', '10'])).out.limits.requests_per_minute, 300);
  t.is((await cli(['set-limits', '--account', id, '--max-customers', 'null'])).out.limits.max_customers, null);
  t.like((await cli(['business-details', '--account', id])).out, { object: 'business_details', submitted: false, details: null });
  t.is((await cli(['set-kyb', '--account', id, '--status', 'rejected', '--note', 'No registration number given.'])).out.onboarding.kyb_note, 'No registration number given.');
  t.like((await cli(['set-kyb', '--account', id, '--status', 'verified'])).out.onboarding, { kyb_status: 'verified', kyb_note: null });
  t.true((await cli(['sign-agreement', '--account', id, '--version', '2026-08'])).out.onboarding.agreement_signed);
  t.is((await cli(['go-live', '--account', id])).out.mode, 'live');
  t.is((await cli(['suspend', '--account', id])).out.status, 'suspended');
  t.is((await api.get('/v1/me')).body.error.code, 'reseller_suspended');
  t.is((await cli(['reinstate', '--account', id])).out.status, 'active');

  const rotated = await cli(['rotate-key', '--account', id, '--key', key.out.id]);
  t.true(rotated.out.secret.startsWith('svc_test_'));
  t.is((await cli(['events', '--account', id, '--type', 'key.rotated'])).out.data.length, 1);
  t.is((await cli(['revoke-key', '--account', id, '--key', key.out.id])).out.revoked_at !== null, true);
  t.is((await api.get('/v1/me')).body.error.code, 'key_revoked');

  t.like((await cli(['certify-language', '--locale', 'en-GB'])).out, { locale: 'en-GB', certified: true });
  t.is((await cli(['list-accounts'])).code, 0);
  t.is((await cli(['get-account', '--account', id])).out.id, id);
});

test('usage errors exit 2; refused actions print the error and exit 1', async (t) => {
  t.is((await cli(['no-such-action'])).code, 2);
  t.is((await cli(['create-account', '--name', 'X'])).code, 2, '--country missing');
  const refused = await cli(['get-account', '--account', '00000000-0000-4000-8000-000000000000']);
  t.is(refused.code, 1);
  t.is(refused.err.error.code, 'account_not_found');
  const badToken = await cli(['list-accounts'], 'wrong');
  t.is(badToken.code, 1);
  t.is(badToken.err.error.code, 'admin_unauthorized');
  t.is((await cli(['certify-language', '--locale', 'english'])).err.error.code, 'invalid_locale');
  t.is((await cli(['create-key', '--account', 'not-a-uuid'])).err.error.code, 'invalid_parameter');
});
