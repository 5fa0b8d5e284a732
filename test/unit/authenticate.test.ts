import test from 'ava';
import { KeyAuthenticator, CACHE_TTL_MS, NEGATIVE_TTL_MS, type KeyRequirement } from '../../http/plugins/authenticate.ts';
import { mintToken } from '../../runtime/tokens.ts';
import { systemClock } from '../../runtime/clock.ts';
import type { Pool } from '../../db/pool.ts';

const ANY: KeyRequirement = { scope: null, beforeGoLive: false };
const bearer = (secret: string) => `Bearer ${secret}`;

/** A row of the secret lookup as PostgreSQL returns it (JSON of the key and the account). */
function row(accountId: string, revokedAt: string | null = null) {
  return {
    key: { id: 'key_1', account_id: accountId, mode: 'test', scopes: [], ip_allowlist: null, expires_at: null, revoked_at: revokedAt, created_at: '2026-01-01T00:00:00.000Z' },
    account: { id: accountId, status: 'active', mode: 'test', requests_per_minute: 100, burst: 10, created_at: '2026-01-01T00:00:00.000Z' },
    grace_until: null,
  };
}

/** A pool whose every query is answered by `answer` (which may wait), counting the queries. */
function fakePool(answer: (n: number) => Promise<object[]> | object[]) {
  const pool = {
    queries: 0,
    async query() {
      pool.queries++;
      return { rows: await answer(pool.queries) };
    },
  };
  return pool;
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

test('an unknown key with a valid checksum is looked up once per negative window, not once per request', async (t) => {
  let now = 1_000_000;
  const pool = fakePool(() => []);
  const keys = new KeyAuthenticator(pool as unknown as Pool, systemClock, () => now);
  const guess = mintToken('svc_test_');
  for (let i = 0; i < 20; i++) await t.throwsAsync(() => keys.authenticate(bearer(guess), '203.0.113.1', ANY), { message: /unknown/ });
  t.is(pool.queries, 1);
  now += NEGATIVE_TTL_MS;
  await t.throwsAsync(() => keys.authenticate(bearer(guess), '203.0.113.1', ANY));
  t.is(pool.queries, 2, 'looked up again once the window has passed');
  // A malformed key never reaches the database at all.
  await t.throwsAsync(() => keys.authenticate(bearer(guess.slice(0, -1) + (guess.endsWith('a') ? 'b' : 'a')), '203.0.113.1', ANY));
  t.is(pool.queries, 2);
});

test('a known key is cached until its account is forgotten or the cache lifetime passes', async (t) => {
  let now = 1_000_000;
  const pool = fakePool(() => [row('acct_1')]);
  const keys = new KeyAuthenticator(pool as unknown as Pool, systemClock, () => now);
  const secret = mintToken('svc_test_');
  for (let i = 0; i < 5; i++) t.is((await keys.authenticate(bearer(secret), '203.0.113.1', ANY)).accountId, 'acct_1');
  t.is(pool.queries, 1);
  keys.forgetAccount('acct_2');
  await keys.authenticate(bearer(secret), '203.0.113.1', ANY);
  t.is(pool.queries, 1, 'another account forgotten: still cached');
  keys.forgetAccount('acct_1');
  await keys.authenticate(bearer(secret), '203.0.113.1', ANY);
  t.is(pool.queries, 2);
  now += CACHE_TTL_MS;
  await keys.authenticate(bearer(secret), '203.0.113.1', ANY);
  t.is(pool.queries, 3);
});

for (const [forget, how] of [
  [(keys: KeyAuthenticator) => keys.forgetAccount('acct_1'), 'its account'],
  [(keys: KeyAuthenticator) => keys.forgetAll(), 'every account'],
] as const) {
  test(`a lookup that raced a revocation (${how} forgotten) neither answers nor caches the row from before it`, async (t) => {
    const first = deferred<object[]>();
    // The first read started before the revocation committed and sees the key as it was; the
    // account is forgotten (the revocation answered) while that read is under way.
    const pool = fakePool((n) => (n === 1 ? first.promise : [row('acct_1', '2026-01-01T00:00:00.000Z')]));
    const keys = new KeyAuthenticator(pool as unknown as Pool, systemClock);
    const secret = mintToken('svc_test_');
    const racing = keys.authenticate(bearer(secret), '203.0.113.1', ANY);
    await new Promise((resolve) => setImmediate(resolve));
    forget(keys);
    first.resolve([row('acct_1')]);
    await t.throwsAsync(racing, { message: /revoked/ }, 'read again after the forget');
    t.is(pool.queries, 2);
    await t.throwsAsync(() => keys.authenticate(bearer(secret), '203.0.113.1', ANY), { message: /revoked/ });
    t.is(pool.queries, 2, 'what was cached is the row after the revocation');
  });
}

test('a live key before go-live is refused unless the route admits it', async (t) => {
  const live = { ...row('acct_1'), key: { ...row('acct_1').key, mode: 'live' } };
  const pool = fakePool(() => [live]);
  const keys = new KeyAuthenticator(pool as unknown as Pool, systemClock);
  const secret = mintToken('svc_live_');
  await t.throwsAsync(() => keys.authenticate(bearer(secret), '203.0.113.1', ANY), { message: /Live mode is not enabled/ });
  t.is((await keys.authenticate(bearer(secret), '203.0.113.1', { scope: null, beforeGoLive: true })).mode, 'live');
});
