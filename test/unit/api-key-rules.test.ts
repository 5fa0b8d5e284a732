import test from 'ava';
import {
  checkKey,
  ipAllowed,
  KEY_PREFIX,
  normaliseAllowlistEntry,
  ROTATION_GRACE_MS,
  SCOPES,
  type KeyFacts,
  type KeyRejection,
  type Scope,
} from '../../actors/account/api-key-rules.ts';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);

/** A key that is accepted for the default request; each test changes one fact. */
function key(overrides: Partial<KeyFacts> = {}): KeyFacts {
  return {
    mode: 'test',
    scopes: [...SCOPES],
    ipAllowlist: null,
    expiresAt: null,
    revokedAt: null,
    secretGraceUntil: null,
    accountStatus: 'active',
    accountMode: 'test',
    ...overrides,
  };
}

const request = (overrides: Partial<{ now: Date; ip: string; scope: Scope | null }> = {}) => ({
  now: NOW,
  ip: '203.0.113.7',
  scope: 'customers:read' as Scope | null,
  ...overrides,
});

// --- checkKey: one fact at a time ---

test('a healthy key is accepted', (t) => {
  t.is(checkKey(key(), request()), null);
});

test('every rejection code comes from its own fact', (t) => {
  const cases: [KeyRejection, Partial<KeyFacts>][] = [
    ['key_revoked', { revokedAt: at(-1) }],
    ['key_rotated', { secretGraceUntil: at(-1) }],
    ['key_expired', { expiresAt: at(-1) }],
    ['ip_not_allowed', { ipAllowlist: ['198.51.100.0/24'] }],
    ['reseller_suspended', { accountStatus: 'suspended' }],
    ['live_not_enabled', { mode: 'live', accountMode: 'test' }],
    ['scope_missing', { scopes: ['customers:write'] }],
  ];
  for (const [code, facts] of cases) t.is(checkKey(key(facts), request()), code, code);
});

test('rejections are reported in precedence order, over every combination of faults', (t) => {
  // Each fault in the documented order: credentials, origin, account, scope.
  const faults: [KeyRejection, Partial<KeyFacts>][] = [
    ['key_revoked', { revokedAt: at(-1000) }],
    ['key_rotated', { secretGraceUntil: at(-1000) }],
    ['key_expired', { expiresAt: at(-1000) }],
    ['ip_not_allowed', { ipAllowlist: ['198.51.100.0/24'] }],
    ['reseller_suspended', { accountStatus: 'suspended' }],
    ['live_not_enabled', { mode: 'live', accountMode: 'test' }],
    ['scope_missing', { scopes: [] }],
  ];
  for (let mask = 0; mask < 1 << faults.length; mask++) {
    const present = faults.filter((_, i) => mask & (1 << i));
    const facts = key(Object.assign({}, ...present.map(([, f]) => f)));
    const expected = present.length ? present[0][0] : null;
    t.is(checkKey(facts, request()), expected, `faults: ${present.map(([c]) => c).join(', ') || 'none'}`);
  }
});

// --- checkKey: times ---

test('revocation takes effect exactly at revokedAt', (t) => {
  t.is(checkKey(key({ revokedAt: NOW }), request()), 'key_revoked');
  t.is(checkKey(key({ revokedAt: at(1) }), request()), null);
});

test('a rotated secret works until the grace window closes, and not at its closing instant', (t) => {
  const rotatedAt = at(-ROTATION_GRACE_MS);
  const graceUntil = new Date(rotatedAt.getTime() + ROTATION_GRACE_MS);
  t.is(ROTATION_GRACE_MS, 24 * 60 * 60 * 1000);
  t.is(checkKey(key({ secretGraceUntil: graceUntil }), request({ now: at(-1) })), null);
  t.is(checkKey(key({ secretGraceUntil: graceUntil }), request({ now: NOW })), 'key_rotated');
  t.is(checkKey(key({ secretGraceUntil: graceUntil }), request({ now: at(1) })), 'key_rotated');
});

test('a key expires exactly at expiresAt', (t) => {
  t.is(checkKey(key({ expiresAt: NOW }), request()), 'key_expired');
  t.is(checkKey(key({ expiresAt: at(1) }), request()), null);
  t.is(checkKey(key({ expiresAt: at(-1) }), request()), 'key_expired');
});

// --- checkKey: origin, account, scope ---

test('an empty or absent allowlist does not restrict the address', (t) => {
  t.is(checkKey(key({ ipAllowlist: null }), request({ ip: '192.0.2.1' })), null);
  t.is(checkKey(key({ ipAllowlist: [] }), request({ ip: '192.0.2.1' })), null);
});

test('an address inside the allowlist passes, including an IPv4-mapped socket address', (t) => {
  const facts = key({ ipAllowlist: ['10.0.0.0/8', '2001:db8::/32'] });
  t.is(checkKey(facts, request({ ip: '10.1.2.3' })), null);
  t.is(checkKey(facts, request({ ip: '::ffff:10.1.2.3' })), null);
  t.is(checkKey(facts, request({ ip: '2001:db8::5' })), null);
  t.is(checkKey(facts, request({ ip: '11.1.2.3' })), 'ip_not_allowed');
  t.is(checkKey(facts, request({ ip: 'garbage' })), 'ip_not_allowed');
});

test('live keys need a live account; test keys work on either', (t) => {
  t.is(checkKey(key({ mode: 'live', accountMode: 'test' }), request()), 'live_not_enabled');
  t.is(checkKey(key({ mode: 'live', accountMode: 'test' }), { ...request(), beforeGoLive: true }), null, 'a route open before go-live');
  t.is(checkKey(key({ mode: 'live', accountMode: 'test', accountStatus: 'suspended' }), { ...request(), beforeGoLive: true }), 'reseller_suspended');
  t.is(checkKey(key({ mode: 'live', accountMode: 'test', scopes: [] }), { ...request(), beforeGoLive: true }), 'scope_missing');
  t.is(checkKey(key({ mode: 'live', accountMode: 'live' }), request()), null);
  t.is(checkKey(key({ mode: 'test', accountMode: 'live' }), request()), null);
});

test('a request that needs no scope skips the scope check', (t) => {
  t.is(checkKey(key({ scopes: [] }), request({ scope: null })), null);
  t.is(checkKey(key({ scopes: [] }), request({ scope: 'calls:write' })), 'scope_missing');
});

test('every scope is checked on its own', (t) => {
  for (const scope of SCOPES) {
    t.is(checkKey(key({ scopes: [scope] }), request({ scope })), null, scope);
    const others = SCOPES.filter((s) => s !== scope);
    t.is(checkKey(key({ scopes: others }), request({ scope })), 'scope_missing', scope);
  }
});

test('key prefixes name the mode', (t) => {
  t.deepEqual(KEY_PREFIX, { test: 'svc_test_', live: 'svc_live_' });
});

// --- normaliseAllowlistEntry ---

test('addresses become single-host ranges', (t) => {
  t.is(normaliseAllowlistEntry('203.0.113.7'), '203.0.113.7/32');
  t.is(normaliseAllowlistEntry('::1'), '::1/128');
  t.is(normaliseAllowlistEntry('2001:0DB8:0000:0000:0000:0000:0000:0001'), '2001:db8::1/128');
  t.is(normaliseAllowlistEntry('  198.51.100.1 \t'), '198.51.100.1/32');
});

test('CIDR ranges keep their prefix length and are written canonically', (t) => {
  t.is(normaliseAllowlistEntry('10.0.0.0/8'), '10.0.0.0/8');
  t.is(normaliseAllowlistEntry('0.0.0.0/0'), '0.0.0.0/0');
  t.is(normaliseAllowlistEntry('2001:DB8::/32'), '2001:db8::/32');
  t.is(normaliseAllowlistEntry('::/0'), '::/0');
  t.is(normaliseAllowlistEntry(' 192.168.0.0/16 '), '192.168.0.0/16');
});

test('junk is refused with null', (t) => {
  for (const junk of [
    '',
    '   ',
    'junk',
    'example.com',
    '256.0.0.1',
    '1.2.3.4.5',
    '10.0.0.0/33',
    '::/129',
    '10.0.0.0/-1',
    '10.0.0.0/',
    '/8',
    '1.2.3.4/8/9',
    '1.2.3.4 /24',
    '2001:db8::g',
    '1.2.3.4:80',
  ]) {
    t.is(normaliseAllowlistEntry(junk), null, JSON.stringify(junk));
  }
});

// ipaddr.parse follows inet_aton: a leading zero means octal, so "010.0.0.0/8" is stored as
// 8.0.0.0/8 and a different network is let in. See the final report.
test('a zero-padded IPv4 entry is refused instead of being read as octal', (t) => {
  t.is(normaliseAllowlistEntry('010.0.0.1'), null);
  t.is(normaliseAllowlistEntry('010.0.0.0/8'), null);
});

test('shorthand IPv4 forms (fewer than four parts, hex) are refused', (t) => {
  t.is(normaliseAllowlistEntry('1.2.3'), null);
  t.is(normaliseAllowlistEntry('10'), null);
  t.is(normaliseAllowlistEntry('0xa.0.0.1'), null);
});

test('a normalised entry is accepted by ipAllowed for the address it names', (t) => {
  for (const [entry, ip] of [
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8::1', '2001:db8::1'],
    ['10.0.0.0/8', '10.200.1.1'],
  ]) {
    const normalised = normaliseAllowlistEntry(entry);
    t.truthy(normalised);
    t.true(ipAllowed(ip, [normalised!]), entry);
  }
});

// --- ipAllowed ---

test('IPv4 inside and outside a CIDR range, edges included', (t) => {
  const list = ['192.168.1.0/24'];
  t.true(ipAllowed('192.168.1.0', list));
  t.true(ipAllowed('192.168.1.77', list));
  t.true(ipAllowed('192.168.1.255', list));
  t.false(ipAllowed('192.168.0.255', list));
  t.false(ipAllowed('192.168.2.0', list));
  t.true(ipAllowed('10.255.255.255', ['10.0.0.0/8']));
  t.false(ipAllowed('11.0.0.0', ['10.0.0.0/8']));
});

test('a /32 entry allows exactly one address', (t) => {
  t.true(ipAllowed('203.0.113.7', ['203.0.113.7/32']));
  t.false(ipAllowed('203.0.113.8', ['203.0.113.7/32']));
});

test('IPv6 inside and outside a CIDR range', (t) => {
  const list = ['2001:db8::/32'];
  t.true(ipAllowed('2001:db8::1', list));
  t.true(ipAllowed('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', list));
  t.false(ipAllowed('2001:db9::1', list));
  t.true(ipAllowed('::1', ['::1/128']));
  t.false(ipAllowed('::2', ['::1/128']));
});

test('an IPv4-mapped IPv6 client address matches an IPv4 range', (t) => {
  t.true(ipAllowed('::ffff:10.1.2.3', ['10.0.0.0/8']));
  t.true(ipAllowed('::FFFF:10.1.2.3', ['10.0.0.0/8']));
  t.false(ipAllowed('::ffff:11.1.2.3', ['10.0.0.0/8']));
});

test('an IPv4 client matches an IPv4-mapped IPv6 range', (t) => {
  t.true(ipAllowed('10.1.2.3', ['::ffff:10.0.0.0/104']));
  t.true(ipAllowed('::ffff:10.1.2.3', ['::ffff:10.0.0.0/104']));
  t.false(ipAllowed('11.1.2.3', ['::ffff:10.0.0.0/104']));
});

test('families do not match across each other otherwise', (t) => {
  t.false(ipAllowed('2001:db8::1', ['0.0.0.0/0']));
  t.false(ipAllowed('10.1.2.3', ['2001:db8::/32']));
});

test('a malformed client address is never allowed, even by catch-all ranges', (t) => {
  for (const ip of ['', 'not-an-ip', '10.0.0.256', '1.2.3.4:5678', '2001:db8::zz', '10.1.2.3/32']) {
    t.false(ipAllowed(ip, ['0.0.0.0/0', '::/0']), JSON.stringify(ip));
  }
});

test('a malformed stored entry is skipped and later entries still count', (t) => {
  t.false(ipAllowed('10.1.2.3', ['garbage']));
  t.true(ipAllowed('10.1.2.3', ['garbage', '10.0.0.0/8']));
  t.true(ipAllowed('10.1.2.3', ['2001:db8::/32', '10.0.0.0/8']));
});

test('an empty allowlist allows nothing', (t) => {
  t.false(ipAllowed('10.1.2.3', []));
});
