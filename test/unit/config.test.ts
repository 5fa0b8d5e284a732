import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { estimatedEntropyBits, loadConfig, SettingError } from '../../runtime/config.ts';
import { mintToken } from '../../runtime/tokens.ts';

test('defaults: port 8080, every role, public URL from the port, data under ./.switchboard', (t) => {
  const c = loadConfig({});
  t.is(c.port, 8080);
  t.is(c.publicUrl, 'http://localhost:8080');
  t.is(c.dataDir, path.resolve('.switchboard'));
  t.deepEqual([...c.roles].sort(), ['api', 'builder', 'dialler', 'sender']);
  t.is(c.sitesDomain, undefined);
  t.is(c.dnsServers, undefined);
  t.is(c.twilio, null);
  t.is(c.openai, null);
  t.false(c.testClock);
});

test('roles, credentials and URLs are read from the environment', (t) => {
  const c = loadConfig({
    PORT: '9000',
    SWITCHBOARD_PUBLIC_URL: 'https://calls.example.com/',
    SWITCHBOARD_ROLES: 'api, sender',
    TWILIO_ACCOUNT_SID: 'AC1',
    TWILIO_AUTH_TOKEN: 'x',
    OPENAI_API_KEY: 'sk',
  });
  t.is(c.publicUrl, 'https://calls.example.com');
  t.deepEqual([...c.roles].sort(), ['api', 'sender']);
  t.like(c.twilio, { accountSid: 'AC1', authToken: 'x' });
  t.like(c.openai, { apiKey: 'sk', realtimeModel: 'gpt-realtime' });
});

test('malformed settings are refused at start-up, never guessed', (t) => {
  t.throws(() => loadConfig({ PORT: 'eighty' }), { message: /PORT/ });
  t.throws(() => loadConfig({ SWITCHBOARD_ROLES: 'api,web' }), { message: /SWITCHBOARD_ROLES/ });
  t.is(loadConfig({ SWITCHBOARD_SITES_DOMAIN: 'Sites.Example.com.' }).sitesDomain, 'sites.example.com');
  t.throws(() => loadConfig({ SWITCHBOARD_SITES_DOMAIN: 'https://sites.example.com' }), { message: /SWITCHBOARD_SITES_DOMAIN/ });
  t.deepEqual(loadConfig({ SWITCHBOARD_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2' }).dnsServers, ['127.0.0.1:5353', '10.0.0.2']);
  t.throws(() => loadConfig({ SWITCHBOARD_PUBLIC_URL: 'not a url' }), { message: /SWITCHBOARD_PUBLIC_URL/ });
  t.throws(() => loadConfig({ SWITCHBOARD_MAX_CALLS: '-1' }), { message: /SWITCHBOARD_MAX_CALLS/ });
  t.throws(() => loadConfig({ SWITCHBOARD_DB_POOL_SIZE: '0' }), { message: /SWITCHBOARD_DB_POOL_SIZE must be at least 1/ });
  t.throws(() => loadConfig({ SWITCHBOARD_DB_POOL_SIZE: 'many' }), { message: /SWITCHBOARD_DB_POOL_SIZE/ });
  t.throws(() => loadConfig({ SWITCHBOARD_RATE_LIMIT_STORE: 'redis' }), { message: /SWITCHBOARD_RATE_LIMIT_STORE takes memory or postgres/ });
  t.throws(() => loadConfig({ PORT: 'eighty' }), { instanceOf: SettingError }, 'a setting error, which the command prints without a stack');
});

test('request counters: in-process by default, shared in PostgreSQL on request', (t) => {
  t.is(loadConfig({}).rateLimitStore, 'memory');
  t.is(loadConfig({ SWITCHBOARD_RATE_LIMIT_STORE: 'postgres' }).rateLimitStore, 'postgres');
});

test('the database pool size: 20 by default, or what SWITCHBOARD_DB_POOL_SIZE says', (t) => {
  t.is(loadConfig({}).dbPoolSize, 20);
  t.is(loadConfig({ SWITCHBOARD_DB_POOL_SIZE: '10' }).dbPoolSize, 10);
});

test('a weak operator token stops start-up with a setting error that does not print it', (t) => {
  for (const weak of [
    '0123456789abcdef', // 16 characters
    'sbc_e2e_money_console_token', // 27
    'a'.repeat(64),
    'passwordpasswordpasswordpassword',
    'aB3$'.repeat(10),
  ]) {
    const err = t.throws(() => loadConfig({ SWITCHBOARD_ADMIN_TOKEN: weak }), { instanceOf: SettingError, message: /SWITCHBOARD_ADMIN_TOKEN is too weak/ }, weak);
    t.false(err!.message.includes(weak), 'the token is not echoed');
  }
});

test('the encryption key is 32 bytes of base64, checked at start-up without echoing it', (t) => {
  const good = crypto.randomBytes(32);
  for (const ok of [good.toString('base64'), good.toString('base64url'), good.toString('base64').replace(/=$/, ''), `${good.toString('base64')}\n`]) {
    t.is(Buffer.from(loadConfig({ SWITCHBOARD_ENCRYPTION_KEY: ok }).encryptionKey!, 'base64').toString('hex'), good.toString('hex'), JSON.stringify(ok));
  }
  for (const bad of [good.toString('hex'), crypto.randomBytes(16).toString('base64'), crypto.randomBytes(48).toString('base64'), `${good.toString('base64').slice(0, 40)}!!!=`]) {
    const err = t.throws(() => loadConfig({ SWITCHBOARD_ENCRYPTION_KEY: bad }), { instanceOf: SettingError, message: /SWITCHBOARD_ENCRYPTION_KEY must be 32 bytes in base64/ }, bad);
    t.false(err!.message.includes(bad), 'the key is not echoed');
  }
  t.is(loadConfig({}).encryptionKey, undefined, 'unset: a key file in the data directory');
});

test('generated tokens, random strings and the test token are strong enough', (t) => {
  for (const strong of [
    mintToken('sbc_'),
    crypto.randomBytes(32).toString('base64'),
    crypto.randomBytes(16).toString('hex'),
    crypto.randomUUID(),
    'sbc_test_console_token_for_tests_only',
  ]) {
    t.is(loadConfig({ SWITCHBOARD_ADMIN_TOKEN: strong }).adminToken, strong, strong);
  }
  t.is(loadConfig({}).adminToken, undefined, 'unset: start generates one');
});

test('the entropy estimate counts repetition, not length alone', (t) => {
  t.is(estimatedEntropyBits('aaaaaaaa'), 0);
  t.is(estimatedEntropyBits('abababab'), 8);
  t.is(Math.round(estimatedEntropyBits('0123456789abcdef')), 64);
});

test('request and connection timeouts and the failed-authentication throttle: defaults and settings', (t) => {
  t.like(loadConfig({}), { requestTimeoutMs: 30_000, connectionTimeoutMs: 120_000, authFailuresPerMinute: 20 });
  t.like(
    loadConfig({ SWITCHBOARD_REQUEST_TIMEOUT_MS: '1000', SWITCHBOARD_CONNECTION_TIMEOUT_MS: '5000', SWITCHBOARD_AUTH_FAILURES_PER_MINUTE: '3' }),
    { requestTimeoutMs: 1_000, connectionTimeoutMs: 5_000, authFailuresPerMinute: 3 },
  );
  t.throws(() => loadConfig({ SWITCHBOARD_REQUEST_TIMEOUT_MS: '0' }), { message: /SWITCHBOARD_REQUEST_TIMEOUT_MS must be at least 1/ });
  t.throws(() => loadConfig({ SWITCHBOARD_AUTH_FAILURES_PER_MINUTE: 'lots' }), { message: /SWITCHBOARD_AUTH_FAILURES_PER_MINUTE/ });
});

test('a DATABASE_URL listing several hosts (libpq failover syntax) is taken; a list that cannot be used stops start-up in one line', (t) => {
  const url = 'postgres://switchboard:pw@db-a.internal:5432,db-b.internal:5432/switchboard?target_session_attrs=read-write';
  t.is(loadConfig({ DATABASE_URL: url }).databaseUrl, url);
  // A comma in the password or the query is not a second host.
  t.is(loadConfig({ DATABASE_URL: 'postgres://u:a,b@db.internal:5432/x?options=-c%20a%3D1,2' }).databaseUrl, 'postgres://u:a,b@db.internal:5432/x?options=-c%20a%3D1,2');
  const refused = (value: string) => {
    const err = t.throws(() => loadConfig({ DATABASE_URL: value }), { instanceOf: SettingError });
    t.false(err!.message.includes('\n'), 'one line');
    t.false(err!.message.includes('pw'), 'the password is never echoed');
    return err!.message;
  };
  t.is(refused('postgres://u:pw@db-a:5432,,db-b:5432/x'), 'DATABASE_URL: host 2 of the list is empty (two commas, or one at an end)');
  t.is(refused('postgres://u:pw@db-a:5432,::1:5433/x'), 'DATABASE_URL: host 2 of the list has several colons: an IPv6 address goes in brackets, as [::1]:5432');
  t.is(refused('postgres://u:pw@db-a:5432,db-b:99999/x'), 'DATABASE_URL: host 2 of the list has a port that is not a number from 1 to 65535 (a password holding /, ? or # goes percent-encoded: %2F, %3F, %23)');
  t.is(refused('postgres://u:pw@db-a,db-b/x?target_session_attrs=standby'), 'DATABASE_URL: target_session_attrs must be read-write, primary or any (every role writes)');
  t.is(refused('postgres://u:pw@db-a,db-b/x?port=5433'), 'DATABASE_URL: a DATABASE_URL listing several hosts takes no port= option: give each host and port in the list');
});

test("a password holding '/', '?' or '#' unencoded is refused in one line that names the setting and holds no piece of the password", (t) => {
  for (const [name, password] of [
    ['DATABASE_URL', 'Sup3r/Secret'],
    ['DATABASE_URL', 'Sup3r?Secret'],
    ['DATABASE_URL', 'Sup3r#Secret'],
    ['SWITCHBOARD_DIRECT_DATABASE_URL', 'Sup3r/Secret'],
    ['SWITCHBOARD_DIRECT_DATABASE_URL', 'Sup3r?target_session_attrs=Secret'],
  ]) {
    for (const hosts of ['db-a:5432', 'db-a:5432,db-b:5432']) {
      const url = `postgres://switchboard:${password}@${hosts}/switchboard`;
      const env = name === 'DATABASE_URL' ? { DATABASE_URL: url } : { DATABASE_URL: 'postgres://u:p@bouncer:6432/x', SWITCHBOARD_DIRECT_DATABASE_URL: url };
      const err = t.throws(() => loadConfig(env), { instanceOf: SettingError }, url);
      t.true(err!.message.startsWith(`${name}: `), err!.message);
      if (!password.includes('=')) t.regex(err!.message, /percent-encoded: %2F, %3F, %23/);
      t.false(/Sup3r|Secret/.test(err!.message), err!.message);
    }
  }
  // Percent-encoded, the same password is taken.
  t.is(loadConfig({ DATABASE_URL: 'postgres://switchboard:Sup3r%2FSecret@db-a,db-b/x' }).databaseUrl, 'postgres://switchboard:Sup3r%2FSecret@db-a,db-b/x');
});

test('SWITCHBOARD_DIRECT_DATABASE_URL defaults to DATABASE_URL; SWITCHBOARD_DATABASE_POOLER=transaction needs it at PostgreSQL itself', (t) => {
  const bouncer = 'postgres://sb:pw@pgbouncer.internal:6432/switchboard';
  const direct = 'postgres://sb:pw@db.internal:5432/switchboard';
  t.like(loadConfig({ DATABASE_URL: bouncer }), { directDatabaseUrl: bouncer, databasePooler: 'none' });
  t.like(loadConfig({ DATABASE_URL: bouncer, SWITCHBOARD_DIRECT_DATABASE_URL: direct, SWITCHBOARD_DATABASE_POOLER: 'transaction' }), {
    databaseUrl: bouncer,
    directDatabaseUrl: direct,
    databasePooler: 'transaction',
  });
  for (const env of [{ DATABASE_URL: bouncer }, { DATABASE_URL: bouncer, SWITCHBOARD_DIRECT_DATABASE_URL: bouncer }, {}]) {
    t.throws(() => loadConfig({ ...env, SWITCHBOARD_DATABASE_POOLER: 'transaction' }), {
      instanceOf: SettingError,
      message: /SWITCHBOARD_DATABASE_POOLER=transaction needs DATABASE_URL at the pooler and SWITCHBOARD_DIRECT_DATABASE_URL at PostgreSQL itself/,
    });
  }
  t.throws(() => loadConfig({ DATABASE_URL: bouncer, SWITCHBOARD_DATABASE_POOLER: 'session' }), { instanceOf: SettingError, message: /SWITCHBOARD_DATABASE_POOLER takes none or transaction/ });
});
