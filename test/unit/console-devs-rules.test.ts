import test from 'ava';
import { kybAfterSubmission } from '../../actors/account/business-details.ts';
import { goingLiveSteps, type GoingLiveFacts } from '../../actors/account/going-live.ts';
import { responseExcerpt, RESPONSE_EXCERPT_CHARS } from '../../actors/webhooks/deliver.ts';

const DETAILS = {
  legal_name: 'Northwind Calls LLC',
  registration_number: 'DE-5551234',
  country: 'US',
  address: '1 Harbour Way',
  website: null,
  contact_email: 'c@northwind.example',
  contact_phone: null,
  business_description: 'Appointment setting.',
};

test('a submission awaits review unless a verified business kept its legal name, registration number and country', (t) => {
  t.is(kybAfterSubmission('pending', null, DETAILS), 'pending');
  t.is(kybAfterSubmission('rejected', DETAILS, DETAILS), 'pending', 'a resubmission after a rejection goes back for review');
  t.is(kybAfterSubmission('verified', null, DETAILS), 'verified', 'verified before any details were on file: nothing to compare, kept');
  t.is(kybAfterSubmission('verified', DETAILS, { ...DETAILS, address: '2 Harbour Way', contact_phone: '+1 302 555 0100', website: 'https://n.example', business_description: 'More.' }), 'verified');
  t.is(kybAfterSubmission('verified', DETAILS, { ...DETAILS, legal_name: '  northwind   CALLS llc ' }), 'verified', 'case and spacing are not another business');
  for (const field of ['legal_name', 'registration_number', 'country'] as const) {
    t.is(kybAfterSubmission('verified', DETAILS, { ...DETAILS, [field]: 'XX' }), 'pending', field);
  }
});

const FACTS: GoingLiveFacts = {
  kybStatus: 'pending',
  kybNote: null,
  detailsSubmittedAt: null,
  agreement: null,
  currentAgreementVersion: '2026-11',
  liveAvailableCents: 0,
  callReserveCents: 400,
  minimumTopUpCents: 2_500,
  wentLiveAt: null,
};

test('the checklist: four steps in order, funds done exactly when the live balance covers one call', (t) => {
  const none = goingLiveSteps(FACTS);
  t.deepEqual(none.steps.map((s) => s.key), ['business_verification', 'agreement', 'funds', 'approval']);
  t.false(none.live);
  t.false(goingLiveSteps({ ...FACTS, liveAvailableCents: 399 }).steps[2]!.done);
  t.true(goingLiveSteps({ ...FACTS, liveAvailableCents: 400 }).steps[2]!.done);
  t.is(goingLiveSteps({ ...FACTS, liveAvailableCents: -50 }).steps[2]!.detail, 'Your live balance is $0.00; each live call holds $4.00 while it runs. Add funds (a top-up is at least $25.00).');
  t.like(goingLiveSteps({ ...FACTS, detailsSubmittedAt: new Date('2026-11-20T10:00:00Z') }).steps[0], { done: false, who: 'operator' });
  t.like(goingLiveSteps({ ...FACTS, kybStatus: 'rejected', kybNote: 'Wrong number.' }).steps[0], { done: false, who: 'you', detail: 'Business verification was not accepted. The reviewer wrote: "Wrong number." Correct your business details and submit them again.' });
  const signed = goingLiveSteps({ ...FACTS, agreement: { version: '2026-11', signedAt: new Date('2026-11-21T09:00:00Z'), signedBy: 'Ada <ada@x.example>' } }).steps[1]!;
  t.deepEqual(signed, { key: 'agreement', done: true, who: 'you', detail: 'Version 2026-11 signed on 2026-11-21 by Ada <ada@x.example>.' });
  const live = goingLiveSteps({ ...FACTS, wentLiveAt: new Date('2026-11-22T00:00:00Z') });
  t.true(live.live);
  t.like(live.steps[3], { done: true, detail: 'Approved: your account went live on 2026-11-22.' });
});

test("a receiver's answer is kept as at most 500 characters of readable text", (t) => {
  t.is(responseExcerpt(Buffer.alloc(0)), null);
  t.is(responseExcerpt(Buffer.from('ok\r\n\tfine\u0000\u001b[31m')), 'ok\r\n\tfine  [31m');
  const long = 'é'.repeat(RESPONSE_EXCERPT_CHARS + 10);
  t.is(responseExcerpt(Buffer.from(long)), 'é'.repeat(RESPONSE_EXCERPT_CHARS));
  t.is([...responseExcerpt(Buffer.from('😀'.repeat(600)))!].length, RESPONSE_EXCERPT_CHARS);
});
