import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { startService, type RunningService, type StartOptions } from '../../app/start.ts';
import { freshDatabase } from './db.ts';

export const ADMIN_TOKEN = 'sbc_test_console_token_for_tests_only';
/** The secret box key of every test service (test/helpers/outbox.ts opens what it sealed). */
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/** Every log line the service wrote, parsed, for tests that assert on logs. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  readonly raw: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      this.raw.push(line);
      try {
        this.lines.push(JSON.parse(line));
      } catch {
        /* not JSON */
      }
    }
    done();
  }
}

export interface TestService extends RunningService {
  logs: LogCapture;
  databaseUrl: string;
}

/**
 * The whole service in this process, on a database of its own, with a test clock. `opts.realClock`
 * stands in for real time (webhook delivery, live facts) where a test must move that too.
 */
export async function startTestService(env: Record<string, string> = {}, opts: Pick<StartOptions, 'realClock'> = {}): Promise<TestService> {
  const databaseUrl = env.DATABASE_URL ?? (await freshDatabase());
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN,
    SWITCHBOARD_TEST_CLOCK: '1',
    SWITCHBOARD_PUBLIC_URL: 'http://127.0.0.1:0',
    SWITCHBOARD_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '1',
    // Every test client is 127.0.0.1 and many tests check refusals on purpose; the throttle of
    // failed authentications has tests of their own that set it back down.
    SWITCHBOARD_AUTH_FAILURES_PER_MINUTE: '1000000',
    // Live mode without Twilio plays calls and sells fictional numbers through the simulated
    // carrier; tests of live mode without a carrier set this to ''.
    SWITCHBOARD_SIMULATED_LIVE_CARRIER: '1',
    // Local state (emails written as files without SMTP_URL) goes to a temporary folder, never the checkout.
    SWITCHBOARD_DATA_DIR: path.join(os.tmpdir(), 'switchboard-tests', String(process.pid)),
    ...env,
  });
  const logs = new LogCapture();
  const service = await startService(config, { logger: createLogger('info', logs), ...opts });
  // Hand out URLs that reach this server.
  config.publicUrl = service.url;
  return { ...service, logs, databaseUrl };
}

const NEVER_MS = '3600000';

/**
 * Settings under which nothing runs on its own schedule (dialler, webhook sender, call keeper,
 * jobs, website builder): every change to the database is a request's, as property tests and
 * fuzzers that count rows or send thousands of requests need.
 */
export const NO_BACKGROUND_WORK: Record<string, string> = {
  SWITCHBOARD_DIALLER_POLL_MS: NEVER_MS,
  SWITCHBOARD_SENDER_POLL_MS: NEVER_MS,
  SWITCHBOARD_KEEPER_POLL_MS: NEVER_MS,
  SWITCHBOARD_JOB_INTERVAL_MS: NEVER_MS,
  SWITCHBOARD_BUILDER_POLL_MS: NEVER_MS,
};
