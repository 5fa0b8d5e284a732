/** What a caller ID may be and how many verifications may run (issue 20 §2), as pure rules. */
import test from 'ava';
import { callerIdNumber, verificationLimitRefusal } from '../../actors/numbers/caller-id-rules.ts';
import { areaCodeRefusal } from '../../actors/numbers/area-code.ts';

test('a caller ID is a landline or a mobile of the customer\'s country, without an extension', (t) => {
  t.like(callerIdNumber('(202) 555-0147', 'US'), { ok: true, e164: '+12025550147', country: 'US' });
  t.like(callerIdNumber('020 7946 0958', 'GB'), { ok: true, e164: '+442079460958' });
  t.like(callerIdNumber('+33 6 12 34 56 78', 'FR'), { ok: true, e164: '+33612345678' });
  for (const [text, country, code] of [
    ['+1 900 555 0100', 'US', 'caller_id_not_geographic'],
    ['+1 877 555 0100', 'US', 'caller_id_not_geographic'],
    ['+44 871 234 5678', 'GB', 'caller_id_not_geographic'],
    ['+44 300 123 4567', 'GB', 'caller_id_not_geographic'],
    ['+44 76 4012 3456', 'GB', 'caller_id_not_geographic'],
    ['+33 8 92 12 34 56', 'FR', 'caller_id_not_geographic'],
    ['+1 202 555 0147 ext. 3', 'US', 'phone_extension_not_allowed'],
    ['+44 20 7946 0958', 'US', 'phone_country_mismatch'],
    ['not a number', 'US', 'invalid_phone_number'],
    ['+1 999 555 0100', 'US', 'invalid_phone_number'],
  ] as const) {
    t.like(callerIdNumber(text, country), { ok: false, code }, text);
  }
});

test('verifications: 2 running per customer, 5 per account, 20 started per account per day; the daily cap is named first', (t) => {
  const counts = (customerRunning: number, accountRunning: number, accountStartedToday: number) => ({ customerRunning, accountRunning, accountStartedToday });
  t.is(verificationLimitRefusal(counts(1, 4, 19)), null);
  t.like(verificationLimitRefusal(counts(2, 2, 2)), { code: 'verification_limit_reached' });
  t.like(verificationLimitRefusal(counts(0, 5, 5)), { code: 'verification_limit_reached' });
  t.like(verificationLimitRefusal(counts(0, 0, 20)), { code: 'verification_daily_limit' });
  t.like(verificationLimitRefusal(counts(2, 5, 20)), { code: 'verification_daily_limit' });
});

test('area_code: only for US and CA customers, only a geographic code in service in their own country', (t) => {
  t.is(areaCodeRefusal('US', '415'), null);
  t.is(areaCodeRefusal('CA', '416'), null);
  t.regex(areaCodeRefusal('GB', '113') ?? '', /only to numbers in the United States and Canada/);
  t.regex(areaCodeRefusal('US', '999') ?? '', /not a geographic area code in service in the United States/);
  t.regex(areaCodeRefusal('US', '800') ?? '', /not a geographic area code/);
  t.regex(areaCodeRefusal('US', '416') ?? '', /416 is in Canada/);
  t.regex(areaCodeRefusal('CA', '212') ?? '', /212 is in the United States/);
  t.regex(areaCodeRefusal('US', '41') ?? '', /three digits/);
  t.regex(areaCodeRefusal('US', '4155') ?? '', /three digits/);
});
