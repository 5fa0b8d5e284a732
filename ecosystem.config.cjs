// pm2: the roles as separate apps against one shared PostgreSQL (DATABASE_URL must be set; the
// embedded database serves a single `switchboard start` only). Run: pm2 start ecosystem.config.cjs
const env = {
  DATABASE_URL: process.env.DATABASE_URL,
  SWITCHBOARD_PUBLIC_URL: process.env.SWITCHBOARD_PUBLIC_URL,
  SWITCHBOARD_CONSOLE_TOKEN: process.env.SWITCHBOARD_CONSOLE_TOKEN,
  LOG_LEVEL: process.env.LOG_LEVEL || 'info',
};

module.exports = {
  apps: [
    {
      name: 'switchboard-api',
      script: 'bin/switchboard.mjs',
      args: 'start',
      exec_mode: 'cluster',
      instances: process.env.SWITCHBOARD_API_INSTANCES || 2,
      env: { ...env, PORT: process.env.PORT || 8080 },
      kill_timeout: 10000,
    },
  ],
};
