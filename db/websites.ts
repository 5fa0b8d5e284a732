import type { Queryable } from './pool.ts';
import { updateColumns } from './update-columns.ts';
import type { Mode } from '../runtime/types.ts';
import { onClock } from './test-clocks.ts';

/** A customer's website build (`website_builds`): ordered, built, reviewed, live and hosted. */
export interface WebsiteRow {
  id: string;
  seq: number;
  account_id: string;
  mode: Mode;
  customer_id: string;
  status: 'building' | 'ready' | 'live' | 'failed' | 'cancelled' | 'hosting_due' | 'suspended' | 'purged';
  slug: string;
  brief: string | null;
  revision_briefs: string[];
  revisions_included: number;
  build_fee_cents: number;
  hosting_cents_per_month: number;
  build_wanted: boolean;
  build_claimed_until: Date | null;
  build_attempts: number;
  html: string | null;
  built_at: Date | null;
  domain: string | null;
  domain_verified_at: Date | null;
  domain_checked_at: Date | null;
  /** When the domain was claimed, or last lost its verification: an unverified claim lapses 7 days on. */
  domain_claimed_at: Date | null;
  /** Part of the preview token's MAC; a re-issue replaces it, which ends the old address. */
  preview_nonce: string;
  /** The preview lapses then (30 days after the build or the re-issue); null before a page is built. */
  preview_expires_at: Date | null;
  anchor_day: number | null;
  /** YYYY-MM-DD (dates are read as text: db/pool.ts). */
  hosting_renews_on: string | null;
  notice_sent_for: string | null;
  suspend_due_on: string | null;
  purge_due_on: string | null;
  live_at: Date | null;
  failed_at: Date | null;
  failure_reason: string | null;
  cancelled_at: Date | null;
  suspended_at: Date | null;
  purged_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

type Changeable = Omit<WebsiteRow, 'id' | 'seq' | 'account_id' | 'mode' | 'customer_id' | 'slug' | 'created_at' | 'updated_at' | 'build_fee_cents' | 'hosting_cents_per_month' | 'revisions_included'>;
export type WebsiteChange = Partial<Changeable>;

const CHANGEABLE: ReadonlySet<string> = new Set<string>([
  'status', 'brief', 'revision_briefs', 'build_wanted', 'build_claimed_until', 'build_attempts', 'html', 'built_at', 'domain', 'domain_verified_at',
  'domain_checked_at', 'domain_claimed_at', 'preview_nonce', 'preview_expires_at', 'anchor_day', 'hosting_renews_on', 'notice_sent_for', 'suspend_due_on', 'purge_due_on', 'live_at', 'failed_at', 'failure_reason',
  'cancelled_at', 'suspended_at', 'purged_at',
]);

/** Columns a list or a GET needs (the page itself can be 100 KB: read only where it is served or built). */
const SUMMARY = `id, seq, account_id, mode, customer_id, status, slug, brief, revision_briefs, revisions_included, build_fee_cents, hosting_cents_per_month,
  build_wanted, build_claimed_until, build_attempts, NULL::text AS html, built_at, domain, domain_verified_at, domain_checked_at, domain_claimed_at,
  preview_nonce, preview_expires_at, anchor_day,
  hosting_renews_on, notice_sent_for, suspend_due_on, purge_due_on, live_at, failed_at, failure_reason, cancelled_at, suspended_at, purged_at,
  created_at, updated_at`;

export function createWebsiteRepository(db: Queryable) {
  return {
    async insert(w: { id: string; accountId: string; mode: Mode; customerId: string; slug: string; brief: string | null; buildFeeCents: number; hostingCentsPerMonth: number; now: Date }): Promise<WebsiteRow> {
      const { rows } = await db.query(
        `INSERT INTO website_builds (id, account_id, mode, customer_id, status, slug, brief, build_fee_cents, hosting_cents_per_month, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'building', $5, $6, $7, $8, $9, $9) RETURNING *`,
        [w.id, w.accountId, w.mode, w.customerId, w.slug, w.brief, w.buildFeeCents, w.hostingCentsPerMonth, w.now],
      );
      return rows[0];
    },

    /** The build `id` of `customerId` (without its page), or null. */
    async get(customerId: string, id: string): Promise<WebsiteRow | null> {
      const { rows } = await db.query(`SELECT ${SUMMARY} FROM website_builds WHERE id = $1 AND customer_id = $2`, [id, customerId]);
      return rows[0] ?? null;
    },

    /** Locks the build (with its page) for a change; null when it is not `customerId`'s. */
    async lock(id: string, customerId?: string): Promise<WebsiteRow | null> {
      const { rows } = await db.query(`SELECT * FROM website_builds WHERE id = $1 AND ($2::uuid IS NULL OR customer_id = $2) FOR UPDATE`, [id, customerId ?? null]);
      return rows[0] ?? null;
    },

    /** Locks the build unless another transaction holds it (a job's claim). */
    async claim(id: string): Promise<WebsiteRow | null> {
      const { rows } = await db.query(`SELECT * FROM website_builds WHERE id = $1 FOR UPDATE SKIP LOCKED`, [id]);
      return rows[0] ?? null;
    },

    async update(id: string, change: WebsiteChange, now: Date): Promise<WebsiteRow> {
      return updateColumns<WebsiteRow>(db, 'website_builds', CHANGEABLE, id, change, now);
    },

    /**
     * Puts off a crashed build's next try until `until`, only while the claim is still the one
     * `claimedUntil` took (a slow crash may find its claim lapsed and taken over by another builder).
     */
    async deferClaim(id: string, claimedUntil: Date | null, until: Date, now: Date): Promise<void> {
      await db.query(`UPDATE website_builds SET build_claimed_until = $3, updated_at = $4 WHERE id = $1 AND build_claimed_until = $2`, [id, claimedUntil, until, now]);
    },

    /** What a build of `customerId` is made from beyond the customer row: its language, the reseller's name, the business's own number. */
    async buildContext(customerId: string): Promise<{ locale: string | null; resellerName: string | null; phoneE164: string | null }> {
      const { rows } = await db.query(
        `SELECT co.calling_language, COALESCE(a.display_name, a.name) AS reseller_name, c.phone
           FROM customers c JOIN accounts a ON a.id = c.account_id LEFT JOIN countries co ON co.country = c.country WHERE c.id = $1`,
        [customerId],
      );
      return { locale: rows[0]?.calling_language ?? null, resellerName: rows[0]?.reseller_name ?? null, phoneE164: rows[0]?.phone ?? null };
    },

    /** Build `id`'s page and what decides whether its preview is served (views.ts `previewOpen`). */
    async preview(id: string): Promise<Pick<WebsiteRow, 'html' | 'mode' | 'status' | 'built_at' | 'preview_nonce' | 'preview_expires_at'> | null> {
      const { rows } = await db.query(`SELECT html, mode, status, built_at, preview_nonce, preview_expires_at FROM website_builds WHERE id = $1`, [id]);
      return rows[0] ?? null;
    },

    async list(customerId: string, limit: number, beforeSeq: number | null): Promise<WebsiteRow[]> {
      const { rows } = await db.query(
        `SELECT ${SUMMARY} FROM website_builds WHERE customer_id = $1 AND ($2::bigint IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $3`,
        [customerId, beforeSeq, limit],
      );
      return rows;
    },

    /**
     * Claims one build waiting to be built (none claimed, or its claim lapsed): its claim is set to
     * `until` and its attempts counted, in the caller's transaction. Null when none waits.
     */
    async claimBuild(now: Date, until: Date): Promise<(WebsiteRow & { previous_claim: { claimed_until: Date; changed_at: Date } | null }) | null> {
      const { rows } = await db.query(
        `UPDATE website_builds w SET build_claimed_until = $2, build_attempts = w.build_attempts + 1, updated_at = $1
           FROM (SELECT id, build_claimed_until AS was_claimed_until, updated_at AS was_updated_at FROM website_builds
                  WHERE build_wanted AND (build_claimed_until IS NULL OR build_claimed_until <= $1)
                  ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED) AS due
          WHERE w.id = due.id
          RETURNING w.*, due.was_claimed_until, due.was_updated_at`,
        [now, until],
      );
      if (!rows[0]) return null;
      // The claim it replaces (a lapsed one, or a crashed try's deferral) and when the row last changed.
      const { was_claimed_until, was_updated_at, ...row } = rows[0];
      return { ...row, previous_claim: was_claimed_until ? { claimed_until: was_claimed_until, changed_at: was_updated_at } : null };
    },

    /** What a site's address serves: a live-mode site by slug, or by verified domain (a test site only at its preview). */
    async servedBySlug(slug: string): Promise<Pick<WebsiteRow, 'id' | 'status' | 'html' | 'mode'> | null> {
      const { rows } = await db.query(`SELECT id, status, html, mode FROM website_builds WHERE slug = $1 AND mode = 'live'`, [slug]);
      return rows[0] ?? null;
    },

    async servedByDomain(domain: string): Promise<Pick<WebsiteRow, 'id' | 'status' | 'html' | 'mode'> | null> {
      const { rows } = await db.query(
        `SELECT id, status, html, mode FROM website_builds WHERE lower(domain) = lower($1) AND domain_verified_at IS NOT NULL AND mode = 'live'
          AND status NOT IN ('cancelled', 'purged', 'failed') ORDER BY seq DESC LIMIT 1`,
        [domain],
      );
      return rows[0] ?? null;
    },

    /** Ids of sites whose hosting renewal (or its notice window, up to `noticeUntil`) has come, by seq after `afterSeq`. */
    async dueForHosting(today: string, noticeUntil: string, limit: number, afterSeq: number, clockId: string | null = null): Promise<{ id: string; seq: number }[]> {
      const { rows } = await db.query(
        `SELECT id, seq FROM website_builds
          WHERE status IN ('live', 'hosting_due') AND seq > $4
            AND (hosting_renews_on <= $1 OR (hosting_renews_on <= $2 AND notice_sent_for IS DISTINCT FROM hosting_renews_on))
            AND ${onClock('website_builds.customer_id', '$5')}
          ORDER BY seq LIMIT $3`,
        [today, noticeUntil, limit, afterSeq, clockId],
      );
      return rows;
    },

    async dueForSuspension(today: string, limit: number, clockId: string | null = null): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT id FROM website_builds WHERE status = 'hosting_due' AND suspend_due_on <= $1 AND ${onClock('website_builds.customer_id', '$3')}
          ORDER BY suspend_due_on LIMIT $2`,
        [today, limit, clockId],
      );
      return rows.map((r) => r.id);
    },

    async dueForPurge(today: string, limit: number, clockId: string | null = null): Promise<string[]> {
      const { rows } = await db.query(
        `SELECT id FROM website_builds WHERE status = 'suspended' AND purge_due_on <= $1 AND ${onClock('website_builds.customer_id', '$3')}
          ORDER BY purge_due_on LIMIT $2`,
        [today, limit, clockId],
      );
      return rows.map((r) => r.id);
    },

    /** The account's live sites waiting on hosting money, locked unless a job holds them (a top-up pays them). */
    async claimUnpaidOf(accountId: string): Promise<WebsiteRow[]> {
      const { rows } = await db.query(
        `SELECT * FROM website_builds WHERE account_id = $1 AND mode = 'live' AND status IN ('hosting_due', 'suspended')
            AND hosting_renews_on IS NOT NULL ORDER BY seq FOR UPDATE SKIP LOCKED`,
        [accountId],
      );
      return rows;
    },

    /**
     * Domains due a DNS look: unverified ones not checked since `checkedBefore`, and verified ones
     * not checked since `reverifyBefore` (a CNAME taken away unverifies the domain); never
     * checked first.
     */
    async domainsToCheck(checkedBefore: Date, reverifyBefore: Date, limit: number): Promise<{ id: string; domain: string; slug: string; verified: boolean }[]> {
      const { rows } = await db.query(
        `SELECT id, domain, slug, domain_verified_at IS NOT NULL AS verified FROM website_builds
          WHERE domain IS NOT NULL AND status NOT IN ('cancelled', 'purged', 'failed')
            AND (domain_checked_at IS NULL
                 OR (domain_verified_at IS NULL AND domain_checked_at <= $1)
                 OR (domain_verified_at IS NOT NULL AND domain_checked_at <= $2))
          ORDER BY domain_checked_at NULLS FIRST LIMIT $3`,
        [checkedBefore, reverifyBefore, limit],
      );
      return rows;
    },

    /**
     * Drops every other build's claim of `domain` (DNS has just shown build `id` holds it): the
     * claims of others, verified before or never, let the name go. Returns the builds that lost it.
     */
    async dropOtherClaims(id: string, domain: string, now: Date): Promise<string[]> {
      const { rows } = await db.query(
        `UPDATE website_builds SET domain = NULL, domain_verified_at = NULL, domain_checked_at = NULL, domain_claimed_at = NULL, updated_at = $3
          WHERE lower(domain) = lower($2) AND id <> $1 RETURNING id`,
        [id, domain, now],
      );
      return rows.map((r) => r.id);
    },

    /** Unverified claims made (or unverified) before `claimedBefore` lapse: the domain is dropped. Returns the builds. */
    async lapseUnverifiedClaims(claimedBefore: Date, now: Date): Promise<{ id: string; domain: string }[]> {
      const { rows } = await db.query(
        `UPDATE website_builds w SET domain = NULL, domain_checked_at = NULL, domain_claimed_at = NULL, updated_at = $2
           FROM (SELECT id, domain FROM website_builds WHERE domain IS NOT NULL AND domain_verified_at IS NULL AND domain_claimed_at <= $1
                  FOR UPDATE SKIP LOCKED) old
          WHERE w.id = old.id RETURNING w.id, old.domain`,
        [claimedBefore, now],
      );
      return rows;
    },

    /** Whether `host` is a verified domain of a live-mode site its address answers for (live, counting down, or suspended: the offline page). */
    async isServedDomain(host: string): Promise<boolean> {
      const { rowCount } = await db.query(
        `SELECT 1 FROM website_builds WHERE lower(domain) = lower($1) AND domain_verified_at IS NOT NULL AND mode = 'live' AND status IN ('live', 'hosting_due', 'suspended')`,
        [host],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}
