import test, { type ExecutionContext } from 'ava';
import { agreementSignature, checkBrandField, parseAllowlist, parseFutureTimestamp, parseScopes, randomSlugWord, slugify } from '../../actors/account/account-rules.ts';
import { SCOPES } from '../../actors/account/api-key-rules.ts';
import { BRAND_FIELDS } from '../../db/accounts.ts';
import { Refusal, type RefusalCode } from '../../runtime/refusal.ts';
import { apiErrorOf } from '../../http/errors.ts';

/** Asserts that `fn` refuses with `code` (a domain refusal, not an HTTP error), and returns the refusal. */
function throwsCode(t: ExecutionContext, fn: () => unknown, code: RefusalCode, label?: string): Refusal | undefined {
  const err = t.throws(fn, { instanceOf: Refusal }, label);
  t.is(err?.code, code, label);
  return err;
}

// --- slugify ---

test('slugify lowercases and joins words with single hyphens', (t) => {
  t.is(slugify('Acme Agency'), 'acme-agency');
  t.is(slugify('  Acme   Agency  '), 'acme-agency');
  t.is(slugify('ACME'), 'acme');
  t.is(slugify('Agency 42'), 'agency-42');
});

test('slugify strips accents', (t) => {
  t.is(slugify('Café Crème'), 'cafe-creme');
  t.is(slugify('Zürich Élan Niño'), 'zurich-elan-nino');
  t.is(slugify('Ångström'), 'angstrom');
});

test('slugify turns punctuation runs into one hyphen and trims them at the ends', (t) => {
  t.is(slugify('Acme, Inc.'), 'acme-inc');
  t.is(slugify('--Hello!!  World??--'), 'hello-world');
  t.is(slugify('a/b\\c_d'), 'a-b-c-d');
  t.is(slugify("O'Brien & Sons"), 'o-brien-sons');
});

test('slugify falls back to "account" when nothing is left', (t) => {
  t.is(slugify(''), 'account');
  t.is(slugify('   '), 'account');
  t.is(slugify('!!!'), 'account');
  t.is(slugify('日本'), 'account');
  t.is(slugify('', 3), 'account-3');
});

test('slugify adds a suffix only for n > 1', (t) => {
  t.is(slugify('Acme'), 'acme');
  t.is(slugify('Acme', 1), 'acme');
  t.is(slugify('Acme', 2), 'acme-2');
  t.is(slugify('Acme', 3), 'acme-3');
});

test('slugify steps past -3 with the random word it is given, and refuses to go on without one', (t) => {
  t.is(slugify('Acme', 4, 'k3x9q'), 'acme-k3x9q');
  t.is(slugify('Acme', 10, 'zz'), 'acme-zz');
  t.throws(() => slugify('Acme', 4), { instanceOf: RangeError });
  t.throws(() => slugify('Acme', 4, 'Not-Safe'), { instanceOf: RangeError });
});

test('randomSlugWord: short base-36 words, different each time', (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const word = randomSlugWord();
    t.regex(word, /^[a-z0-9]{1,7}$/);
    seen.add(word);
  }
  t.true(seen.size > 45, `${seen.size} distinct of 50`);
});

test('slugify caps the base at 40 characters before any suffix', (t) => {
  t.is(slugify('a'.repeat(60)), 'a'.repeat(40));
  t.is(slugify('b'.repeat(40)), 'b'.repeat(40));
  t.is(slugify('a'.repeat(60), 2), `${'a'.repeat(40)}-2`);
});

test('slugify output is always URL-safe', (t) => {
  for (const name of ['Acme', 'Café', '', '***', 'x'.repeat(100), 'Ünïcödé ∑ 123', 'tab\there']) {
    t.regex(slugify(name), /^[a-z0-9]+(?:-[a-z0-9]+)*$/, name);
  }
});

// The cap is applied after the ends are trimmed, so a cut that lands on a separator leaves a
// trailing hyphen ("aaa…a-"), and a suffix then makes a double hyphen. See the final report.
test('slugify never ends a capped slug with a hyphen', (t) => {
  const name = `${'a'.repeat(39)} Agency`;
  t.is(slugify(name), 'a'.repeat(39));
  t.is(slugify(name, 2), `${'a'.repeat(39)}-2`);
});

// --- parseScopes ---

test('parseScopes: no scopes given means every scope', (t) => {
  const scopes = parseScopes(undefined);
  t.deepEqual(scopes, [...SCOPES]);
  scopes.pop();
  t.is(parseScopes(undefined).length, SCOPES.length, 'each call returns a fresh copy');
});

test('parseScopes keeps known scopes in order and removes duplicates', (t) => {
  t.deepEqual(parseScopes(['calls:read']), ['calls:read']);
  t.deepEqual(parseScopes(['calls:write', 'calls:read', 'calls:write', 'calls:read']), ['calls:write', 'calls:read']);
  t.deepEqual(parseScopes([...SCOPES, ...SCOPES]), [...SCOPES]);
  t.deepEqual(parseScopes([]), []);
});

test('parseScopes refuses an unknown scope with invalid_scope, naming it', (t) => {
  const err = throwsCode(t, () => parseScopes(['calls:read', 'calls:delete']), 'invalid_scope');
  t.regex(err?.message ?? '', /calls:delete/);
  throwsCode(t, () => parseScopes(['admin']), 'invalid_scope');
  throwsCode(t, () => parseScopes(['CALLS:READ']), 'invalid_scope');
  throwsCode(t, () => parseScopes(['']), 'invalid_scope');
});

// --- parseAllowlist ---

test('parseAllowlist: nothing given means no allowlist', (t) => {
  t.is(parseAllowlist(undefined), null);
  t.is(parseAllowlist(null), null);
  t.is(parseAllowlist([]), null);
});

test('parseAllowlist normalises every entry', (t) => {
  t.deepEqual(parseAllowlist(['203.0.113.0/24', '::1', ' 198.51.100.7 ', '2001:DB8::/32']), [
    '203.0.113.0/24',
    '::1/128',
    '198.51.100.7/32',
    '2001:db8::/32',
  ]);
});

test('parseAllowlist refuses the whole list when one entry is junk, naming it', (t) => {
  const err = throwsCode(t, () => parseAllowlist(['10.0.0.0/8', 'office-wifi']), 'invalid_ip_allowlist');
  t.regex(err?.message ?? '', /office-wifi/);
  throwsCode(t, () => parseAllowlist(['10.0.0.0/33']), 'invalid_ip_allowlist');
  throwsCode(t, () => parseAllowlist(['']), 'invalid_ip_allowlist');
});

// --- parseFutureTimestamp ---

const NOW = new Date('2026-03-10T12:00:00.000Z');

test('parseFutureTimestamp: absent means no expiry', (t) => {
  t.is(parseFutureTimestamp(undefined, NOW), null);
  t.is(parseFutureTimestamp(null, NOW), null);
});

test('parseFutureTimestamp accepts a future ISO 8601 timestamp', (t) => {
  t.deepEqual(parseFutureTimestamp('2027-01-31T00:00:00.000Z', NOW), new Date('2027-01-31T00:00:00.000Z'));
  t.deepEqual(parseFutureTimestamp('2026-03-10T12:00:00.001Z', NOW), new Date(NOW.getTime() + 1));
  t.deepEqual(parseFutureTimestamp('2026-03-10T14:00:00+01:00', NOW), new Date('2026-03-10T13:00:00.000Z'));
});

test('parseFutureTimestamp refuses now and the past', (t) => {
  throwsCode(t, () => parseFutureTimestamp(NOW.toISOString(), NOW), 'invalid_expires_at', 'now');
  throwsCode(t, () => parseFutureTimestamp('2026-03-10T11:59:59.999Z', NOW), 'invalid_expires_at', '1 ms ago');
  throwsCode(t, () => parseFutureTimestamp('2020-01-01T00:00:00Z', NOW), 'invalid_expires_at', 'years ago');
});

test('parseFutureTimestamp refuses anything that is not an ISO 8601 timestamp', (t) => {
  for (const garbage of ['', 'tomorrow', 'soon', '2027-01-31', '31/01/2027', 'Jan 31 2027 00:00:00', '1800000000000', '2027-13-01T00:00:00Z', '2027-01-31T25:00:00Z', '2027-01-31Tnoon']) {
    throwsCode(t, () => parseFutureTimestamp(garbage, NOW), 'invalid_expires_at', JSON.stringify(garbage));
  }
});

// `new Date()` rolls an impossible day over (2027-02-30 becomes 2027-03-02) instead of failing,
// so the regex-plus-NaN check lets it through. See the final report.
test('parseFutureTimestamp refuses an impossible calendar date', (t) => {
  throwsCode(t, () => parseFutureTimestamp('2027-02-30T00:00:00Z', NOW), 'invalid_expires_at');
});

// --- checkBrandField ---

test('null clears any brand field', (t) => {
  for (const field of BRAND_FIELDS) t.notThrows(() => checkBrandField(field, null), field);
});

test('colours must be #rgb or #rrggbb hex', (t) => {
  for (const field of ['primary_color', 'accent_color'] as const) {
    for (const ok of ['#abc', '#ABC', '#A1B2C3', '#a1b2c3', '#000000', '#fFf']) t.notThrows(() => checkBrandField(field, ok), `${field} ${ok}`);
    for (const bad of ['red', '#12345', '#1234567', '#abcd', 'abc', 'A1B2C3', '#ggg', '# abc', '#abc ', '', 'rgb(0,0,0)']) {
      throwsCode(t, () => checkBrandField(field, bad), 'invalid_brand_field', `${field} ${JSON.stringify(bad)}`);
    }
  }
});

test('logo_url must be an https URL', (t) => {
  for (const ok of ['https://cdn.example.com/logo.png', 'https://example.com', 'HTTPS://EXAMPLE.COM/x.svg?v=2']) {
    t.notThrows(() => checkBrandField('logo_url', ok), ok);
  }
  for (const bad of ['http://cdn.example.com/logo.png', 'ftp://example.com/logo.png', 'javascript:alert(1)', 'data:image/png;base64,AAAA', '//example.com/logo.png', 'example.com/logo.png', 'not a url', '']) {
    throwsCode(t, () => checkBrandField('logo_url', bad), 'invalid_brand_field', JSON.stringify(bad));
  }
});

test('support_email must look like an email address', (t) => {
  for (const ok of ['help@example.com', 'first.last+tag@mail.example.co.uk']) t.notThrows(() => checkBrandField('support_email', ok), ok);
  for (const bad of ['help', 'help@', '@example.com', 'help@example', 'a b@example.com', 'help@exa mple.com', '']) {
    throwsCode(t, () => checkBrandField('support_email', bad), 'invalid_brand_field', JSON.stringify(bad));
  }
});

test('support_email and email_from_name: what the email sender would drop is refused when saved (its own address and header checks)', (t) => {
  for (const bad of [`${'h'.repeat(70)}@example.com`, 'help@-example.com', '=?utf-8?q?help?=@example.com', '"help"@example.com', 'help@exa_mple.com']) {
    throwsCode(t, () => checkBrandField('support_email', bad), 'invalid_brand_field', JSON.stringify(bad));
  }
  t.notThrows(() => checkBrandField('support_email', `${'h'.repeat(64)}@example.com`));
  // A bidi override reorders what a mail client shows (`Support \u202egnp.exe` reads as `Support exe.png`).
  for (const bad of ['Support \u202egnp.exe', 'Team\u2066x\u2069', 'Team\u0085']) {
    throwsCode(t, () => checkBrandField('email_from_name', bad), 'invalid_brand_field', JSON.stringify(bad));
  }
});

test('domain must be a host name below its registrable domain, not a special-use one (as a website domain)', (t) => {
  for (const ok of ['calls.example.com', 'calls.northwind.co.uk', 'CALLS.Northwind.com', 'calls.northwind.com.', 'app.a-b.example', `${'a'.repeat(63)}.northwind.com`]) {
    t.notThrows(() => checkBrandField('domain', ok), ok);
  }
  for (const bad of ['localhost', 'calls.localhost', 'calls.northwind.internal', 'calls.onion', 'northwind.com', 'EXAMPLE.co.uk', 'a-b.example', 'example.com.', '-bad.com', 'bad-.com', 'a..com', 'https://example.com', 'example.com/path', 'a_b.com', 'ex ample.com', ' calls.northwind.com', `${'a'.repeat(64)}.com`, '']) {
    throwsCode(t, () => checkBrandField('domain', bad), 'invalid_brand_field', JSON.stringify(bad));
  }
});

test('display_name and email_from_name must not be blank', (t) => {
  for (const field of ['display_name', 'email_from_name'] as const) {
    for (const ok of ['Acme', ' Acme ', 'A']) t.notThrows(() => checkBrandField(field, ok), `${field} ${ok}`);
    for (const bad of ['', ' ', '\t\n ']) throwsCode(t, () => checkBrandField(field, bad), 'invalid_brand_field', `${field} ${JSON.stringify(bad)}`);
  }
});

test('a brand field error names the field', (t) => {
  for (const [field, bad] of [
    ['primary_color', 'red'],
    ['logo_url', 'http://x.com'],
    ['support_email', 'nope'],
    ['domain', 'nope'],
    ['display_name', ''],
  ] as const) {
    const err = throwsCode(t, () => checkBrandField(field, bad), 'invalid_brand_field');
    t.true(err?.message.startsWith(`${field} `), err?.message);
    t.is(apiErrorOf(err)?.status, 400, 'answered 400 through the catalogue');
  }
});

// --- agreementSignature ---

test('agreementSignature: a first signature and a new version are dated now; the version on file is no change', (t) => {
  const then = new Date('2026-01-05T10:00:00.000Z');
  const now = new Date('2026-08-01T09:30:00.000Z');
  t.deepEqual(agreementSignature({ agreement_version: null, agreement_signed_at: null }, 'v1', now), { version: 'v1', signedAt: now });
  t.deepEqual(agreementSignature({ agreement_version: 'v1', agreement_signed_at: then }, 'v2', now), { version: 'v2', signedAt: now });
  t.is(agreementSignature({ agreement_version: 'v1', agreement_signed_at: then }, 'v1', now), null);
  // Versions are compared exactly: a different spelling is a different version.
  t.deepEqual(agreementSignature({ agreement_version: 'v1', agreement_signed_at: then }, 'V1', now), { version: 'V1', signedAt: now });
  // A version on file without a date was never signed (not a state the service writes): sign it.
  t.deepEqual(agreementSignature({ agreement_version: 'v1', agreement_signed_at: null }, 'v1', now), { version: 'v1', signedAt: now });
});
