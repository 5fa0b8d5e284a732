import test from 'ava';
import pg from 'pg';
import { createLogger } from '../../runtime/logger.ts';
import { TwilioCarrier } from '../../telephony/twilio/twilio-carrier.ts';
import { createLineTypeLookup } from '../../actors/call/line-types.ts';
import { createConsentGate } from '../../actors/scheduler/consent-gate.ts';
import { createLineTypeRepository } from '../../db/line-types.ts';
import { startFakeTwilio, type FakeLookupScript, type FakeTwilio } from '../fakes/twilio.ts';
import { freshDatabase } from '../helpers/db.ts';
import type { LineType } from '../../runtime/types.ts';

/**
 * Line types as Twilio Lookup v2 really answers them (issue 20 §5): unkind answers (no caller
 * type, UNDETERMINED, no line type with an error code, toll-free, fixed VoIP, HTTP errors) through
 * the real carrier, the real cache and the real consent gate. Whatever is unknown needs consent;
 * only a request that says the called party is a business, with a lookup that agrees, takes the
 * business-landline exemption (issue 20 §1).
 */

const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = 'f00dfeedf00dfeedf00dfeedf00dfeed';
const log = createLogger('silent');
const NOW = new Date('2026-11-27T15:00:00Z');
const NONE = { type: 'none' as const, obtainedAt: null, source: null, evidenceRef: null, expiresAt: null };

let pool: pg.Pool;
let fake: FakeTwilio;
let carrier: TwilioCarrier;

test.before(async () => {
  pool = new pg.Pool({ connectionString: await freshDatabase(), max: 2 });
  fake = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  carrier = new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl: fake.baseUrl, log });
});
test.after.always(async () => {
  await fake?.close();
  await pool?.end();
});

/** Washington, D.C. numbers: no state rule, so only the federal line-type rule decides. */
const UNKIND: [string, string, FakeLookupScript, LineType][] = [
  ['a landline whose caller type is null', '+12025550201', { lineType: 'landline', callerType: null }, 'landline'],
  ['a landline whose caller type is UNDETERMINED', '+12025550202', { lineType: 'landline', callerType: 'UNDETERMINED' }, 'landline'],
  ['a caller-name error beside a landline', '+12025550203', { lineType: 'landline', callerType: null, callerNameErrorCode: 60600 }, 'landline'],
  ['no line type, with error 60601', '+12025550204', { lineType: null, lineTypeErrorCode: 60601, callerType: 'BUSINESS' }, 'unknown'],
  ['tollFree, even when caller name says BUSINESS', '+12025550205', { lineType: 'tollFree', callerType: 'BUSINESS' }, 'unknown'],
  ['fixedVoip, even when caller name says BUSINESS', '+12025550206', { lineType: 'fixedVoip', callerType: 'BUSINESS' }, 'voip'],
  ['a type Twilio may add one day', '+12025550207', { lineType: 'satellite', callerType: 'BUSINESS' }, 'unknown'],
];

for (const [what, e164, script, expected] of UNKIND) {
  test.serial(`Lookup: ${what} is ${expected}; with called_party business and no consent the gate refuses it`, async (t) => {
    fake.scriptLookup(e164, script);
    t.is(await carrier.lookupLineType(e164), expected);
    const gate = createConsentGate(createLineTypeLookup(pool, { live: carrier, test: carrier }, log));
    const answer = await gate({ mode: 'live', e164, country: 'US', consent: NONE, calledParty: 'business', earlierOutcomes: [], now: NOW });
    t.like(answer, { ok: false, code: 'consent_required' });
    t.not(answer.lineType, 'business_landline');
  });
}

for (const [status, code, message] of [
  [404, 20404, 'The requested resource /PhoneNumbers/+12025550211 was not found'],
  [429, 20429, 'Too Many Requests'],
  [503, 20503, 'Service Unavailable'],
] as const) {
  test.serial(`Lookup answering HTTP ${status} throws; the gate reads the number as unknown, needs consent, and caches nothing`, async (t) => {
    const e164 = `+1202555${String(status).padStart(4, '0')}`;
    fake.scriptLookup(e164, { httpError: { status, code, message } });
    await t.throwsAsync(() => carrier.lookupLineType(e164));
    const gate = createConsentGate(createLineTypeLookup(pool, { live: carrier, test: carrier }, log));
    const answer = await gate({ mode: 'live', e164, country: 'US', consent: NONE, calledParty: 'business', earlierOutcomes: [], now: NOW });
    t.deepEqual({ ok: answer.ok, lineType: answer.lineType }, { ok: false, lineType: 'unknown' });
    t.is(await createLineTypeRepository(pool).fresh('twilio', e164, NOW), null, 'a failed lookup is asked again next time');
  });
}

test.serial('a BUSINESS landline is exempt only when the request says the called party is a business', async (t) => {
  const e164 = '+12025550220';
  fake.scriptLookup(e164, { lineType: 'landline', callerType: 'BUSINESS' });
  t.is(await carrier.lookupLineType(e164), 'business_landline');
  const gate = createConsentGate(createLineTypeLookup(pool, { live: carrier, test: carrier }, log));
  const ask = (calledParty: 'business' | 'consumer' | null) => gate({ mode: 'live', e164, country: 'US', consent: NONE, calledParty, earlierOutcomes: [], now: NOW });
  t.deepEqual(await ask('business'), { ok: true, lineType: 'business_landline' });
  for (const calledParty of [null, 'consumer'] as const) {
    const answer = await ask(calledParty);
    t.like(answer, { ok: false, lineType: 'landline', code: 'consent_required' }, String(calledParty));
  }
});

test.serial('a cached line type is trusted for 30 days after the lookup, then asked again', async (t) => {
  const cache = createLineTypeRepository(pool);
  const e164 = '+12025550230';
  const lookedUp = new Date('2026-10-01T12:00:00Z');
  await cache.save('twilio', e164, 'mobile', lookedUp);
  const day = 86_400_000;
  t.is(await cache.fresh('twilio', e164, new Date(lookedUp.getTime() + 29 * day)), 'mobile');
  t.is(await cache.fresh('twilio', e164, new Date(lookedUp.getTime() + 30 * day - 1)), 'mobile');
  t.is(await cache.fresh('twilio', e164, new Date(lookedUp.getTime() + 30 * day)), null, '30 days after the lookup the answer is stale');
  t.is(await cache.fresh('twilio', e164, new Date(lookedUp.getTime() + 400 * day)), null);

  // Through the lookup: a number ported since (now a mobile) is asked again after 30 days.
  const ported = '+12025550231';
  fake.scriptLookup(ported, { lineType: 'landline', callerType: 'BUSINESS' });
  const lookup = createLineTypeLookup(pool, { live: carrier, test: carrier }, log);
  t.is(await lookup('live', ported, lookedUp), 'business_landline');
  fake.scriptLookup(ported, { lineType: 'mobile', callerType: null });
  t.is(await lookup('live', ported, new Date(lookedUp.getTime() + 29 * day)), 'business_landline', 'still cached on day 29');
  t.is(await lookup('live', ported, new Date(lookedUp.getTime() + 30 * day)), 'mobile', 'asked again on day 30');
});
