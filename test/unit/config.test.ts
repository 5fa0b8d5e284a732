import test from 'ava';
import path from 'node:path';
import { loadConfig, SettingError } from '../../runtime/config.ts';

test('defaults: port 8080, every role, public URL from the port, data under ./.switchboard', (t) => {
  const c = loadConfig({});
  t.is(c.port, 8080);
  t.is(c.publicUrl, 'http://localhost:8080');
  t.is(c.dataDir, path.resolve('.switchboard'));
  t.deepEqual([...c.roles].sort(), ['api', 'dialler', 'sender']);
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
