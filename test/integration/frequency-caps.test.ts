import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { createPool, type Pool } from '../../db/pool.ts';
import { loadAdmissionFacts } from '../../db/admission.ts';

/**
 * Call-frequency caps through the real dialler on the test clock (issue 13 §2): the attempts the
 * admission statement reads, and a Florida number's fourth request in 24 hours waiting until the
 * first attempt leaves the window.
 */
let svc: TestService;
let account: TestAccount;
let pool: Pool;

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  pool = createPool(svc.databaseUrl, 2);
});
test.after.always(async () => {
  await pool?.end();
  await svc?.stop();
});

const HOUR_S = 3600;
/** Florida reaches business lines too (docs/compliance.md, "Consent for AI-voice calls"): consent travels with every lead. */
const WRITTEN_CONSENT = { type: 'prior_express_written', obtained_at: '2026-01-05T10:00:00Z', source: 'web form, test', evidence_ref: 'consent-caps' };
/** Maine takes only a call the person asked for (10 M.R.S. § 1498(6)(B), issue 20): such a request. */
const REQUESTED_CALL = { type: 'requested_call', obtained_at: '2026-01-05T10:00:00Z', source: 'call-me form, test', evidence_ref: 'request-caps' };
const clockNow = async () => new Date((await account.admin.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
const advance = (seconds: number) => account.admin.post('/admin/v1/test_clock/advance', { seconds });

test.serial('Florida: three dials in 24 hours, the fourth waits until the first leaves the window, then is dialled', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  const MIAMI = '+13055550141';
  // Tuesday 14:00 UTC is 09:00 or 10:00 in Miami: inside Florida's 08:00–20:00 for the next hours.
  await advanceToNext(account, 2, 14);
  const dialled: Date[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: MIAMI, consent: WRITTEN_CONSENT });
    t.is(r.status, 201);
    const done = await dialUntilFinished(account, account.api, r.body.id);
    t.truthy(done.dialed_at, `attempt ${i + 1} was dialled`);
    dialled.push(new Date(done.dialed_at));
    await advance(HOUR_S);
  }

  // The statement reads the three attempts, oldest first, with their outcomes.
  const now = await clockNow();
  const facts = await loadAdmissionFacts(pool, { accountId: account.id, customerId: customer.id, toE164: MIAMI, attemptsSince: new Date(now.getTime() - 2 * 86_400_000) }, now);
  t.deepEqual(facts.attempts.map((a) => a.at.toISOString()), dialled.map((d) => d.toISOString()));
  t.true(facts.attempts.every((a) => a.outcome !== null && a.ended_at !== null));
  // Another customer's attempts, or another number's, are not this one's.
  const other = await loadAdmissionFacts(pool, { accountId: account.id, customerId: customer.id, toE164: '+13055550142', attemptsSince: new Date(0) }, now);
  t.deepEqual(other.attempts, []);

  // The fourth request waits, saying why and until the first attempt is 24 hours old.
  const fourth = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: MIAMI, consent: WRITTEN_CONSENT });
  await account.admin.post('/admin/v1/dialler/run');
  const frees = new Date(dialled[0].getTime() + 86_400_000);
  let waiting = (await account.api.get(`/v1/calls/${fourth.body.id}`)).body;
  t.like(waiting, { status: 'queued', finished: false, waiting_reason: 'frequency_cap', next_attempt_at: frees.toISOString() });
  const listed = (await account.api.get(`/v1/calls?view=requests&customer_id=${customer.id}`)).body.data.find((c: { id: string }) => c.id === fourth.body.id);
  t.like(listed, { waiting_reason: 'frequency_cap', next_attempt_at: frees.toISOString() });

  // A second before it frees, a round changes nothing.
  await advance(Math.floor((frees.getTime() - (await clockNow()).getTime()) / 1000) - 1);
  await account.admin.post('/admin/v1/dialler/run');
  waiting = (await account.api.get(`/v1/calls/${fourth.body.id}`)).body;
  t.like(waiting, { status: 'queued', waiting_reason: 'frequency_cap', dialed_at: null });

  // Once the first attempt has left the window the request is dialled.
  await advance(2);
  const done = await dialUntilFinished(account, account.api, fourth.body.id);
  t.true(new Date(done.dialed_at).getTime() >= frees.getTime());
  t.true(done.finished);
});

test.serial('a cap that frees after the deadline: the request waits until its deadline, then expires', async (t) => {
  const customer = await makeReadyCustomer(svc.url, account.api);
  // Maine: one attempt per 8 hours. Wednesday 15:00 UTC is 10:00 or 11:00 in Maine.
  // Ends in 0 (answered, not interested): a busy or failed call would be retried (issue 23), keeping its request open.
  const PORTLAND = '+12075550140';
  await advanceToNext(account, 3, 15);
  const first = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: PORTLAND, consent: REQUESTED_CALL });
  await dialUntilFinished(account, account.api, first.body.id);
  const now = await clockNow();
  const dialBefore = new Date(now.getTime() + 2 * 3600_000);
  const second = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: PORTLAND, consent: REQUESTED_CALL, dial_before: dialBefore.toISOString() });
  await account.admin.post('/admin/v1/dialler/run');
  t.like((await account.api.get(`/v1/calls/${second.body.id}`)).body, {
    status: 'queued',
    waiting_reason: 'frequency_cap',
    next_attempt_at: dialBefore.toISOString(),
  });
  await advance(2 * HOUR_S + 1);
  await account.admin.post('/admin/v1/dialler/run');
  await account.admin.post('/admin/v1/jobs/expire_requests/run');
  t.like((await account.api.get(`/v1/calls/${second.body.id}`)).body, { status: 'expired', outcome: 'expired' });
});

test.serial("caps are per customer: another customer's attempts to the same number, of the same reseller or another, do not count", async (t) => {
  // docs/compliance.md ("What is counted"): every attempt "of the same customer to the same number".
  // Maine: 1 attempt per 8 hours. Thursday 15:00 UTC is 10:00 or 11:00 in Maine.
  // Ends in 0 (answered, not interested): a failed call would be retried (issue 23), keeping its request open.
  const BANGOR = '+12075550170';
  const first = await makeReadyCustomer(svc.url, account.api);
  const sameReseller = await makeReadyCustomer(svc.url, account.api);
  const otherAccount = await makeAccount(svc.url);
  const otherReseller = await makeReadyCustomer(svc.url, otherAccount.api);
  await advanceToNext(account, 4, 15);
  const dialled = await account.api.post('/v1/calls', { customer_id: first.id, phone: BANGOR, consent: REQUESTED_CALL });
  t.truthy((await dialUntilFinished(account, account.api, dialled.body.id)).dialed_at);

  // The first customer's next request is held by the cap: the cap is in force for this number.
  const again = await account.api.post('/v1/calls', { customer_id: first.id, phone: BANGOR, consent: REQUESTED_CALL });
  await account.admin.post('/admin/v1/dialler/run');
  t.like((await account.api.get(`/v1/calls/${again.body.id}`)).body, { status: 'queued', waiting_reason: 'frequency_cap' });

  // The admission statement reads none of the first customer's attempts for the other two.
  const now = await clockNow();
  for (const [accountId, customerId] of [[account.id, sameReseller.id], [otherAccount.id, otherReseller.id]]) {
    const facts = await loadAdmissionFacts(pool, { accountId, customerId, toE164: BANGOR, attemptsSince: new Date(0) }, now);
    t.deepEqual(facts.attempts, [], `customer ${customerId} counts no attempt of another customer`);
  }
  // And both are dialled now, within the 8 hours of the first customer's attempt.
  const mine = await account.api.post('/v1/calls', { customer_id: sameReseller.id, phone: BANGOR, consent: REQUESTED_CALL });
  t.truthy((await dialUntilFinished(account, account.api, mine.body.id)).dialed_at, 'another customer of the same reseller is dialled');
  const theirs = await otherAccount.api.post('/v1/calls', { customer_id: otherReseller.id, phone: BANGOR, consent: REQUESTED_CALL });
  t.truthy((await dialUntilFinished(otherAccount, otherAccount.api, theirs.body.id)).dialed_at, "another reseller's customer is dialled");
});
