import type { Deps } from '../runtime/deps.ts';
import { closeMonth, expireBonuses, releaseExpiredHolds } from '../money/jobs.ts';
import type { MoneyWriter } from '../money/writer.ts';
import type { Numbers } from '../actors/numbers/numbers.ts';
import type { Websites } from '../actors/websites/websites.ts';
import type { BrandDomains } from '../actors/account/brand-domain.ts';
import { expireRequests, finishStaleCalls } from '../actors/call/call-jobs.ts';
import { createRateLimitRepository } from '../db/rate-limits.ts';
import { isDatabaseUnreachable } from '../runtime/database-errors.ts';
import { pollLoop } from '../runtime/poll-loop.ts';
import { observeJob, secondsSince } from '../runtime/metrics.ts';
import { createTestClockRepository, type ClockTime } from '../db/test-clocks.ts';

/** Request-counter windows are at most a minute long; older ones are only clutter. */
const RATE_WINDOW_KEEP_MS = 10 * 60_000;

/** What the jobs run on: the database, the clock, the settings, the one money writer, the numbers and websites rooms, and the brand domains. */
export type JobDeps = Pick<Deps, 'pool' | 'clock' | 'realClock' | 'config'> & { money: MoneyWriter; numbers: Numbers; websites: Websites; brandDomains: BrandDomains };

/** The periodic jobs of the service; each is safe to run on many processes at once. */
export const JOB_NAMES = [
  'release_holds',
  'expire_bonuses',
  'close_month',
  'expire_requests',
  'finish_stale_calls',
  'purge_rate_limit_windows',
  'renew_numbers',
  'release_numbers',
  'expire_caller_id_verifications',
  'retry_number_steps',
  'renew_hosting',
  'suspend_sites',
  'purge_sites',
  'check_domains',
  'check_brand_domains',
] as const;
export type JobName = (typeof JOB_NAMES)[number];

/** Runs one job now, on the service's clock (a test clock moves it without waiting). */
export async function runJob(services: JobDeps, name: JobName): Promise<number> {
  const now = services.clock.now();
  switch (name) {
    case 'release_holds':
      return releaseExpiredHolds(services.pool, services.money, now);
    case 'expire_bonuses':
      // Bonus credit is live money: it expires on real time, never on a test clock.
      return expireBonuses(services.pool, services.money, services.realClock.now());
    case 'close_month':
      return closeMonth(services.pool, services.money, now);
    case 'expire_requests':
      return expireRequests(services.pool, now, services.config.publicUrl);
    case 'finish_stale_calls':
      return finishStaleCalls(services, now, services.config.publicUrl);
    case 'purge_rate_limit_windows':
      // Request windows run on real time, not on a test clock (as the in-process counters do).
      return createRateLimitRepository(services.pool).purgeBefore(new Date(Date.now() - RATE_WINDOW_KEEP_MS));
    case 'renew_numbers':
      return services.numbers.renewDue(now);
    case 'release_numbers':
      return services.numbers.releaseOverdue(now);
    case 'expire_caller_id_verifications':
      return services.numbers.expireVerifications(now);
    case 'retry_number_steps':
      return services.numbers.retryNumberSteps(now);
    case 'renew_hosting':
      return services.websites.renewHosting(now);
    case 'suspend_sites':
      return services.websites.suspendOverdue(now);
    case 'purge_sites':
      return services.websites.purgeOverdue(now);
    case 'check_domains':
      return services.websites.checkDomains(now);
    case 'check_brand_domains':
      return services.brandDomains.checkDue(now);
  }
}

/**
 * The jobs of one test clock's customers, on its frozen time (docs/decisions.md, "Test clocks of an
 * account"): holds never reported back, rent and hosting renewals and their countdowns. The
 * regular jobs leave these customers' rows alone. Run when the clock is advanced and each round.
 */
export async function runClockJobs(services: JobDeps, clock: ClockTime): Promise<number> {
  const now = services.clock.now();
  const scope = { clockId: clock.id, time: clock.frozenTime };
  let done = await releaseExpiredHolds(services.pool, services.money, now, scope);
  done += await services.numbers.renewDue(now, scope);
  done += await services.numbers.releaseOverdue(now, scope);
  done += await services.websites.renewHosting(now, scope);
  done += await services.websites.suspendOverdue(now, scope);
  done += await services.websites.purgeOverdue(now, scope);
  return done;
}

/**
 * Runs every job every `intervalMs`, one round at a time; a failed job is logged and runs again
 * next round. While the database cannot be reached the round stops at the first job that finds
 * out, and the loop backs off quietly (runtime/poll-loop.ts).
 */
export function scheduleJobs(services: JobDeps & Pick<Deps, 'log'>, intervalMs: number): () => Promise<void> {
  const round = async () => {
    for (const name of JOB_NAMES) {
      const startedMs = performance.now();
      try {
        const processed = await runJob(services, name);
        observeJob(name, 'ok', secondsSince(startedMs));
        if (processed > 0) services.log.info({ job: name, processed }, 'job ran');
      } catch (err) {
        observeJob(name, 'failed', secondsSince(startedMs));
        if (isDatabaseUnreachable(err)) throw err;
        services.log.error({ err, job: name }, 'job failed; it runs again next round');
      }
    }
    // A test clock's customers' rows may fall due between advances (a number bought after one).
    for (const clock of await createTestClockRepository(services.pool).clocksInUse()) {
      try {
        await runClockJobs(services, clock);
      } catch (err) {
        if (isDatabaseUnreachable(err)) throw err;
        services.log.error({ err, test_clock_id: clock.id }, "a test clock's jobs failed; they run again next round");
      }
    }
  };
  return pollLoop(round, intervalMs, services.log, 'jobs');
}
