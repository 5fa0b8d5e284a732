import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { isForbiddenAddress } from '../../actors/webhooks/address-guard.ts';
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS, nextAttempt } from '../../actors/webhooks/deliver.ts';
import { newSigningSecret, signatureFor, signatureHeader, webhookHeaders } from '../../actors/webhooks/signing.ts';

// The Standard Webhooks reference vector (spec repository and issue 5).
const REF_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const REF_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const REF_TS = 1614265330;
const REF_BODY = '{"test": 2432232314}';
const REF_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

const nowSeconds = () => Math.floor(Date.now() / 1000);
const BODY = JSON.stringify({ id: 'evt_0a1b', type: 'call.completed', mode: 'live', data: { note: 'café ✓' } });

function headersFor(secrets: string[], timestampSeconds = nowSeconds(), body = BODY) {
  return webhookHeaders({ id: 'evt_0a1b', timestampSeconds, body, secrets, eventType: 'call.completed', mode: 'live' });
}

// --- signing ---

test('signatureFor reproduces the Standard Webhooks reference vector', (t) => {
  t.is(signatureFor(REF_SECRET, REF_ID, REF_TS, REF_BODY), REF_SIGNATURE);
});

test('signatureFor depends on every signed part', (t) => {
  t.not(signatureFor(REF_SECRET, REF_ID, REF_TS + 1, REF_BODY), REF_SIGNATURE);
  t.not(signatureFor(REF_SECRET, `${REF_ID}x`, REF_TS, REF_BODY), REF_SIGNATURE);
  t.not(signatureFor(REF_SECRET, REF_ID, REF_TS, '{"test":2432232314}'), REF_SIGNATURE);
  t.not(signatureFor(newSigningSecret(), REF_ID, REF_TS, REF_BODY), REF_SIGNATURE);
});

test('signatureFor refuses a secret without key bytes and a fractional timestamp', (t) => {
  t.throws(() => signatureFor('whsec_', REF_ID, REF_TS, REF_BODY));
  t.throws(() => signatureFor(REF_SECRET, REF_ID, REF_TS + 0.5, REF_BODY), { instanceOf: RangeError });
});

test('newSigningSecret is whsec_ + base64 of 24 random bytes, different every time', (t) => {
  const secrets = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const secret = newSigningSecret();
    t.regex(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    t.is(Buffer.from(secret.slice('whsec_'.length), 'base64').length, 24);
    secrets.add(secret);
  }
  t.is(secrets.size, 50);
});

test('signatures agree with the standardwebhooks package for fresh secrets', (t) => {
  for (let i = 0; i < 20; i++) {
    const secret = newSigningSecret();
    const ts = REF_TS + i * 7919;
    t.is(signatureFor(secret, `msg_${i}`, ts, BODY), new Webhook(secret).sign(`msg_${i}`, new Date(ts * 1000), BODY));
  }
});

test('webhookHeaders carries every delivery header, brand-free', (t) => {
  const secret = newSigningSecret();
  const ts = nowSeconds();
  const headers = headersFor([secret], ts);
  t.deepEqual(Object.keys(headers).sort(), [
    'content-type',
    'user-agent',
    'webhook-id',
    'webhook-signature',
    'webhook-timestamp',
    'x-svc-event-type',
    'x-svc-mode',
  ]);
  t.is(headers['webhook-id'], 'evt_0a1b');
  t.is(headers['webhook-timestamp'], String(ts));
  t.is(headers['webhook-signature'], signatureFor(secret, 'evt_0a1b', ts, BODY));
  t.is(headers['x-svc-event-type'], 'call.completed');
  t.is(headers['x-svc-mode'], 'live');
  t.is(headers['content-type'], 'application/json');
  t.is(headers['user-agent'], 'webhooks/1');
  t.notRegex(headers['user-agent'] ?? '', /switchboard/i);
});

test('the standardwebhooks verifier accepts our headers and returns the payload', (t) => {
  const secret = newSigningSecret();
  t.deepEqual(new Webhook(secret).verify(BODY, headersFor([secret])), JSON.parse(BODY));
  // The reference secret too, with a current timestamp.
  t.deepEqual(new Webhook(REF_SECRET).verify(REF_BODY, headersFor([REF_SECRET], nowSeconds(), REF_BODY)), {
    test: 2432232314,
  });
});

test('during a roll the header holds both signatures, current first, and either secret alone verifies', (t) => {
  const current = newSigningSecret();
  const previous = newSigningSecret();
  const ts = nowSeconds();
  const headers = headersFor([current, previous], ts);
  t.deepEqual(headers['webhook-signature']?.split(' '), [
    signatureFor(current, 'evt_0a1b', ts, BODY),
    signatureFor(previous, 'evt_0a1b', ts, BODY),
  ]);
  t.is(signatureHeader([current, previous], 'evt_0a1b', ts, BODY), headers['webhook-signature']);
  t.notThrows(() => new Webhook(current).verify(BODY, headers));
  t.notThrows(() => new Webhook(previous).verify(BODY, headers));
  t.throws(() => new Webhook(newSigningSecret()).verify(BODY, headers), { message: /signature/i });
});

test('signatureHeader needs at least one secret', (t) => {
  t.throws(() => signatureHeader([], REF_ID, REF_TS, REF_BODY));
});

test('the verifier rejects a tampered body', (t) => {
  const secret = newSigningSecret();
  const headers = headersFor([secret]);
  t.throws(() => new Webhook(secret).verify(BODY.replace('café', 'cafe'), headers), { message: /signature/i });
  t.throws(() => new Webhook(secret).verify(`${BODY} `, headers), { message: /signature/i });
});

test('the verifier rejects a timestamp more than five minutes old, and accepts one just inside', (t) => {
  const secret = newSigningSecret();
  t.throws(() => new Webhook(secret).verify(BODY, headersFor([secret], nowSeconds() - 6 * 60)), { message: /too old/i });
  t.throws(() => new Webhook(secret).verify(BODY, headersFor([secret], nowSeconds() - 60 * 60)), { message: /too old/i });
  t.notThrows(() => new Webhook(secret).verify(BODY, headersFor([secret], nowSeconds() - 4 * 60)));
});

// --- retry rule ---

const NOW = new Date('2025-03-01T12:00:00.000Z');
const FAILURES: Array<number | null> = [null, 100, 301, 302, 304, 400, 401, 403, 404, 408, 409, 429, 500, 502, 503, 504];

test('the schedule is 30 s, 2 min, 10 min, 1 h, 6 h with six attempts in all', (t) => {
  t.deepEqual([...RETRY_SCHEDULE_MS], [30_000, 120_000, 600_000, 3_600_000, 21_600_000]);
  t.is(MAX_ATTEMPTS, 6);
});

test('any 2xx succeeds on every attempt', (t) => {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    for (const status of [200, 201, 202, 204, 299]) {
      t.deepEqual(nextAttempt(attempt, status, NOW), { state: 'succeeded' }, `attempt ${attempt} status ${status}`);
    }
  }
});

test('410 is dead at once on every attempt', (t) => {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    t.deepEqual(nextAttempt(attempt, 410, NOW), { state: 'dead', reason: 'gone' }, `attempt ${attempt}`);
  }
});

test('any other answer, 404 and 3xx included, or no answer, retries on the schedule', (t) => {
  const expectedWaitMs = [30_000, 2 * 60_000, 10 * 60_000, 60 * 60_000, 6 * 60 * 60_000];
  for (const status of FAILURES) {
    expectedWaitMs.forEach((waitMs, i) => {
      const next = nextAttempt(i + 1, status, NOW);
      t.deepEqual(next, { state: 'retry', at: new Date(NOW.getTime() + waitMs) }, `attempt ${i + 1} status ${status}`);
    });
  }
});

test('the sixth failed attempt is dead, exhausted', (t) => {
  for (const status of FAILURES) {
    t.deepEqual(nextAttempt(6, status, NOW), { state: 'dead', reason: 'exhausted' }, `status ${status}`);
    t.deepEqual(nextAttempt(7, status, NOW), { state: 'dead', reason: 'exhausted' }, `status ${status}`);
  }
  // A success on the last attempt still counts.
  t.deepEqual(nextAttempt(6, 200, NOW), { state: 'succeeded' });
});

test('nextAttempt refuses an attempt count that is not a positive integer', (t) => {
  for (const n of [0, -1, 1.5, Number.NaN]) {
    t.throws(() => nextAttempt(n, 500, NOW), { instanceOf: RangeError }, String(n));
  }
});

// --- address guard ---

const FORBIDDEN: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback /8'],
  ['::1', 'IPv6 loopback'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', '0/8'],
  ['::', 'IPv6 unspecified'],
  ['169.254.169.254', 'cloud metadata'],
  ['169.254.0.1', 'link-local'],
  ['fe80::1', 'IPv6 link-local'],
  ['fe80::1%eth0', 'IPv6 link-local with zone'],
  ['febf:ffff::1', 'end of fe80::/10'],
  ['10.0.0.1', 'private 10/8'],
  ['10.255.255.255', 'private 10/8 end'],
  ['172.16.0.0', 'private 172.16/12 start'],
  ['172.31.255.255', 'private 172.16/12 end'],
  ['192.168.1.1', 'private 192.168/16'],
  ['100.64.0.0', 'CGNAT start'],
  ['100.127.255.255', 'CGNAT end'],
  ['fc00::1', 'unique-local fc'],
  ['fd12:3456:789a::1', 'unique-local fd'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast SSDP'],
  ['ff02::1', 'IPv6 multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved 240/4'],
  ['192.0.2.10', 'TEST-NET-1'],
  ['198.51.100.7', 'TEST-NET-2'],
  ['203.0.113.9', 'TEST-NET-3'],
  ['198.18.0.1', 'benchmarking'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['2001:db8::1', 'IPv6 documentation'],
  ['fec0::1', 'deprecated site-local'],
  ['::ffff:127.0.0.1', 'mapped loopback'],
  ['::ffff:7f00:1', 'mapped loopback, hex'],
  ['::ffff:169.254.169.254', 'mapped metadata'],
  ['::ffff:10.1.2.3', 'mapped private'],
  ['::ffff:192.168.0.1', 'mapped private'],
  ['::ffff:0.0.0.0', 'mapped unspecified'],
  ['::ffff:100.64.1.1', 'mapped CGNAT'],
  ['::ffff:224.0.0.1', 'mapped multicast'],
  ['::ffff:255.255.255.255', 'mapped broadcast'],
  ['::ffff:0:127.0.0.1', 'RFC 6145 translated loopback'],
  ['64:ff9b::10.0.0.1', 'NAT64 to private'],
  ['64:ff9b::127.0.0.1', 'NAT64 to loopback'],
  ['::127.0.0.1', 'IPv4-compatible'],
  ['2002:7f00:1::1', '6to4'],
  ['2001::1', 'Teredo'],
  ['100::1', 'discard'],
  ['4000::1', 'outside 2000::/3'],
  ['not-an-ip', 'not an address'],
  ['', 'empty'],
  ['example.com', 'a name'],
  ['0x7f.1', 'legacy hex IPv4'],
  ['010.0.0.1', 'legacy octal IPv4'],
];

const ALLOWED: Array<[string, string]> = [
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['93.184.215.14', 'public'],
  ['172.15.255.255', 'just below 172.16/12'],
  ['172.32.0.0', 'just above 172.16/12'],
  ['100.63.255.255', 'just below CGNAT'],
  ['100.128.0.0', 'just above CGNAT'],
  ['169.253.255.255', 'just below link-local'],
  ['11.0.0.1', 'just above 10/8'],
  ['126.255.255.255', 'just below 127/8'],
  ['1.0.0.0', 'just above 0/8'],
  ['223.255.255.254', 'just below multicast'],
  ['2606:4700:4700::1111', 'public IPv6'],
  ['2001:4860:4860::8888', 'public IPv6'],
  ['::ffff:8.8.8.8', 'mapped public'],
  ['64:ff9b::8.8.8.8', 'NAT64 to public'],
];

test('isForbiddenAddress refuses every non-public address', (t) => {
  for (const [ip, label] of FORBIDDEN) t.true(isForbiddenAddress(ip), `${ip} (${label})`);
});

test('isForbiddenAddress allows public unicast addresses, including at range edges', (t) => {
  for (const [ip, label] of ALLOWED) t.false(isForbiddenAddress(ip), `${ip} (${label})`);
});
