import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import type { Config } from './config.ts';

/** What every actor and route needs from its process: the database, the time, the log, the settings. */
export interface Deps {
  pool: pg.Pool;
  /** The schedule clock: a shared test clock with SWITCHBOARD_TEST_CLOCK=1, else real time. */
  clock: Clock;
  /** Real time, always: webhook signatures, delivery timestamps and schedules, live facts (runtime/clock.ts). */
  realClock: Clock;
  log: Logger;
  config: Config;
}
