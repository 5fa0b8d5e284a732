import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { consoleAs } from '../helpers/console.ts';
import { CURRENT_AGREEMENT_VERSION } from '../../actors/account/agreement.ts';

/*
 * Issue 21, Going live: the checklist of the account's prerequisites in order (business
 * verification, the agreement, funds, the operator's approval), each done or not in plain words
 * with who must act; business details submitted in the console and reviewed by the operator; the
 * agreement read and signed in the console by the owner.
 */

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => svc?.stop());

const DETAILS = {
  legal_name: 'Northwind Calls LLC',
  registration_number: 'DE-5551234',
  country: 'us',
  address: '1 Harbour Way, Wilmington, DE 19801',
  website: 'https://northwind.example',
  contact_email: 'Compliance@Northwind.example',
  contact_phone: '+1 302 555 0100',
  business_description: 'Appointment-setting calls for dental practices.',
};

const stepsOf = (body: any) => Object.fromEntries(body.steps.map((s: any) => [s.key, s]));

test('the checklist moves as details are submitted, verified by the operator, the agreement signed by the owner, funds added and the account approved', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const admin = await consoleAs(svc.url, a.id, 'admin');
  const viewer = await consoleAs(svc.url, a.id, 'viewer');

  let gl = await viewer.get('/console/api/going_live');
  t.is(gl.status, 200, gl.text);
  t.deepEqual(gl.body.steps.map((s: any) => [s.key, s.done, s.who]), [
    ['business_verification', false, 'you'],
    ['agreement', false, 'you'],
    ['funds', false, 'you'],
    ['approval', false, 'operator'],
  ]);
  t.false(gl.body.live);
  t.regex(stepsOf(gl.body).business_verification.detail, /^Submit your business details/);
  t.regex(stepsOf(gl.body).funds.detail, /Your live balance is \$0\.00; each live call holds \$4\.00 while it runs\. Add funds \(a top-up is at least \$25\.00\)\./);

  // Business details: the admin role submits; a viewer or developer cannot.
  t.deepEqual((await viewer.get('/console/api/business_details')).body, {
    object: 'business_details', kyb_status: 'pending', review_note: null, submitted: false, submitted_at: null, submitted_by: null, details: null,
  });
  t.is((await viewer.put('/console/api/business_details', DETAILS)).body.error.code, 'role_forbidden');
  t.is((await (await consoleAs(svc.url, a.id, 'developer')).put('/console/api/business_details', DETAILS)).body.error.code, 'role_forbidden');
  t.is((await admin.put('/console/api/business_details', { ...DETAILS, legal_name: ' ' })).body.error.code, 'parameter_missing');
  t.is((await admin.put('/console/api/business_details', { ...DETAILS, legal_name: 'x'.repeat(201) })).body.error.code, 'field_too_long');
  t.is((await admin.put('/console/api/business_details', { ...DETAILS, business_description: 'x'.repeat(2001) })).body.error.code, 'field_too_long');
  t.is((await admin.put('/console/api/business_details', { ...DETAILS, contact_email: 'not an address' })).body.error.code, 'invalid_parameter');
  t.is((await admin.put('/console/api/business_details', { ...DETAILS, country: 'USA' })).body.error.code, 'invalid_parameter');
  const put = await admin.put('/console/api/business_details', DETAILS);
  t.is(put.status, 200, put.text);
  t.like(put.body, { kyb_status: 'pending', submitted: true, submitted_by: admin.user.email, details: { country: 'US', contact_email: 'compliance@northwind.example', legal_name: 'Northwind Calls LLC' } });
  gl = await owner.get('/console/api/going_live');
  t.like(stepsOf(gl.body).business_verification, { done: false, who: 'operator' });
  t.regex(stepsOf(gl.body).business_verification.detail, /submitted on \d{4}-\d{2}-\d{2} and are waiting for review/);

  // The operator reads them and rejects with a note the reseller sees; a resubmission goes back for review.
  const seen = await a.admin.get(`/admin/v1/accounts/${a.id}/business_details`);
  t.is(seen.status, 200, seen.text);
  t.deepEqual(seen.body.details, put.body.details);
  await a.admin.post(`/admin/v1/accounts/${a.id}/kyb`, { status: 'rejected', note: 'The registration number does not match the Delaware register.' });
  gl = await owner.get('/console/api/going_live');
  t.like(stepsOf(gl.body).business_verification, { done: false, who: 'you' });
  t.regex(stepsOf(gl.body).business_verification.detail, /not accepted\. The reviewer wrote: "The registration number does not match the Delaware register\."/);
  t.is((await owner.get('/console/api/business_details')).body.review_note, 'The registration number does not match the Delaware register.');
  const again = await owner.put('/console/api/business_details', { ...DETAILS, registration_number: 'DE-5551235' });
  t.like(again.body, { kyb_status: 'pending', review_note: null });
  await a.admin.post(`/admin/v1/accounts/${a.id}/kyb`, { status: 'verified' });
  gl = await owner.get('/console/api/going_live');
  t.like(stepsOf(gl.body).business_verification, { done: true, who: 'operator', detail: 'Your business is verified.' });

  // The agreement: read by anyone, signed by the owner only, the version in force only.
  const agreement = await viewer.get('/console/api/agreement');
  t.like(agreement.body, { object: 'agreement', version: CURRENT_AGREEMENT_VERSION, signed: null });
  t.regex(agreement.body.text, /do-not-call/i);
  t.regex(agreement.body.text, /AI agent/);
  t.notRegex(agreement.body.text, /switchboard|twilio|openai|deepgram/i, 'white label: no platform or supplier named');
  const byAdmin = await admin.post('/console/api/agreement/sign', { version: CURRENT_AGREEMENT_VERSION });
  t.is(byAdmin.status, 403);
  t.is(byAdmin.body.error.code, 'role_forbidden');
  const stale = await owner.post('/console/api/agreement/sign', { version: '2026-08' });
  t.is(stale.status, 400);
  t.is(stale.body.error.code, 'agreement_version_not_current');
  const signed = await owner.post('/console/api/agreement/sign', { version: CURRENT_AGREEMENT_VERSION });
  t.is(signed.status, 200, signed.text);
  t.like(signed.body.signed, { version: CURRENT_AGREEMENT_VERSION, signed_by: `The owner <${owner.user.email}>` });
  t.deepEqual((await viewer.get('/console/api/agreement')).body.signed, signed.body.signed);
  // One signature history: the operator's account view shows the console signature with who signed.
  const history = (await a.admin.get(`/admin/v1/accounts/${a.id}`)).body.onboarding.agreement_history;
  t.deepEqual(history, [{ version: CURRENT_AGREEMENT_VERSION, signed_at: signed.body.signed.signed_at, signed_by: `The owner <${owner.user.email}>` }]);
  gl = await owner.get('/console/api/going_live');
  t.like(stepsOf(gl.body).agreement, { done: true, who: 'you' });
  t.regex(stepsOf(gl.body).agreement.detail, new RegExp(`^Version ${CURRENT_AGREEMENT_VERSION} signed on \\d{4}-\\d{2}-\\d{2} by The owner <`));

  // Funds: the live balance must cover one call's reserve (readiness's rule).
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 2_500 });
  gl = await owner.get('/console/api/going_live');
  t.like(stepsOf(gl.body).funds, { done: true, who: 'you', detail: 'Your live balance of $25.00 covers the $4.00 one call holds while it runs.' });
  t.false(stepsOf(gl.body).approval.done);

  // The operator's approval.
  t.is((await a.admin.post(`/admin/v1/accounts/${a.id}/go_live`)).status, 200);
  gl = await viewer.get('/console/api/going_live');
  t.like(stepsOf(gl.body).approval, { done: true, who: 'operator' });
  t.regex(stepsOf(gl.body).approval.detail, /^Approved: your account went live on \d{4}-\d{2}-\d{2}\.$/);
  t.true(gl.body.live);
  t.true(gl.body.steps.every((s: any) => s.done));
});

test('after verification, a change of contacts keeps it; a change of the legal name, registration number or country sends it back for review', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  await owner.put('/console/api/business_details', DETAILS);
  await a.admin.post(`/admin/v1/accounts/${a.id}/kyb`, { status: 'verified' });
  const contacts = await owner.put('/console/api/business_details', { ...DETAILS, legal_name: 'NORTHWIND  Calls LLC', address: '2 Harbour Way, Wilmington, DE 19801', contact_phone: null, website: null });
  t.like(contacts.body, { kyb_status: 'verified', details: { address: '2 Harbour Way, Wilmington, DE 19801', contact_phone: null, website: null } });
  const renamed = await owner.put('/console/api/business_details', { ...DETAILS, legal_name: 'Southwind Calls LLC' });
  t.is(renamed.body.kyb_status, 'pending');
  t.is((await a.admin.get(`/admin/v1/accounts/${a.id}`)).body.onboarding.kyb_status, 'pending');
  await a.admin.post(`/admin/v1/accounts/${a.id}/kyb`, { status: 'verified' });
  t.is((await owner.put('/console/api/business_details', { ...DETAILS, legal_name: 'Southwind Calls LLC', country: 'GB' })).body.kyb_status, 'pending');
});

test('an agreement the operator recorded shows no signer; an older version is done but the newer one is offered', async (t) => {
  const a = await makeAccount(svc.url);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  await a.admin.post(`/admin/v1/accounts/${a.id}/agreement`, { version: '2026-08' });
  const agreement = await owner.get('/console/api/agreement');
  t.like(agreement.body, { version: CURRENT_AGREEMENT_VERSION, signed: { version: '2026-08', signed_by: null } });
  const step = stepsOf((await owner.get('/console/api/going_live')).body).agreement;
  t.true(step.done);
  t.regex(step.detail, new RegExp(`^Version 2026-08 signed on .* \\(recorded by the operator\\)\\. Version ${CURRENT_AGREEMENT_VERSION} is now in force`));
  const signed = await owner.post('/console/api/agreement/sign', { version: CURRENT_AGREEMENT_VERSION });
  t.is(signed.body.signed.version, CURRENT_AGREEMENT_VERSION);
  const history = (await a.admin.get(`/admin/v1/accounts/${a.id}`)).body.onboarding.agreement_history;
  t.deepEqual(history.map((h: any) => [h.version, h.signed_by]), [
    [CURRENT_AGREEMENT_VERSION, `The owner <${owner.user.email}>`],
    ['2026-08', null],
  ]);
  // Signing the version on file again changes nothing (as the operator's route).
  const again = await owner.post('/console/api/agreement/sign', { version: CURRENT_AGREEMENT_VERSION });
  t.deepEqual(again.body.signed, signed.body.signed);
});

test('BOLA: the going-live routes read and write only the session\'s account', async (t) => {
  const a = await makeAccount(svc.url);
  const b = await makeAccount(svc.url);
  const aOwner = await consoleAs(svc.url, a.id, 'owner');
  const bOwner = await consoleAs(svc.url, b.id, 'owner');
  await bOwner.put('/console/api/business_details', DETAILS);
  await bOwner.post('/console/api/agreement/sign', { version: CURRENT_AGREEMENT_VERSION });
  t.false((await aOwner.get('/console/api/business_details')).body.submitted);
  t.is((await aOwner.get('/console/api/agreement')).body.signed, null);
  t.is(stepsOf((await aOwner.get('/console/api/going_live')).body).business_verification.who, 'you');
  // No route takes an account id: one in the body is refused, never followed.
  t.is((await aOwner.put('/console/api/business_details', { ...DETAILS, account_id: b.id })).status, 400);
  t.is((await a.admin.get('/admin/v1/accounts/00000000-0000-4000-8000-000000000000/business_details')).body.error.code, 'account_not_found');
});
