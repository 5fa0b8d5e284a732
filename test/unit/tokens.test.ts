import test from 'ava';
import { hashToken, isWellFormed, mintToken, RANDOM_LENGTH, CHECKSUM_LENGTH } from '../../runtime/tokens.ts';

test('a minted token is prefix + 30 base62 + 6-character checksum and checks out', (t) => {
  const token = mintToken('svc_test_');
  t.regex(token, /^svc_test_[0-9A-Za-z]{36}$/);
  t.is(token.length, 'svc_test_'.length + RANDOM_LENGTH + CHECKSUM_LENGTH);
  t.true(isWellFormed(token, 'svc_test_'));
});

test('a typo, a truncation or another prefix fails the checksum', (t) => {
  const token = mintToken('svc_live_');
  const i = 'svc_live_'.length + 5;
  const typo = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
  t.false(isWellFormed(typo, 'svc_live_'));
  t.false(isWellFormed(token.slice(0, -1), 'svc_live_'));
  t.false(isWellFormed(token, 'svc_test_'));
  t.false(isWellFormed(`svc_live_${'!'.repeat(36)}`, 'svc_live_'));
});

test('tokens differ and only their SHA-256 is 32 bytes', (t) => {
  const a = mintToken('x_');
  const b = mintToken('x_');
  t.not(a, b);
  t.is(hashToken(a).length, 32);
  t.false(hashToken(a).equals(hashToken(b)));
});

test('a token is stored as its SHA-256: the hash of a known token is its known digest (keys already stored keep working)', (t) => {
  t.is(hashToken('sk_test_abc').toString('hex'), '4b4090ccee1e713c3d411b96a4226b90bd0f0deb34e02d19475a951316fd04ee');
  t.true(Buffer.isBuffer(hashToken('sk_test_abc')));
});
