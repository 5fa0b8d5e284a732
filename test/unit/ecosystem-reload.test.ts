import test from 'ava';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * ecosystem.config.cjs's settings for `pm2 reload` (README "Upgrading without downtime"): pm2 waits
 * for each new process's `ready` for longer than a start takes (4.5–12 s measured), and gives a
 * stopping process longer than its own shutdown before SIGKILL: the api's graceful close (8 s at
 * most, app/start.ts) and the dialler's drain (SWITCHBOARD_DRAIN_MS) with room for the rest.
 * test/e2e/rolling-upgrade.test.ts runs the reload itself.
 */
const CONFIG = path.resolve(import.meta.dirname, '..', '..', 'ecosystem.config.cjs');
const require = createRequire(import.meta.url);

interface Pm2App {
  name: string;
  wait_ready?: boolean;
  listen_timeout?: number;
  kill_timeout?: number;
  env: Record<string, string | undefined>;
}

function loadApps(drainMs?: string): Pm2App[] {
  const before = process.env.SWITCHBOARD_DRAIN_MS;
  if (drainMs === undefined) delete process.env.SWITCHBOARD_DRAIN_MS;
  else process.env.SWITCHBOARD_DRAIN_MS = drainMs;
  try {
    delete require.cache[CONFIG];
    return require(CONFIG).apps;
  } finally {
    if (before === undefined) delete process.env.SWITCHBOARD_DRAIN_MS;
    else process.env.SWITCHBOARD_DRAIN_MS = before;
  }
}

test('every app waits for its processes to say they are ready, longer than the 12 s a start was measured to take', (t) => {
  for (const app of loadApps()) {
    t.true(app.wait_ready, `${app.name}: wait_ready`);
    t.true((app.listen_timeout ?? 3_000) > 12_000, `${app.name}: listen_timeout ${app.listen_timeout}`);
  }
});

test('pm2 gives the api its graceful close and the dialler its drain before SIGKILL', (t) => {
  const apps = Object.fromEntries(loadApps().map((a) => [a.name, a]));
  t.true(apps['switchboard-api'].kill_timeout! > 8_000, 'the api closes within 8 s');
  t.is(apps['switchboard-dialler'].env.SWITCHBOARD_DRAIN_MS, '20000', 'the documented 20-second drain');
  t.true(apps['switchboard-dialler'].kill_timeout! >= 20_000 + 10_000, 'the drain and the rest of the shutdown fit');
  const longer = Object.fromEntries(loadApps('45000').map((a) => [a.name, a]));
  t.is(longer['switchboard-dialler'].env.SWITCHBOARD_DRAIN_MS, '45000');
  t.true(longer['switchboard-dialler'].kill_timeout! >= 45_000 + 10_000, 'a longer drain moves kill_timeout with it');
});
