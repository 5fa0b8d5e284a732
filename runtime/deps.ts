import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import type { Config } from './config.ts';

/** What every actor and route needs from its process: the database, the time, the log, the settings. */
export interface Deps {
  pool: pg.Pool;
  clock: Clock;
  log: Logger;
  config: Config;
}
