// pm2: the service's roles as separate apps against one shared PostgreSQL. DATABASE_URL and
// SWITCHBOARD_ENCRYPTION_KEY must be set (the embedded database and a key file in a data
// directory serve a single `switchboard start` only). Run: pm2 start ecosystem.config.cjs
//
// Every process claims work with FOR UPDATE SKIP LOCKED, so instances can be added freely, as
// long as the database has the connections: each process opens at most 1.5 × its
// SWITCHBOARD_DB_POOL_SIZE + 1. Six processes at 10 need 96, inside PostgreSQL's default 100.
// Diallers hold live calls and each runs a media server the carrier streams to: give each one a
// reachable SWITCHBOARD_MEDIA_URL (and SWITCHBOARD_MEDIA_PORT) in production.
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
  // Several API processes: request limits are counted in PostgreSQL so they hold across all.
  SWITCHBOARD_RATE_LIMIT_STORE: 'postgres',
};

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
  kill_timeout: 10000,
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
    app('switchboard-dialler', 'dialler', { exec_mode: 'fork', instances: INSTANCES['switchboard-dialler'] }),
    // The senders also build websites (research, copy, page): both wait on the network, not the
    // CPU, and builds are claimed with SKIP LOCKED, so the two share processes without a seventh.
    app('switchboard-sender', 'sender,builder', { exec_mode: 'fork', instances: INSTANCES['switchboard-sender'] }),
  ],
};
