// pm2: the service's roles as separate apps against one shared PostgreSQL. DATABASE_URL and
// SWITCHBOARD_ENCRYPTION_KEY must be set (the embedded database and a key file in a data
// directory serve a single `switchboard start` only). Run: pm2 start ecosystem.config.cjs
//
// Every process claims work with FOR UPDATE SKIP LOCKED, so instances can be added freely, as
// long as the database has the connections: each process opens at most 1.5 × its
// SWITCHBOARD_DB_POOL_SIZE + 1. Six processes at 10 need 96, inside PostgreSQL's default 100.
// Diallers hold live calls and each runs a media server the carrier streams to: give each one a
// reachable SWITCHBOARD_MEDIA_URL (and SWITCHBOARD_MEDIA_PORT) in production. The instances share
// this environment, so pm2's instance number (NODE_APP_INSTANCE, 0, 1, …) tells them apart:
// instance n listens on SWITCHBOARD_MEDIA_PORT + n, and {port} / {instance} in
// SWITCHBOARD_MEDIA_URL become that port and n (wss://media.example.com:{port}/media).
// A fixed URL is refused for a second instance (runtime/config.ts mediaSettings).
//
// A process that cannot reach PostgreSQL at start waits and retries itself (1 s doubling to 30 s,
// one JSON line per attempt); exp_backoff_restart_delay spaces pm2's restarts of a process that
// exits anyway (100 ms doubling to 15 s, reset after 30 s up) instead of pm2's tight loop.
//
// Logs: each app writes to its own two files under SWITCHBOARD_LOG_DIR (default ./logs beside this
// file): <app>.out.log (the JSON log lines) and <app>.err.log. merge_logs keeps every instance of
// an app in those two files (each line carries its pid) instead of one pair per instance. In
// cluster mode pm2 takes a worker's output only from process.stdout.write; `switchboard start`
// logs through it there (runtime/logger.ts), or the lines would land in pm2's own daemon log.
const path = require('node:path');
const fs = require('node:fs');

// The reseller console's web app (console/) is built into console/dist when its sources are newer
// than the build: `npm start` and `npm test` do it through npm's pre-scripts, but pm2 starts
// bin/switchboard.mjs itself. pm2 reads this file on `start` and `reload`, so new code brings its
// console build with it (one build at a time: app/console-build.ts takes a lock).
require('node:child_process').execFileSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'app', 'console-build.ts')], {
  cwd: __dirname,
  stdio: ['ignore', 'inherit', 'inherit'],
});

const LOG_DIR = path.resolve(__dirname, process.env.SWITCHBOARD_LOG_DIR || 'logs');
// pm2 makes a missing log directory asynchronously and can lose an app's first lines meanwhile.
fs.mkdirSync(LOG_DIR, { recursive: true });

const shared = {
  DATABASE_URL: process.env.DATABASE_URL,
  SWITCHBOARD_PUBLIC_URL: process.env.SWITCHBOARD_PUBLIC_URL,
  SWITCHBOARD_ADMIN_TOKEN: process.env.SWITCHBOARD_ADMIN_TOKEN,
  SWITCHBOARD_ENCRYPTION_KEY: process.env.SWITCHBOARD_ENCRYPTION_KEY,
  TWILIO_ACCOUNT_SID: process.env.TWILIO_ACCOUNT_SID,
  TWILIO_AUTH_TOKEN: process.env.TWILIO_AUTH_TOKEN,
  OPENAI_API_KEY: process.env.OPENAI_API_KEY,
  SWITCHBOARD_SITES_DOMAIN: process.env.SWITCHBOARD_SITES_DOMAIN,
  LOG_LEVEL: process.env.LOG_LEVEL || 'info',
  SWITCHBOARD_DB_POOL_SIZE: process.env.SWITCHBOARD_DB_POOL_SIZE || '10',
  // Behind PgBouncer in transaction mode (README, "Behind PgBouncer"): PostgreSQL itself for the change feed and migrations.
  SWITCHBOARD_DIRECT_DATABASE_URL: process.env.SWITCHBOARD_DIRECT_DATABASE_URL,
  SWITCHBOARD_DATABASE_POOLER: process.env.SWITCHBOARD_DATABASE_POOLER,
  // Several API processes: request limits are counted in PostgreSQL so they hold across all.
  SWITCHBOARD_RATE_LIMIT_STORE: 'postgres',
  // How long a stopping dialler lets its calls finish (README "Upgrading without downtime").
  SWITCHBOARD_DRAIN_MS: process.env.SWITCHBOARD_DRAIN_MS || '20000',
};
const DRAIN_MS = Number(shared.SWITCHBOARD_DRAIN_MS);

// The operator's metrics (README, "Metrics"), when SWITCHBOARD_METRICS_PORT is set: each app's
// instances listen from a base port of their own up (base + NODE_APP_INSTANCE), the api's first,
// then the diallers', then the senders'; /metrics/cluster on any instance adds up its app's.
const INSTANCES = {
  'switchboard-api': Number(process.env.SWITCHBOARD_API_INSTANCES || 2),
  'switchboard-dialler': Number(process.env.SWITCHBOARD_DIALLER_INSTANCES || 2),
  'switchboard-sender': Number(process.env.SWITCHBOARD_SENDER_INSTANCES || 2),
};
const metricsEnv = (name) => {
  if (!process.env.SWITCHBOARD_METRICS_PORT) return {};
  const names = Object.keys(INSTANCES);
  const offset = names.slice(0, names.indexOf(name)).reduce((n, other) => n + INSTANCES[other], 0);
  return {
    SWITCHBOARD_METRICS_PORT: String(Number(process.env.SWITCHBOARD_METRICS_PORT) + offset),
    SWITCHBOARD_METRICS_WORKERS: String(INSTANCES[name]),
    SWITCHBOARD_METRICS_HOST: process.env.SWITCHBOARD_METRICS_HOST || '127.0.0.1',
  };
};

const app = (name, roles, extra) => ({
  name,
  cwd: __dirname,
  script: 'bin/switchboard.mjs',
  args: 'start',
  // Rolling upgrades (`pm2 reload ecosystem.config.cjs`, README "Upgrading without downtime"): a
  // process sends 'ready' once its roles run and its HTTP server listens (4.5–12 s measured), and
  // pm2 stops the old one only then; listen_timeout is the longest pm2 waits for it.
  wait_ready: true,
  listen_timeout: 60000,
  // From SIGINT to SIGKILL: the api's graceful close takes 8 s at most (app/start.ts), the sender's steps 4 s each.
  kill_timeout: 15000,
  exp_backoff_restart_delay: 100,
  out_file: path.join(LOG_DIR, `${name}.out.log`),
  error_file: path.join(LOG_DIR, `${name}.err.log`),
  merge_logs: true,
  env: { ...shared, SWITCHBOARD_ROLES: roles, ...metricsEnv(name) },
  ...extra,
});

module.exports = {
  apps: [
    app('switchboard-api', 'api', {
      exec_mode: 'cluster',
      instances: INSTANCES['switchboard-api'],
      env: { ...shared, SWITCHBOARD_ROLES: 'api', PORT: process.env.PORT || 8080, ...metricsEnv('switchboard-api') },
    }),
    // A dialler on SIGINT claims no new call, lets its running calls finish for SWITCHBOARD_DRAIN_MS
    // and hands the rest over to the other diallers (actors/call/call-drain.ts): kill_timeout leaves
    // 15 s beyond the drain for the rest of its shutdown.
    app('switchboard-dialler', 'dialler', {
      exec_mode: 'fork',
      instances: INSTANCES['switchboard-dialler'],
      kill_timeout: DRAIN_MS + 15000,
      instance_var: 'NODE_APP_INSTANCE',
      // The media server's young generation (telephony/media-node-flags.cjs): fewer GC pauses on live audio.
      node_args: require('./telephony/media-node-flags.cjs'),
      env: {
        ...shared,
        SWITCHBOARD_ROLES: 'dialler',
        ...metricsEnv('switchboard-dialler'),
        SWITCHBOARD_MEDIA_PORT: process.env.SWITCHBOARD_MEDIA_PORT,
        SWITCHBOARD_MEDIA_URL: process.env.SWITCHBOARD_MEDIA_URL,
      },
    }),
    // The senders also build websites (research, copy, page): both wait on the network, not the
    // CPU, and builds are claimed with SKIP LOCKED, so the two share processes without a seventh.
    app('switchboard-sender', 'sender,builder', { exec_mode: 'fork', instances: INSTANCES['switchboard-sender'] }),
  ],
};
