import { withTransaction, type Client } from '../../db/pool.ts';
import { createWebsiteRepository, type WebsiteRow } from '../../db/websites.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { BATCH, type Room } from './room.ts';
import { PREVIEW_DAYS } from './views.ts';

const addDays = (d: Date, days: number) => new Date(d.getTime() + days * 86_400_000);

/**
 * Making the pages: any builder process claims a build waiting (SKIP LOCKED, a claim that lapses
 * if its process dies), has the site builder make the page outside any transaction, and records
 * it if it is still wanted; a build that cannot be made ends failed with its fee refunded.
 */

/** How long a builder may hold a build before another may take it over. */
export const BUILD_CLAIM_MS = 2 * 60_000;
/** A build whose page maker crashed is tried again after this long times its attempts. */
export const BUILD_RETRY_MS = 5_000;
/** Builds tried this many times (each a process that died or a page that could not be made) end failed. */
export const MAX_BUILD_ATTEMPTS = 3;

export function createWebsiteBuilds(room: Room) {
  const { pool, clock, log, builder } = room.deps;

  /** The build's end when no page can be made: failed, the fee back as its own line, `website.failed`. */
  async function failBuild(client: Client, row: WebsiteRow, reason: string, now: Date): Promise<WebsiteRow> {
    const repo = createWebsiteRepository(client);
    // A revision of a site already delivered fails alone: the site stays as it was, nothing refunded.
    if (row.status !== 'building') {
      log.warn({ website_id: row.id, reason }, 'a website revision could not be built; the site stays as it was');
      return repo.update(row.id, { build_wanted: false, build_claimed_until: null, failure_reason: reason }, now);
    }
    const failed = await repo.update(row.id, { status: 'failed', build_wanted: false, build_claimed_until: null, failed_at: now, failure_reason: reason }, now);
    await room.refundFee(client, failed, 'the build could not be completed', now);
    await room.emit(client, failed, 'website.failed', now);
    log.warn({ website_id: row.id, reason }, 'a website build failed; its fee was refunded');
    return failed;
  }

  /** One build: claimed (its own transaction), made outside any transaction, then recorded if still wanted. */
  async function buildOne(): Promise<boolean> {
    const now = clock.now();
    const claimed = await withTransaction(pool, (client) => createWebsiteRepository(client).claimBuild(now, new Date(now.getTime() + BUILD_CLAIM_MS)));
    if (!claimed) return false;
    // A claim taken at `changed_at` for exactly BUILD_CLAIM_MS and never released: its builder stopped.
    // (A crashed try's deferral is shorter and is not a take-over.)
    const previous = claimed.previous_claim;
    if (previous && previous.claimed_until.getTime() - previous.changed_at.getTime() === BUILD_CLAIM_MS) {
      log.warn(
        {
          event: 'lease_taken_over',
          kind: 'website_build',
          website_id: claimed.id,
          attempt: claimed.build_attempts,
          lease_ms: BUILD_CLAIM_MS,
          claimed_at: previous.changed_at.toISOString(),
          lease_expired_at: previous.claimed_until.toISOString(),
          claim_age_ms: now.getTime() - previous.changed_at.getTime(),
        },
        `a website build whose builder stopped (its ${BUILD_CLAIM_MS / 60_000}-minute claim ran out) is taken over here`,
      );
    }
    if (claimed.build_attempts > MAX_BUILD_ATTEMPTS) {
      await withTransaction(pool, async (client) => {
        const row = await createWebsiteRepository(client).lock(claimed.id);
        if (row?.build_wanted) await failBuild(client, row, 'build_attempts_exhausted', clock.now());
      });
      return true;
    }
    const customer = await createCustomerRepository(pool).get(claimed.customer_id);
    // The page's language, the reseller's name (kept off the page) and the number to call.
    const context = await createWebsiteRepository(pool).buildContext(claimed.customer_id);
    let outcome: { ok: true; html: string } | { ok: false; reason: string };
    try {
      outcome = customer
        ? await builder.build({
            customer,
            locale: context.locale ?? 'en-US',
            resellerName: context.resellerName,
            phoneE164: context.phoneE164,
            brief: claimed.brief,
            revisionBriefs: claimed.revision_briefs,
          })
        : { ok: false, reason: 'customer_gone' };
    } catch (err) {
      // A crash of the page maker: the claim lapses and another try follows (up to MAX_BUILD_ATTEMPTS).
      log.error({ err, website_id: claimed.id, attempt: claimed.build_attempts }, 'a website build crashed; it is tried again');
      // Our claim only (a slow crash may find its claim lapsed and taken over), and not at once.
      const now = clock.now();
      await createWebsiteRepository(pool).deferClaim(claimed.id, claimed.build_claimed_until, new Date(now.getTime() + BUILD_RETRY_MS * claimed.build_attempts), now);
      return true;
    }
    await withTransaction(pool, async (client) => {
      const done = clock.now();
      const repo = createWebsiteRepository(client);
      const row = await repo.lock(claimed.id);
      // Cancelled meanwhile, or a newer revision asked for (it is built next): this page is not kept.
      if (!row || !row.build_wanted || row.revision_briefs.length !== claimed.revision_briefs.length) return;
      if (!outcome.ok) {
        await failBuild(client, row, outcome.reason, done);
        return;
      }
      const built = await repo.update(
        row.id,
        { html: outcome.html, built_at: done, preview_expires_at: addDays(done, PREVIEW_DAYS), build_wanted: false, build_claimed_until: null, failure_reason: null, ...(row.status === 'building' ? { status: 'ready' as const } : {}) },
        done,
      );
      await room.emit(client, built, 'website.ready', done);
      log.info({ website_id: row.id, bytes: Buffer.byteLength(outcome.html) }, 'website built');
    });
    return true;
  }

  return {
    /** The builder's loop body: builds waiting, one at a time, until none waits. Returns how many. */
    async buildWaiting(limit = BATCH): Promise<number> {
      let done = 0;
      while (done < limit && (await buildOne())) done++;
      return done;
    },
  };
}
