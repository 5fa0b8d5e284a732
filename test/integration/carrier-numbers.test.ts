/**
 * Numbers at the carrier: TwilioCarrier against the fake Twilio (AvailablePhoneNumbers,
 * IncomingPhoneNumbers, OutgoingCallerIds and its signed validation callback; every refusal as a
 * typed CarrierNumberError), and SimulatedCarrier's fictional stock and self-completing caller
 * ID verification.
 */
import test, { type ExecutionContext } from 'ava';
import { createLogger } from '../../runtime/logger.ts';
import { CarrierNumberError, type CallerIdValidationReport, type CarrierNumberErrorReason } from '../../telephony/carrier.ts';
import { SimulatedCarrier } from '../../telephony/simulated/simulated-carrier.ts';
import { CarrierCallbackError, parseCallerIdValidationCallback, verifyTwilioSignature, type TwilioForm } from '../../telephony/twilio/callbacks.ts';
import { twilioNumberError } from '../../telephony/twilio/number-errors.ts';
import { TwilioCarrier } from '../../telephony/twilio/twilio-carrier.ts';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio.ts';
import { startReceiver } from '../helpers/receiver.ts';

const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = 'f00dfeedf00dfeedf00dfeedf00dfeed';
const log = createLogger('silent');
const BASIC = `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`;

async function setup(t: ExecutionContext, authToken = AUTH_TOKEN): Promise<{ fake: FakeTwilio; carrier: TwilioCarrier }> {
  const fake = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  t.teardown(() => fake.close());
  return { fake, carrier: new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken, apiBaseUrl: fake.baseUrl, log }) };
}

async function refused(t: ExecutionContext, reason: CarrierNumberErrorReason, code: number | undefined, fn: () => Promise<unknown>): Promise<CarrierNumberError> {
  const err = await t.throwsAsync(fn, { instanceOf: CarrierNumberError });
  t.is(err!.reason, reason, err!.message);
  t.is(err!.carrierCode, code);
  return err as CarrierNumberError;
}

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function formOf(body: string): TwilioForm {
  const form: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(body)) form[k] = v;
  return form;
}

// ---- TwilioCarrier against the fake Twilio ----

test('searchNumbers reads AvailablePhoneNumbers/{country}/Local with AreaCode and PageSize (US) and maps locality, region and capabilities', async (t) => {
  const { fake, carrier } = await setup(t);
  const found = await carrier.searchNumbers({ country: 'us', areaCode: '415', limit: 3 });
  t.deepEqual(found, [0, 1, 2].map((i) => ({ e164: `+141555501${String(i).padStart(2, '0')}`, country: 'US', locality: 'San Francisco', region: 'CA', capabilities: { voice: true, sms: true, mms: true } })));
  const [req] = fake.requests;
  t.is(req.method, 'GET');
  t.is(req.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/AvailablePhoneNumbers/US/Local.json`);
  t.is(req.status, 200);
  t.is(req.query?.get('AreaCode'), '415');
  t.is(req.query?.get('PageSize'), '3');
  t.is((await carrier.searchNumbers({ country: 'US' })).length, 20, 'twenty by default');
});

test('searchNumbers follows next_page_uri when Twilio answers in pages smaller than asked for, up to the limit', async (t) => {
  const { fake, carrier } = await setup(t);
  fake.numbers.setMaxPageSize(2);
  const found = await carrier.searchNumbers({ country: 'US', areaCode: '202', limit: 5 });
  t.deepEqual(found.map((n) => n.e164), ['+12025550100', '+12025550101', '+12025550102', '+12025550103', '+12025550104']);
  const pages = fake.requests.filter((r) => r.path.endsWith('/AvailablePhoneNumbers/US/Local.json'));
  t.deepEqual(pages.map((r) => r.query?.get('Page') ?? '0'), ['0', '1', '2'], 'three pages of two, two and one');
  t.true(pages.every((r) => r.query?.get('AreaCode') === '202'), 'the next pages keep the filter');
  t.deepEqual(pages.slice(1).map((r) => r.query?.get('PageToken')), ['PA1', 'PA2'], 'the next page is the one Twilio named');
});

test('searchNumbers outside the US and Canada sends no AreaCode (Twilio applies it to NANP only); GB numbers say no SMS', async (t) => {
  const { fake, carrier } = await setup(t);
  const found = await carrier.searchNumbers({ country: 'GB', areaCode: '20', limit: 2 });
  t.deepEqual(found.map((n) => n.e164), ['+442079460000', '+442079460001']);
  t.deepEqual(found[0].capabilities, { voice: true, sms: false, mms: false });
  t.is(found[0].locality, 'London');
  t.false(fake.requests[0].query?.has('AreaCode'));
});

test('a country without stock answers an empty list, and so does one Twilio sells nothing in (404)', async (t) => {
  const { fake, carrier } = await setup(t);
  t.deepEqual(await carrier.searchNumbers({ country: 'NZ' }), []);
  t.deepEqual(await carrier.searchNumbers({ country: 'ZZ' }), []);
  t.deepEqual(fake.requests.map((r) => r.status), [200, 404]);
  t.deepEqual(await carrier.searchNumbers({ country: 'US', areaCode: '999' }), [], 'an area code with no stock is no stock');
});

test('buyNumber POSTs IncomingPhoneNumbers.json with PhoneNumber and the StatusCallback; the number leaves the stock and cannot be bought twice', async (t) => {
  const { fake, carrier } = await setup(t);
  const bought = await carrier.buyNumber({ e164: '+12025550107', statusCallbackUrl: 'https://hooks.example.com/carrier/numbers?number_id=num_1' });
  t.regex(bought.carrierNumberId, /^PN[0-9a-f]{32}$/);
  t.is(bought.e164, '+12025550107');
  const req = fake.requests.at(-1)!;
  t.is(req.method, 'POST');
  t.is(req.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/IncomingPhoneNumbers.json`);
  t.is(req.status, 201);
  t.deepEqual(req.form, { PhoneNumber: ['+12025550107'], StatusCallback: ['https://hooks.example.com/carrier/numbers?number_id=num_1'], StatusCallbackMethod: ['POST'] });
  t.is(fake.numbers.incoming.get(bought.carrierNumberId)?.phoneNumber, '+12025550107');
  t.false((await carrier.searchNumbers({ country: 'US' })).some((n) => n.e164 === '+12025550107'));
  await refused(t, 'no_stock', 21422, () => carrier.buyNumber({ e164: '+12025550107' }));
  t.deepEqual((await carrier.buyNumber({ e164: '+442079460003' })).e164, '+442079460003', 'no StatusCallback is fine');
  t.deepEqual(fake.requests.at(-1)!.form, { PhoneNumber: ['+442079460003'] });
});

test('buyNumber maps the regulatory refusals: DE needs a bundle (21649), FR an address (21631); an invalid number is a carrier error (21421)', async (t) => {
  const { fake, carrier } = await setup(t);
  const [de] = await carrier.searchNumbers({ country: 'DE', limit: 1 });
  const bundle = await refused(t, 'regulatory_bundle_required', 21649, () => carrier.buyNumber({ e164: de.e164 }));
  t.regex(bundle.message, /Bundle/);
  const [fr] = await carrier.searchNumbers({ country: 'FR', limit: 1 });
  await refused(t, 'address_required', 21631, () => carrier.buyNumber({ e164: fr.e164 }));
  await refused(t, 'carrier_error', 21421, () => carrier.buyNumber({ e164: '12345' }));
  t.deepEqual(fake.requests.filter((r) => r.method === 'POST').map((r) => r.status), [400, 400, 400]);
  t.is(fake.numbers.incoming.size, 0, 'nothing was bought');
});

test('releaseNumber DELETEs the IncomingPhoneNumber (204); a number released or never bought is not_found (20404)', async (t) => {
  const { fake, carrier } = await setup(t);
  const { carrierNumberId } = await carrier.buyNumber({ e164: '+12025550101' });
  await carrier.releaseNumber(carrierNumberId);
  const req = fake.requests.at(-1)!;
  t.is(req.method, 'DELETE');
  t.is(req.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/IncomingPhoneNumbers/${carrierNumberId}.json`);
  t.is(req.status, 204);
  t.truthy(fake.numbers.incoming.get(carrierNumberId)?.releasedAt);
  await refused(t, 'not_found', 20404, () => carrier.releaseNumber(carrierNumberId));
  await refused(t, 'not_found', 20404, () => carrier.releaseNumber(`PN${'0'.repeat(32)}`));
});

test('caller ID validation: POST OutgoingCallerIds.json, the code comes back, the signed callback reports success with the caller ID; status, already verified, remove', async (t) => {
  const { fake, carrier } = await setup(t);
  const receiver = await startReceiver(() => ({ status: 204 }));
  t.teardown(() => receiver.close());
  const callbackUrl = `${receiver.url}?number_id=num_2`;
  const started = await carrier.startCallerIdValidation({ e164: '+12025550142', friendlyName: 'Acme Plumbing front desk', statusCallbackUrl: callbackUrl });
  const req = fake.requests.at(-1)!;
  t.is(req.method, 'POST');
  t.is(req.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/OutgoingCallerIds.json`);
  t.deepEqual(req.form, { PhoneNumber: ['+12025550142'], FriendlyName: ['Acme Plumbing front desk'], StatusCallback: [callbackUrl], StatusCallbackMethod: ['POST'] });
  t.regex(started.validationCode, /^\d{6}$/);
  t.is(started.validationCode, fake.numbers.validations[0].validationCode);
  t.is(started.carrierCallId, fake.numbers.validations[0].callSid);

  await waitFor('the validation callback', () => receiver.received.length === 1);
  const [cb] = receiver.received;
  const form = formOf(cb.body);
  t.true(verifyTwilioSignature(AUTH_TOKEN, callbackUrl, form, cb.headers['x-twilio-signature']), 'signed like Twilio signs');
  t.false(verifyTwilioSignature(AUTH_TOKEN, `${receiver.url}?number_id=num_3`, form, cb.headers['x-twilio-signature']));
  const report = parseCallerIdValidationCallback(form);
  const [callerId] = fake.numbers.callerIds.values();
  t.deepEqual(report, { e164: '+12025550142', status: 'verified', carrierCallerIdId: callerId.sid, carrierCallId: started.carrierCallId });
  t.regex(callerId.sid, /^PN[0-9a-f]{32}$/);
  t.is(fake.callbacksSent[0].kind, 'validation');

  t.deepEqual(await carrier.callerIdStatus('+12025550142'), { verified: true, carrierCallerIdId: callerId.sid });
  const list = fake.requests.at(-1)!;
  t.is(list.method, 'GET');
  t.is(list.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/OutgoingCallerIds.json`);
  t.is(list.query?.get('PhoneNumber'), '+12025550142');
  await refused(t, 'already_verified', 21450, () => carrier.startCallerIdValidation({ e164: '+12025550142', friendlyName: 'again', statusCallbackUrl: callbackUrl }));

  await carrier.removeCallerId(callerId.sid);
  t.is(fake.requests.at(-1)!.method, 'DELETE');
  t.is(fake.requests.at(-1)!.status, 204);
  t.deepEqual(await carrier.callerIdStatus('+12025550142'), { verified: false });
  await refused(t, 'not_found', 20404, () => carrier.removeCallerId(callerId.sid));
});

test('caller ID validation that fails (a number ending in 9, or a scripted wrong code) reports failed and leaves no caller ID', async (t) => {
  const { fake, carrier } = await setup(t);
  const receiver = await startReceiver(() => ({ status: 204 }));
  t.teardown(() => receiver.close());
  await carrier.startCallerIdValidation({ e164: '+12025550149', friendlyName: 'ends in 9', statusCallbackUrl: receiver.url });
  fake.numbers.nextValidation({ outcome: 'failed', delayMs: 10 });
  await carrier.startCallerIdValidation({ e164: '+442079460042', friendlyName: 'wrong code', statusCallbackUrl: receiver.url });
  await waitFor('two callbacks', () => receiver.received.length === 2);
  const reports = receiver.received.map((r) => parseCallerIdValidationCallback(formOf(r.body))).sort((a, b) => a.e164.localeCompare(b.e164));
  t.deepEqual(reports.map((r: CallerIdValidationReport) => [r.e164, r.status, r.carrierCallerIdId]), [
    ['+12025550149', 'failed', undefined],
    ['+442079460042', 'failed', undefined],
  ]);
  t.is(fake.numbers.callerIds.size, 0);
  t.deepEqual(await carrier.callerIdStatus('+12025550149'), { verified: false });
});

test('wrong credentials: every number operation is a carrier_error (20003), never an empty answer', async (t) => {
  const { fake, carrier } = await setup(t, 'wrong-token');
  await refused(t, 'carrier_error', 20003, () => carrier.searchNumbers({ country: 'US' }));
  await refused(t, 'carrier_error', 20003, () => carrier.buyNumber({ e164: '+12025550101' }));
  await refused(t, 'carrier_error', 20003, () => carrier.releaseNumber(`PN${'1'.repeat(32)}`));
  await refused(t, 'carrier_error', 20003, () => carrier.startCallerIdValidation({ e164: '+12025550101', friendlyName: 'x', statusCallbackUrl: 'https://hooks.example.com/v' }));
  await refused(t, 'carrier_error', 20003, () => carrier.callerIdStatus('+12025550101'));
  await refused(t, 'carrier_error', 20003, () => carrier.removeCallerId(`PN${'1'.repeat(32)}`));
  t.true(fake.requests.every((r) => r.status === 401));
  t.is(fake.numbers.incoming.size, 0);
  // The fake checks Basic auth like Twilio: the right pair passes.
  const ok = await fetch(`${fake.baseUrl}/2010-04-01/Accounts/${ACCOUNT_SID}/AvailablePhoneNumbers/US/Local.json?PageSize=1`, { headers: { authorization: BASIC } });
  t.is(ok.status, 200);
  const body = (await ok.json()) as any;
  t.like(body, { available_phone_numbers: [{ phone_number: '+12025550100', friendly_name: '(202) 555-0100', iso_country: 'US' }], page: 0, page_size: 1 });
  t.regex(body.next_page_uri, /AvailablePhoneNumbers\/US\/Local\.json\?PageSize=1&Page=1&PageToken=/, 'more stock is on the next page');
});

test('an unreachable carrier is a carrier_error without a code', async (t) => {
  const carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: 'http://127.0.0.1:9', log });
  const err = await refused(t, 'carrier_error', undefined, () => carrier.buyNumber({ e164: '+12025550101' }));
  t.truthy(err.cause);
});

test('twilioNumberError: codes first, then Twilio\'s wording ("requires a Bundle", "requires an Address"), then 404, else carrier_error', (t) => {
  const of = (e: object) => twilioNumberError(Object.assign(new Error((e as { message?: string }).message ?? 'x'), e), 'buy').reason;
  t.is(of({ code: 21649, status: 400 }), 'regulatory_bundle_required');
  t.is(of({ code: 21631, status: 400 }), 'address_required');
  t.is(of({ code: 21613, status: 400 }), 'address_required');
  t.is(of({ code: 21422, status: 400 }), 'no_stock');
  t.is(of({ code: 21450, status: 400 }), 'already_verified');
  t.is(of({ code: 99999, status: 400, message: 'This Phone Number requires a Bundle to be provisioned' }), 'regulatory_bundle_required');
  t.is(of({ status: 400, message: 'Phone Number Requires a Local Address' }), 'address_required');
  t.is(of({ status: 404, message: 'gone' }), 'not_found');
  t.is(of({ status: 500, message: 'boom' }), 'carrier_error');
  const already = new CarrierNumberError('no_stock', 'x');
  t.is(twilioNumberError(already, 'buy'), already, 'an already typed error passes through');
});

test('parseCallerIdValidationCallback refuses a callback without To or with an unknown VerificationStatus, and success without OutgoingCallerIdSid', (t) => {
  const malformed = (form: TwilioForm) => t.is(t.throws(() => parseCallerIdValidationCallback(form), { instanceOf: CarrierCallbackError })!.reason, 'malformed');
  malformed({ VerificationStatus: 'success', OutgoingCallerIdSid: 'PN1' });
  malformed({ To: '+12025550142', VerificationStatus: 'maybe' });
  malformed({ To: '+12025550142', VerificationStatus: 'success' });
  t.deepEqual(parseCallerIdValidationCallback({ To: '+12025550142', VerificationStatus: 'failed' }), { e164: '+12025550142', status: 'failed' });
});

// ---- SimulatedCarrier ----

function simulated(reports: CallerIdValidationReport[] = [], start = 0): SimulatedCarrier {
  return new SimulatedCarrier({ log, onStatus: () => {}, onCallerIdValidation: (r) => reports.push(r), callerIdValidationMs: 20, pickStart: () => start });
}

test('SimulatedCarrier sells fictional numbers only: NANP 555-01xx in any area code, the drama ranges elsewhere, none where no range is known', async (t) => {
  const carrier = simulated([], 0.5);
  t.deepEqual(
    (await carrier.searchNumbers({ country: 'US', limit: 2 })).map((n) => n.e164),
    ['+12025550150', '+12025550151'],
  );
  t.deepEqual((await carrier.searchNumbers({ country: 'US', areaCode: '415', limit: 1 }))[0], { e164: '+14155550150', country: 'US', capabilities: { voice: true, sms: false, mms: false } });
  t.deepEqual((await carrier.searchNumbers({ country: 'GB', limit: 1 })).map((n) => n.e164), ['+447700900500']);
  t.deepEqual((await carrier.searchNumbers({ country: 'AU', limit: 1 })).map((n) => n.e164), ['+61491570083'], 'inside 006..159');
  t.is((await carrier.searchNumbers({ country: 'US', limit: 500 })).length, 100, '555-0100..0199 and no more');
  t.deepEqual(await carrier.searchNumbers({ country: 'JP' }), []);
});

test('SimulatedCarrier buys any fictional number and refuses others (no_stock); release takes its ids, not_found for others', async (t) => {
  const carrier = simulated();
  const bought = await carrier.buyNumber({ e164: '+447700900123' });
  t.deepEqual(bought, { carrierNumberId: 'SIMPN447700900123', e164: '+447700900123' });
  await carrier.releaseNumber(bought.carrierNumberId);
  await refused(t, 'no_stock', undefined, () => carrier.buyNumber({ e164: '+442071234567' }));
  await refused(t, 'not_found', undefined, () => carrier.releaseNumber('PN123'));
});

test('SimulatedCarrier verifies caller IDs by itself: reported verified within the delay, except numbers ending in 9, which fail', async (t) => {
  const reports: CallerIdValidationReport[] = [];
  const carrier = simulated(reports);
  const ok = await carrier.startCallerIdValidation({ e164: '+12025550142', friendlyName: 'x', statusCallbackUrl: 'https://hooks.example.com/v' });
  const bad = await carrier.startCallerIdValidation({ e164: '+12025550149', friendlyName: 'y', statusCallbackUrl: 'https://hooks.example.com/v' });
  t.regex(ok.validationCode, /^\d{6}$/);
  t.regex(ok.carrierCallId ?? '', /^SIM/);
  t.is(reports.length, 0, 'nothing before the delay');
  await waitFor('two outcomes', () => reports.length === 2);
  const byNumber = Object.fromEntries(reports.map((r) => [r.e164, r]));
  t.deepEqual(byNumber['+12025550142'], { e164: '+12025550142', status: 'verified', carrierCallerIdId: 'SIMPN12025550142', carrierCallId: ok.carrierCallId });
  t.deepEqual(byNumber['+12025550149'], { e164: '+12025550149', status: 'failed', carrierCallId: bad.carrierCallId });
  t.deepEqual(await carrier.callerIdStatus('+12025550142'), { verified: true, carrierCallerIdId: 'SIMPN12025550142' });
  t.deepEqual(await carrier.callerIdStatus('+12025550149'), { verified: false });
  await carrier.removeCallerId('SIMPN12025550142');
  await refused(t, 'not_found', undefined, () => carrier.removeCallerId('nonsense'));
});
