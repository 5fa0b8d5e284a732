import crypto from 'node:crypto';
import type { Config } from '../../runtime/config.ts';
import type { WebsiteRow } from '../../db/websites.ts';

/** The website build resource (docs/api.md, "Websites"). */
export interface WebsiteView {
  object: 'website_build';
  id: string;
  customer_id: string;
  status: WebsiteRow['status'];
  /** While the preview is open (unlisted, never indexed; see `previewOpen`). */
  preview_url: string | null;
  /** When the preview lapses unless re-issued; null when none is open. */
  preview_expires_at: string | null;
  /** The site's address once live (kept while it counts down and while suspended); a test site's is its preview. */
  url: string | null;
  domain: string | null;
  domain_verified: boolean;
  brief: string | null;
  revisions_included: number;
  revisions_used: number;
  build_fee_cents: number;
  hosting_cents_per_month: number;
  hosting_renews_on: string | null;
  suspend_due_on: string | null;
  purge_due_on: string | null;
  live_at: string | null;
  failure_reason: string | null;
  mode: WebsiteRow['mode'];
  created_at: string;
}

/** Where sites and previews live, from the settings. */
export interface SiteAddresses {
  /** The address of a live site. */
  siteUrl(slug: string): string;
  /** The unlisted preview of a build, with its current nonce, at `origin` (the reseller's verified brand domain) or the public URL. */
  previewUrl(id: string, nonce: string, origin?: string): string;
  /** What a customer's domain's CNAME must point at. */
  cnameTarget(slug: string): string;
  /** Whether `token` is the preview token of build `id` with `nonce` (compared in constant time). */
  previewTokenMatches(id: string, nonce: string, token: string): boolean;
}

/** A preview is open this long after the page is built, or re-issued. */
export const PREVIEW_DAYS = 30;

/**
 * Sites live at `https://<slug>.<sitesDomain>` when a sites domain is set, else at
 * `<publicUrl>/sites/<slug>/` (a path form that works on localhost). A preview carries a token
 * derived from the build's id and its preview nonce (`mac`), so it can be shown again without
 * being stored, and re-issuing (a new nonce) ends the old one.
 */
export function siteAddresses(config: Pick<Config, 'publicUrl' | 'sitesDomain'>, mac: (message: string) => string): SiteAddresses {
  const publicHost = () => new URL(config.publicUrl).hostname;
  const token = (id: string, nonce: string) => mac(`${id}.${nonce}`);
  return {
    siteUrl: (slug) => (config.sitesDomain ? `https://${slug}.${config.sitesDomain}/` : `${config.publicUrl}/sites/${slug}/`),
    previewUrl: (id, nonce, origin = config.publicUrl) => `${origin}/sites/preview/${id}/${token(id, nonce)}`,
    cnameTarget: (slug) => (config.sitesDomain ? `${slug}.${config.sitesDomain}` : publicHost()),
    previewTokenMatches: (id, nonce, given) => {
      // Both sides hashed to one length first: the comparison's time says nothing about either.
      const digest = (s: string) => crypto.createHash('sha256').update(s).digest();
      return crypto.timingSafeEqual(digest(token(id, nonce)), digest(given));
    },
  };
}

/**
 * Whether a build's preview is served at `now`: a page was built, it has not lapsed
 * (`preview_expires_at`), and the site is not published: building (a revision of a ready site)
 * or ready. A test site is served nowhere else, so its preview stays open once live too; a
 * suspended, cancelled, failed or purged build has none.
 */
export function previewOpen(row: Pick<WebsiteRow, 'status' | 'mode' | 'built_at' | 'preview_expires_at'>, now: Date): boolean {
  if (row.built_at === null || row.preview_expires_at === null || row.preview_expires_at.getTime() <= now.getTime()) return false;
  if (row.status === 'building' || row.status === 'ready') return true;
  return row.mode === 'test' && (row.status === 'live' || row.status === 'hosting_due');
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A build as the reseller sees it; `origin` is where its preview is (see `customerOrigin`), the public URL when not given. */
export function websiteView(row: WebsiteRow, addresses: SiteAddresses, now: Date, origin?: string): WebsiteView {
  const preview = previewOpen(row, now) ? addresses.previewUrl(row.id, row.preview_nonce, origin) : null;
  const addressed = row.live_at !== null && ['live', 'hosting_due', 'suspended'].includes(row.status);
  return {
    object: 'website_build',
    id: row.id,
    customer_id: row.customer_id,
    status: row.status,
    preview_url: preview,
    preview_expires_at: preview ? iso(row.preview_expires_at) : null,
    url: addressed ? (row.mode === 'test' ? preview : addresses.siteUrl(row.slug)) : null,
    domain: row.domain,
    domain_verified: row.domain_verified_at !== null,
    brief: row.brief,
    revisions_included: row.revisions_included,
    revisions_used: row.revision_briefs.length,
    build_fee_cents: row.build_fee_cents,
    hosting_cents_per_month: row.hosting_cents_per_month,
    hosting_renews_on: row.hosting_renews_on,
    suspend_due_on: row.suspend_due_on,
    purge_due_on: row.purge_due_on,
    live_at: iso(row.live_at),
    failure_reason: row.failure_reason,
    mode: row.mode,
    created_at: row.created_at.toISOString(),
  };
}
