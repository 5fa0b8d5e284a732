import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call, client } from '../helpers/http.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { adminCli } from '../helpers/admin-cli.ts';

/**
 * The README's "From test to live" checklist, step by step and in its order, with the console
 * steps run as the `switchboard admin` commands it names: each step clears what it says, and
 * the steps it says must come first are enforced.
 */
let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
});

/** `npx switchboard admin <args>`; its exit code and the JSON it printed (stdout, or stderr on failure). */
async function adminCommand(args: string[]) {
  const { code, out, err } = await adminCli(svc.url, args);
  return { code, body: code === 0 ? out : err };
}

const blockers = (r: { body: any }) => r.body.blockers.map((b: any) => b.code);

test.serial('from test to live, in the README order', async (t) => {
  // Where the checklist starts: an account in test mode with a test key (README "First steps").
  const a = await makeAccount(svc.url, { country: 'US' });
  const id = a.id;
  const tooEarly = await adminCommand(['create-key', '--account', id, '--mode', 'live', '--label', 'production']);
  t.is(tooEarly.body.error.code, 'kyb_incomplete', 'no live key before KYB');
  t.is((await adminCommand(['go-live', '--account', id])).body.error.code, 'go_live_blocked');

  // 1. KYB verified (operator).
  t.is((await adminCommand(['set-kyb', '--account', id, '--status', 'verified'])).body.onboarding.kyb_status, 'verified');
  t.is((await adminCommand(['go-live', '--account', id])).body.error.code, 'go_live_blocked', 'still no agreement');

  // 2. The agreement signed (operator records it).
  const signed = await adminCommand(['sign-agreement', '--account', id, '--version', '2026-08']);
  t.like(signed.body.onboarding, { agreement_signed: true, agreement_version: '2026-08' });

  // 3. Top-up (the reseller pays; the operator records it). 2,500 cents is the minimum.
  t.is((await adminCommand(['top-up', '--account', id, '--amount-cents', '2499'])).body.error.code, 'top_up_too_small');
  const topUp = await adminCommand(['top-up', '--account', id, '--amount-cents', '2500']);
  t.is(topUp.code, 0, JSON.stringify(topUp.body));
  t.true(topUp.body.balance.available_cents >= 400, 'covers the reserve of one call');

  // 4. Go-live (operator).
  t.is((await adminCommand(['go-live', '--account', id])).body.mode, 'live');

  // 5. A live key (operator), used by the reseller from now on.
  const key = await adminCommand(['create-key', '--account', id, '--mode', 'live', '--label', 'production']);
  t.true(key.body.secret.startsWith('svc_live_'));
  const live = client(svc.url, key.body.secret);
  t.like((await live.get('/v1/me')).body, { mode: 'live', key: { mode: 'live' } });

  // 6. The live customer (reseller): test customers stay in test mode; the same ref is free in live.
  await makeCustomer(a.api, { external_ref: 'bright-1' });
  const created = await live.post('/v1/customers', { name: 'Bright Dental', external_ref: 'bright-1' });
  t.is(created.status, 201, created.text);
  const customerId = created.body.id;
  t.is(created.body.mode, 'live');
  t.deepEqual(blockers(await live.get('/v1/customers/bright-1/readiness')), [
    'human_speech_gate_closed',
    'no_number_in_country',
    'script_uncertified',
    'customer_not_attested',
    'dnc_registry_stale',
  ]);

  // 7. The calling language's speech gate (operator, once per language).
  await adminCommand(['certify-language', '--locale', 'en-US']);
  t.false(blockers(await live.get('/v1/customers/bright-1/readiness')).includes('human_speech_gate_closed'));
  // And the country's national do-not-call registry (operator; issue 20 §1).
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'registry-')), 'registry.csv');
  fs.writeFileSync(file, 'phone_number\n+12125550198\n');
  const loaded = await adminCommand(['import-dnc', '--country', 'US', '--file', file]);
  t.is(loaded.code, 0, JSON.stringify(loaded.body));
  t.false(blockers(await live.get('/v1/customers/bright-1/readiness')).includes('dnc_registry_stale'));

  // 8. The number: the reseller asks, the service rents one in the customer's country at once.
  const asked = await live.post('/v1/customers/bright-1/provisioning', { steps: ['number'] });
  t.deepEqual(asked.body.steps[0], { step: 'number', done: true, waiting_on: 'service', blocker: null, message: null });
  t.like((await live.get('/v1/customers/bright-1/numbers')).body.data[0], { kind: 'rented', country: 'US', status: 'active', monthly_cents: 1500 });
  t.deepEqual(blockers(await live.get('/v1/customers/bright-1/readiness')), ['script_uncertified', 'customer_not_attested']);
  // A number the operator bought by hand is recorded with assign-number.
  const assigned = await adminCommand(['assign-number', '--customer', customerId, '--phone-number', '+12025550143']);
  t.is(assigned.code, 0, JSON.stringify(assigned.body));
  t.is((await live.get('/v1/customers/bright-1/numbers')).body.data.length, 2);

  // 9. The certified script (operator).
  await adminCommand(['certify-script', '--customer', customerId]);
  t.deepEqual(blockers(await live.get('/v1/customers/bright-1/readiness')), ['customer_not_attested']);

  // 10. The customer accepts the terms through a live onboarding link the reseller sends.
  const link = await live.post('/v1/customers/bright-1/onboarding_link');
  t.is(link.status, 201, link.text);
  const accepted = await call(svc.url, 'POST', new URL(link.body.url).pathname, {
    rawBody: new URLSearchParams({ accepted_by: 'Dana Bright', agree: 'yes' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(accepted.status, 200);

  // 11. Ready.
  const ready = await live.get('/v1/customers/bright-1/readiness');
  t.true(ready.body.ready_for_live_calls);
  t.deepEqual(ready.body.blockers, []);
});
