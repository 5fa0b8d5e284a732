/**
 * PECR reg. 24 end to end in test mode (issue 23 §1): a call to a UK number gives the caller's
 * name and either its address or a freephone number (reg. 24(1)(b), automated calling systems,
 * reg. 19). A GB customer without `registered_address` cannot queue a UK number; with it, the
 * opening played says the address (read from the operator's compliance record,
 * `conduct.opening.played.segments`); an address cleared after queueing ends the request blocked.
 * Called numbers are in Ofcom's London drama range (020 7946 0xxx); the test customer's caller ID (07700 900xxx) is not freephone.
 */
import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';

let svc: TestService;
let account: TestAccount;
let customer: any;

const ADDRESS = '1 High Street, Leeds LS1 1AA';
const CONSENT = { type: 'prior_express_written', obtained_at: '2026-01-05T10:00:00Z', source: 'web form, test', evidence_ref: 'uk-1' };

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  customer = await makeReadyCustomer(svc.url, account.api, { name: 'Leeds Dental', registered_name: 'Leeds Dental Ltd', country: 'GB', timezone: 'Europe/London' });
  await advanceToNext(account, 2, 13); // a Tuesday, 13:00 UTC: inside the UK calling window
});
test.after.always(async () => {
  await svc?.stop();
});

const queue = (phone: string) => account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, business_name: 'Acme Plumbing', phone, consent: CONSENT });

test.serial('PECR reg. 24: a UK number is refused without the registered address (400 registered_address_required), nothing queued', async (t) => {
  const r = await queue('+442079460120');
  t.is(r.status, 400, r.text);
  t.is(r.body.error.code, 'registered_address_required');
  t.is(r.body.error.type, 'invalid_request_error');
  t.regex(r.body.error.message, /PECR reg\. 24/);
  t.regex(r.body.error.message, /registered_address/);
  const listed = await account.api.get(`/v1/calls?view=requests&customer_id=${customer.id}`);
  t.deepEqual(listed.body.data, [], 'nothing queued');
});

test.serial('PECR reg. 24: with the registered address the request is accepted and the opening played says it (compliance record)', async (t) => {
  const patched = await account.api.patch(`/v1/customers/${customer.id}`, { registered_address: ADDRESS });
  t.is(patched.status, 200, patched.text);
  t.is(patched.body.registered_address, ADDRESS);
  const r = await queue('+442079460130'); // digit 0: not interested
  t.is(r.status, 201, r.text);
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.is(done.outcome, 'not_interested');
  const record = (await account.admin.get(`/admin/v1/calls/${r.body.id}/compliance_record`)).body;
  const played = record.conduct.opening.played;
  t.deepEqual(played.segments.map((s: any) => s.kind), ['identification', 'opt_out', 'notice', 'address', 'question']);
  t.is(played.segments[0].text, 'Hello, this call is on behalf of Leeds Dental Ltd.');
  t.is(played.segments[3].text, `Our address is ${ADDRESS}.`);
  t.true(played.segments[3].played);
  t.true(played.rules.includes('gb_pecr_reg24_address'), JSON.stringify(played.rules));
  t.false(played.rules.includes('gb_pecr_reg24_caller_id_not_freephone'));
});

test.serial('PECR reg. 24: an address cleared after queueing ends the request blocked at its dial, with a plain summary, nothing dialled', async (t) => {
  const r = await queue('+442079460140');
  t.is(r.status, 201, r.text);
  const cleared = await account.api.patch(`/v1/customers/${customer.id}`, { registered_address: null });
  t.is(cleared.body.registered_address, null);
  const done = await dialUntilFinished(account, account.api, r.body.id);
  t.like(done, { status: 'blocked', outcome: 'registered_address_required', duration_seconds: 0 });
  t.regex(done.summary, /UK number must give the business address or a freephone number/);
  const record = await account.admin.get(`/admin/v1/calls/${r.body.id}/compliance_record`);
  t.is(record.status, 200, record.text);
  t.is(record.body.conduct.opening.played, null, 'no UK opening was ever played without the address');
});
