import test from 'ava';
import net from 'node:net';
import { startTestService, type TestService } from '../helpers/service.ts';
import { freshDatabase } from '../helpers/db.ts';
import { freePort } from '../e2e/process-helpers.ts';

/*
 * Two dialler instances of one pm2 app, with one environment but for pm2's NODE_APP_INSTANCE: each
 * binds its own media port and advertises its own media URL (docs: README, "pm2").
 */
const services: TestService[] = [];
test.after.always(async () => {
  for (const s of services) await s.stop();
});

const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

test('two dialler instances with one environment each bind SWITCHBOARD_MEDIA_PORT + instance and advertise it', async (t) => {
  const base = await freePort();
  const databaseUrl = await freshDatabase();
  const shared = {
    DATABASE_URL: databaseUrl,
    SWITCHBOARD_ROLES: 'dialler',
    SWITCHBOARD_MEDIA_PORT: String(base),
    SWITCHBOARD_MEDIA_URL: 'ws://127.0.0.1:{port}/media?instance={instance}',
  };
  for (const instance of ['0', '1']) services.push(await startTestService({ ...shared, NODE_APP_INSTANCE: instance }));
  const started = services.map((s) => s.logs.lines.find((l) => l.msg === 'switchboard started'));
  t.is(started[0]?.mediaUrl, `ws://127.0.0.1:${base}/media?instance=0`);
  t.is(started[1]?.mediaUrl, `ws://127.0.0.1:${base + 1}/media?instance=1`);
  t.true(await connects(base), 'instance 0 listens on the base port');
  t.true(await connects(base + 1), 'instance 1 listens on the next');
});
