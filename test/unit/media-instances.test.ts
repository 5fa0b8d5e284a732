import test from 'ava';
import { loadConfig, mediaSettings, SettingError } from '../../runtime/config.ts';

/*
 * Diallers under pm2 share one environment; pm2 numbers each instance in NODE_APP_INSTANCE. Each
 * gets its own media port (SWITCHBOARD_MEDIA_PORT + instance) and its own advertised media URL
 * ({port} and {instance} in SWITCHBOARD_MEDIA_URL), so no two bind one port (README, "pm2").
 */

test('instance n listens on SWITCHBOARD_MEDIA_PORT + n and advertises its own URL', (t) => {
  const env = { SWITCHBOARD_MEDIA_PORT: '8100', SWITCHBOARD_MEDIA_URL: 'wss://media.example.com:{port}/media' };
  t.deepEqual(mediaSettings({ ...env, NODE_APP_INSTANCE: '0' }), { mediaPort: 8100, mediaUrl: 'wss://media.example.com:8100/media', instance: 0 });
  t.deepEqual(mediaSettings({ ...env, NODE_APP_INSTANCE: '1' }), { mediaPort: 8101, mediaUrl: 'wss://media.example.com:8101/media', instance: 1 });
  t.deepEqual(mediaSettings({ ...env, NODE_APP_INSTANCE: '3' }), { mediaPort: 8103, mediaUrl: 'wss://media.example.com:8103/media', instance: 3 });
  // A host (or path) per instance behind a proxy: {instance}.
  t.is(mediaSettings({ SWITCHBOARD_MEDIA_PORT: '8100', SWITCHBOARD_MEDIA_URL: 'wss://dialler-{instance}.example.com/media', NODE_APP_INSTANCE: '2' }).mediaUrl, 'wss://dialler-2.example.com/media');
  // Through loadConfig, as a process reads it.
  const c = loadConfig({ ...env, NODE_APP_INSTANCE: '1' });
  t.is(c.mediaPort, 8101);
  t.is(c.mediaUrl, 'wss://media.example.com:8101/media');
});

test('without pm2 (no NODE_APP_INSTANCE) the settings are taken as they are', (t) => {
  t.deepEqual(mediaSettings({ SWITCHBOARD_MEDIA_PORT: '8100', SWITCHBOARD_MEDIA_URL: 'wss://media.example.com/media' }), { mediaPort: 8100, mediaUrl: 'wss://media.example.com/media', instance: 0 });
  t.deepEqual(mediaSettings({}), { mediaPort: 0, mediaUrl: undefined, instance: 0 });
  // A free port per process when no port is set, whatever the instance; the URL is derived from the bound port.
  t.deepEqual(mediaSettings({ NODE_APP_INSTANCE: '4' }), { mediaPort: 0, mediaUrl: undefined, instance: 4 });
});

test('a setting that would give two instances one address is refused at start-up', (t) => {
  const fixed = t.throws(() => mediaSettings({ SWITCHBOARD_MEDIA_PORT: '8100', SWITCHBOARD_MEDIA_URL: 'wss://media.example.com:8100/media', NODE_APP_INSTANCE: '1' }), { instanceOf: SettingError });
  t.regex(fixed!.message, /\{port\} or \{instance\}/);
  // A process without the dialler role serves no media: one environment for every app still starts its api.
  t.is(loadConfig({ SWITCHBOARD_ROLES: 'api', SWITCHBOARD_MEDIA_URL: 'wss://media.example.com/media', NODE_APP_INSTANCE: '1' }).port, 8080);
  t.throws(() => loadConfig({ SWITCHBOARD_ROLES: 'dialler', SWITCHBOARD_MEDIA_URL: 'wss://media.example.com/media', NODE_APP_INSTANCE: '1' }), { instanceOf: SettingError });
  t.throws(() => mediaSettings({ SWITCHBOARD_MEDIA_URL: 'wss://media.example.com:{port}/media' }), { instanceOf: SettingError, message: /needs SWITCHBOARD_MEDIA_PORT/ });
  t.throws(() => mediaSettings({ SWITCHBOARD_MEDIA_PORT: '65535', NODE_APP_INSTANCE: '1' }), { instanceOf: SettingError, message: /65535/ });
  t.throws(() => mediaSettings({ NODE_APP_INSTANCE: 'one' }), { instanceOf: SettingError, message: /NODE_APP_INSTANCE/ });
  t.throws(() => mediaSettings({ SWITCHBOARD_MEDIA_PORT: '8100', SWITCHBOARD_MEDIA_URL: 'not a url {port}' }), { instanceOf: SettingError, message: /not a URL/ });
});
